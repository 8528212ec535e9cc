"""Tool-call arguments as small models send them: JSON, Qwen's XML, and common breakage.

Rules (DESIGN.md "Model servers: what the client must absorb"; cases tool-args/args-09,
llm-streams/stream-06 and stream-07; the repairs are decisions written in docs/model-servers.md):
a JSON object string or an object is taken as is (duplicate keys: the last wins, as json.loads
does); "" and None are {}; Qwen's `<parameter=p>…</parameter>` markup becomes {p: "…"}; a few
unambiguous breakages are repaired; anything else is an error text the model can act on.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

NOT_AN_OBJECT = "they are a JSON {kind}, not an object with one field per parameter"
CUT_OFF = "they end inside a string, as if the call was cut off"
NOT_JSON = "{reason} (line {line}, column {column})"
UNREADABLE = "they are neither JSON nor <parameter=name>value</parameter> markup"

_PARAM = re.compile(r"<parameter(?:=([^>\s]+)|\s+name=\"([^\"]+)\")\s*>(.*?)(?:</parameter>|(?=<parameter[=\s])|\Z)",
                    re.DOTALL)
_FENCE = re.compile(r"^```[\w-]*[ \t]*\n(.*?)\n?```\s*$", re.DOTALL)
_BAD_ESCAPE = re.compile(r'\\(.)', re.DOTALL)
_JSON_KINDS = {list: "array", str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}


def parse_arguments(raw: str | dict | None, param_types: dict[str, str] | None = None
                    ) -> tuple[dict[str, Any] | None, str | None]:
    """Parse one tool call's arguments.

    raw: the `function.arguments` value (a JSON string, an object, or None).
    param_types: optional parameter name -> JSON schema type of the tool, used only to decode
    the values of the XML form (a declared array or object written as JSON text).
    Returns (arguments, None) or (None, error) where error is one short clause explaining what is
    wrong, to follow "the arguments are not a JSON object: ". Never raises.
    """
    try:
        return _parse(raw, param_types or {})
    except Exception as err:  # noqa: BLE001 - parsing model output must never crash a turn
        return None, _one_line(f"{type(err).__name__}: {err}")


def _parse(raw: Any, types: dict[str, str]) -> tuple[dict | None, str | None]:
    if raw is None:
        return {}, None
    if isinstance(raw, dict):
        return raw, None
    if not isinstance(raw, str):
        return None, NOT_AN_OBJECT.format(kind=_JSON_KINDS.get(type(raw), type(raw).__name__))
    text = raw.strip()
    if not text:
        return {}, None
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if "<parameter" in text and not text.startswith("{"):
        parsed = parse_xml_parameters(text, types)
        if parsed:
            return parsed, None
    try:
        value = json.loads(text, strict=False)
    except (ValueError, RecursionError) as err:
        return _repair(text, err)
    if isinstance(value, str) and value.strip().startswith("{"):
        inner, _ = _parse(value, types)  # arguments encoded twice
        if inner is not None:
            return inner, None
    if isinstance(value, dict):
        return value, None
    return None, NOT_AN_OBJECT.format(kind=_JSON_KINDS.get(type(value), "value"))


def parse_xml_parameters(text: str, param_types: dict[str, str] | None = None) -> dict[str, Any]:
    """Read Qwen's `<parameter=name>value</parameter>` pairs (also `<parameter name="…">`).

    A value loses one leading and one trailing newline, as Qwen's own parser does; the last
    parameter may lack its closing tag. Values stay strings, except where param_types declares
    a non-string type and the text is valid JSON of it. Returns {} when there is no parameter.
    """
    types = param_types or {}
    out: dict[str, Any] = {}
    for match in _PARAM.finditer(text):
        name = match.group(1) or match.group(2)
        value = match.group(3)
        if value.startswith("\n"):
            value = value[1:]
        if value.endswith("\n"):
            value = value[:-1]
        out[name] = _typed(value, types.get(name))
    return out


def _typed(value: str, declared: str | None) -> Any:
    if declared in (None, "string"):
        return value
    try:
        return json.loads(value.strip(), strict=False)
    except (ValueError, RecursionError):
        return value


def _repair(text: str, err: Exception) -> tuple[dict | None, str | None]:
    """Try the unambiguous repairs of docs/model-servers.md in turn; else explain `err`."""
    if text.startswith("{"):
        for attempt in (_trailing_text, _missing_closers, _bad_escapes, _python_literal):
            try:
                value = attempt(text)
            except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
                continue
            if isinstance(value, dict):
                return value, None
    elif "<parameter" in text:
        return None, UNREADABLE
    if _ends_in_string(text):
        return None, CUT_OFF
    if isinstance(err, json.JSONDecodeError) and text[:1] in '{["':
        return None, NOT_JSON.format(reason=err.msg, line=err.lineno, column=err.colno)
    return None, UNREADABLE


def _trailing_text(text: str) -> Any:
    """`{…} trailing words` or `{…}}`: the first object, unless another object follows."""
    value, end = json.JSONDecoder(strict=False).raw_decode(text)
    if text[end:].strip().startswith("{"):
        raise ValueError("two objects")
    return value


def _missing_closers(text: str) -> Any:
    """Append the `}`/`]` a cut-off object lacks (never when it ends inside a string), and drop
    trailing commas before a closer."""
    stack: list[str] = []
    in_string = escaped = False
    out: list[str] = []
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack or stack.pop() != ch:
                raise ValueError("unbalanced")
            _drop_trailing_comma(out)
        out.append(ch)
    if in_string:
        raise ValueError("inside a string")
    _drop_trailing_comma(out)
    return json.loads("".join(out) + "".join(reversed(stack)), strict=False)


def _drop_trailing_comma(out: list[str]) -> None:
    i = len(out) - 1
    while i >= 0 and out[i] in " \t\r\n":
        i -= 1
    if i >= 0 and out[i] == ",":
        del out[i]


def _bad_escapes(text: str) -> Any:
    r"""`\|`, `\.`, `\$`…: a backslash JSON does not know is a literal backslash; `\'` is `'`."""
    def fix(m: re.Match) -> str:
        ch = m.group(1)
        if ch in '"\\/bfnrtu':
            return m.group(0)
        return "'" if ch == "'" else "\\\\" + ch
    return json.loads(_BAD_ESCAPE.sub(fix, text), strict=False)


def _python_literal(text: str) -> Any:
    """`{'path': 'a.txt', 'all': True}`: a Python dict literal with only JSON-able values."""
    if len(text) > 200_000:
        raise ValueError("too long")
    value = ast.literal_eval(text)
    json.dumps(value)  # TypeError for sets, bytes, tuples as keys...
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return json.loads(json.dumps(value))
    raise ValueError("not a dict")


def _ends_in_string(text: str) -> bool:
    in_string = escaped = False
    for ch in text:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = in_string
        elif ch == '"':
            in_string = not in_string
    return in_string


def tool_param_types(tools: list[dict] | None) -> dict[str, dict[str, str]]:
    """Declared tool name -> {parameter -> JSON schema type} from an OpenAI `tools` array.

    Accepts `{"type": "function", "function": {...}}` entries and bare `{"name", "parameters"}`.
    """
    out: dict[str, dict[str, str]] = {}
    for tool in tools or []:
        fn = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            continue
        props = (fn.get("parameters") or {}).get("properties") or {}
        out[name] = {p: s.get("type") for p, s in props.items() if isinstance(s, dict) and isinstance(s.get("type"), str)}
    return out


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
