"""Every scenario of line mode in one run on a real pseudo-terminal, then `mm --resume` in a second
process: a tool call, the four answers of the 🔐 prompt (and that `s`/`n` survive /new), the diff
shown before a file change, ask_user answered and declined with Esc, Esc at the 🔐 prompt,
/compact, /new, /memory, Esc and Ctrl-C during a running command, /usage, /quit.

The model is the in-process scripted server; what ran is checked through the files the calls made
and the requests the server received.
"""

import json
import os
import re
import sys
import time
from datetime import datetime

from harness import pids_matching
from test_line_mode_terminal import Terminal, spawn_on_terminal

# No cursor-position requests (nobody answers them here), colour on (rich reads an empty NO_COLOR as unset).
ENV = {"PROMPT_TOOLKIT_NO_CPR": "1", "NO_COLOR": "", "COLUMNS": "200", "LINES": "50"}
DECLINED = "[the user declined to answer: do not ask the same thing again; go on without it or stop]"
REJECTED_BASH = "[command rejected by the user]"
# Commands cancelled while they run, unique to this process: pgrep finds only this run's.
SLEEP_ESC, SLEEP_CTRL_C = f"sleep 1013.{os.getpid()}", f"sleep 1015.{os.getpid()}"


def script(srv) -> None:
    """The model's side, in the order the run asks for it (one entry per model request)."""
    # a conversation with tool calls: a (once), r (reject), s (session), n (never)
    srv.add_tool_calls([{"name": "bash", "arguments": {"command": "touch ran-once"}}])
    srv.add_tool_calls([{"name": "bash", "arguments": {"command": "touch ran-rejected"}}])
    srv.add_tool_calls([{"name": "write_file", "arguments": {"path": "notes.txt", "content": "new line\n"}}])
    srv.add_tool_calls([{"name": "edit_file", "arguments": {"path": "notes.txt",
                                                           "edits": [{"old": "new line", "new": "edited line"}]}}])
    srv.add_reply("Files handled.")
    # ask_user declined with Esc, then answered
    srv.add_tool_calls([{"id": "q1", "name": "ask_user", "arguments": {"question": "Your name?"}}])
    srv.add_reply("Going on without a name.")
    srv.add_tool_calls([{"id": "q2", "name": "ask_user", "arguments": {
        "question": "Favourite colour?", "options": ["turquoise", "red"]}}])
    srv.add_reply("Noted: your favourite colour is turquoise.")
    # Esc at the 🔐 prompt: rejected, and the turn stops (no request after it)
    srv.add_tool_calls([{"id": "b1", "name": "bash", "arguments": {"command": "touch never-made"}}])
    srv.add_reply("Notes: files handled; the name was declined.")  # /compact's summary
    # after /new: write_file is allowed for the session, edit_file never
    srv.add_tool_calls([{"name": "write_file", "arguments": {"path": "other.txt", "content": "other\n"}}])
    srv.add_tool_calls([{"name": "edit_file", "arguments": {"path": "notes.txt",
                                                           "edits": [{"old": "new line", "new": "after new"}]}}])
    srv.add_reply("Remembered answers applied.")
    # commands cancelled while they run: Esc, then Ctrl-C
    srv.add_tool_calls([{"name": "bash", "arguments": {"command": SLEEP_ESC}}])
    srv.add_tool_calls([{"name": "bash", "arguments": {"command": SLEEP_CTRL_C}}])
    # the second process, after `mm --resume`
    srv.add_reply("We were cancelling commands.")


def until(condition, timeout: float = 10) -> bool:
    """Poll `condition()` until it is true (True) or `timeout` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return bool(condition())


def start(srv, cwd, *extra: str):
    argv = [sys.executable, "-m", "mm", "--base-url", srv.base_url, "--model", "m", *extra]
    proc, fd = spawn_on_terminal(argv, cwd, ENV, size=(50, 200))
    return proc, Terminal(fd)


def say(term: Terminal, typed: str, *wanted: str) -> str:
    """Type `typed` and Enter at the prompt; wait for each of `wanted` in turn, then for the next
    prompt; return the output after the last of `wanted`. (The prompt's `›` also comes back while
    typing: a prompt is only waited for after output that follows the Enter.)"""
    term.write(typed + "\r")
    for part in wanted:
        term.expect(part)
    return term.expect("›")


def answer_permission(term: Terminal, header: str, key: str) -> str:
    """Wait for the call's header (`🛠️  bash: …`, `📝 write_file: …`) and its tool's 🔐 answers'
    prompt, type `key`; return what came between (the planned change), where the call is not
    named again (docs/line-mode.md §Permission prompt)."""
    term.expect(header)
    tool, named = re.match(r"\S+\s+(\w+): (.*)", header).groups()
    shown = term.expect(f"🔐 {tool}: allow? [a] once · [s] for this session · [r] reject · [n] never:")
    assert named not in shown and "🛠️" not in shown and "📝" not in shown, shown
    term.write(key)
    return shown


def cancel_running(term: Terminal, marker: str, key: bytes) -> str:
    """`marker` runs after `a` at the 🔐 prompt; `key` cancels it: returns the output to the prompt."""
    answer_permission(term, f"🛠️  bash: {marker}", "a\r")
    assert until(lambda: pids_matching(marker)), f"{marker} never started"
    term.write(key)
    shown = term.expect("[error: cancelled]")
    shown += term.expect("›")
    assert until(lambda: not pids_matching(marker)), f"{marker} left running"
    return shown


def test_every_line_mode_scenario_in_one_run_then_resume(scripted_server, tmp_path):
    (tmp_path / ".mm").mkdir()
    (tmp_path / ".mm" / "agent.yaml").write_text("yolo: false\nsessions: {enabled: true}\n")
    (tmp_path / "notes.txt").write_text("old line\n")
    script(scripted_server)
    proc, term = start(scripted_server, tmp_path)
    try:
        term.expect("›")
        # a conversation with tool calls, the prompt in two lines (Esc-Enter)
        term.write("make the\x1b\rfiles\r")
        answer_permission(term, "🛠️  bash: touch ran-once", "a\r")
        answer_permission(term, "🛠️  bash: touch ran-rejected", "r\r")
        diff = answer_permission(term, "📝 write_file: notes.txt", "s\r")
        assert "-1 │ old line" in diff and "+1 │ new line" in diff
        diff = answer_permission(term, "📝 edit_file: notes.txt", "n\r")
        assert "-1 │ new line" in diff and "+1 │ edited line" in diff
        assert "⚙ 2 command(s) · 📝 2 file op(s)" in term.expect_line("⚙ ")
        term.expect("›")
        assert (tmp_path / "ran-once").exists() and not (tmp_path / "ran-rejected").exists()
        assert (tmp_path / "notes.txt").read_text() == "new line\n"  # written (s), not edited (n)
        assert scripted_server.requests[0]["messages"][-1] == {"role": "user", "content": "make the\nfiles"}
        assert "\x1b[32m+1 │ new line" in term.raw.decode()  # a colour terminal: added rows green

        # ask_user: Esc declines the whole form, the turn goes on
        term.write("ask my name\r")
        term.expect("❓ Your name?")
        term.expect("/skip declines)")
        term.expect("?")  # the answer's prompt is open: it reads the keys
        term.write(b"\x1b")
        term.expect("Going on without a name.")
        term.expect("⚙ ")
        term.expect("›")
        assert scripted_server.requests[6]["messages"][-1] == {"role": "tool", "tool_call_id": "q1",
                                                              "content": DECLINED}
        # ask_user answered
        term.write("ask my colour\r")
        term.expect("❓ Favourite colour?")
        term.expect("/skip declines)")
        term.expect("?")
        say(term, "1", "Noted: your favourite colour is turquoise.", "⚙ ")
        assert scripted_server.requests[8]["messages"][-1]["content"] == (
            "The user answered:\n- Favourite colour? → turquoise")

        # Esc at the 🔐 prompt rejects the call and stops the turn
        term.write("touch it\r")
        answer_permission(term, "🛠️  bash: touch never-made", b"\x1b")
        term.expect(REJECTED_BASH)
        term.expect("⚙ ")
        term.expect("›")
        assert not (tmp_path / "never-made").exists()
        assert len(scripted_server.requests) == 10  # the turn asked for nothing after the rejection

        term.write("/compact\r")
        line = term.expect_line("🗜️ ")
        assert re.fullmatch(r"🗜️ compressed 14 messages → 1 summary \+ 7 kept \(\d+ tokens, \d+\.\ds\)", line), \
            line
        term.expect("›")
        assert scripted_server.requests[10]["messages"][0]["role"] == "system"  # the summary request

        term.write("/new\r")
        assert term.expect_line("🆕 ") == "🆕 New session: 9 message(s) forgotten."
        term.expect("›")
        # Session files are dated to the second, and `mm --resume` takes the newest (a tie goes to
        # the larger id, maybe the one /new kept): let the clock pass the files' second first.
        dated = max(datetime.fromisoformat(json.loads(p.read_text())["updated"]).timestamp()
                    for p in (tmp_path / ".mm" / "sessions").glob("*.json"))
        assert until(lambda: time.time() >= dated + 1, timeout=3)

        # the remembered answers survive /new: write_file runs unasked, edit_file is refused unasked
        term.write("after new\r")
        shown = term.expect("Remembered answers applied.")
        assert "📝 write_file: other.txt" in shown and "🔐" not in shown
        term.expect("⚙ ")
        term.expect("›")
        assert (tmp_path / "other.txt").read_text() == "other\n"
        assert (tmp_path / "notes.txt").read_text() == "new line\n"
        assert scripted_server.requests[13]["messages"][-1]["content"] == "[edit_file rejected by the user]"

        term.write("/memory turquoise\r")
        assert term.expect_line("🔎 ").startswith('🔎 1 hit(s) for "turquoise" in ')
        assert term.next_line() == ""
        assert term.next_line().endswith(" · answer")  # the conversation before /new, kept under its own id
        assert term.next_line() == "Noted: your favourite colour is turquoise."
        term.expect("›")

        term.write("sleep please\r")
        cancel_running(term, SLEEP_ESC, b"\x1b")
        term.write("sleep again\r")
        cancel_running(term, SLEEP_CTRL_C, b"\x03")

        term.write("/usage\r")
        # 16 model requests (the summary's too) of 10 input and 5 output tokens each, kept across /new
        totals = term.expect_line("📊 session: ")
        assert totals == "📊 session: 160 input · 80 output · 0 thought · 0 cached tokens"
        assert term.next_line().startswith("📊 context: ")
        term.expect("›")
        term.write("/quit\r")
        assert proc.wait(10) == 0
        assert "Traceback" not in term.seen.decode(errors="replace")
    finally:
        close(proc, term)

    # the live session (the one /new kept its id) goes on in a second process
    files = {p.stem: json.loads(p.read_text()) for p in (tmp_path / ".mm" / "sessions").glob("*.json")}
    assert len(files) == 2, files.keys()
    (live,) = [sid for sid, data in files.items() if "after new" in json.dumps(data)]
    proc, term = start(scripted_server, tmp_path, "--resume")
    try:
        assert term.expect_line("resumed ") == f"resumed {live}: 12 message(s)"
        term.expect("›")
        say(term, "where were we?", "We were cancelling commands.", "⚙ ")
        sent = scripted_server.requests[-1]["messages"]
        assert [m["content"] for m in sent if m["role"] == "user"] == [
            "after new", "sleep please", "sleep again", "where were we?"]
        assert [m["content"] for m in sent if m["role"] == "tool"][-2:] == ["[error: cancelled]"] * 2
        term.write("/quit\r")
        assert proc.wait(10) == 0
    finally:
        close(proc, term)


def close(proc, term: Terminal) -> None:
    """Kill the child if it is still there (by its pid), and close the terminal."""
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)
    os.close(term.fd)
