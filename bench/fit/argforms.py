"""The forms a call's arguments take when a small model writes them: the plain correct ones, and
the mistaken ones of issue 9 point 5, each rendered from the call the model meant.

A form is (name, where, fixable, finish, render): `where` is "arguments" (the structured call's
`arguments` string) or "content" (the call written in the message text); `render(call, rng)`
returns the text, or None when the form does not apply to that call (a cut after a comma needs
two fields). Qwen's markup follows Qwen3-Coder's chat template: `<parameter=name>\\n` + value +
`\\n</parameter>\\n`, every tag on its own line; a missing closing tag is a missing line.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any, Callable

from bench.fit.argcalls import Call

PROSE_BEFORE = ["I'll update the file now.", "Let me read the file first:", "Here are the arguments:",
                "Running the tests to see what fails.", 'Using the "edits" field as the tool expects:',
                "Now I'll apply the change (it's small):"]
PROSE_AFTER = ["This should fix the failing test.", "Let me know if you'd like a different approach.",
               "After this I'll run the tests again.", "Note: the {name} placeholder is filled later."]


@dataclass
class Form:
    name: str
    where: str  # "arguments" | "content"
    fixable: bool
    finish: str
    render: Callable[[Call, random.Random], str | None]


# -- JSON and relaxed JSON ----------------------------------------------------------------------

def as_json(value: Any, rng: random.Random) -> str:
    return json.dumps(value, ensure_ascii=rng.random() < 0.3, indent=rng.choice([None, None, 2]))


def quoted(text: str, style: str, rng: random.Random) -> str:
    """`text` as a string literal: "single" ('…', \\' inside), "mixed" (double quotes when the
    text holds an apostrophe and no double quote, as Python's repr chooses), "bare" (single
    quotes, apostrophes inside left unescaped); JSON escapes otherwise."""
    body = json.dumps(text, ensure_ascii=False)[1:-1]
    if style == "mixed" and "'" in text and '"' not in text:
        return '"' + body + '"'
    if rng.random() < 0.7:
        body = body.replace('\\"', '"')
    return "'" + (body if style == "bare" else body.replace("'", "\\'")) + "'"


def py_dumps(value: Any, style: str, python: bool, rng: random.Random) -> str:
    """An object written with single quotes; literals as JSON (true…) or Python (True…) writes them."""
    if isinstance(value, bool) or value is None:
        names = ("True", "False", "None") if python else ("true", "false", "null")
        return names[0] if value is True else names[1] if value is False else names[2]
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        return quoted(value, style, rng)
    if isinstance(value, list):
        return "[" + ", ".join(py_dumps(v, style, python, rng) for v in value) + "]"
    return "{" + ", ".join(f"{quoted(k, 'single', rng)}: {py_dumps(v, style, python, rng)}"
                           for k, v in value.items()) + "}"


def apostrophes_unescaped(call: Call, rng: random.Random) -> str | None:
    if not any("'" in s for s in _strings(call.args)):
        return None
    return py_dumps(call.args, "bare", False, rng)


def members(args: dict) -> list[str]:
    return [f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in args.items()]


def cut_in_string(call: Call, rng: random.Random) -> str | None:
    """Cut inside the longest string of the arguments."""
    text = "{" + ", ".join(members(call.args)) + "}"
    strings = [s for s in _strings(call.args) if len(s) >= 2]
    if not strings:
        return None
    encoded = json.dumps(max(strings, key=len), ensure_ascii=False)
    at = _unescaped(text, encoded)
    return None if at == -1 else text[:rng.randint(at + 1, at + len(encoded) - 1)]


def cut_after_key(call: Call, rng: random.Random) -> str | None:
    parts = members(call.args)
    if len(parts) < 2:
        return None
    i = rng.randrange(1, len(parts))
    key = json.dumps(list(call.args)[i])
    return "{" + ", ".join(parts[:i]) + ", " + key + rng.choice(["", ":", ": "])


def cut_after_comma(call: Call, rng: random.Random) -> str | None:
    parts = members(call.args)
    if len(parts) < 2:
        return None
    return "{" + ", ".join(parts[:rng.randrange(1, len(parts))]) + rng.choice([",", ", ", ",\n"])


def two_objects(call: Call, rng: random.Random) -> str:
    """The call's object, then a second one with another path or command."""
    key = "path" if "path" in call.args else "command"
    other = {**call.args, key: "other/" + call.args[key]}
    return as_json(call.args, rng) + rng.choice(["\n\nOr, if that fails:\n", "\n", " or "]) + as_json(other, rng)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _unescaped(text: str, needle: str) -> int:
    """Index of `needle` in `text` not preceded by a backslash (a string of the object itself)."""
    at = text.find(needle)
    while at > 0 and text[at - 1] == "\\":
        at = text.find(needle, at + 1)
    return at


# -- Qwen's markup ------------------------------------------------------------------------------

def xml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def xml_params(args: dict, inline: bool = False) -> list[str]:
    """One entry per parameter, as the template writes it (or inline: no markup line breaks)."""
    if inline:
        return [f"<parameter={k}>{xml_value(v)}</parameter>\n" for k, v in args.items()]
    return [f"<parameter={k}>\n{xml_value(v)}\n</parameter>\n" for k, v in args.items()]


def unclosed(entry: str) -> str:
    """A parameter whose `</parameter>` line is missing."""
    return entry[: -len("</parameter>\n")]


def wrapped(call: Call, params: str, function_close: bool = True, tool_call: str = "both") -> str:
    """The call in the content: `<function=…>` and its parameters, `</function>` unless
    function_close is False, inside `<tool_call>` tags: "both", "open" only, "close" only or "none"."""
    text = f"<function={call.tool}>\n{params}" + ("</function>\n" if function_close else "")
    if tool_call in ("both", "open"):
        text = "<tool_call>\n" + text
    if tool_call in ("both", "close"):
        return text + "</tool_call>"
    return text[:-1] if function_close else text  # the message ends after </function>, or in the value


def last_unclosed(call: Call) -> str:
    entries = xml_params(call.args)
    return "".join(entries[:-1]) + unclosed(entries[-1])


def middle_unclosed(call: Call) -> str | None:
    entries = xml_params(call.args)
    if len(entries) < 2:
        return None
    return unclosed(entries[0]) + "".join(entries[1:])


def cut_in_value(prefix: str, call: Call, rng: random.Random) -> str:
    """Cut inside the last parameter's value (at any point of it, its first character included)."""
    entries = xml_params(call.args)
    head = prefix + "".join(entries[:-1])
    last = entries[-1]
    start = last.index(">\n") + 2
    return head + last[:rng.randint(start, len(last) - len("\n</parameter>\n"))]


def cut_between(prefix: str, call: Call) -> str | None:
    entries = xml_params(call.args)
    if len(entries) < 2:
        return None
    return prefix + entries[0]


QWEN_OPEN = "<tool_call>\n<function={tool}>\n"


def _cut_tag_json(call: Call, rng: random.Random) -> str | None:
    body = cut_in_string(call, rng)
    return None if body is None else f'<tool_call>\n{{"name": "{call.tool}", "arguments": ' + body


def _qwen_prefix(call: Call) -> str:
    return QWEN_OPEN.format(tool=call.tool)


def _prose(rng: random.Random, options: list[str]) -> str:
    return rng.choice(options)


FORMS: list[Form] = [
    # structured calls: the `arguments` string
    Form("JSON (control)", "arguments", True, "tool_calls", lambda c, r: as_json(c.args, r)),
    Form("JSON, prose before", "arguments", True, "tool_calls",
         lambda c, r: _prose(r, PROSE_BEFORE) + r.choice(["\n", " ", "\n\n"]) + as_json(c.args, r)),
    Form("JSON, prose after", "arguments", True, "tool_calls",
         lambda c, r: as_json(c.args, r) + r.choice(["\n", " ", "\n\n"]) + _prose(r, PROSE_AFTER)),
    Form("JSON fenced, prose around", "arguments", True, "tool_calls",
         lambda c, r: _prose(r, PROSE_BEFORE) + "\n```json\n" + as_json(c.args, r) + "\n```\n" + _prose(r, PROSE_AFTER)),
    Form("single quotes, JSON literals", "arguments", True, "tool_calls",
         lambda c, r: py_dumps(c.args, "single", False, r)),
    Form("mixed quotes, JSON literals", "arguments", True, "tool_calls",
         lambda c, r: py_dumps(c.args, "mixed", False, r)),
    Form("Python literal (True/None)", "arguments", True, "tool_calls",
         lambda c, r: py_dumps(c.args, "mixed", True, r)),
    Form("single quotes, prose before", "arguments", True, "tool_calls",
         lambda c, r: _prose(r, PROSE_BEFORE) + "\n" + py_dumps(c.args, "single", False, r)),
    Form("missing final brace", "arguments", True, "tool_calls",
         lambda c, r: "{" + ", ".join(members(c.args))),
    Form("XML (template)", "arguments", True, "tool_calls", lambda c, r: "".join(xml_params(c.args))),
    Form("XML inline", "arguments", True, "tool_calls", lambda c, r: "".join(xml_params(c.args, inline=True))),
    Form("XML, last </parameter> missing", "arguments", True, "tool_calls", lambda c, r: last_unclosed(c)),
    Form("XML, a middle </parameter> missing", "arguments", True, "tool_calls", lambda c, r: middle_unclosed(c)),
    Form("XML + </function>, last </parameter> missing", "arguments", True, "tool_calls",
         lambda c, r: last_unclosed(c) + r.choice(["</function>", "</function>\n</tool_call>", "</tool_call>"])),
    Form("XML with its <function=…> tags", "arguments", True, "tool_calls",
         lambda c, r: wrapped(c, "".join(xml_params(c.args)), tool_call=r.choice(["none", "both"]))),
    Form("XML with its <function=…> tags, </parameter> missing", "arguments", True, "tool_calls",
         lambda c, r: wrapped(c, last_unclosed(c), tool_call=r.choice(["none", "both", "close"]))),
    # calls written in the content
    Form("<tool_call> JSON in the text (control)", "content", True, "stop",
         lambda c, r: "<tool_call>\n" + as_json({"name": c.tool, "arguments": c.args}, r) + "\n</tool_call>"),
    Form("<tool_call> single quotes in the text", "content", True, "stop",
         lambda c, r: "<tool_call>\n" + py_dumps({"name": c.tool, "arguments": c.args}, "mixed", False, r)
         + "\n</tool_call>"),
    Form("Qwen form in the text (control)", "content", True, "stop",
         lambda c, r: wrapped(c, "".join(xml_params(c.args)))),
    Form("Qwen form, prose after", "content", True, "stop",
         lambda c, r: wrapped(c, "".join(xml_params(c.args))) + r.choice(["\n", "\n\n"]) + _prose(r, PROSE_AFTER)),
    Form("Qwen form, prose before", "content", True, "stop",
         lambda c, r: _prose(r, PROSE_BEFORE) + "\n" + wrapped(c, "".join(xml_params(c.args)))),
    Form("Qwen form, last </parameter> missing", "content", True, "stop",
         lambda c, r: wrapped(c, last_unclosed(c))),
    Form("Qwen form, </function> missing", "content", True, "stop",
         lambda c, r: wrapped(c, "".join(xml_params(c.args)), function_close=False)),
    Form("Qwen form, </tool_call> missing", "content", True, "stop",
         lambda c, r: wrapped(c, "".join(xml_params(c.args)), tool_call="open")),
    Form("Qwen form, </parameter> and </function> missing", "content", True, "stop",
         lambda c, r: wrapped(c, last_unclosed(c), function_close=False)),
    Form("Qwen form, every closing tag missing", "content", True, "stop",
         lambda c, r: wrapped(c, last_unclosed(c), function_close=False, tool_call="open")),
    Form("bare <function=…>, </parameter> missing", "content", True, "stop",
         lambda c, r: wrapped(c, last_unclosed(c), tool_call=r.choice(["none", "close"]))),
    # must be refused
    Form("two objects (refuse)", "arguments", False, "tool_calls", two_objects),
    Form("no object, prose only (refuse)", "arguments", False, "tool_calls",
         lambda c, r: _prose(r, PROSE_BEFORE) + " " + _prose(r, PROSE_AFTER)),
    Form("cut inside a string (refuse)", "arguments", False, "length", cut_in_string),
    Form("cut inside a string, stop (refuse)", "arguments", False, "tool_calls", cut_in_string),
    Form("cut after a key (refuse)", "arguments", False, "length", cut_after_key),
    Form("cut after a comma (refuse)", "arguments", False, "length", cut_after_comma),
    Form("cut before the closing brace (refuse)", "arguments", False, "length",
         lambda c, r: "{" + ", ".join(members(c.args))),
    Form("single quotes, apostrophes not escaped (refuse)", "arguments", False, "tool_calls",
         apostrophes_unescaped),
    Form("<tool_call> JSON cut inside a string (refuse)", "content", False, "length",
         lambda c, r: _cut_tag_json(c, r)),
    Form("XML cut inside a value (refuse)", "arguments", False, "length", lambda c, r: cut_in_value("", c, r)),
    Form("Qwen form cut inside a value (refuse)", "content", False, "length",
         lambda c, r: cut_in_value(_qwen_prefix(c), c, r)),
    Form("Qwen form cut between parameters (refuse)", "content", False, "length",
         lambda c, r: cut_between(_qwen_prefix(c), c)),
]
