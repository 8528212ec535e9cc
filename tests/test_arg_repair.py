"""Argument repair (issue 9, point 5; docs/model-servers.md §Arguments), through the real stream
assembler fed server chunks and, end to end, the real engine with the scripted server and real files.

Rules: one JSON object among prose is read, two or none are refused; single-quoted objects with
JSON or Python literals are read exactly; Qwen markup never leaves a closing tag in a value; a
value's own final newline is kept; cut-off arguments are refused."""

from __future__ import annotations

import pytest

from mm.config.load import agent_config_adapter
from mm.llm.args import CUT_OFF, MANY_OBJECTS, MIXED_STYLES, TEXT_AFTER_CLOSE, UNREADABLE
from mm.llm.relaxed import AFTER_COMMA, AFTER_KEY, BEFORE_CLOSERS, STRING
from mm.llm.stream import StreamAssembler
from mm.llm.textcalls import TextCallFilter
from mm.llm.types import AssistantMessage
from mm.tools.registry import build_registry

from harness import RecordingUI, make_conversation

REGISTRY = build_registry(agent_config_adapter().validate_python({}))
TOOLS = REGISTRY.schemas()


def chunk(delta: dict, finish: str | None = None) -> dict:
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def pieces(text: str, size: int = 7) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


def structured_chunks(arguments: str, tool: str = "write_file", finish: str = "tool_calls") -> list[dict]:
    return ([chunk({"role": "assistant", "content": None}),
             chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                                    "function": {"name": tool, "arguments": ""}}]})]
            + [chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces(arguments)]
            + [chunk({}, finish)])


def content_chunks(text: str, finish: str = "stop") -> list[dict]:
    return [chunk({"role": "assistant", "content": ""})] + [chunk({"content": p}) for p in pieces(text)] + [
        chunk({}, finish)]


def assemble(chunks: list[dict]) -> AssistantMessage:
    asm = StreamAssembler(TOOLS, None, "URL")
    for c in chunks:
        asm.feed(c)
    return asm.finish()


def parsed(arguments: str, tool: str = "write_file", finish: str = "tool_calls") -> tuple[dict | None, str | None]:
    """The arguments (or the error) of one structured call sent in pieces."""
    message = assemble(structured_chunks(arguments, tool, finish))
    assert len(message.tool_calls) == 1
    return message.tool_calls[0].arguments, message.tool_calls[0].error


def from_content(text: str, finish: str = "stop") -> tuple[dict | None, str | None, str]:
    """(arguments, error, remaining content) of the one call written in the text."""
    message = assemble(content_chunks(text, finish))
    assert len(message.tool_calls) == 1, message
    call = message.tool_calls[0]
    return call.arguments, call.error, message.content


# -- 1. one object among prose -------------------------------------------------------------------

@pytest.mark.parametrize("tool, text, args", [
    ("read_file", 'I\'ll read it first: {"path": "a.py"}', {"path": "a.py"}),
    ("bash", '{"command": "echo \'}\' {"}\nThat\'s the {placeholder} I meant.', {"command": "echo '}' {"}),
    ("read_file", 'Here are the arguments:\n```json\n{"path": "a.py", "start": 3}\n```\nLet me know.',
     {"path": "a.py", "start": 3}),
    ("read_file", 'Using "path" as the tool expects:\n\n{"path": "b/c.py"}\n\nThis should help.', {"path": "b/c.py"}),
    ("read_file", "Writing it now. {'path': 'a.py', 'numbered': true}", {"path": "a.py", "numbered": True}),
])
def test_one_object_among_prose_is_read(tool, text, args):
    assert parsed(text, tool) == (args, None)


@pytest.mark.parametrize("text, error", [
    ('{"path": "a.py"} {"path": "b.py"}', MANY_OBJECTS.format(count=2)),
    ('{"path": "a.py"}\nOr, if that fails:\n{\'path\': \'b.py\'}', MANY_OBJECTS.format(count=2)),
    ('Example: {"path": "x"} — now the real one: {"path": "a.py"}', MANY_OBJECTS.format(count=2)),
    ("I will read the file a.py first.", UNREADABLE),
    ("Use the {path} placeholder.", UNREADABLE),
])
def test_two_objects_or_none_are_refused(text, error):
    assert parsed(text, "read_file") == (None, error)


# -- 2. single quotes -----------------------------------------------------------------------------

@pytest.mark.parametrize("text, args", [
    ("{'path': 'a.py', 'dry_run': false}", {"path": "a.py", "dry_run": False}),
    ("{'path': 'a.py', 'dry_run': true, 'x': null}", {"path": "a.py", "dry_run": True, "x": None}),
    ("{'path': 'a.py', 'dry_run': True, 'x': None}", {"path": "a.py", "dry_run": True, "x": None}),
    ("{'content': 'say \\'hi\\' and \"bye\"\\n'}", {"content": "say 'hi' and \"bye\"\n"}),
    ("{'content': 'tab\\there, back\\\\slash, \\\"q\\\", \\u00e9t\\u00e9, caf\u00e9, a\\|b, \\d+'}",
     {"content": 'tab\there, back\\slash, "q", été, café, a\\|b, \\d+'}),
    ("{'content': \"it's John's\", \"path\": 'a.py'}", {"content": "it's John's", "path": "a.py"}),
    ("{\"content\": 'x = \"it\\'s\"', 'path': \"a.py\",}", {"content": "x = \"it's\"", "path": "a.py"}),
    ("{'edits': [{'old': 'a', 'new': 'b',},], 'path': 'x'}", {"edits": [{"old": "a", "new": "b"}], "path": "x"}),
    ("{'content': '\\ud83d\\ude00 raw\ttab\nraw newline'}", {"content": "\U0001f600 raw\ttab\nraw newline"}),
])
def test_single_quoted_objects_are_read_exactly(text, args):
    assert parsed(text) == (args, None)


@pytest.mark.parametrize("text", [
    "{'content': 'it's here', 'path': 'a.py'}",  # an apostrophe left unescaped inside '…'
    "{'path': 'a.py', 'dry_run': nope}",
    "{'path': 'a.py', 1: 2}",
])
def test_single_quoted_objects_that_are_not_readable_are_refused(text):
    args, error = parsed(text)
    assert args is None and "(line 1, column" in error


# -- 3. Qwen markup never inside a value ----------------------------------------------------------

@pytest.mark.parametrize("arguments, args", [
    ("<parameter=command>\nls -la\n</function>", {"command": "ls -la"}),
    ("<parameter=command>\nls -la\n</function>\n</tool_call>", {"command": "ls -la"}),
    ("<parameter=command>\nls -la\n</tool_call>", {"command": "ls -la"}),
    ("<function=bash>\n<parameter=command>\nls -la\n</function>", {"command": "ls -la"}),
    ("<tool_call>\n<function=bash>\n<parameter=command>\nls -la\n", {"command": "ls -la"}),
])
def test_markup_in_the_arguments_string_never_ends_a_value(arguments, args):
    assert parsed(arguments, "bash") == (args, None)


QWEN = "<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/a.py\n</parameter>\n<parameter=content>\n{value}\n"


@pytest.mark.parametrize("ending", [
    "</parameter>\n</function>\n</tool_call>",  # complete
    "</function>\n</tool_call>",  # no </parameter>
    "</parameter>\n</tool_call>",  # no </function>
    "</parameter>\n</function>",  # no </tool_call>
    "</tool_call>",  # neither </parameter> nor </function>
    "",  # no closing tag at all
])
@pytest.mark.parametrize("value", ["def f():\n    return '</x>'\n", "no final newline", "\tx = 1\n\n"])
def test_markup_in_the_text_never_ends_a_value(ending, value):
    text = QWEN.format(value=value) + ending
    args, error, rest = from_content(text)
    assert (args, error, rest) == ({"path": "src/a.py", "content": value}, None, "")
    shown = TextCallFilter(REGISTRY.names)
    assert "".join(shown.feed(p) for p in pieces(text, 3)) + shown.flush() == ""


def test_a_bare_function_without_its_tags():
    text = "Writing it.\n<function=write_file>\n<parameter=path>\na.py\n<parameter=content>\nx\n\n</tool_call>"
    assert from_content(text) == ({"path": "a.py", "content": "x\n"}, None, "Writing it.")


def test_a_closing_tag_inside_a_closed_value_is_part_of_it():
    value = "Qwen ends a call with </function> then </tool_call>.\n"
    text = QWEN.format(value=value) + "</parameter>\n</function>\n</tool_call>\nDone."
    assert from_content(text) == ({"path": "src/a.py", "content": value}, None, "Done.")


def test_an_unclosed_value_followed_by_text_after_its_closing_tag_is_refused():
    text = QWEN.format(value="see") + "</function> for the end of a call.\n"
    args, error, _ = from_content(text)
    assert args is None and error == TEXT_AFTER_CLOSE.format(name="content")


def test_two_calls_in_the_text_one_without_its_parameter_close():
    first = QWEN.format(value="x = 1\n") + "</function>\n</tool_call>\n"
    second = "<tool_call>\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>"
    message = assemble(content_chunks(first + second))
    assert [(c.name, c.arguments) for c in message.tool_calls] == [
        ("write_file", {"path": "src/a.py", "content": "x = 1\n"}), ("bash", {"command": "ls"})]


# -- 4. a value's own final newline is kept -------------------------------------------------------

@pytest.mark.parametrize("arguments, content", [
    ("<parameter=path>\na.py\n</parameter>\n<parameter=content>\nx\n\n</parameter>\n", "x\n"),  # the template
    ("<parameter=path>\na.py\n</parameter>\n<parameter=content>\nx\n</parameter>\n", "x"),
    ("<parameter=path>a.py</parameter><parameter=content>x\n</parameter>", "x\n"),  # inline
    ("<parameter=path>a.py</parameter><parameter=content>x\n\n</parameter>", "x\n\n"),
    ("<parameter=path>\na.py\n</parameter>\n<parameter=content>\nx\n\n", "x\n"),  # no </parameter>
    ("<parameter=path>\na.py\n</parameter>\n<parameter=content>\nx\n\n</function>", "x\n"),
    ("<parameter=path>\r\na.py\r\n</parameter>\r\n<parameter=content>\r\nx\r\n\r\n</parameter>", "x\r\n"),
    ('{"path": "a.py", "content": "x\\n"}', "x\n"),
    ("{'path': 'a.py', 'content': 'x\\n'}", "x\n"),
    ('Writing: {"path": "a.py", "content": "x\\n\\n"}', "x\n\n"),
])
def test_the_final_newline_of_a_value_is_kept(arguments, content):
    assert parsed(arguments) == ({"path": "a.py", "content": content}, None)


def test_a_value_on_a_new_line_beside_an_inline_one_is_refused():
    args, error = parsed("<parameter=path>a.py</parameter>\n<parameter=content>\n\ndef f(): pass\n</parameter>")
    assert args is None and error == MIXED_STYLES.format(new_line="content", inline="path")


def test_typed_values_do_not_count_as_a_style():
    args, error = parsed('<parameter=path>a.py</parameter>\n<parameter=edits>\n[{"old": "a", "new": "b"}]\n'
                         "</parameter>", "edit_file")
    assert (args, error) == ({"path": "a.py", "edits": [{"old": "a", "new": "b"}]}, None)


# -- 5. cut-off arguments are refused --------------------------------------------------------------

@pytest.mark.parametrize("arguments, finish, where", [
    ('{"path": "a.py", "content": "def f():\\n    ret', "tool_calls", STRING),
    ('{"path": "a.py", "content": "def f():\\n    ret', "length", STRING),
    ('{"path": "a.py", "content": "x\\', "length", STRING),
    ('{"path": "a.py", "content"', "length", AFTER_KEY.format(key='"content"')),
    ('{"path": "a.py", "content": ', "tool_calls", AFTER_KEY.format(key='"content"')),
    ('{"path": "a.py",', "length", AFTER_COMMA),
    ('{"path": "a.py", "content": "x"', "length", BEFORE_CLOSERS),
    ("{'path': 'a.py', 'content': 'def f", "tool_calls", STRING),
])
def test_cut_off_json_is_refused(arguments, finish, where):
    assert parsed(arguments, finish=finish) == (None, CUT_OFF.format(where=where))


def test_the_existing_cut_off_message_is_unchanged():
    assert CUT_OFF.format(where=STRING) == "they end inside a string, as if the call was cut off"


def test_missing_closers_are_supplied_only_when_the_model_stopped_by_itself():
    assert parsed('{"path": "a.py", "content": "x"', finish="tool_calls") == ({"path": "a.py", "content": "x"}, None)


def test_markup_cut_by_the_token_limit_is_refused():
    args, error = parsed("<parameter=path>\na.py\n</parameter>\n<parameter=content>\nx = 1\n", finish="length")
    assert args is None and error == CUT_OFF.format(where="inside the value of <parameter=content>")
    args, error, _ = from_content(QWEN.format(value="x = 1"), finish="length")
    assert args is None and error == CUT_OFF.format(where="inside the value of <parameter=content>")
    args, error, _ = from_content("<tool_call>\n<function=write_file>\n<parameter=path>\na.py\n</parameter>\n",
                                  finish="length")
    assert args is None and error == CUT_OFF.format(where="before the call's closing tag")


def test_a_complete_call_before_the_token_limit_runs():
    text = QWEN.format(value="x = 1\n") + "</parameter>\n</function>"  # only </tool_call> left to write
    assert from_content(text, finish="length") == ({"path": "src/a.py", "content": "x = 1\n"}, None, "")
    assert parsed('{"path": "a.py", "content": "x"}', finish="length") == ({"path": "a.py", "content": "x"}, None)


# -- end to end: the engine, the scripted server, real files ----------------------------------------

async def test_a_file_written_in_qwen_form_keeps_its_final_newline(scripted_server, tmp_path):
    text = ("I'll write it.\n<tool_call>\n<function=write_file>\n<parameter=path>\nout.py\n</parameter>\n"
            "<parameter=content>\ndef f():\n    return 'x'\n\n</function>\n</tool_call>")
    scripted_server.add_sse(content_chunks(text))
    scripted_server.add_reply("Done.")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    ui = RecordingUI()
    await conv.run_turn("write out.py", ui)
    assert (tmp_path / "out.py").read_bytes() == b"def f():\n    return 'x'\n"
    assert [d.name for d in ui.done_calls()] == ["write_file"] and not ui.done_calls()[0].result.failed


async def test_single_quoted_arguments_run_the_tool(scripted_server, tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    arguments = "Here: {'path': 'a.py', 'edits': [{'old': 'x = 1', 'new': 'x = \"it\\'s\"'}], 'dry_run': false}"
    scripted_server.add_sse(structured_chunks(arguments, "edit_file"))
    scripted_server.add_reply("Done.")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    await conv.run_turn("edit a.py", RecordingUI())
    assert (tmp_path / "a.py").read_text() == "x = \"it's\"\n"


async def test_a_cut_off_write_writes_nothing_and_says_why(scripted_server, tmp_path):
    arguments = '{"path": "big.py", "content": "def f():\\n    return 1\\n\\ndef g():\\n    ret'
    scripted_server.add_sse(structured_chunks(arguments, "write_file", finish="length"))
    scripted_server.add_reply("I will split it.")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    ui = RecordingUI()
    done = await conv.run_turn("write big.py", ui)
    assert not (tmp_path / "big.py").exists()
    kept = conv.history[-1]  # the refusal stays in the history: "go on" continues from it
    assert kept["role"] == "tool" and kept["content"].startswith(
        "[write_file: invalid call, nothing was run — the arguments are not a JSON object: "
        "they end inside a string, as if the call was cut off. You sent: ")
    # cut by the output limit, the turn ends and says so rather than letting the model hit it again
    assert done.stop_reason == "max_tokens" and len(scripted_server.requests) == 1
    assert done.error.startswith("[the write_file call was cut at the model's output limit")


async def test_a_cut_off_qwen_write_in_the_text_writes_nothing(scripted_server, tmp_path):
    text = "<tool_call>\n<function=write_file>\n<parameter=path>\nbig.py\n</parameter>\n<parameter=content>\ndef f():\n"
    scripted_server.add_sse(content_chunks(text, finish="length"))
    scripted_server.add_reply("I will split it.")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    ui = RecordingUI()
    await conv.run_turn("write big.py", ui)
    assert not (tmp_path / "big.py").exists()
    assert "inside the value of <parameter=content>, as if the call was cut off" in ui.done_calls()[0].result.text
