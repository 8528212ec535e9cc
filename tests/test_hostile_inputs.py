"""Inputs that used to crash, hang or damage: surrogates, pipes, devices, huge numbers, escapes."""

import os
import random
import stat

from harness import RecordingUI, make_conversation
from mm.tools.base import ToolContext
from mm.tools.edit.tool import EditFile
from mm.tools.read_file import ReadFile
from mm.tools.write_file import WriteFile
from mm.ui.render import call_header, preview


def split_emoji_chunks() -> list:
    """The JSON escapes of one emoji's two halves, in two chunks (raw lines: they are not UTF-8)."""
    line = 'data: {"choices": [{"index": 0, "delta": {"content": "%s"}, "finish_reason": null}]}'
    return [line % "smile \\ud83d", line % "\\ude00 ok",
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}, "data: [DONE]"]


async def test_an_emoji_split_between_chunks_is_joined(scripted_server, tmp_path):
    scripted_server.add_sse(split_emoji_chunks())
    conv = make_conversation(scripted_server.base_url, tmp_path)
    done = await conv.run_turn("hi", RecordingUI())
    assert done.stop_reason == "end_turn"
    assert conv.history[-1]["content"] == "smile 😀 ok"


async def test_lone_surrogates_in_arguments_and_file_names_never_reach_the_wire(scripted_server, tmp_path):
    os.mkdir(tmp_path / "d")
    open(os.path.join(os.fsencode(tmp_path / "d"), b"caf\xe9.txt"), "w").close()
    scripted_server.add_tool_calls([{"name": "write_file", "arguments": '{"path": "n.txt", "content": "a\\ud800b"}'}])
    scripted_server.add_tool_calls([{"name": "read_file", "arguments": {"path": "d"}}])
    scripted_server.add_reply("done")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    done = await conv.run_turn("go", RecordingUI())
    assert done.stop_reason == "end_turn" and len(scripted_server.requests) == 3
    assert (tmp_path / "n.txt").read_text() == "a\ufffdb"
    assert "caf\ufffd.txt" in scripted_server.requests[2]["messages"][-1]["content"]


async def test_a_prompt_with_undecodable_bytes(scripted_server, tmp_path):
    scripted_server.add_reply("ok")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    assert (await conv.run_turn("caf\udce9?", RecordingUI())).stop_reason == "end_turn"


async def test_thousands_of_digits_are_not_a_line_number(scripted_server, tmp_path):
    (tmp_path / "t.txt").write_text("x\n")
    digits = "".join(random.Random(7).choices("0123456789", k=5000))  # no repeating pattern: not a runaway
    scripted_server.add_tool_calls([{"name": "read_file", "arguments": {"path": "t.txt", "start": digits}}])
    scripted_server.add_reply("ok")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    ui = RecordingUI()
    assert (await conv.run_turn("go", ui)).stop_reason == "end_turn"
    assert "start: " in ui.done_calls()[0].result.text and "is not an integer" in ui.done_calls()[0].result.text


async def test_named_pipes_and_devices_are_refused_not_opened(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    ctx = ToolContext(cwd=tmp_path)
    read = await ReadFile().run({"path": "fifo"}, ctx)
    assert read.failed and read.text == ("fifo is a named pipe, not a regular file — the file tools read and write "
                                         "regular files only")
    edit = await EditFile().run({"path": "fifo", "edits": [{"old": "a", "new": "b"}]}, ctx)
    assert edit.failed and "is a named pipe" in edit.text
    write = await WriteFile().run({"path": "fifo", "content": "x"}, ctx)
    assert write.failed and write.text.endswith("; nothing was written")
    assert stat.S_ISFIFO((tmp_path / "fifo").stat().st_mode)
    os.mknod(tmp_path / "zero", stat.S_IFCHR | 0o666, os.makedev(1, 5))  # never a system path: a node of our own
    zero = await WriteFile().run({"path": "zero", "content": "x"}, ctx)
    assert zero.failed and "character device" in zero.text
    assert stat.S_ISCHR((tmp_path / "zero").stat().st_mode)


async def test_a_path_ending_with_a_slash_is_not_a_file_name(tmp_path):
    result = await WriteFile().run({"path": "newdir/", "content": ""}, ToolContext(cwd=tmp_path))
    assert result.failed and "ends with a slash" in result.text and not (tmp_path / "newdir").exists()


def test_terminal_escapes_are_shown_not_obeyed():
    shown = preview("a\x1b]0;TITLE\x07\x1b[2Jb\rc", 5, dim=False)
    assert "\x1b" not in shown and "\x07" not in shown and "\r" not in shown
    assert "^[]0;TITLE^G^[[2Jb^Mc" in shown
    assert call_header("bash", {"command": "printf '\x1b[2J'"}) == "🛠️  bash: printf '^[[2J'"
