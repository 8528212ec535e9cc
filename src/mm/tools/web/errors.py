"""Failures of the web tools and their text (mm-tools.md §fetch_content, failure codes)."""

from __future__ import annotations

FAILURE = "[{tool}: error {code} ({cls}) — {reason}]"  # mm-tools.md §fetch_content, Failure

CONVERSION, INPUT, USAGE = 1, 2, 3  # the codes of the reference's table
CLASSES = {CONVERSION: "conversion", INPUT: "input", USAGE: "usage"}


class FetchError(Exception):
    """A failure the model reads: `code` (1, 2 or 3, as mm-tools.md §fetch_content) and `reason`."""

    def __init__(self, code: int, reason: str):
        super().__init__(reason)
        self.code = code
        self.reason = reason

    def text(self, tool: str) -> str:
        """The failure line `[<tool>: error N (<class>) — <reason>]` (str)."""
        return FAILURE.format(tool=tool, code=self.code, cls=CLASSES[self.code], reason=self.reason)
