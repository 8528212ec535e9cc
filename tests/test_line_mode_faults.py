"""Faults a new user's trial of line mode found, each driven through prompt_toolkit's pipe input
against the scripted server: text that would break the terminal, calls that never ran, errors said
twice, silent empty or cancelled turns, skills named like commands, commands at a question, and the
slash commands' messages (docs/line-mode.md)."""

import asyncio
import io
import os
import subprocess
import sys
import threading

import pytest

from test_line_mode import console_to, drive

HIDE_CURSOR, SHOW_CURSOR = "\x1b[?25l", "\x1b[?25h"


async def run_on(console, srv, tmp_path, keys: list[str], config: dict | None = None) -> int:
    """Type `keys` into line mode printing on `console`; returns its exit status (its exceptions pass)."""
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from mm.config.load import agent_config_adapter
    from mm.ui.line.app import run_line_mode

    cfg = agent_config_adapter().validate_python({"baseUrl": srv.base_url, "model": "m", **(config or {})})
    with create_pipe_input() as pipe:
        task = asyncio.create_task(run_line_mode(cfg, tmp_path, input=pipe, output=DummyOutput(), console=console))
        for key in keys:
            await asyncio.sleep(0.3)
            pipe.send_text(key)
        return await asyncio.wait_for(task, 20)


def strict_terminal():
    """A console on a terminal-like UTF-8 byte stream that refuses what cannot be encoded, as a
    real terminal's stdout does; returns (console, the bytes stream)."""
    from rich.console import Console

    raw = io.BytesIO()
    text = io.TextIOWrapper(raw, encoding="utf-8", errors="strict", write_through=True)
    return Console(file=text, width=100, force_terminal=True, color_system=None), raw


def clean_env(home) -> dict[str, str]:
    """This process's environment without MM_ variables, HOME at `home`."""
    return {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(home)}


def _chunk(delta: dict, finish=None) -> dict:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


# -- 1. lone surrogates --------------------------------------------------------------------------------

async def test_a_lone_surrogate_in_the_answer_and_thoughts_is_shown_repaired(scripted_server, tmp_path):
    scripted_server.add_sse([_chunk({"role": "assistant", "content": ""}),
                             'data: {"choices":[{"index":0,"delta":{"reasoning_content":"hmm \\udc00 ok"}}]}',
                             'data: {"choices":[{"index":0,"delta":{"content":"caf\\ud83d!"}}]}',
                             _chunk({}, "stop"), "data: [DONE]"])
    console, raw = strict_terminal()
    assert await run_on(console, scripted_server, tmp_path, ["hi\r", "/quit\r"]) == 0
    shown = raw.getvalue().decode()
    assert "caf\ufffd!" in shown and "hmm \ufffd ok" in shown
    assert shown.rindex(SHOW_CURSOR) > shown.rindex(HIDE_CURSOR)


async def test_a_lone_surrogate_in_a_call_and_in_a_question(scripted_server, tmp_path):
    scripted_server.add_tool_calls([{"name": "frobnicate", "arguments": '{"x": "\\ud83d"}'}])
    scripted_server.add_tool_calls([{"name": "ask_user", "arguments": '{"question": "Name \\udc00?"}'}])
    scripted_server.add_reply("ok")
    console, raw = strict_terminal()
    assert await run_on(console, scripted_server, tmp_path, ["go\r", "Ada\r", "/quit\r"]) == 0
    shown = raw.getvalue().decode()
    assert '🧰 frobnicate: {"x": "\ufffd"}' in shown and "❓ Name \ufffd?" in shown


def test_relayed_text_of_an_asked_agent_is_repaired_too():
    from mm.events import RelayedText
    from mm.ui.line.view import LineView

    console, raw = strict_terminal()
    view = LineView(console, 5)
    view.start_turn()
    view.emit(RelayedText("helper", "thinking \ud800", thought=True))
    view.emit(RelayedText("helper", "hello \udfff world"))
    view.close()
    view.say("said \ud83d")
    shown = raw.getvalue().decode()
    assert "thinking \ufffd" in shown and "hello \ufffd world" in shown and "said \ufffd" in shown


class BreakingTerminal(io.StringIO):
    """A terminal whose writes from the REPL (the main thread) fail once `marker` is in them."""

    def __init__(self, marker: str):
        super().__init__()
        self.marker = marker

    def write(self, text: str) -> int:
        if self.marker in text and threading.current_thread() is threading.main_thread():
            raise RuntimeError("the terminal broke")
        return super().write(text)


@pytest.mark.parametrize("chunk", [0, 3], ids=["answer-in-three-pieces", "long-answer-in-small-chunks"])
async def test_an_unexpected_error_shows_the_cursor_again_before_it_goes_on(scripted_server, tmp_path, chunk):
    from rich.console import Console

    if not chunk:
        scripted_server.add_reply("this answer has BOOM in it")
    else:  # line mode updates 8 times a second at most, planned on the event loop: the failure comes in one
        answer = "First paragraph.\n\nThe BOOM paragraph.\n\n" + "More text.\n\n" * 40
        scripted_server.add_sse([_chunk({"content": answer[i:i + chunk]}) for i in range(0, len(answer), chunk)]
                                + [_chunk({}, "stop"), "data: [DONE]"], delay=0.003)
    out = BreakingTerminal("BOOM")
    console = Console(file=out, width=100, force_terminal=True, color_system=None)
    with pytest.raises(RuntimeError, match="the terminal broke"):
        await run_on(console, scripted_server, tmp_path, ["hi\r"])
    shown = out.getvalue()
    assert HIDE_CURSOR in shown and shown.rindex(SHOW_CURSOR) > shown.rindex(HIDE_CURSOR)


# -- 2. escape sequences -------------------------------------------------------------------------------

async def test_escape_sequences_in_the_answer_and_thoughts_are_shown_in_caret_notation(scripted_server, tmp_path):
    scripted_server.add_reply("clear\x1b[2J title\x1b]0;TITLE\x07 up\x1b[5A\n\ncol1\tcol2",
                              reasoning="think\x1b[Hhard")
    out = io.StringIO()
    assert await run_on(console_to(out, colour=True), scripted_server, tmp_path, ["hi\r", "/quit\r"]) == 0
    shown = out.getvalue()
    assert "\x1b[2J" not in shown and "\x1b]0;" not in shown and "\x1b[5A" not in shown and "\x1b[H" not in shown
    assert "clear^[[2J title^[]0;TITLE^G up^[[5A" in shown and "think^[[Hhard" in shown
    assert "^I" not in shown and "col1" in shown and "col2" in shown  # a tab stays a tab (rich expands it)


# -- 6, 7, 8. what the end of a turn says ------------------------------------------------------------

async def test_calls_that_never_ran_still_get_a_header(scripted_server, tmp_path):
    scripted_server.add_tool_calls([{"name": "frobnicate", "arguments": {"x": 1}}])
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {"cmd": "ls"}}])
    scripted_server.add_tool_calls([{"name": "bash", "arguments": '{"command": '}])
    scripted_server.add_reply("ok")
    shown = await drive(scripted_server, tmp_path, ["go\r", "/quit\r"])
    assert '🧰 frobnicate: {"x": 1}\n   [error: there is no tool named "frobnicate"' in shown
    assert '🧰 bash: {"cmd": "ls"}\n   [bash: invalid call, nothing was run — command is missing' in shown
    assert '🧰 bash: "{\\"command\\": "\n   [bash: invalid call' in shown


async def test_the_loop_detectors_stop_is_said_once(scripted_server, tmp_path):
    for _ in range(6):
        scripted_server.add_tool_calls([{"name": "read_file", "arguments": {"path": "nope.txt"}}])
    shown = await drive(scripted_server, tmp_path, ["go\r", "/quit\r"])
    assert shown.count("turn stopped by the loop detector") == 1


async def test_an_empty_answer_and_a_cancelled_turn_say_so(scripted_server, tmp_path):
    from mm.ui.line.view import TURN_CANCELLED
    from mm.ui.oneshot import EMPTY_ANSWER

    scripted_server.add_reply("")
    scripted_server.add_tool_calls([{"name": "ask_user", "arguments": {"question": "Name?"}}])
    shown = await drive(scripted_server, tmp_path, ["say nothing\r", "ask me\r", "/abort\r", "/quit\r"])
    empty = shown.index(EMPTY_ANSWER)
    assert shown.index("⚙ 0 command(s)", empty) > empty
    cancelled = shown.index(TURN_CANCELLED + "\n")
    assert cancelled > shown.index("❓ Name?") and shown.index("⚙ 0 command(s)", cancelled) > cancelled
    assert shown.count(EMPTY_ANSWER) == 1


# -- 4. a skill named like a command -------------------------------------------------------------------

async def test_line_mode_commands_win_over_skills_of_their_names(scripted_server, tmp_path):
    skills = tmp_path / ".mm" / "skills"
    skills.mkdir(parents=True)
    for name in ("quit", "usage", "greetings"):
        (skills / f"{name}.md").write_text(f"# The {name} skill\n")
    shown = await drive(scripted_server, tmp_path, ["/usage\r", "/greetings Bob\r", "/quit\r"])
    for name in ("quit", "usage"):
        assert (f'the skill "{name}" ({skills / name}.md) is not offered as /{name}: '
                f"mm's own /{name} command wins") in shown
    assert "greetings" not in shown.split("\n› ")[0]  # an ordinary skill: no line in the banner
    assert "📊 session: " in shown
    (request,) = scripted_server.requests  # /greetings went to the model, /usage and /quit did not
    assert request["messages"][-1]["content"].startswith("$greetings Bob\n")


def test_the_acp_commands_are_fewer_than_line_modes():
    from pathlib import Path

    from mm.commands import ACP_COMMANDS
    from mm.skills import COMMAND_NAMES, Skill, advertised_skills, rewrite_skill_command, shadowed_skills

    assert COMMAND_NAMES == tuple(c.name for c in ACP_COMMANDS)  # mm.skills cannot import the table: the same
    catalogue = [Skill(n, "d", Path(f"/s/{n}.md")) for n in ("compact", "quit", "usage")]
    assert [s.name for s in shadowed_skills(catalogue)] == ["compact"]
    assert [s.name for s in advertised_skills(catalogue)] == ["quit", "usage"]
    assert rewrite_skill_command("/quit now", catalogue) == "$quit now"
    assert rewrite_skill_command("/quit now", catalogue, ["quit"]) == "/quit now"


# -- 9. a question at the prompt ------------------------------------------------------------------------

async def test_commands_typed_at_a_question_keep_their_meaning(scripted_server, tmp_path):
    from mm.ui.line.commands import NO_SESSIONS, NOT_DURING_TURN

    scripted_server.add_tool_calls([{"id": "q1", "name": "ask_user", "arguments": {
        "question": "Your name?", "default": "Bob"}}])
    scripted_server.add_reply("Hello.")
    shown = await drive(scripted_server, tmp_path, ["ask\r", "/usage\r", "/NEW\r", "/sessions\r", "/nope\r",
                                                    "/quit\r"])
    assert "❓ Your name?\n  default: Bob\n  (your answer — Enter for the default; /skip declines)\n" in shown
    assert "📊 session: 10 input · 5 output" in shown
    assert NOT_DURING_TURN.format(command="/new") in shown and NO_SESSIONS in shown
    assert shown.count("❓ Your name?") == 4  # asked again after each command
    assert scripted_server.requests[1]["messages"][-1] == {"role": "tool", "tool_call_id": "q1",
                                                          "content": "The user answered:\n- Your name? → /nope"}
    assert len(scripted_server.requests[1]["messages"]) == 4  # /new changed nothing under the turn


async def test_memory_at_a_question_searches_then_asks_again(scripted_server, tmp_path):
    config = {"sessions": {"enabled": True}}
    scripted_server.add_reply("Use tabs for Go code.")
    await drive(scripted_server, tmp_path, ["How should I indent golang?\r", "/quit\r"], config)
    scripted_server.add_tool_calls([{"id": "q1", "name": "ask_user", "arguments": {
        "question": "Tabs?", "type": "confirm"}}])
    scripted_server.add_reply("ok")
    shown = await drive(scripted_server, tmp_path, ["ask\r", "/memory golang\r", "y\r", "/quit\r"], config)
    assert shown.index('🔎 1 hit(s) for "golang"') < shown.rindex("❓ Tabs?")
    assert scripted_server.requests[-1]["messages"][-1]["content"] == "The user answered:\n- Tabs? → yes"


# -- 10. slash commands' messages ------------------------------------------------------------------------

async def test_slash_command_messages(scripted_server, tmp_path):
    from mm.ui.line.commands import NO_SESSIONS, NO_WORDS

    shown = await drive(scripted_server, tmp_path, ["/memory x\r", "/sessions\r", "/new words\r",
                                                    "/compact now\r", "/Usage\r", "/QUIT\r"])
    assert shown.count(NO_SESSIONS) == 2 and "unknown command" not in shown
    assert NO_WORDS.format(command="/new") in shown and NO_WORDS.format(command="/compact") in shown
    assert "🆕" not in shown and "🗜️" not in shown and "📊 session: " in shown
    assert scripted_server.requests == []
    await drive(scripted_server, tmp_path, ["/Exit\r"])  # left at once, with status 0
    assert scripted_server.requests == []


async def test_memory_off_while_sessions_are_on(scripted_server, tmp_path):
    from mm.ui.line.commands import NO_MEMORY

    shown = await drive(scripted_server, tmp_path, ["/memory x\r", "/quit\r"],
                        {"sessions": {"enabled": True, "searchMemory": False}})
    assert NO_MEMORY in shown


def test_resume_with_a_prompt_needs_sessions(tmp_path):
    """`-p --resume` and `-p --continue` go on with a saved conversation: with sessions off there
    is none, said before any server is looked for (docs/sessions.md §Finding a conversation again)."""
    from mm.ui.line.commands import NO_SESSIONS

    for extra in (["--resume"], ["--resume", "20260101-000000-abcdef12"], ["--continue"]):
        proc = subprocess.run([sys.executable, "-m", "mm", "-p", "hi", *extra], cwd=tmp_path, capture_output=True,
                              text=True, timeout=30, stdin=subprocess.DEVNULL, env=clean_env(tmp_path))
        assert proc.returncode == 2 and proc.stderr == f"mm: {NO_SESSIONS}\n" and proc.stdout == ""


def test_the_start_says_it_is_connecting(tmp_path):
    from mm.ui.line.app import CONNECTING

    proc = subprocess.run([sys.executable, "-m", "mm", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=30, input="",
                          env=clean_env(tmp_path))
    assert proc.stdout.startswith(CONNECTING + "\n"), proc.stdout


async def test_a_command_that_waits_stops_waiting_when_cancelled(scripted_server, tmp_path):
    from harness import make_conversation
    from mm.ui.line.commands import COMMAND_CANCELLED, Services, run_waiting

    async def never_answers(words: str, history: list) -> str:
        await asyncio.Event().wait()
        return "never"

    conv = make_conversation(scripted_server.base_url, tmp_path)
    cancelled = asyncio.Event()
    waiting = asyncio.create_task(run_waiting(conv, "/memory golang", Services(memory=never_answers), cancelled))
    await asyncio.sleep(0.1)
    assert not waiting.done()
    cancelled.set()
    assert await asyncio.wait_for(waiting, 5) == COMMAND_CANCELLED.format(command="/memory")
