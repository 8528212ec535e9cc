"""Argument coercion for every tool, and the invalid-call message (mm-tools.md §Declared tools).

The engine calls `coerce_tool_args(tool, args)` (or `coerce_arguments`) before `tool.run`; a
message instead of arguments means nothing runs and the message is the tool's result.
The rules are those of declared tools, applied to built-in tools too (cases tool-args/args-07,
args-08, args-10; docs/tools-bash.md).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Container, Mapping, Sequence
from decimal import Decimal
from typing import Any

from mm.tools.base import Param

INVALID_CALL = (
    "[{name}: invalid call, nothing was run — {faults}. You sent: {sent}. "
    "Expected: {expected}. Call {name} again with each parameter as its own field.]"
)
FAULT_MISSING = "{p} is missing"
FAULT_TYPE = "{p}: {v} is not {a_type}"
FAULT_ENUM = "{p}: {v} is not one of {values}"
FAULT_UNKNOWN = '"{key}" is not a parameter of this tool'
ONE_OF = "One of: {values}."
OPTIONAL = "Optional."
OPTIONAL_DEFAULT = "Optional, default {v}."
EXPECTED_PARAM = "{p} ({type}): {description}"
QUOTE_CUT = "{head}… ({total} characters in all)"
QUOTED_VALUE = 200  # characters of a value quoted in a fault
QUOTED_CALL = 1000  # characters of the call quoted after "You sent:"

A_TYPE = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "array": "an array",
    "object": "an object",
}
_INTEGER_TEXT = re.compile(r"[+-]?\d+(\.0*)?")


class CoercionError(ValueError):
    """A value that cannot be coerced to its parameter's type."""


def render_value(value: Any) -> str:
    """Return `value` as text: integers without a decimal point, numbers without an exponent,
    booleans as true/false, strings as they are, anything else as JSON (mm-tools.md §Declared tools,
    Values)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value.is_integer():
            return str(int(value))
        text = format(Decimal(repr(value)), "f")
        return text
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def quoted(text: str, limit: int) -> str:
    """`text` as an invalid-call message quotes it: whole up to `limit` characters, else its start
    and how long it was, so a message never grows with what the model sent (issue 10.5)."""
    if len(text) <= limit:
        return text
    return QUOTE_CUT.format(head=text[:limit], total=len(text))


def describe_param(p: Param, enum: Sequence[Any] | None = None) -> str:
    """Return the description given to the model for `p`: its description, `One of: …` for an
    enum, then `Optional.` or `Optional, default <v>.` (mm-tools.md §Declared tools, Schema)."""
    parts = [p.description.strip()] if p.description.strip() else []
    if enum:
        parts.append(ONE_OF.format(values=", ".join(render_value(v) for v in enum)))
    if not p.required:
        if p.default is None:
            parts.append(OPTIONAL)
        else:
            parts.append(OPTIONAL_DEFAULT.format(v=render_value(p.default)))
    return " ".join(parts)


def _to_number(value: Any, integer: bool) -> int | float:
    """Coerce a number or numeric string; integers also accept an integral 3.0 or "3.0"."""
    if isinstance(value, bool):
        raise CoercionError
    if isinstance(value, str):
        text = value.strip()
        if integer:
            if not _INTEGER_TEXT.fullmatch(text):
                raise CoercionError
            try:
                return int(float(text)) if "." in text else int(text)
            except (ValueError, OverflowError):  # thousands of digits: not a number a tool takes
                raise CoercionError from None
        if not text:
            raise CoercionError
        try:
            number = float(text)
        except ValueError:
            raise CoercionError from None
        if not math.isfinite(number):
            raise CoercionError
        return int(number) if re.fullmatch(r"[+-]?\d+", text) else number
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        if integer:
            if not value.is_integer():
                raise CoercionError
            return int(value)
        return value
    raise CoercionError


def _to_json_kind(value: Any, kind: type) -> Any:
    """Accept a list/dict, or a string holding one as JSON (small models send them encoded)."""
    if isinstance(value, kind):
        return value
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except ValueError:
            raise CoercionError from None
        if isinstance(decoded, kind):
            return decoded
    raise CoercionError


def coerce_value(ptype: str, value: Any, *, json_text: bool = False) -> Any:
    """Return `value` coerced to `ptype` (a JSON-schema type), or raise CoercionError.

    Numeric strings → integer/number, "true"/"false" in any case → boolean, a number or boolean
    → string (rendered). With `json_text`, an object or array given for a string becomes JSON
    text, indented by 2 and ending with a newline (case tool-args/args-06).
    """
    if ptype in ("integer", "number"):
        return _to_number(value, ptype == "integer")
    if ptype == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise CoercionError
    if ptype == "string":
        if isinstance(value, str):
            return value
        if isinstance(value, (bool, int, float)):
            return render_value(value)
        if json_text and isinstance(value, (dict, list)):
            return json.dumps(value, ensure_ascii=False, indent=2) + "\n"
        raise CoercionError
    if ptype == "array":
        return _to_json_kind(value, list)
    if ptype == "object":
        return _to_json_kind(value, dict)
    return value


def invalid_call_message(
    tool_name: str,
    params: list[Param],
    args: Any,
    faults: list[str],
    enums: Mapping[str, Sequence[Any]] | None = None,
) -> str:
    """Return the invalid-call text for `tool_name` (mm-tools.md §Declared tools, Invalid call).

    `args` is the call's input as sent; `faults` are the fault phrases, all listed.
    """
    enums = enums or {}
    entries = []
    for p in params:
        description = describe_param(p, enums.get(p.name))
        entry = EXPECTED_PARAM.format(p=p.name, type=p.type, description=description)
        entries.append(entry if description else entry.rstrip(": "))
    expected = "; ".join(entries).rstrip(".")
    return INVALID_CALL.format(
        name=tool_name,
        faults="; ".join(faults),
        sent=quoted(json.dumps(args, ensure_ascii=False), QUOTED_CALL),
        expected=expected or "no parameters",
    )


def coerce_arguments(
    tool_name: str,
    params: list[Param],
    args: dict,
    *,
    enums: Mapping[str, Sequence[Any]] | None = None,
    json_text: Container[str] = (),
    extra_keys: bool = False,
) -> tuple[dict | None, str | None]:
    """Coerce a call's decoded arguments to `params`; return `(args, None)` or `(None, message)`.

    `enums` maps a parameter name to its allowed values (declared tools); `json_text` names the
    string parameters that take an object or array as JSON text (write_file's `content`);
    `extra_keys`: keys that are no parameter are passed on as sent (an MCP tool whose schema
    lets them through, docs/mcp.md), not faults.
    A missing optional parameter gets its default (left out when the default is None); a JSON
    null counts as missing. A missing required parameter, an unknown key, an uncoercible value
    or a value outside its enum is a fault; all faults are listed in the message.
    """
    if not isinstance(args, dict):
        return None, invalid_call_message(tool_name, params, args, ["the arguments are not an object"], enums)
    enums = enums or {}
    known = {p.name for p in params}
    faults: list[str] = []
    out: dict[str, Any] = {}
    for p in params:
        value = args.get(p.name)
        if value is None:
            if p.required:
                faults.append(FAULT_MISSING.format(p=p.name))
            elif p.default is not None:
                out[p.name] = p.default
            continue
        try:
            value = coerce_value(p.type, value, json_text=p.name in json_text)
        except CoercionError:
            shown = quoted(json.dumps(value, ensure_ascii=False), QUOTED_VALUE)
            faults.append(FAULT_TYPE.format(p=p.name, v=shown, a_type=A_TYPE.get(p.type, p.type)))
            continue
        allowed = enums.get(p.name)
        if allowed and value not in allowed:
            values = ", ".join(render_value(v) for v in allowed)
            faults.append(FAULT_ENUM.format(p=p.name, v=quoted(render_value(value), QUOTED_VALUE), values=values))
            continue
        out[p.name] = value
    if extra_keys:
        out.update((key, value) for key, value in args.items() if key not in known)
    else:
        faults.extend(FAULT_UNKNOWN.format(key=quoted(key, QUOTED_VALUE)) for key in args if key not in known)
    if faults:
        return None, invalid_call_message(tool_name, params, args, faults, enums)
    return out, None


def coerce_tool_args(tool: Any, args: dict) -> tuple[dict | None, str | None]:
    """Coerce `args` for `tool`, reading its optional `enums`, `json_text_params` and
    `extra_keys` attributes.

    This is what the engine calls before `tool.run` (see coerce_arguments). A tool with a
    `normalize_arguments(args)` method first puts other shapes of its arguments into the declared one.
    """
    normalize = getattr(tool, "normalize_arguments", None)
    if callable(normalize):
        args = normalize(args)
    return coerce_arguments(
        tool.name,
        tool.params,
        args,
        enums=getattr(tool, "enums", None),
        json_text=getattr(tool, "json_text_params", ()),
        extra_keys=getattr(tool, "extra_keys", False),
    )
