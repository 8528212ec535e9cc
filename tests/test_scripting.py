"""Scripting `mm -p` (docs/scripting.md): piped input, `--output-format json|stream-json`, through
a real `mm -p` subprocess against the scripted model server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness import read_until
from test_line_mode_scenario import until

from mm.ui.piped import BINARY, EMPTY_PROMPT, PROMPT_BYTES, TOO_LARGE, WAITING, WAIT_NOTICE
from mm.fs import size_text

RESULT_KEYS = {"type", "subtype", "is_error", "result", "error", "stop_reason", "session_id", "num_turns",
               "duration_ms", "usage"}
USAGE_KEYS = {"input_tokens", "output_tokens", "thought_tokens", "cached_tokens"}


def env_for(home: Path) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(home)}


def mm(srv, cwd: Path, *args: str, input: bytes | None = None, config: str = "",
       timeout: float = 60) -> subprocess.CompletedProcess:
    """`mm ARGS --base-url … --model m` in `cwd`; stdin is `input` (a pipe), else /dev/null."""
    if config:
        (cwd / ".mm").mkdir(exist_ok=True)
        (cwd / ".mm" / "agent.yaml").write_text(config)
    argv = [sys.executable, "-m", "mm", *args, "--base-url", srv.base_url, "--model", "m"]
    stdin = subprocess.DEVNULL if input is None else None
    return subprocess.run(argv, cwd=cwd, env=env_for(cwd), input=input, stdin=stdin, capture_output=True,
                          timeout=timeout)


def last_user(request: dict) -> str:
    return [m for m in request["messages"] if m["role"] == "user"][-1]["content"]


def lines_of(stdout: bytes) -> list[dict]:
    """Every line of a stream-json output, each parsed on its own (strict JSON)."""
    text = stdout.decode()
    assert text.endswith("\n"), text[-200:]
    return [json.loads(line) for line in text.splitlines()]


def one_object(stdout: bytes) -> dict:
    """The json output: one object on one line, nothing else."""
    (record,) = lines_of(stdout)
    return record


# -- piped input

def test_piped_input_follows_the_prompt_in_a_fenced_block(scripted_server, tmp_path):
    scripted_server.add_reply("The test expects 5.")
    log = "FAILED test_calc.py::test_add\n```python\nassert add(2, 3) == 5\n```\n"
    proc = mm(scripted_server, tmp_path, "-p", "explain the failure", input=log.encode())
    assert proc.returncode == 0, proc.stderr
    assert last_user(scripted_server.requests[0]) == f"explain the failure\n\n````\n{log}````"
    assert proc.stdout == b"The test expects 5.\n"


@pytest.mark.parametrize("flag", [["-p", "-"], ["-p"]])
def test_the_whole_prompt_can_come_from_stdin(scripted_server, tmp_path, flag):
    scripted_server.add_reply("4")
    proc = mm(scripted_server, tmp_path, *flag, input=b"what is 2+2?\n")
    assert proc.returncode == 0, proc.stderr
    assert last_user(scripted_server.requests[0]) == "what is 2+2?\n"


def test_the_prompt_may_follow_the_flags_as_with_claude_p(scripted_server, tmp_path):
    scripted_server.add_reply("ok")
    proc = mm(scripted_server, tmp_path, "-p", "--output-format", "json", "hello there")
    assert proc.returncode == 0 and one_object(proc.stdout)["result"] == "ok"
    assert last_user(scripted_server.requests[0]) == "hello there"


def test_empty_piped_input_leaves_the_prompt_alone(scripted_server, tmp_path):
    scripted_server.add_reply("ok")
    proc = mm(scripted_server, tmp_path, "-p", "hi", input=b"\n \n")
    assert proc.returncode == 0 and last_user(scripted_server.requests[0]) == "hi"
    proc = mm(scripted_server, tmp_path, "-p", "-", input=b"")
    assert proc.returncode == 2 and proc.stderr.decode() == f"mm: {EMPTY_PROMPT}\n"


def test_a_prompt_with_its_input_over_the_cap_is_refused_not_cut(scripted_server, tmp_path):
    proc = mm(scripted_server, tmp_path, "-p", "summarise", input=b"x" * (PROMPT_BYTES + 1))
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr.decode() == f"mm: {TOO_LARGE.format(limit=size_text(PROMPT_BYTES))}\n"
    fits_alone = b"x" * (PROMPT_BYTES - 5)  # but not with the prompt
    proc = mm(scripted_server, tmp_path, "-p", "summarise", input=fits_alone)
    assert proc.returncode == 2 and "is larger than 1 MiB" in proc.stderr.decode()
    assert scripted_server.requests == []


def test_binary_input_is_refused_and_other_bytes_are_repaired(scripted_server, tmp_path):
    proc = mm(scripted_server, tmp_path, "-p", "what is this", input=b"\x89PNG\r\n\x1a\n\x00\x00")
    assert proc.returncode == 2 and proc.stderr.decode() == f"mm: {BINARY}\n"
    scripted_server.add_reply("Latin-1 text.")
    proc = mm(scripted_server, tmp_path, "-p", "what is this", input="café\n".encode("latin-1"))
    assert proc.returncode == 0, proc.stderr
    assert last_user(scripted_server.requests[0]) == "what is this\n\n```\ncaf\ufffd\n```"


def test_a_terminal_is_never_read(scripted_server, tmp_path):
    """`mm -p` typed in a terminal: stdin is the terminal, and nothing is waited for there."""
    import pty

    scripted_server.add_reply("ok")
    main, child = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "mm", "-p", "hi", "--base-url", scripted_server.base_url,
                               "--model", "m"], cwd=tmp_path, env=env_for(tmp_path), stdin=child,
                              capture_output=True, timeout=60)
    finally:
        os.close(child)
        os.close(main)
    assert proc.returncode == 0, proc.stderr
    assert last_user(scripted_server.requests[0]) == "hi"


def test_an_open_stdin_that_sends_nothing_is_waited_for_and_said(scripted_server, tmp_path):
    """A caller that leaves stdin open: mm says it waits (once), and input that comes late is kept."""
    scripted_server.add_reply("ok")
    argv = [sys.executable, "-m", "mm", "-p", "explain", "--base-url", scripted_server.base_url, "--model", "m"]
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env_for(tmp_path), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        said = read_until(proc.stderr.fileno(), b"\n", timeout=120)  # the notice comes after WAIT_NOTICE s
        assert said.decode() == WAITING.format(seconds=WAIT_NOTICE) + "\n"
        assert scripted_server.requests == []
        proc.stdin.write(b"late input\n")
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
        proc.wait()
    assert last_user(scripted_server.requests[0]) == "explain\n\n```\nlate input\n```"


# -- --output-format json and stream-json

SESSIONS = "sessions:\n  enabled: true\n"


def script_with_tools(srv) -> None:
    srv.add_tool_calls([{"id": "c1", "name": "bash", "arguments": {"command": "echo hello"}},
                        {"id": "c2", "name": "read_file", "arguments": {"path": "missing.txt"}}],
                       content="Let me look.", usage=(100, 20))
    srv.add_reply("The file is missing; bash said hello.", reasoning="It failed.", usage=(150, 30))


def saved_session(cwd: Path) -> str:
    (path,) = (cwd / ".mm" / "sessions").glob("*.json")
    return path.stem


def test_json_reports_a_turn_with_tool_calls(scripted_server, tmp_path):
    script_with_tools(scripted_server)
    proc = mm(scripted_server, tmp_path, "-p", "look", "--output-format", "json", config=SESSIONS)
    assert proc.returncode == 0, proc.stderr
    result = one_object(proc.stdout)
    assert set(result) == RESULT_KEYS and set(result["usage"]) == USAGE_KEYS
    assert result["type"] == "result" and result["subtype"] == "success" and result["is_error"] is False
    assert result["result"] == "The file is missing; bash said hello."  # the last answer, after the calls
    assert result["error"] is None and result["stop_reason"] == "end_turn"
    assert result["session_id"] == saved_session(tmp_path)
    assert result["num_turns"] == 2
    assert isinstance(result["duration_ms"], int) and result["duration_ms"] >= 0
    assert result["usage"] == {"input_tokens": 250, "output_tokens": 50, "thought_tokens": 0, "cached_tokens": 0}
    err = proc.stderr.decode()
    assert "🛠️" not in err and "⚙" not in err and "💾" not in err  # stdout is for scripts, stderr for problems


def test_stream_json_reports_the_turn_as_it_happens(scripted_server, tmp_path):
    script_with_tools(scripted_server)
    proc = mm(scripted_server, tmp_path, "-p", "look", "--output-format", "stream-json", config=SESSIONS)
    assert proc.returncode == 0, proc.stderr
    events = lines_of(proc.stdout)
    session = saved_session(tmp_path)
    init, user = events[0], events[1]
    assert init["type"] == "init" and init["session_id"] == session and init["model"] == "m"
    assert init["cwd"] == str(tmp_path) and {"bash", "read_file", "write_file", "edit_file"} <= set(init["tools"])
    assert user == {"type": "message", "role": "user", "content": "look"}
    kinds = [e["type"] for e in events]
    assert kinds[-1] == "result" and kinds.count("result") == 1 and kinds.count("init") == 1
    answer = "".join(e["content"] for e in events if e["type"] == "message" and e["role"] == "assistant")
    assert answer == "Let me look.The file is missing; bash said hello."
    assert all(e["delta"] is True for e in events if e["type"] == "message" and e["role"] == "assistant")
    assert "".join(e["content"] for e in events if e["type"] == "thought") == "It failed."
    uses = [e for e in events if e["type"] == "tool_use"]  # the arguments as the tool runs them: defaults filled in
    assert uses[0] == {"type": "tool_use", "tool_id": "c1", "tool_name": "bash",
                       "parameters": {"command": "echo hello"}}
    assert [u["tool_name"] for u in uses] == ["bash", "read_file"] and uses[1]["parameters"]["path"] == "missing.txt"
    results = {e["tool_id"]: e for e in events if e["type"] == "tool_result"}
    assert results["c1"]["status"] == "success" and results["c1"]["output"] == "hello\n"
    assert results["c2"]["status"] == "error" and "missing.txt" in results["c2"]["output"]
    assert kinds.index("tool_use") < kinds.index("tool_result")  # each call before its result
    usages = [e["usage"] for e in events if e["type"] == "usage"]
    assert [u["input_tokens"] for u in usages] == [100, 150]
    result = events[-1]
    assert set(result) == RESULT_KEYS and result["result"] == "The file is missing; bash said hello."
    assert result["session_id"] == session and result["num_turns"] == 2 and result["is_error"] is False


@pytest.mark.parametrize("fmt", ["json", "stream-json"])
def test_a_failing_turn_is_still_json(scripted_server, tmp_path, fmt):
    scripted_server.add_tool_calls([{"id": "c1", "name": "bash", "arguments": {"command": "echo one"}}])
    scripted_server.add_json({"error": {"message": "boom: out of memory"}}, status=500)
    proc = mm(scripted_server, tmp_path, "-p", "go", "--output-format", fmt)
    assert proc.returncode == 1
    events = lines_of(proc.stdout)
    result = events[-1]
    assert set(result) == RESULT_KEYS and result["type"] == "result"
    assert result["is_error"] is True and result["subtype"] == "error_during_execution"
    assert result["stop_reason"] == "error" and "boom: out of memory" in result["error"]
    assert result["session_id"] is None  # sessions are off: nothing to go on with
    assert result["num_turns"] == 1 and result["result"] == ""
    assert "boom: out of memory" in proc.stderr.decode()  # and said to people
    if fmt == "stream-json":
        assert [e["type"] for e in events if e["type"] in ("tool_use", "tool_result")] == ["tool_use", "tool_result"]


def test_max_turns_has_its_own_subtype(scripted_server, tmp_path):
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": "echo one"}}])
    proc = mm(scripted_server, tmp_path, "-p", "go", "--output-format", "json", config="maxTurns: 1\n")
    result = one_object(proc.stdout)
    assert proc.returncode == 1 and result["subtype"] == "error_max_turns"
    assert result["stop_reason"] == "max_turn_requests"
    assert result["error"].startswith("[error: the turn reached maxTurns")


@pytest.mark.parametrize("fmt", ["json", "stream-json"])
def test_usage_and_configuration_errors_are_json_too(scripted_server, tmp_path, fmt):
    proc = mm(scripted_server, tmp_path, "-p", "hi", "--output-format", fmt, config="bashTimout: 5\n")
    assert proc.returncode == 2
    result = one_object(proc.stdout)
    assert result["subtype"] == "error_usage" and result["is_error"] is True and result["num_turns"] == 0
    assert "agent.yaml:1: bashTimout: unknown key" in result["error"]
    assert proc.stderr.decode() == f"mm: {result['error']}\n"
    (tmp_path / ".mm" / "agent.yaml").unlink()
    proc = mm(scripted_server, tmp_path, "-p", "hi", "--output-format", fmt, "--resume", "nope")
    assert proc.returncode == 2 and one_object(proc.stdout)["error"].startswith("sessions are off")
    assert scripted_server.requests == []


def test_the_parser_own_errors_stay_text(tmp_path):
    """Before the format is known to be valid there is no JSON to write: argparse's error, exit 2."""
    proc = subprocess.run([sys.executable, "-m", "mm", "-p", "hi", "--output-format", "yaml"], cwd=tmp_path,
                          env=env_for(tmp_path), capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stdout == "" and "invalid choice: 'yaml'" in proc.stderr


@pytest.mark.parametrize("argv,message", [
    (["--output-format", "json"], "FORMAT_WITHOUT_P"),
    (["-p", "one", "two"], "PROMPT_TWICE"),
    (["-p", "x", "--continue", "--resume", "id"], "CONTINUE_AND_RESUME"),
])
def test_flags_that_do_not_go_together(tmp_path, argv, message):
    import mm.cli

    proc = subprocess.run([sys.executable, "-m", "mm", *argv], cwd=tmp_path, env=env_for(tmp_path),
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stderr == getattr(mm.cli, message) + "\n" and proc.stdout == ""


@pytest.mark.parametrize("fmt", ["json", "stream-json"])
def test_interrupted_is_json_and_130(scripted_server, tmp_path, fmt):
    scripted_server.add_stall(120)
    argv = [sys.executable, "-m", "mm", "-p", "wait", "--output-format", fmt, "--base-url",
            scripted_server.base_url, "--model", "m"]
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env_for(tmp_path), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert until(lambda: scripted_server.requests, timeout=60), "the request never came"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130, err
    result = lines_of(out)[-1]
    assert result["stop_reason"] == "cancelled" and result["error"] == "interrupted" and result["is_error"] is True
    assert err.decode().rstrip().endswith("mm: interrupted")


def test_a_signal_while_waiting_for_input_still_ends_with_the_result(tmp_path):
    """SIGTERM before the turn (here: stdin open, nothing piped yet) is an interruption too."""
    argv = [sys.executable, "-m", "mm", "-p", "explain", "--output-format", "json", "--base-url",
            "http://127.0.0.1:9/v1", "--model", "m"]
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env_for(tmp_path), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        said = read_until(proc.stderr.fileno(), b"\n", timeout=120)  # the notice: mm is reading stdin
        assert said.decode() == WAITING.format(seconds=WAIT_NOTICE) + "\n"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130, err
    result = one_object(out)
    assert result["stop_reason"] == "cancelled" and result["error"] == "interrupted" and result["num_turns"] == 0
    assert err.decode() == "mm: interrupted\n"


def test_stream_json_stops_when_its_reader_leaves(scripted_server, tmp_path):
    scripted_server.add_reply("word " * 4 + "".join(f"word{i} " for i in range(20000)))
    argv = [sys.executable, "-m", "mm", "-p", "talk", "--output-format", "stream-json", "--base-url",
            scripted_server.base_url, "--model", "m"]
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env_for(tmp_path), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = json.loads(proc.stdout.readline())
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert first["type"] == "init" and "Traceback" not in err


def test_text_mode_says_the_session_id_last_on_stderr(scripted_server, tmp_path):
    from mm.ui.oneshot import SESSION_LINE

    scripted_server.add_reply("ok")
    proc = mm(scripted_server, tmp_path, "-p", "hi", config=SESSIONS)
    assert proc.returncode == 0 and proc.stdout == b"ok\n"
    session = saved_session(tmp_path)
    assert proc.stderr.decode().splitlines()[-1] == SESSION_LINE.format(id=session)
