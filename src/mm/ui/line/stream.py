"""Streamed text rendered in time linear in its size (issue 10 §9, docs/line-mode.md §Rendering).

Re-parsing a whole answer as Markdown at every chunk costs the square of its size (a 20 KB answer
in small chunks cost 38 s of CPU). Instead, the part of the text that can no longer change is
printed once, above the live region, and only the open rest is parsed and rendered again:

- the answer (`MarkdownTail`): a top-level Markdown block (paragraph, heading, list, quote, code
  fence, table, rule) is complete once a later top-level block has begun — CommonMark never
  reopens a closed block — so everything before the last block is printed once, with the blank
  line rich puts between two blocks (none after a rule). The only difference with rendering the
  whole answer at once: a link reference definition (`[x]: https://…`) written after the block
  that uses it does not make a link there.
- the thoughts (`ThoughtTail`): plain lines, printed once a later line has text.

The open part is rendered once per update (`Rendered`): rich's Live redraws its region eight
times a second, and only replays those lines.
"""

from __future__ import annotations

import functools
from typing import Any

NO_GAP_AFTER = "hr"  # the one top-level block rich puts no blank line after (rich.markdown.HorizontalRule)
WANTS_A_GAP = "<!-- -->\n\n"  # a block rich renders as nothing, but with a blank line after it


class _Tail:
    """Text that streams in pieces: `feed` raw chunks, `open_text` the part not printed yet.
    `safe` (str → str) makes raw text fit for the terminal (mm.ui.line.view.safe); it keeps
    every newline, so a line has the same number in the raw text and in the safe one."""

    def __init__(self, safe: Any):
        self._safe = safe
        self._pieces: list[str] = []  # the open raw text, in pieces (joined at each update)

    def feed(self, text: str) -> None:
        """Add a chunk (raw text)."""
        self._pieces.append(text)

    def open_text(self) -> str:
        """The raw text not printed yet."""
        if len(self._pieces) > 1:
            self._pieces = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""

    def _keep(self, cut: int) -> str:
        """Take the open text's first `cut` characters out of it, and return them."""
        raw = self.open_text()
        self._pieces = [raw[cut:]]
        return raw[:cut]


class MarkdownTail(_Tail):
    """An answer's Markdown as it streams: `complete()` gives the top-level blocks that are done,
    to print once, `open()` the rest, to show live."""

    def __init__(self, safe: Any):
        super().__init__(safe)
        self._gap = False  # a block was printed, and wants a blank line before the next one

    def complete(self) -> Any:
        """The top-level blocks complete since the last call, as a renderable (taken out of the
        open text), or None when the last block is the only one. Costs a parse of the open text."""
        raw = self.open_text()
        if "\n" not in raw:
            return None
        blocks = [t for t in _parser().parse(self._safe(raw)) if t.level == 0 and t.nesting >= 0 and t.map]
        if len(blocks) < 2:
            return None
        shown = self._markdown(self._safe(self._keep(_line_offset(raw, blocks[-1].map[0]))))
        self._gap = blocks[-2].type != NO_GAP_AFTER
        return shown

    def open(self) -> Any:
        """The open text as a renderable, or None when it holds no text."""
        source = self._safe(self.open_text())
        return self._markdown(source) if source.strip() else None

    def _markdown(self, source: str) -> Any:
        """`source` (safe Markdown) rendered as rich.markdown.Markdown renders it after the blocks
        printed before it: rich puts a blank line before a block (or an image) when the element
        closed last wants one (any but a rule), and an HTML comment renders nothing but wants one."""
        from rich.markdown import Markdown

        return Markdown(WANTS_A_GAP + source if self._gap else source)


class ThoughtTail(_Tail):
    """The model's reasoning as it streams: plain lines, dimmed and italic, without the blank
    lines at its start and its end. `complete()` gives the lines to print once (every line but
    the last one with text), `open()` the rest."""

    def __init__(self, safe: Any):
        super().__init__(safe)
        self._printed = False

    def complete(self, everything: bool = False) -> Any:
        """The lines complete since the last call — all the text with `everything` — as a
        renderable (taken out of the open text), or None when there are none."""
        body = self.open_text().rstrip()
        cut = len(body) if everything else body.rfind("\n")
        if cut <= 0 or not body[:cut].strip():
            return None
        shown = self._text(self._keep(cut))
        self._printed = True
        return shown

    def open(self) -> Any:
        """The open text as a renderable, or None when it holds no text."""
        raw = self.open_text()
        return self._text(raw.rstrip()) if raw.strip() else None

    def _text(self, raw: str) -> Any:
        from rich.text import Text

        # after printed lines, the open text starts with the newline that ended the last of them
        text = raw.removeprefix("\n") if self._printed else raw.lstrip()
        return Text(self._safe(text), style="dim italic")


class Rendered:
    """A renderable rendered into lines once for a width, then replayed as they are: rich's Live
    redraws its region eight times a second, and must not parse or highlight again each time."""

    def __init__(self, renderable: Any):
        self.renderable = renderable
        self._width: int | None = None
        self._lines: list = []

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.segment import Segment

        if options.max_width != self._width:  # the first time, or the terminal was resized
            self._lines = console.render_lines(self.renderable, options, pad=False)
            self._width = options.max_width
        new_line = Segment.line()
        for line in self._lines:
            yield from line
            yield new_line


@functools.cache
def _parser() -> Any:
    """The Markdown parser rich.markdown.Markdown uses (CommonMark, tables, strikethrough)."""
    from markdown_it import MarkdownIt

    return MarkdownIt().enable("strikethrough").enable("table")


def _line_offset(text: str, line: int) -> int:
    """The offset in `text` where its line number `line` (from 0) starts."""
    at = 0
    for _ in range(line):
        at = text.index("\n", at) + 1
    return at
