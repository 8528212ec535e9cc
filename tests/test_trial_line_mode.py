"""The small faults a new user's trial found in line mode (issue 10, point 12), each through a real
`mm` process against the scripted server: on a pseudo-terminal (a prompt that starts with a path,
the 🔐 question without a second header, answers kept out of the prompt history, the banner on a
narrow terminal), or with pipes (error lines on stderr, no padding, /sessions, a prompt larger
than the context window, a skill command)."""

import json
import os
import re
import socket
import subprocess
import sys

from mm.skills import SKILL_NOTE
from mm.ui.line.commands import HELP, UNKNOWN_COMMAND
from test_line_mode_scenario import close
from test_line_mode_terminal import Terminal, spawn_on_terminal

ENV = {"PROMPT_TOOLKIT_NO_CPR": "1", "NO_COLOR": "", "COLUMNS": "120", "LINES": "40"}
CHOICES = "allow? [a] once · [s] for this session · [r] reject · [n] never:"


def on_terminal(srv, cwd, size: tuple[int, int] = (40, 120), env: dict | None = None):
    argv = [sys.executable, "-m", "mm", "--base-url", srv.base_url, "--model", "m"]
    proc, fd = spawn_on_terminal(argv, cwd, ENV | (env or {}), size=size)
    return proc, Terminal(fd)


def piped(srv_url: str, cwd, lines: str, *extra: str) -> subprocess.CompletedProcess:
    """`mm` line mode with its prompts piped in, stdout and stderr apart (`extra`: more flags;
    `--model m` unless they hold a `--model`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(cwd)}
    env.pop("COLUMNS", None)
    model = [] if "--model" in extra else ["--model", "m"]
    return subprocess.run([sys.executable, "-m", "mm", "--base-url", srv_url, *model, *extra],
                          input=lines, capture_output=True, text=True, cwd=cwd, env=env, timeout=60)


def user_messages(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def agent_file(cwd, text: str) -> None:
    (cwd / ".mm").mkdir(exist_ok=True)
    (cwd / ".mm" / "agent.yaml").write_text(text)


# -- on a terminal ------------------------------------------------------------------------------

def test_a_prompt_that_starts_with_a_path_reaches_the_model(scripted_server, tmp_path):
    prompts = ["/etc/hosts is wrong", f"{tmp_path}/x.log: why does it fail?", "/etc: what is in there?",
               "/nope, sent as typed"]
    for n in range(len(prompts)):
        scripted_server.add_reply(f"answer {n}")
    proc, term = on_terminal(scripted_server, tmp_path)
    try:
        term.expect("›")
        for n, prompt in enumerate(prompts[:3]):
            term.write(prompt + "\r")
            term.expect(f"answer {n}")
            term.expect("›")
        term.write("/nope\r")  # no path: an unknown command, which says how to send it anyway
        line = term.expect_line("unknown command /nope")
        assert line == UNKNOWN_COMMAND.format(command="/nope", help=HELP)
        assert "start the line with a space" in line
        term.expect("›")
        term.write(" " + prompts[3] + "\r")
        term.expect("answer 3")
        term.expect("›")
        term.write("/quit\r")
        assert proc.wait(10) == 0
    finally:
        close(proc, term)
    assert [user_messages(r)[-1] for r in scripted_server.requests] == prompts


def test_the_call_is_named_once_and_answers_stay_out_of_the_history(scripted_server, tmp_path):
    agent_file(tmp_path, "yolo: false\n")
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": "echo from-bash"}}])
    scripted_server.add_tool_calls([{"name": "write_file", "arguments": {"path": "a.txt", "content": "x\n"}}])
    scripted_server.add_tool_calls([{"id": "q1", "name": "ask_user", "arguments": {"question": "Your colour?"}}])
    scripted_server.add_reply("All done.")
    proc, term = on_terminal(scripted_server, tmp_path)
    try:
        term.expect("›")
        term.write("make it so\r")
        asked = term.expect(f"🔐 bash: {CHOICES}")
        term.write("a\r")
        assert asked.count("echo from-bash") == 1 and "🛠️  bash: echo from-bash" in asked
        asked = term.expect(f"🔐 write_file: {CHOICES}")
        assert asked.count("a.txt") == 1 and "📝 write_file: a.txt" in asked and "+1 │ x" in asked
        term.write("s\r")
        term.expect("❓ Your colour?")
        term.expect("/skip declines)")
        term.expect("?")
        term.write("turquoise\r")
        term.expect("All done.")
        term.expect("›")
        term.write("/quit\r")
        assert proc.wait(10) == 0
    finally:
        close(proc, term)
    assert (tmp_path / "a.txt").read_text() == "x\n"
    assert scripted_server.requests[3]["messages"][-1]["content"] == "The user answered:\n- Your colour? → turquoise"
    history = (tmp_path / ".local" / "state" / "mm" / "history").read_text()
    entries = [line[1:] for line in history.splitlines() if line.startswith("+")]
    assert entries == ["make it so", "/quit"]  # the prompts, not the answers `a`, `s`, `turquoise`


def test_the_banner_wraps_between_words_on_a_narrow_terminal(scripted_server, tmp_path):
    proc, term = on_terminal(scripted_server, tmp_path, size=(40, 40), env={"COLUMNS": "40"})
    try:
        term.expect("connecting to the model server…")
        shown = term.expect("›")
        term.write("/quit\r")
        assert proc.wait(10) == 0
    finally:
        close(proc, term)
    lines = [ln.strip() for ln in shown.replace("\r", "").split("\n") if ln.strip()]
    banner = f"OpenAI-compatible m at {scripted_server.base_url} · context window unknown · tools: bash, " \
             "read_file, write_file, edit_file, ask_user"
    assert len(lines) > 4 and all(len(ln) <= 40 for ln in lines), lines
    words = " ".join(lines).split()
    assert " ".join(words).startswith("mm v") and banner in " ".join(words)  # each word whole
    assert HELP in " ".join(words)


# -- with pipes ---------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_error_lines_go_to_stderr(scripted_server, tmp_path):
    scripted_server.add({"json": {"error": {"message": "boom"}}, "status": 500})
    scripted_server.add_reply("Recovered.")
    proc = piped(scripted_server.base_url, tmp_path, "fail\nagain\n")
    assert proc.returncode == 0, proc.stderr
    error = f"mm: the model server at {scripted_server.base_url}/chat/completions answered HTTP 500: boom"
    assert proc.stderr.splitlines() == [error]
    assert "HTTP 500" not in proc.stdout and "Recovered." in proc.stdout
    assert proc.stdout.count("⚙ 0 command(s) · 📝 0 file op(s)") == 2  # each turn still closes with its recap
    # the errors that stop line mode before its first prompt too
    agent_file(tmp_path, "sessions: {enabled: true}\n")
    proc = piped(scripted_server.base_url, tmp_path, "", "--resume", "nope")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"mm: no saved conversation nope in {tmp_path / '.mm' / 'sessions'} — /sessions lists them\n"
    down = f"http://127.0.0.1:{free_port()}/v1"
    proc = piped(down, tmp_path, "", "--model", "")  # no model named: the server is asked for one, and is down
    assert proc.returncode == 1 and proc.stderr.startswith("mm: ") and "mm: " not in proc.stdout, proc
    proc = piped(down, tmp_path, "hi\n")  # a model named: the turn fails, mm goes on
    assert proc.returncode == 0 and proc.stderr.startswith("mm: ") and "mm: " not in proc.stdout, proc


def test_no_padding_when_stdout_is_not_a_terminal(scripted_server, tmp_path):
    scripted_server.add_reply("A **short** answer.\n\n- one\n- two\n\n```\ncode here\n```\n\nThe end.\n")
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": "printf 'out   \\n'"}}])
    scripted_server.add_reply("Second.")
    proc = piped(scripted_server.base_url, tmp_path, "hi\nrun\n")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "A short answer." in out and "• one" in out and "code here" in out and "The end." in out
    assert [ln for ln in out.split("\n") if ln.endswith(" ")] == []  # nothing pads a line out to 80 columns
    assert "A short answer.\n" in out and "The end.\n" in out and "Second.\n" in out


def test_sessions_lists_only_well_formed_session_files(scripted_server, tmp_path):
    agent_file(tmp_path, "sessions: {enabled: true}\n")
    scripted_server.add_reply("Paris.")
    assert piped(scripted_server.base_url, tmp_path, "capital of France?\n").returncode == 0
    folder = tmp_path / ".mm" / "sessions"
    (saved,) = folder.glob("*.json")
    for name, text in {"empty": "", "array": "[1, 2]", "object": '{"name": "a package.json"}',
                       "strings": '{"messages": "not a list"}', "broken": '{"messages": [', "nul": "\0\0"}.items():
        (folder / f"20990101-000000-{name}.json").write_text(text)
    (folder / "20990101-000000-folder.json").mkdir()
    proc = piped(scripted_server.base_url, tmp_path, "/sessions\n")
    assert proc.returncode == 0, proc.stderr
    listed = [ln for ln in proc.stdout.splitlines() if re.match(r"\d{8}-\d{6}-", ln)]
    assert len(listed) == 1 and listed[0].startswith(f"{saved.stem} · ") and "capital of France?" in listed[0]
    assert "20990101" not in proc.stdout + proc.stderr
    # and `--resume` (the latest session) takes the well-formed one, not a newer file that is none
    scripted_server.add_reply("Berlin.")
    proc = piped(scripted_server.base_url, tmp_path, "and Germany?\n", "--resume")
    assert proc.returncode == 0, proc.stderr
    assert user_messages(scripted_server.requests[-1]) == ["capital of France?", "and Germany?"]


def test_a_prompt_larger_than_the_context_window_is_refused(scripted_server, tmp_path):
    agent_file(tmp_path, "contextWindow: 2048\n")
    scripted_server.add_reply("A short one is answered.")
    pasted = " ".join(f"{n}: a line of a pasted log that goes on" for n in range(600))
    proc = piped(scripted_server.base_url, tmp_path, f"{pasted}\nshort\n")
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("[error: the prompt is about ")
    assert "(80% of the model's context window of 2048) — not sent, rather than cut" in line
    assert "A short one is answered." in proc.stdout
    (request,) = scripted_server.requests
    assert user_messages(request) == ["short"]  # the pasted prompt was neither sent nor kept


def test_a_skill_command_in_line_mode(scripted_server, tmp_path):
    (tmp_path / ".mm" / "skills").mkdir(parents=True)
    (tmp_path / ".mm" / "skills" / "review.md").write_text("---\ndescription: Review a file.\n---\nBugs.\n")
    scripted_server.add_reply("Reviewed.")
    proc = piped(scripted_server.base_url, tmp_path, "/review src/x.py\n")
    assert proc.returncode == 0, proc.stderr
    assert user_messages(scripted_server.requests[0]) == ["$review src/x.py\n" + SKILL_NOTE.format(name="review")]
    assert json.dumps(scripted_server.requests[0]).count("Bugs.") == 0  # the model reads it with read_skill


def test_unpadded_takes_off_the_spaces_at_the_ends_of_lines_only():
    import io

    from mm.ui.line.unpadded import Unpadded

    out = io.StringIO()
    stream = Unpadded(out)
    for piece in ["a paragraph   \n", "word ", "next  ", "\n", "colour  \x1b[0m\n", "  indented", "\n", "end   "]:
        assert stream.write(piece) == len(piece)
    assert out.getvalue() == "a paragraph\nword next\ncolour\x1b[0m\n  indented\nend"
    assert stream.isatty() is False and stream.encoding == out.encoding  # the rest is the stream's own
