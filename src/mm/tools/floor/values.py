"""What the safety floor knows of one shell word once expanded (docs/safety.md §How commands are read)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from mm.tools.floor.state import State


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


class Refused(Exception):
    """A command the floor refuses: `rule` names the rule, `what` says what the command does."""

    def __init__(self, rule: str, what: str):
        super().__init__(f"{rule}: {what}")
        self.rule, self.what = rule, what


@dataclass
class Redirect:
    """An output redirection (`>`, `>>`, `&>`…) to `target`."""

    op: str
    target: Value


@dataclass
class Simple:
    """A simple command once expanded: its words, output redirections, and what it reads on
    stdin when known (`stdin`: text; `items`: paths, from find)."""

    words: list[Value]
    redirects: list[Redirect] = field(default_factory=list)
    stdin: str | None = None
    items: list[Value] | None = None


Outcome = tuple["State", frozenset]  # the state when it succeeded, the directories it may be in when it failed


class Reader(Protocol):
    """What the rules use of the reader (mm.tools.floor.walk.Reader)."""

    workdirs: tuple[str, ...]
    defining: int  # > 0 while a function's body is read where it is defined, its arguments unknown
    calling: set[str]  # the functions and aliases being read at their call (no call of one inside itself)
    stdout: Any
    expander: Any

    def script(self, text: str, st: "State") -> Outcome: ...

    def run(self, node: Any, st: "State", stdin: Any = None) -> Outcome: ...

    def check_redirects(self, redirects: list[Redirect], st: "State") -> None: ...
