"""Tool-call arguments as small models send them: JSON, Qwen's XML, and common breakage.

Rules (DESIGN.md "Model servers: what the client must absorb"; cases tool-args/args-09,
llm-streams/stream-06 and stream-07; the repairs are decisions written in docs/model-servers.md
§Arguments): a JSON object string or an object is taken as is (duplicate keys: the last wins, as
json.loads does); "" and None are {}; Qwen's `<parameter=p>…</parameter>` markup becomes {p: "…"}
(mm.llm.xmlargs); relaxed JSON (mm.llm.relaxed) is read when JSON fails, from the one object the
text holds, prose around it left out; anything else, and anything cut off, is an error text the
model can act on.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mm.llm.relaxed import Cut, Invalid, find_objects, loads_relaxed
from mm.text import one_line
from mm.llm.xmlargs import XmlParam, mixed_styles, scan_parameters

NOT_AN_OBJECT = "they are a JSON {kind}, not an object with one field per parameter"
CUT_OFF = "they end {where}, as if the call was cut off"
NOT_JSON = "{reason} (line {line}, column {column})"
UNREADABLE = "they are neither JSON nor <parameter=name>value</parameter> markup"
MANY_OBJECTS = "they hold {count} objects; send one, with one field per parameter"
IN_VALUE_OF = "inside the value of <parameter={name}>"
TEXT_AFTER_CLOSE = ("<parameter={name}> is not closed by </parameter> and text follows the closing tag after "
                    "it, so where its value ends is unclear: close it with </parameter>")
MIXED_STYLES = ("<parameter={new_line}> starts on a new line and <parameter={inline}> right after its tag, so "
                "whether that line break is part of the value is unclear: write every value on the line after its tag")

_FENCE = re.compile(r"^```[\w-]*[ \t]*\n(.*?)\n?```\s*$", re.DOTALL)
_JSON_KINDS = {list: "array", str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}


def parse_arguments(raw: str | dict | None, param_types: dict[str, str] | None = None, cut: bool = False
                    ) -> tuple[dict[str, Any] | None, str | None]:
    """Parse one tool call's arguments.

    raw: the `function.arguments` value (a JSON string, an object, or None).
    param_types: optional parameter name -> JSON schema type of the tool, used only to decode
    the values of the XML form (a declared array or object written as JSON text).
    cut: the generation stopped on its token limit right after these arguments, so they may be
    cut at their end: nothing missing at the end is supplied (closing brackets, `</parameter>`).
    Returns (arguments, None) or (None, error) where error is one short clause explaining what is
    wrong, to follow "the arguments are not a JSON object: ". Never raises.
    """
    try:
        return _parse(raw, param_types or {}, cut)
    except Exception as err:  # noqa: BLE001 - parsing model output must never crash a turn
        return None, one_line(f"{type(err).__name__}: {err}", 200)


def _parse(raw: Any, types: dict[str, str], cut: bool) -> tuple[dict | None, str | None]:
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
        raw = fenced.group(1)
        text = raw.strip()
    if _is_markup(text):
        params, _ = scan_parameters(raw)
        if params:
            return xml_arguments(params, types, cut)
    try:
        value = json.loads(text, strict=False)
    except (ValueError, RecursionError) as err:
        return _relaxed(text, err, cut)
    if isinstance(value, str) and value.strip().startswith("{"):
        inner, _ = _parse(value, types, cut)  # arguments encoded twice
        if inner is not None:
            return inner, None
    if isinstance(value, dict):
        return value, None
    return None, NOT_AN_OBJECT.format(kind=_JSON_KINDS.get(type(value), "value"))


def _is_markup(text: str) -> bool:
    """`<parameter` comes before any `{`: the text is Qwen's markup, not JSON holding it."""
    at = text.find("<parameter")
    return at != -1 and "{" not in text[:at]


def xml_arguments(params: list[XmlParam], param_types: dict[str, str] | None = None, cut: bool = False
                  ) -> tuple[dict[str, Any] | None, str | None]:
    """The arguments of scanned Qwen parameters (mm.llm.xmlargs): {name: value}, the last one
    winning. Values stay strings, except where param_types declares a non-string type and the text
    is valid JSON of it. Refused: with `cut`, a last value the text ends inside; a value that may
    hold the tag that ended it (XmlParam.text_after); a call mixing string values on a new line
    with inline values (xmlargs.mixed_styles). Never raises.
    """
    types = param_types or {}
    if cut and params and params[-1].at_end:
        return None, CUT_OFF.format(where=IN_VALUE_OF.format(name=params[-1].name))
    unclear = next((p.name for p in params if p.text_after), None)
    if unclear:
        return None, TEXT_AFTER_CLOSE.format(name=unclear)
    mixed = mixed_styles([p for p in params if p.inline or types.get(p.name) in (None, "string")])
    if mixed:
        return None, MIXED_STYLES.format(new_line=mixed[0], inline=mixed[1])
    return {p.name: _typed(p.value, types.get(p.name)) for p in params}, None


def _typed(value: str, declared: str | None) -> Any:
    if declared in (None, "string"):
        return value
    try:
        return json.loads(value.strip(), strict=False)
    except (ValueError, RecursionError):
        return value


def _relaxed(text: str, err: Exception, cut: bool) -> tuple[dict | None, str | None]:
    """The one object `text` holds, read as relaxed JSON; else why not (docs/model-servers.md)."""
    spans = find_objects(text)
    if len(spans) > 1:
        return None, MANY_OBJECTS.format(count=len(spans))
    if not spans:
        if "<parameter" in text:
            return None, UNREADABLE
        if isinstance(err, json.JSONDecodeError) and text[:1] in '{["':
            return None, NOT_JSON.format(reason=err.msg, line=err.lineno, column=err.colno)
        return None, UNREADABLE
    start, end = spans[0]
    try:
        value = loads_relaxed(text[start:end], close_at_end=not cut)
    except Cut as c:
        return None, CUT_OFF.format(where=c.where)
    except Invalid as bad:
        at = start + bad.pos
        line = text.count("\n", 0, at) + 1
        return None, NOT_JSON.format(reason=bad.msg, line=line, column=at - text.rfind("\n", 0, at))
    if isinstance(value, dict):
        return value, None
    return None, NOT_AN_OBJECT.format(kind=_JSON_KINDS.get(type(value), "value"))


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

