"""What the safety floor knows of one shell word once expanded (docs/safety.md §How commands are read)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Value:
    """One word after expansion, as far as it can be known before the command runs.

    `kind` "exact": the word is `text`; "contents": a pattern matching every entry of the folder
    `text` (`*`, `./*`, `/*`); "under": some path inside the folder `text` (`/etc/*.conf`, find's
    `{}` after a filter, `/etc/$UNKNOWN`); "unknown": nothing is known (`text` is None).
    Paths are as written: relative ones are resolved against the command's working directory.
    """

    text: str | None
    kind: str = "exact"

    @property
    def exact(self) -> str | None:
        """The word's text when it is known exactly, else None."""
        return self.text if self.kind == "exact" else None


UNKNOWN = Value(None, "unknown")


def exact(text: str) -> Value:
    return Value(text, "exact")
