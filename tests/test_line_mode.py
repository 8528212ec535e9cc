"""Line mode driven by real keystrokes (prompt_toolkit's pipe input) against the scripted server."""

import asyncio
import io

import pytest



ESC = "\x1b"  # a lone Esc: prompt_toolkit tells it from an Esc sequence after `ttimeoutlen` (0.5 s)


def console_to(buffer: io.StringIO, colour: bool = False):
    from rich.console import Console

    if colour:
        return Console(file=buffer, width=100, force_terminal=True, color_system="standard")
    return Console(file=buffer, width=100, force_terminal=False, color_system=None)


async def drive(srv, tmp_path, keys: list[str], config: dict | None = None, resume: str | None = None,
                status: int = 0, colour: bool = False) -> str:
    """Type `keys` (one string per prompt) into line mode and return what it printed; after a lone
    Esc the next key waits until prompt_toolkit has taken the Esc as a key of its own."""
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from mm.config.load import agent_config_adapter
    from mm.ui.line.app import run_line_mode

    cfg = agent_config_adapter().validate_python({"baseUrl": srv.base_url, "model": "m", **(config or {})})
    out = io.StringIO()
    with create_pipe_input() as pipe:
        task = asyncio.create_task(run_line_mode(cfg, tmp_path, input=pipe, output=DummyOutput(),
                                                 console=console_to(out, colour), resume=resume))
        previous = ""
        for key in keys:
            await asyncio.sleep(1.0 if previous == ESC else 0.3)
            pipe.send_text(key)
            previous = key
        returned = await asyncio.wait_for(task, 20)
    assert returned == status, out.getvalue()
    return out.getvalue()


async def test_a_conversation_with_a_tool_call(scripted_server, tmp_path):
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": "echo from-bash"}}])
    scripted_server.add_reply("The command printed **from-bash**.")
    shown = await drive(scripted_server, tmp_path, ["run it\r", "/quit\r"])
    assert "mm v" in shown and f"OpenAI-compatible m at {scripted_server.base_url}" in shown and "tools: bash, read_file, write_file, edit_file, ask_user" in shown
    assert "🛠️  bash: echo from-bash" in shown and "from-bash" in shown
    assert "The command printed from-bash." in shown  # rendered Markdown: no asterisks
    assert "⚙ 1 command(s) · 📝 0 file op(s)" in shown
    assert scripted_server.requests[0]["messages"][-1] == {"role": "user", "content": "run it"}


@pytest.mark.parametrize("answer,ran,asked_twice", [("a", True, True), ("s", True, False),
                                                    ("r", False, True), ("n", False, False)])
async def test_permission_prompt_four_ways(scripted_server, tmp_path, answer, ran, asked_twice):
    for name in ("one", "two"):
        scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": f"touch {name}"}}])
    scripted_server.add_reply("done")
    keys = ["go\r", answer + "\r"] + (["r\r"] if asked_twice else []) + ["/quit\r"]
    shown = await drive(scripted_server, tmp_path, keys, {"yolo": False})
    # each call named once, by its header: the question is the prompt's own line (🔐 bash: allow? …)
    assert "🛠️  bash: touch one" in shown and "🛠️  bash: touch two" in shown and "🔐" not in shown
    rejected = "[command rejected by the user]"
    assert (scripted_server.requests[1]["messages"][-1]["content"] == rejected) == (not ran)
    assert (scripted_server.requests[2]["messages"][-1]["content"] == rejected) == (answer != "s")
    assert (tmp_path / "one").exists() == ran
    assert (tmp_path / "two").exists() == (answer == "s")


async def test_unknown_command_and_multiline_input(scripted_server, tmp_path):
    scripted_server.add_reply("ok")
    shown = await drive(scripted_server, tmp_path, ["/nope\r", "line one\x1b\rline two\r", "/quit\r"])
    assert "unknown command /nope" in shown
    assert scripted_server.requests[0]["messages"][-1]["content"] == "line one\nline two"


async def test_ask_user_form(scripted_server, tmp_path):
    scripted_server.add_tool_calls([{"id": "q1", "name": "ask_user", "arguments": {"questions": [
        {"question": "Indent with?", "options": ["tabs", "spaces"], "default": "tabs"},
        {"question": "Run the tests?", "type": "yesno"}]}}])
    scripted_server.add_reply("Thanks.")
    shown = await drive(scripted_server, tmp_path, ["go\r", "2\r", "maybe\r", "oui\r", "/quit\r"])
    assert "❓ ask_user: 2 question(s)\n❓ Indent with?\n  1. tabs (default)\n  2. spaces\n" in shown
    assert shown.count("(y or n; /skip declines)") == 2  # the hint again after "maybe"
    tool_msg = scripted_server.requests[1]["messages"][-1]
    assert tool_msg == {"role": "tool", "tool_call_id": "q1",
                        "content": "The user answered:\n- Indent with? → spaces\n- Run the tests? → yes"}


async def test_ask_user_skip_declines(scripted_server, tmp_path):
    scripted_server.add_tool_calls([{"id": "q1", "name": "ask_user", "arguments": {"question": "Name?"}}])
    scripted_server.add_reply("ok")
    await drive(scripted_server, tmp_path, ["go\r", "/skip\r", "/quit\r"])
    assert scripted_server.requests[1]["messages"][-1]["content"] == (
        "[the user declined to answer: do not ask the same thing again; go on without it or stop]")


async def test_new_compact_usage(scripted_server, tmp_path):
    scripted_server.add_reply("first answer", usage=(100, 20))
    scripted_server.add_reply("second answer", usage=(150, 30))
    scripted_server.add_reply("A summary of the first turn.")
    shown = await drive(scripted_server, tmp_path, ["one\r", "two\r", "/compact\r", "/usage\r", "/new\r", "/quit\r"],
                        {"context": {"keepLastTurns": 1}})
    assert "🗜️ compressed " in shown and "→ 1 summary + " in shown
    assert "📊 session: " in shown
    assert "🆕 New session: " in shown and "message(s) forgotten." in shown


async def test_memory_finds_an_earlier_conversation(scripted_server, tmp_path):
    config = {"sessions": {"enabled": True}}
    scripted_server.add_reply("Use tabs for Go code.")
    await drive(scripted_server, tmp_path, ["How should I indent golang?\r", "/quit\r"], config)
    shown = await drive(scripted_server, tmp_path, ["/memory golang\r", "/memory\r", "/quit\r"], config)
    assert '🔎 1 hit(s) for "golang" in ' in shown and "→ Use tabs for Go code." in shown
    assert "⚠️ nothing to search: give one or more words" in shown


async def test_resume_sessions_and_new_keeps_the_previous_conversation(scripted_server, tmp_path):
    config = {"sessions": {"enabled": True}}
    scripted_server.add_reply("Paris.")
    await drive(scripted_server, tmp_path, ["capital of France?\r", "/quit\r"], config)
    (saved,) = (tmp_path / ".mm" / "sessions").glob("*.json")
    scripted_server.add_reply("Berlin.")
    shown = await drive(scripted_server, tmp_path, ["and Germany?\r", "/sessions\r", "/new\r", "/quit\r"],
                        config, resume="")
    assert f"resumed {saved.stem}: 2 message(s)" in shown
    sent = scripted_server.requests[1]["messages"]
    assert [m["content"] for m in sent[1:]] == ["capital of France?", "Paris.", "and Germany?"]
    assert f"{saved.stem} · " in shown and "capital of France?" in shown and "/sessions <id>" in shown
    files = sorted((tmp_path / ".mm" / "sessions").glob("*.json"))
    assert len(files) == 2  # /new kept the conversation under a new id; the resumed file starts afresh


async def test_resume_needs_sessions_and_a_known_id(scripted_server, tmp_path):
    shown = await drive(scripted_server, tmp_path, [], resume="", status=2)
    assert "sessions are off" in shown
    shown = await drive(scripted_server, tmp_path, [], {"sessions": {"enabled": True}}, resume="nope", status=2)
    assert "no saved conversation nope in " in shown


async def test_sessions_id_goes_on_with_that_conversation(scripted_server, tmp_path):
    config = {"sessions": {"enabled": True}}
    scripted_server.add_reply("Paris.")
    await drive(scripted_server, tmp_path, ["capital of France?\r", "/quit\r"], config)
    (saved,) = (tmp_path / ".mm" / "sessions").glob("*.json")
    scripted_server.add_reply("Rome.")
    shown = await drive(scripted_server, tmp_path, [f"/sessions {saved.stem}\r", "and Italy?\r", "/quit\r"], config)
    assert f"resumed {saved.stem}: 2 message(s)" in shown
    assert [m["content"] for m in scripted_server.requests[1]["messages"][1:]] == [
        "capital of France?", "Paris.", "and Italy?"]
    assert len(list((tmp_path / ".mm" / "sessions").glob("*.json"))) == 1  # the same file goes on


async def test_a_stray_word_does_not_allow_a_command(scripted_server, tmp_path):
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": "touch ran"}}])
    scripted_server.add_reply("done")
    shown = await drive(scripted_server, tmp_path, ["go\r", "again\r", "r\r", "/quit\r"], {"yolo": False})
    assert "🛠️  bash: touch ran" in shown and not (tmp_path / "ran").exists()
    assert scripted_server.requests[1]["messages"][-1]["content"] == "[command rejected by the user]"


DECLINED = "[the user declined to answer: do not ask the same thing again; go on without it or stop]"


async def test_esc_at_the_permission_prompt_rejects_and_stops_the_turn(scripted_server, tmp_path):
    scripted_server.add_tool_calls([{"id": "c1", "name": "bash", "arguments": {"command": "touch ran"}}])
    scripted_server.add_reply("never read: Esc stopped the turn")
    shown = await drive(scripted_server, tmp_path, ["go\r", ESC, "line one\x1b\rline two\r", "/quit\r"],
                        {"yolo": False})
    assert "Esc Enter for a new line · Esc or Ctrl-C cancels the turn" in shown  # the help line
    assert "🛠️  bash: touch ran" in shown and "[command rejected by the user]" in shown
    assert not (tmp_path / "ran").exists()
    assert len(scripted_server.requests) == 2  # no request after the rejection: the turn stopped
    sent = scripted_server.requests[1]["messages"]
    assert sent[-2] == {"role": "tool", "tool_call_id": "c1", "content": "[command rejected by the user]"}
    assert sent[-1] == {"role": "user", "content": "line one\nline two"}  # Esc-Enter works again after


async def test_esc_at_an_ask_user_question_declines_the_whole_form(scripted_server, tmp_path):
    scripted_server.add_tool_calls([{"id": "q1", "name": "ask_user", "arguments": {"questions": [
        {"question": "Name?"}, {"question": "Age?"}]}}])
    scripted_server.add_reply("ok, going on without it")
    shown = await drive(scripted_server, tmp_path, ["go\r", ESC, "/quit\r"])
    assert "❓ Name?" in shown and "❓ Age?" not in shown
    assert "ok, going on without it" in shown  # declined, not cancelled: the turn goes on
    assert scripted_server.requests[1]["messages"][-1] == {"role": "tool", "tool_call_id": "q1",
                                                          "content": DECLINED}


def _file_calls(server, path: str) -> None:
    server.add_tool_calls([{"name": "write_file", "arguments": {"path": path, "content": "one\nTWO\nthree\n"}}])
    server.add_tool_calls([{"name": "edit_file", "arguments": {"path": path,
                                                              "edits": [{"old": "three", "new": "3\n4"}]}}])
    server.add_reply("done")


async def test_the_permission_prompt_shows_the_diff_of_write_file_and_edit_file(scripted_server, tmp_path):
    (tmp_path / "notes.txt").write_text("one\ntwo\nthree\n")
    _file_calls(scripted_server, "notes.txt")
    shown = await drive(scripted_server, tmp_path, ["go\r", "a\r", "a\r", "/quit\r"], {"yolo": False})
    assert ("📝 write_file: notes.txt\n"
            "   @@ -1,3 +1,3 @@\n"
            "    1 │ one\n"
            "   -2 │ two\n"
            "   +2 │ TWO\n"
            "    3 │ three\n"
            "   notes.txt: replaced") in shown  # the answers' line goes to the prompt, then the result
    assert ("📝 edit_file: notes.txt\n"
            "   @@ -1,3 +1,4 @@\n"
            "    1 │ one\n"
            "    2 │ TWO\n"
            "   -3 │ three\n"
            "   +3 │ 3\n"
            "   +4 │ 4\n"
            "   notes.txt: 1 edit applied") in shown
    assert (tmp_path / "notes.txt").read_text() == "one\nTWO\n3\n4\n"


async def test_the_diff_is_coloured_on_a_colour_console(scripted_server, tmp_path):
    (tmp_path / "notes.txt").write_text("one\ntwo\nthree\n")
    _file_calls(scripted_server, "notes.txt")
    shown = await drive(scripted_server, tmp_path, ["go\r", "r\r", "r\r", "/quit\r"], {"yolo": False}, colour=True)
    assert "\x1b[32m+2 │ TWO\x1b[0m" in shown and "\x1b[31m-2 │ two\x1b[0m" in shown
    assert "\x1b[31m-3 │ three\x1b[0m" in shown and "\x1b[32m+4 │ 4\x1b[0m" in shown
    assert (tmp_path / "notes.txt").read_text() == "one\ntwo\nthree\n"  # both rejected


async def test_a_long_diff_is_cut_at_40_lines(scripted_server, tmp_path):
    content = "".join(f"line {n}\n" for n in range(1, 51))
    scripted_server.add_tool_calls([{"name": "write_file", "arguments": {"path": "long.txt", "content": content}}])
    scripted_server.add_reply("done")
    shown = await drive(scripted_server, tmp_path, ["go\r", "r\r", "/quit\r"], {"yolo": False})
    start, end = shown.index("📝 write_file: long.txt\n"), shown.index("[write_file rejected by the user]")
    asked = shown[start:end].split("\n")
    assert asked[1] == "   @@ -0,0 +1,50 @@" and asked[2] == "   + 1 │ line 1"
    assert asked[40] == "   +39 │ line 39" and asked[41] == "   … (11 more line(s))"
    assert not (tmp_path / "long.txt").exists()


def test_a_command_of_several_lines_and_control_characters_in_the_question():
    from mm.ui.line.permission import permission_text

    # bash's header shows the whole command: nothing more before the question
    assert permission_text("bash", "printf '\x1b[2J'\nrm -1 │ x\n+3 │ not a diff row of bash") is None
    # an asked agent's title, then rows that are no diff: shown plain, control characters in caret notation
    shown = permission_text("helper asks", "bash: printf\nrm -1 │ \x1b[2J\n+3 │ not a diff row")
    assert shown.plain == "   rm -1 │ ^[[2J\n   +3 │ not a diff row"
    assert not [span for span in shown.spans if span.style]  # not a diff: no colour
