"""Line mode on a real pseudo-terminal when it is stopped from outside or while it waits: SIGTERM
and SIGHUP (the terminal closed) during a command and at the prompt, Esc and Ctrl-C during
/compact, Ctrl-C while the model server is being found (docs/line-mode.md §Signals)."""

import json
import os
import signal
import socket
import sys
import time

import pytest

from harness import pids_matching
from test_line_mode_terminal import Terminal, spawn_on_terminal

ENV = {"PROMPT_TOOLKIT_NO_CPR": "1", "COLUMNS": "120", "LINES": "40"}


def until(condition, timeout: float = 10) -> bool:
    """Poll `condition()` until it is true (True) or `timeout` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return bool(condition())


def start(cwd, base_url: str, *extra: str):
    argv = [sys.executable, "-m", "mm", "--base-url", base_url, *extra]
    proc, fd = spawn_on_terminal(argv, cwd, ENV, size=(40, 120))
    return proc, Terminal(fd)


def stop(proc, term: Terminal | None) -> None:
    """Kill the child if it is still there (by its pid), and close the terminal if still open."""
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)
    if term is not None:
        os.close(term.fd)


def sessions_config(cwd) -> None:
    (cwd / ".mm").mkdir()
    (cwd / ".mm" / "agent.yaml").write_text("sessions: {enabled: true}\n")


def saved_tool_results(cwd) -> list[str]:
    (path,) = (cwd / ".mm" / "sessions").glob("*.json")
    return [m["content"] for m in json.loads(path.read_text())["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["sigterm", "sighup"])
def test_a_leaving_signal_during_a_command_cancels_it_saves_and_leaves(scripted_server, tmp_path, sig):
    marker = f"sleep 1017.{os.getpid()}{int(sig)}"
    sessions_config(tmp_path)
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": marker}}])
    proc, term = start(tmp_path, scripted_server.base_url, "--model", "m")
    try:
        term.expect("›")
        term.write("wait\r")
        term.expect(f"bash: {marker}")
        assert until(lambda: pids_matching(marker)), f"{marker} never started"
        if sig == signal.SIGHUP:  # the terminal window closed: the kernel hangs the session up
            os.close(term.fd)
            term = None
        else:
            proc.send_signal(sig)
        assert proc.wait(15) == 128 + sig
        assert until(lambda: not pids_matching(marker)), f"{marker} left running"
        assert saved_tool_results(tmp_path) == ["[error: cancelled]"]  # the turn was saved
        if term is not None:
            term.expect("turn cancelled")
            term.expect("mm: SIGTERM received: leaving")
            assert "Traceback" not in term.seen.decode(errors="replace")
    finally:
        stop(proc, term)


def test_sigterm_at_a_question_gives_it_up_and_leaves(scripted_server, tmp_path):
    sessions_config(tmp_path)
    scripted_server.add_tool_calls([{"name": "ask_user", "arguments": {"question": "Your name?"}}])
    proc, term = start(tmp_path, scripted_server.base_url, "--model", "m")
    try:
        term.expect("›")
        term.write("ask me\r")
        term.expect("❓ Your name?")
        term.expect("/skip declines)")
        term.expect("?")  # the answer's prompt is open
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 128 + signal.SIGTERM
        assert saved_tool_results(tmp_path) == ["[the question was cancelled before the user answered]"]
        term.expect("turn cancelled")
    finally:
        stop(proc, term)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["sigterm", "sighup"])
def test_a_leaving_signal_at_the_prompt_leaves_at_once(scripted_server, tmp_path, sig):
    proc, term = start(tmp_path, scripted_server.base_url, "--model", "m")
    try:
        term.expect("›")
        if sig == signal.SIGHUP:
            os.close(term.fd)
            term = None
        else:
            proc.send_signal(sig)
        assert proc.wait(10) == 128 + sig
        if term is not None:
            term.expect("mm: SIGTERM received: leaving")
            assert "Traceback" not in term.seen.decode(errors="replace")
    finally:
        stop(proc, term)


def test_ctrl_c_at_the_prompt_clears_the_line_and_mm_goes_on(scripted_server, tmp_path):
    scripted_server.add_reply("the answer")
    proc, term = start(tmp_path, scripted_server.base_url, "--model", "m")
    try:
        term.expect("›")
        term.write("never sent")
        term.expect("never sent")
        term.write(b"\x03")
        term.expect("›")  # a fresh prompt
        term.write("sent\r")
        term.expect("the answer")
        term.expect("›")
        assert [m["content"] for m in scripted_server.requests[0]["messages"][1:]] == ["sent"]
        term.write("/quit\r")
        assert proc.wait(10) == 0
    finally:
        stop(proc, term)


@pytest.mark.parametrize("how", ["esc", "ctrl-c", "sigint"])
def test_compact_is_cancelled_like_a_turn(scripted_server, tmp_path, how):
    (tmp_path / ".mm").mkdir()
    (tmp_path / ".mm" / "agent.yaml").write_text("context: {keepLastTurns: 1}\n")
    scripted_server.add_reply("first answer")
    scripted_server.add_reply("second answer")
    scripted_server.add_stall(60)  # the summary never comes
    scripted_server.add_reply("third answer")
    proc, term = start(tmp_path, scripted_server.base_url, "--model", "m")
    try:
        term.expect("›")
        for prompt in ("one", "two"):
            term.write(prompt + "\r")
            term.expect("⚙ ")
            term.expect("›")
        term.write("/compact\r")
        term.expect("Compacting the history")  # the spinner while the summary is awaited
        assert until(lambda: len(scripted_server.requests) == 3)
        if how == "sigint":
            proc.send_signal(signal.SIGINT)
        else:
            term.write(b"\x1b" if how == "esc" else b"\x03")
        term.expect("[compact: failed, history kept: cancelled]")
        term.expect("›")
        term.write("three\r")  # the conversation goes on, unchanged
        term.expect("third answer")
        term.expect("›")
        assert [m["content"] for m in scripted_server.requests[3]["messages"][1:]] == [
            "one", "first answer", "two", "second answer", "three"]
        term.write("/quit\r")
        assert proc.wait(10) == 0
        assert "Traceback" not in term.seen.decode(errors="replace")
    finally:
        stop(proc, term)


def test_ctrl_c_while_the_server_is_found_says_interrupted(tmp_path):
    silent = socket.socket()  # accepts connections (the kernel's backlog) and never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    proc, term = start(tmp_path, f"http://127.0.0.1:{silent.getsockname()[1]}/v1")  # no --model: it asks
    try:
        term.expect("connecting to the model server…")
        term.write(b"\x03")
        term.expect("mm: interrupted")
        assert proc.wait(10) == 130
        assert "Traceback" not in term.seen.decode(errors="replace")
    finally:
        stop(proc, term)
        silent.close()
