"""Relaxed JSON: what small models write for tool-call arguments instead of JSON.

Rules (docs/model-servers.md §Arguments): beyond JSON, strings may be in single quotes (`'…'`,
`\\'` for a quote inside), `True`/`False`/`None` stand beside `true`/`false`/`null`, a trailing
comma before `}` or `]` is dropped, a backslash escape JSON does not know is a literal backslash
(`\\|` stays `\\|`, `\\'` is `'`), and closing brackets missing at the very end of the text are
supplied when the text ends right after a complete value. Ending anywhere else (inside a string,
after a key, after a comma, right after an opening bracket) is a cut-off, never completed.
Objects are found in surrounding prose by string-aware brace matching (`find_objects`).
"""

from __future__ import annotations

import json
import re
from typing import Any

STRING = "inside a string"
AFTER_KEY = "after the key {key}"  # the key as JSON text: quoted, on one line
AFTER_COMMA = "after a comma"
AFTER_OPEN = "right after an opening bracket"
INSIDE_VALUE = "inside a value"
BEFORE_CLOSERS = "before their closing brackets"

_OUT_OF_STRING = re.compile(r"[\"'{}]")
_IN_STRING = {'"': re.compile(r'["\\]'), "'": re.compile(r"['\\]")}
_CANDIDATE = re.compile(r"\{[ \t\r\n]*[\"']")
_WS = re.compile(r"[ \t\r\n]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_WORD = re.compile(r"[A-Za-z_]\w*")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_LITERALS = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "'": "'"}
_MAX_DEPTH = 200


class Cut(ValueError):
    """The text ends where a value was still being written; `where` says where (a phrase)."""

    def __init__(self, where: str):
        super().__init__(where)
        self.where = where


class Invalid(ValueError):
    """Not relaxed JSON: `msg` (json's wording) at character index `pos` of the text."""

    def __init__(self, msg: str, pos: int):
        super().__init__(f"{msg} at {pos}")
        self.msg, self.pos = msg, pos


class BraceScanner:
    """String-aware matching of the `{` at `start`, fed a growing text (strings in " or ', with
    backslash escapes). `end(text)` returns the index just after the matching `}`, or None while
    it has not come; each call resumes where the previous one stopped."""

    def __init__(self, start: int):
        self.pos, self.depth, self.quote = start, 0, ""

    def end(self, text: str) -> int | None:
        """Advance over `text` (the same text, maybe longer); see the class docstring."""
        i = self.pos
        while True:
            if self.quote:
                m = _IN_STRING[self.quote].search(text, i)
                if m is None:
                    i = len(text)
                    break
                if m.group() == "\\":
                    if m.end() >= len(text):
                        i = m.start()
                        break
                    i = m.end() + 1
                    continue
                self.quote, i = "", m.end()
                continue
            m = _OUT_OF_STRING.search(text, i)
            if m is None:
                i = len(text)
                break
            i, ch = m.end(), m.group()
            if ch in "\"'":
                self.quote = ch
            elif ch == "{":
                self.depth += 1
            else:
                self.depth -= 1
                if self.depth == 0:
                    self.pos = i
                    return i
        self.pos = i
        return None


def find_objects(text: str) -> list[tuple[int, int | None]]:
    """Spans (start, end) of the objects written in `text`, outermost only, in order.

    A candidate is a `{` followed by a quoted key; its end is found by BraceScanner. The last
    span's end is None when its object is still open at the end of the text.
    """
    spans: list[tuple[int, int | None]] = []
    pos = 0
    while (m := _CANDIDATE.search(text, pos)) is not None:
        end = BraceScanner(m.start()).end(text)
        spans.append((m.start(), end))
        if end is None:
            break
        pos = end
    return spans


def loads_relaxed(text: str, close_at_end: bool = True) -> Any:
    """Decode `text` (one value, blanks around it) by the rules of the module docstring.

    close_at_end: supply the closing brackets missing at the end after a complete value; when
    False, that end is a Cut too. Raises Cut or Invalid.
    """
    parser = _Parser(text, close_at_end)
    value, pos = parser.value(_skip(text, 0), 0)
    pos = _skip(text, pos)
    if pos < len(text):
        raise Invalid("Extra data", pos)
    return value


def _skip(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()


class _Parser:
    def __init__(self, text: str, close_at_end: bool):
        self.text, self.close_at_end = text, close_at_end

    def value(self, pos: int, depth: int) -> tuple[Any, int]:
        text = self.text
        if pos >= len(text):
            raise Cut(INSIDE_VALUE)
        ch = text[pos]
        if ch in "\"'":
            return self.string(pos)
        if ch in "{[":
            if depth >= _MAX_DEPTH:
                raise Invalid("Nested too deep", pos)
            return self.container(pos, depth + 1)
        m = _NUMBER.match(text, pos)
        if m is not None:
            return json.loads(m.group()), m.end()
        m = _WORD.match(text, pos)
        if m is not None:
            word = m.group()
            if word in _LITERALS:
                return _LITERALS[word], m.end()
            if m.end() == len(text) and any(lit.startswith(word) for lit in _LITERALS):
                raise Cut(INSIDE_VALUE)
        if ch == "-" and pos + 1 == len(text):
            raise Cut(INSIDE_VALUE)
        raise Invalid("Expecting value", pos)

    def container(self, pos: int, depth: int) -> tuple[Any, int]:
        text, is_object = self.text, self.text[pos] == "{"
        closer = "}" if is_object else "]"
        out: dict[str, Any] | list[Any] = {} if is_object else []
        pos = _skip(text, pos + 1)
        where = AFTER_OPEN
        while True:
            if pos >= len(text):
                raise Cut(where)
            if text[pos] == closer:
                return out, pos + 1
            if is_object:
                if text[pos] not in "\"'":
                    raise Invalid("Expecting property name enclosed in double quotes", pos)
                key, pos = self.string(pos)
                where = AFTER_KEY.format(key=json.dumps(key[:40], ensure_ascii=False))
                pos = _skip(text, pos)
                if pos >= len(text):
                    raise Cut(where)
                if text[pos] != ":":
                    raise Invalid("Expecting ':' delimiter", pos)
                pos = _skip(text, pos + 1)
                if pos >= len(text):
                    raise Cut(where)
                out[key], pos = self.value(pos, depth)  # type: ignore[index]
            else:
                item, pos = self.value(pos, depth)
                out.append(item)  # type: ignore[union-attr]
            pos = _skip(text, pos)
            if pos >= len(text):
                if self.close_at_end:
                    return out, pos
                raise Cut(BEFORE_CLOSERS)
            if text[pos] == closer:
                return out, pos + 1
            if text[pos] != ",":
                raise Invalid("Expecting ',' delimiter", pos)
            pos = _skip(text, pos + 1)
            where = AFTER_COMMA

    def string(self, pos: int) -> tuple[str, int]:
        text, quote = self.text, self.text[pos]
        find = _IN_STRING[quote]
        out: list[str] = []
        i = pos + 1
        while True:
            m = find.search(text, i)
            if m is None or m.end() >= len(text) and m.group() == "\\":
                raise Cut(STRING)
            j = m.start()
            out.append(text[i:j])
            if m.group() == quote:
                return "".join(out), j + 1
            ch = text[j + 1]
            if ch == "u":
                piece, i = self.unicode(j)
                out.append(piece)
            else:
                out.append(_ESCAPES.get(ch, "\\" + ch))
                i = j + 2

    def unicode(self, j: int) -> tuple[str, int]:
        """The character of the `\\uXXXX` escape at `j` (a surrogate pair joined), and the index after it."""
        text = self.text
        if _HEX4.match(text, j + 2) is None:
            if len(text) - (j + 2) < 4 and _HEX4.match(text[j + 2:] + "0000", 0):
                raise Cut(STRING)
            raise Invalid("Invalid \\uXXXX escape", j)
        code = int(text[j + 2:j + 6], 16)
        if 0xD800 <= code < 0xDC00 and text.startswith("\\u", j + 6) and _HEX4.match(text, j + 8):
            low = int(text[j + 8:j + 12], 16)
            if 0xDC00 <= low < 0xE000:
                return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), j + 12
        return chr(code), j + 6
