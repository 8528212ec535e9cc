"""Qwen's `<parameter=name>value</parameter>` markup: where values start and end, what is markup.

Rules (docs/model-servers.md §Arguments, "Qwen's XML"; Qwen3-Coder's chat template writes
`<parameter=name>\\n` + value + `\\n</parameter>\\n`, every tag on its own line):

- A value ends at its `</parameter>`. Without one (the model left it out), it ends at the next
  `<parameter…>`, at the `</function>` or `</tool_call>` that closes the call, or at the end of the
  text — so no closing tag ever ends up inside a value. A `</function>` or `</tool_call>` inside a
  value whose `</parameter>` comes later is part of the value.
- Markup line breaks: a value that starts on the line after its tag is written as the template
  writes it, so that line break is markup, and so is the one right before its `</parameter>`. A
  value that starts right after its tag is written inline and runs to `</parameter>`, its own
  final newline included. A value without `</parameter>` also loses the line break (and the
  blanks after it) before whatever ends it, which the template puts on its own line. Nothing else
  is ever trimmed, so a value's own final newline is kept.
- A value without `</parameter>` ended by `</function>` or `</tool_call>` that text follows (other
  than more closing tags or the next call) may hold that tag: it is refused, never cut short.
- When one value starts on a new line and another of the same call is written inline, whether
  that line break is markup or the value's first (empty) line cannot be told: `mixed_styles` finds
  it, and the call is refused rather than guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PARAM_CLOSE = "</parameter>"
CALL_CLOSES = ("</function>", "</tool_call>")

_OPEN = re.compile(r"<parameter(?:=([^>\s]+)|\s+name=\"([^\"]+)\")\s*>")
_NEXT = re.compile(r"<parameter[=\s]")
_CALL_CLOSE = re.compile(r"</function>|</tool_call>")
_LEAD = re.compile(r"\r?\n")
_UNCLOSED_TAIL = re.compile(r"\r?\n[ \t]*\Z")
_AFTER_CALL = re.compile(r"(?:\s*(?:</function>|</tool_call>))*\s*(?:<tool_call>|<function=|\Z)")
_BACK = 120  # how far a resumed search looks back, for a tag that arrived in pieces


@dataclass
class XmlParam:
    """One parameter: its name, the text between its tag and what ends it, whether `</parameter>`
    closed it, whether it ran to the end of the text, and whether (unclosed) the `</function>` or
    `</tool_call>` that ended it is followed by text: then that tag may be part of the value."""

    name: str
    raw: str
    closed: bool
    at_end: bool = False
    text_after: bool = False  # unclosed, ended by a closing tag that text other than a new call follows

    @property
    def inline(self) -> bool:
        """The value starts right after its tag, not on the next line."""
        return _LEAD.match(self.raw) is None

    @property
    def value(self) -> str:
        """The value with the markup line breaks removed (module docstring)."""
        value, lead = self.raw, _LEAD.match(self.raw)
        if lead:
            value = value[lead.end():]
        if not self.closed:
            return _UNCLOSED_TAIL.sub("", value, count=1)
        if lead and value.endswith("\n"):
            return value[:-2] if value.endswith("\r\n") else value[:-1]
        return value


def mixed_styles(params: list[XmlParam]) -> tuple[str, str] | None:
    """(name of a value starting on a new line, name of one written inline) in the same call, or None."""
    inline = next((p.name for p in params if p.closed and p.raw and p.inline), None)
    on_new_line = next((p.name for p in params if p.raw and not p.inline), None)
    return (on_new_line, inline) if inline and on_new_line else None


class ParamScanner:
    """Reads parameters from `start` to the tag that closes the call, over a growing text.

    `advance(text, final)` returns the index of the `</function>` or `</tool_call>` that ends the
    call, `len(text)` when the text ended without one (final), or None while more text could
    change the answer (not final). `params` holds the parameters read so far.
    """

    def __init__(self, start: int):
        self.pos = start
        self.params: list[XmlParam] = []
        self._open: tuple[str, int] | None = None  # (name, value start) of a value not yet ended
        self._seen = start

    def advance(self, text: str, final: bool) -> int | None:
        """See the class docstring."""
        while True:
            if self._open is not None:
                done = self._value_end(text, final)
                if done is None:
                    return None
                continue
            since = max(self.pos, self._seen - _BACK)
            opening, closing = _OPEN.search(text, since), _CALL_CLOSE.search(text, since)
            if closing is not None and (opening is None or closing.start() < opening.start()):
                return closing.start()
            if opening is None:
                self._seen = len(text)
                return len(text) if final else None
            self._open = (opening.group(1) or opening.group(2), opening.end())
            self.pos = self._seen = opening.end()

    def _value_end(self, text: str, final: bool) -> int | None:
        name, start = self._open  # type: ignore[misc]
        since = max(start, self._seen - _BACK)
        close = text.find(PARAM_CLOSE, since)
        following = _NEXT.search(text, since)
        if close != -1 and (following is None or close < following.start()):
            self.params.append(XmlParam(name, text[start:close], True))
            self._open, self.pos = None, close + len(PARAM_CLOSE)
            self._seen = self.pos
            return self.pos
        if following is None and not final:
            self._seen = len(text)
            return None
        call_close = _CALL_CLOSE.search(text, start)
        ends = [len(text)] + [m.start() for m in (following, call_close) if m is not None]
        stop = min(ends)
        text_after = call_close is not None and stop == call_close.start() and not _AFTER_CALL.match(text, stop)
        self.params.append(XmlParam(name, text[start:stop], False, stop == len(text), text_after))
        self._open, self.pos, self._seen = None, stop, stop
        return stop


def scan_parameters(text: str, start: int = 0) -> tuple[list[XmlParam], int]:
    """Every parameter of the whole `text` from `start`, and where the call's closing tag is
    (len(text) when there is none)."""
    scanner = ParamScanner(start)
    end = scanner.advance(text, final=True)
    return scanner.params, end if end is not None else len(text)
