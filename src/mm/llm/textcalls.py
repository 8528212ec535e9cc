"""Tool calls written in the content instead of `tool_calls` (DESIGN.md quirk list).

Three forms are read: `<tool_call>{"name": …, "arguments": …}</tool_call>`; Qwen's
`<function=name><parameter=p>…</parameter></function>` (also inside `<tool_call>`, and with a
JSON object as its body, as Llama 3 writes it); and a bare `{"name": …, "arguments"|"parameters": …}`
object at the start of the message or of a line (cases llm-streams/stream-13…16).

Only names of declared tools become calls. A well-formed call naming another tool is reported as
unknown (tag forms anywhere; a bare object only when it is the whole answer) and stays in the text.
"""

from __future__ import annotations

import json
import os
import re
import string
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from mm.llm.args import CUT_OFF, parse_arguments, xml_arguments
from mm.llm.relaxed import BraceScanner
from mm.llm.xmlargs import ParamScanner
from mm.llm.types import ToolCall

TOOL_CALL_OPEN, TOOL_CALL_CLOSE = "<tool_call>", "</tool_call>"
FUNC_OPEN, FUNC_CLOSE = "<function=", "</function>"
NO_ARGUMENTS_FOUND = "the call written in the text has no readable arguments"
BEFORE_CALL_CLOSE = "before the call's closing tag"

_NAME = re.compile(r"[A-Za-z_][\w.\-]{0,63}")
_NAME_IN_BROKEN_JSON = re.compile(r'"name"\s*:\s*"([A-Za-z_][\w.\-]{0,63})"')
_LINE_BRACE = re.compile(r"(?:^|(?<=\n))[ \t]*\{")
_FIRST_KEY = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)("?))?')
_CALL_KEYS = {"name", "arguments", "parameters", "function", "type", "id"}
_BLANKS = re.compile(r"[ \t\r\n]*")
_FENCE_BEFORE = re.compile(r"(?:^|\n)[ \t]*```[\w-]*[ \t]*\n[ \t]*\Z")
_FENCE_AFTER = re.compile(r"[ \t]*\n?[ \t]*```[ \t]*(?:\n|\Z)")
_ID_CHARS = string.ascii_letters + string.digits
HELD_STEP = 4096  # characters held back before deltas are added to the held text in growing steps


def new_call_id() -> str:
    """A made-up tool-call id: 9 random letters and digits (the only shape Mistral templates accept)."""
    return "".join(_ID_CHARS[b % len(_ID_CHARS)] for b in os.urandom(9))


@dataclass
class TextCall:
    """One call found in the text: its span [start, end), name, arguments (dict, str or None)."""

    start: int
    end: int
    name: str
    arguments: Any
    explicit: bool  # written with a tag, not as a bare object
    error: str | None = None
    closed: bool = True  # its closing tag or brace came before the end of the text
    json_text: str = ""  # the JSON text it was read from (tag, JSON body and bare forms)


@dataclass
class Extracted:
    """The content with declared calls taken out, those calls, and (name, text) of unknown ones."""

    content: str
    calls: list[ToolCall] = field(default_factory=list)
    unknown: list[tuple[str, str]] = field(default_factory=list)


class _Pending:
    """A possible call starting at `start`, resolved as more text arrives (incremental scan)."""

    def __init__(self, kind: str, start: int):
        self.kind, self.start = kind, start
        self.search_from = start
        self.checked_key = False
        self.braces = BraceScanner(start)
        self.func_at: int | None = start if kind == "func" else None  # where `<function=` is
        self.json_body = False  # a `<tool_call>` holding JSON, not `<function=…>`
        self.name, self.body_at = "", 0
        self.params: ParamScanner | None = None

    def resolve(self, text: str, final: bool) -> tuple[str, int, TextCall | None]:
        """("more", 0, None) while undecided; else ("call"|"text", end, call)."""
        if self.kind == "brace":
            return self._brace(text, final)
        if self.kind == "tag" and self.func_at is None and not self.json_body:
            body = _skip_blanks(text, self.start + len(TOOL_CALL_OPEN))
            head = text[body:body + len(FUNC_OPEN)]
            if head == FUNC_OPEN:
                self.func_at = body
            elif not final and body + len(head) == len(text) and FUNC_OPEN.startswith(head):
                return _MORE
            else:
                self.json_body = True
        if self.json_body:
            return self._tag_json(text, final)
        return self._function(text, final)

    def _tag_json(self, text: str, final: bool) -> tuple[str, int, TextCall | None]:
        close = text.find(TOOL_CALL_CLOSE, self.search_from)
        if close == -1:
            if not final:
                self.search_from = max(self.start, len(text) - len(TOOL_CALL_CLOSE) + 1)
                return _MORE
            close = end = len(text)
        else:
            end = close + len(TOOL_CALL_CLOSE)
        body = text[self.start + len(TOOL_CALL_OPEN):close]
        call = _parse_tag_body(body)
        if call is None:
            return "text", end, None
        return "call", end, TextCall(self.start, end, call[0], call[1], True, call[2], end > close, body)

    def _function(self, text: str, final: bool) -> tuple[str, int, TextCall | None]:
        """`<function=name>` at self.func_at: parameters (or a JSON body) up to the closing tag."""
        at = self.func_at
        assert at is not None
        if self.params is None:
            head = text[at + len(FUNC_OPEN):at + len(FUNC_OPEN) + 65]
            gt = head.find(">")
            if gt == -1 and not final and len(head) < 65:
                return _MORE
            if gt == -1 or not _NAME.fullmatch(head[:gt]):
                return self._not_a_function(text, final)
            self.name, self.body_at = head[:gt], at + len(FUNC_OPEN) + gt + 1
            self.params = ParamScanner(self.body_at)
        end = self.params.advance(text, final)
        if end is None:
            return _MORE
        span_end, closed = end, end < len(text)
        if text.startswith(FUNC_CLOSE, span_end):
            span_end += len(FUNC_CLOSE)
        at_tag = _skip_blanks(text, span_end)  # `</tool_call>` closing the wrapper, or left after a bare `<function=`
        piece = text[at_tag:at_tag + len(TOOL_CALL_CLOSE)]
        if piece == TOOL_CALL_CLOSE:
            span_end = at_tag + len(TOOL_CALL_CLOSE)
        elif not final and closed and at_tag + len(piece) == len(text) and TOOL_CALL_CLOSE.startswith(piece):
            return _MORE
        inner = text[self.body_at:end]
        if inner.lstrip().startswith("{"):
            return "call", span_end, TextCall(self.start, span_end, self.name, inner.strip(), True, None, closed,
                                              inner.strip())
        return "call", span_end, TextCall(self.start, span_end, self.name, ("xml", self.params.params, inner),
                                          True, None, closed)

    def _not_a_function(self, text: str, final: bool) -> tuple[str, int, TextCall | None]:
        if self.kind == "func":
            return "text", self.start + 1, None
        self.json_body = True  # `<tool_call><function=bad name…`: read as a tag body
        return self._tag_json(text, final)

    def _brace(self, text: str, final: bool) -> tuple[str, int, TextCall | None]:
        if not self.checked_key:
            m = _FIRST_KEY.match(text, self.start + 1)
            if m.end() == len(text) and not final:
                return _MORE
            if m.group(1) is None or (m.group(2) and m.group(1) not in _CALL_KEYS):
                return "text", self.start + 1, None
            if not m.group(2) and not final:
                return _MORE
            self.checked_key = True
        end = self.braces.end(text)
        if end is None and not final:
            return _MORE
        span_end = end if end is not None else len(text)
        obj, _ = parse_arguments(text[self.start:span_end])
        call = _as_call(obj)
        if call is None:
            return "text", span_end if end is not None else self.start + 1, None
        return "call", span_end, TextCall(self.start, span_end, call[0], call[1], False, None, end is not None,
                                          text[self.start:span_end])


_MORE: tuple[str, int, None] = ("more", 0, None)


def _skip_blanks(text: str, pos: int) -> int:
    return _BLANKS.match(text, pos).end()


def _as_call(obj: Any, explicit: bool = False) -> tuple[str, Any] | None:
    """(name, arguments) when `obj` is a call object; a tag's body may omit the arguments."""
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict) and "name" in obj["function"]:
        obj = obj["function"]
    name = obj.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        return None
    for key in ("arguments", "parameters"):
        if key in obj:
            return name, obj[key]
    return (name, {}) if explicit else None


def _parse_tag_body(body: str) -> tuple[str, Any, str | None] | None:
    """The (name, arguments, error) of a `<tool_call>` holding JSON; None when it holds no call."""
    body = body.strip()
    obj, error = parse_arguments(body)
    call = _as_call(obj, explicit=True)
    if call is not None:
        return call[0], call[1], None
    m = _NAME_IN_BROKEN_JSON.search(body)
    if m is None:
        return None
    return m.group(1), None, error or NO_ARGUMENTS_FOUND


def find_text_calls(text: str) -> list[TextCall]:
    """Every call written in `text`, in order (declared or not)."""
    calls: list[TextCall] = []
    pos, known = 0, {}
    while True:
        start, kind = _next_candidate(text, pos, known)
        if start is None:
            return calls
        status, end, call = _Pending(kind, start).resolve(text, final=True)
        if call is not None:
            calls.append(call)
        pos = end


def _next_candidate(text: str, pos: int, known: dict[str, int] | None = None) -> tuple[int | None, str]:
    """Where the next possible call starts at or after `pos`, and its kind. `known` keeps where
    each tag was found (-1: nowhere) between calls on the same text, so that a scan of many
    candidates does not search the rest of the text for a tag again each time."""
    found: list[tuple[int, str]] = []
    for tag, kind in ((TOOL_CALL_OPEN, "tag"), (FUNC_OPEN, "func")):
        i = known.get(tag) if known is not None else None
        if i is None or -1 < i < pos:
            i = text.find(tag, pos)
            if known is not None:
                known[tag] = i
        if i != -1:
            found.append((i, kind))
    m = _LINE_BRACE.search(text, pos)
    if m is not None:
        found.append((m.end() - 1, "brace"))
    return min(found) if found else (None, "")


def extract_text_calls(content: str, declared: Mapping[str, Mapping[str, str]] | Iterable[str],
                       cut: bool = False) -> Extracted:
    """Take the calls naming declared tools out of `content` (stream-13/14/15/16).

    declared: tool names, or name -> {parameter -> JSON type} (args.tool_param_types).
    cut: the generation stopped on its token limit, so a call the content ends inside is refused.
    Returns the remaining text (stripped when a call was taken out), the ToolCalls with made-up
    ids, and (name, text) of well-formed calls naming undeclared tools, which stay in the text.
    """
    types = declared if isinstance(declared, Mapping) else {name: {} for name in declared}
    out = Extracted(content)
    pieces, pos = [], 0
    for found in find_text_calls(content):
        raw = content[found.start:found.end]
        if found.name not in types:
            whole = _strip_fence(content, found.start, found.end) == (0, len(content))
            if found.explicit or whole:
                out.unknown.append((found.name, raw))
            continue
        out.calls.append(_to_tool_call(found, types[found.name], cut))
        start, end = (found.start, found.end) if found.explicit else _strip_fence(content, found.start, found.end)
        pieces.append(content[pos:start])
        pos = end
    if out.calls:
        pieces.append(content[pos:])
        out.content = "".join(pieces).strip()
    return out


def _strip_fence(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen [start, end) to a ``` fence holding only it, and to the surrounding blank space."""
    before = _FENCE_BEFORE.search(text, 0, start)
    after = _FENCE_AFTER.match(text, end)
    if before and after:
        start, end = before.start(), after.end()
    if not text[:start].strip():
        start = 0
    if not text[end:].strip():
        end = len(text)
    return start, end


def _to_tool_call(found: TextCall, types: Mapping[str, str], cut: bool) -> ToolCall:
    """The ToolCall of a call found in the text; with `cut`, one the text ends inside is refused."""
    args, cut = found.arguments, cut and not found.closed
    if isinstance(args, tuple):  # ("xml", parameters, text) from the Qwen form
        parsed, error = xml_arguments(args[1], dict(types), cut)
        if error is None and cut:
            parsed, error = None, CUT_OFF.format(where=BEFORE_CALL_CLOSE)
        raw = args[2]
    elif found.error is not None:
        parsed, error, raw = None, found.error, ""
    else:
        parsed, error = parse_arguments(found.json_text, cut=True) if cut and found.json_text else (None, None)
        if error is None:
            parsed, error = parse_arguments(args, dict(types))
        raw = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    return ToolCall(new_call_id(), found.name, parsed if error is None else None, raw, error)


class TextCallFilter:
    """Streaming side of the extraction: feed content deltas, get the text safe to show now.

    Text that may start a call (`<tool_call>`, `<function=`, a `{` at the start of the message or
    of a line, or a partial tag at the end) is held back until it is known; a call naming a
    declared tool (any name when `tool_names` is None) is never shown. `flush()` at the end
    releases what was not such a call.
    """

    def __init__(self, tool_names: Iterable[str] | None = None):
        self._names = None if tool_names is None else set(tool_names)
        self._buf = ""  # the text not shown yet, after one character of what was (for `^` and `\n{`)
        self._pos = 0
        self._pending: _Pending | None = None
        self._new: list[str] = []  # deltas not yet added to _buf
        self._new_size = 0

    def feed(self, delta: str) -> str:
        """Add a content delta; return the text that can be shown now (maybe "").

        Linear in the length of the stream: shown text is dropped from the buffer, and while more
        than HELD_STEP characters are held back (a long call being written) deltas are added to
        it once they match what it holds, so a held text is copied O(log n) times, not per delta.
        """
        self._new.append(delta)
        self._new_size += len(delta)
        held = len(self._buf) - self._pos
        if held >= HELD_STEP and self._new_size < held:
            return ""
        return self._take(final=False)

    def flush(self) -> str:
        """The stream ended: return the held text that was not a declared call."""
        return self._take(final=True)

    def _take(self, final: bool) -> str:
        if self._new:
            self._buf += "".join(self._new)
            self._new, self._new_size = [], 0
        out = self._advance(final)
        self._drop_shown()
        return out

    def _drop_shown(self) -> None:
        """Drop the text already shown, keeping the one character before it. Not while a possible
        call is pending: its scanners hold offsets into the buffer (and everything before it was
        already dropped when it began)."""
        cut = self._pos - 1
        if cut <= 0 or self._pending is not None:
            return
        self._buf, self._pos = self._buf[cut:], 1

    def _advance(self, final: bool) -> str:
        buf, out = self._buf, []
        while True:
            if self._pending is None:
                start, kind = _next_candidate(buf, self._pos)
                if start is None:
                    safe = len(buf) if final else _safe_end(buf, self._pos)
                    out.append(buf[self._pos:safe])
                    self._pos = safe
                    return "".join(out)
                out.append(buf[self._pos:start])
                self._pos, self._pending = start, _Pending(kind, start)
            status, end, call = self._pending.resolve(buf, final)
            if status == "more":
                return "".join(out)
            self._pending = None
            if call is None or (self._names is not None and call.name not in self._names):
                out.append(buf[self._pos:end])
            self._pos = end


def _safe_end(buf: str, pos: int) -> int:
    """Where the text that cannot start a call ends: before a partial tag or line-start blanks."""
    n = len(buf)
    lt = buf.rfind("<", max(pos, n - len(TOOL_CALL_OPEN) + 1))
    if lt != -1 and (TOOL_CALL_OPEN.startswith(buf[lt:]) or FUNC_OPEN.startswith(buf[lt:])):
        return lt
    i = n
    while i > pos and buf[i - 1] in " \t":
        i -= 1
    if i < n and (i == 0 or buf[i - 1] == "\n"):
        return i
    return n
