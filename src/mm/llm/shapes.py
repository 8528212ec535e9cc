"""What a chat-completion chunk may hold: the types of the fields the assembler reads, checked
before it reads them (issue 10.5; OpenAI's `chat.completion.chunk` and `chat.completion` objects).

A field of the wrong type — a number, a string or a boolean where an object or a list belongs,
`choices: null` — is a malformed stream, said in one line that names the field. A `null` the
format allows stays accepted: `usage: null` (OpenAI sends it in every chunk but the last),
`content: null`, `tool_calls: null`, `function_call: null`, `finish_reason: null`, and a missing
`delta` or `function`. Fields the assembler only reads when they are of the right type (index,
id, reasoning, timings) are not checked: another type there is ignored, not fatal.
"""

from __future__ import annotations

from typing import Any

WRONG_TYPE = "{where} is {actual} where {expected} belongs"
OBJECT, LIST, TEXT = "an object", "a list", "a string"


def kind_of(value: Any) -> str:
    """The JSON type of `value` in words: null, a boolean, a number, a string, a list, an object."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return TEXT
    if isinstance(value, list):
        return LIST
    return OBJECT if isinstance(value, dict) else type(value).__name__


class _Wrong(Exception):
    """A field of the wrong type; `str(err)` is WRONG_TYPE filled in."""


def chunk_problem(chunk: dict) -> str | None:
    """Why `chunk` (a decoded chunk object) cannot be read — `choices[0].delta is a string where
    an object belongs` — or None when every field the assembler reads has an allowed type."""
    try:
        _field(chunk, "usage", "", (dict,), OBJECT)
        choices = _field(chunk, "choices", "", (list,), LIST, nullable=False)
        for i, choice in enumerate(choices or []):
            _choice(choice, f"choices[{i}]")
    except _Wrong as wrong:
        return str(wrong)
    return None


def _choice(choice: Any, where: str) -> None:
    _expect(choice, where, (dict,), OBJECT)
    _field(choice, "finish_reason", where, (str,), TEXT)
    for key in ("delta", "message"):
        delta = _field(choice, key, where, (dict,), OBJECT)
        if delta is not None:
            _delta(delta, f"{where}.{key}")


def _delta(delta: dict, where: str) -> None:
    _field(delta, "content", where, (str, list), "a string or a list")
    entries = _field(delta, "tool_calls", where, (list,), LIST)
    for i, entry in enumerate(entries or []):
        at = f"{where}.tool_calls[{i}]"
        _expect(entry, at, (dict,), OBJECT)
        function = _field(entry, "function", at, (dict,), OBJECT)
        if function is not None:
            _function(function, f"{at}.function")
    legacy = _field(delta, "function_call", where, (dict,), OBJECT)
    if legacy is not None:
        _function(legacy, f"{where}.function_call")


def _function(function: dict, where: str) -> None:
    _field(function, "name", where, (str,), TEXT)
    _field(function, "arguments", where, (str, dict, list), "a string or an object")


def _field(obj: dict, key: str, where: str, types: tuple[type, ...], expected: str, nullable: bool = True) -> Any:
    """`obj[key]` when absent (None), null and `nullable` (None), or of one of `types`; else _Wrong."""
    if key not in obj:
        return None
    value = obj[key]
    if value is None and nullable:
        return None
    _expect(value, f"{where}.{key}" if where else key, types, expected)
    return value


def _expect(value: Any, where: str, types: tuple[type, ...], expected: str) -> None:
    if not isinstance(value, types):
        raise _Wrong(WRONG_TYPE.format(where=where, actual=kind_of(value), expected=expected))
