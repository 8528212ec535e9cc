"""The small faults a new user's trial found in `mm -p` (issue 10, point 12), each through a real
`mm -p` subprocess against the scripted server: skill commands, a prompt that starts with a path,
no padding, the refusals of `yolo: false` explained, binary command output, a prompt larger than
the context window, and duplicate keys in the agent file."""

import os

from mm.engine.compaction import PROMPT_TOO_LARGE
from mm.skills import SKILL_NOTE
from mm.tools.binary import BINARY_OUTPUT
from mm.ui.oneshot import NOBODY_TO_ASK
from test_oneshot_e2e import run_mm, tool_results

REVIEW = "---\ndescription: Review a file for bugs.\n---\nRead the file, list the bugs.\n"


def agent_file(cwd, text: str) -> None:
    (cwd / ".mm").mkdir(exist_ok=True)
    (cwd / ".mm" / "agent.yaml").write_text(text)


def mm_p(srv, cwd, prompt: str):
    return run_mm(["-p", prompt, "--base-url", srv.base_url, "--model", "m"], cwd)


def last_user(request: dict) -> str:
    return [m for m in request["messages"] if m["role"] == "user"][-1]["content"]


def test_a_skill_command_works_in_p_as_in_line_mode_and_acp(scripted_server, tmp_path):
    (tmp_path / ".mm" / "skills").mkdir(parents=True)
    (tmp_path / ".mm" / "skills" / "review.md").write_text(REVIEW)
    scripted_server.add_reply("Reviewed.")
    scripted_server.add_reply("Sent as typed.")
    proc = mm_p(scripted_server, tmp_path, "/review src/x.py")
    assert proc.returncode == 0, proc.stderr
    assert last_user(scripted_server.requests[0]) == "$review src/x.py\n" + SKILL_NOTE.format(name="review")
    proc = mm_p(scripted_server, tmp_path, "/frobnicate src/x.py")  # no such skill: as typed, as in ACP
    assert proc.returncode == 0, proc.stderr
    assert last_user(scripted_server.requests[1]) == "/frobnicate src/x.py"


def test_a_prompt_that_starts_with_a_path_reaches_the_model(scripted_server, tmp_path):
    scripted_server.add_reply("It is fine.")
    proc = mm_p(scripted_server, tmp_path, f"{tmp_path}/x.log: why does it fail?")
    assert proc.returncode == 0, proc.stderr
    assert last_user(scripted_server.requests[0]) == f"{tmp_path}/x.log: why does it fail?"


def test_the_answer_is_written_as_the_model_wrote_it(scripted_server, tmp_path):
    answer = "Short **answer**.\n\n- one\n- two\n\n```\ncode\n```\n"
    scripted_server.add_reply(answer)
    proc = mm_p(scripted_server, tmp_path, "hi")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == answer  # no padding to 80 columns, no wrapping, no rendering


def test_yolo_false_says_why_calls_were_refused_and_how_to_allow_them(scripted_server, tmp_path):
    agent_file(tmp_path, "yolo: false\n")
    scripted_server.add_tool_calls([{"id": "c1", "name": "bash", "arguments": {"command": "touch made"}}])
    scripted_server.add_tool_calls([{"id": "c2", "name": "write_file", "arguments": {"path": "a.txt",
                                                                                     "content": "x\n"}}])
    scripted_server.add_reply("Nothing could be done.")
    proc = mm_p(scripted_server, tmp_path, "go")
    assert proc.returncode == 0, proc.stderr
    note = NOBODY_TO_ASK.format(mode="-p")
    assert proc.stderr.splitlines().count(note) == 1  # said once, at the first refusal
    assert "`yolo: true`" in note and "MM_YOLO=true" in note
    assert proc.stderr.index("🛠️  bash: touch made") < proc.stderr.index(note)
    # the model reads the reference's refusals, exactly
    assert tool_results(scripted_server.requests[2]) == {"c1": "[command rejected by the user]",
                                                         "c2": "[write_file rejected by the user]"}
    assert not (tmp_path / "made").exists() and not (tmp_path / "a.txt").exists()


def test_without_refusals_nothing_is_said(scripted_server, tmp_path):
    agent_file(tmp_path, "yolo: false\n")
    scripted_server.add_tool_calls([{"name": "read_file", "arguments": {"path": "nothing.txt"}}])
    scripted_server.add_reply("ok")
    proc = mm_p(scripted_server, tmp_path, "go")
    assert proc.returncode == 0 and "yolo" not in proc.stderr, proc.stderr


def test_binary_output_reaches_the_model_as_a_notice_with_its_size(scripted_server, tmp_path):
    blob = b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 64 + b"\x00" * 1000
    (tmp_path / "blob.bin").write_bytes(blob)
    (tmp_path / "latin1.txt").write_bytes("Un café, une crème brûlée, déjà vu.\n".encode("latin-1") * 20)
    calls = [("c1", "cat blob.bin"), ("c2", "head -c 4096 /bin/ls"), ("c3", "cat latin1.txt"),
             ("c4", "cat blob.bin; exit 3")]
    for call_id, command in calls:
        scripted_server.add_tool_calls([{"id": call_id, "name": "bash", "arguments": {"command": command}}])
    scripted_server.add_reply("Seen.")
    proc = mm_p(scripted_server, tmp_path, "look")
    assert proc.returncode == 0, proc.stderr
    results = tool_results(scripted_server.requests[-1])
    assert results["c1"] == BINARY_OUTPUT.format(size=len(blob))
    assert results["c2"] == BINARY_OUTPUT.format(size=4096)
    text = (tmp_path / "latin1.txt").read_bytes().decode("utf-8", errors="replace")  # text with a few bad bytes
    assert results["c3"] == text and "Un caf\ufffd" in text
    assert results["c4"] == BINARY_OUTPUT.format(size=len(blob)) + "\n[exit code: exit status 3]"
    assert BINARY_OUTPUT.format(size=len(blob)) in proc.stderr  # the preview shows the notice too


def test_a_prompt_larger_than_the_context_window_is_refused_not_cut(scripted_server, tmp_path):
    agent_file(tmp_path, "contextWindow: 2048\n")
    pasted = "".join(f"{n}: a line of a pasted log that goes on\n" for n in range(600))
    proc = mm_p(scripted_server, tmp_path, pasted)
    assert proc.returncode == 1
    assert [m for m in scripted_server.requests] == []  # the model was not called
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("[error: the prompt is about ")]
    head, tail = PROMPT_TOO_LARGE.split("{tokens}")[0], PROMPT_TOO_LARGE.split("{window}")[1]
    assert line.startswith(head) and line.endswith(tail)
    assert "mm lets a request fill (80% of the model's context window of 2048)" in line and "1638 tokens" in line
    scripted_server.add_reply("A short one is sent.")
    assert mm_p(scripted_server, tmp_path, "a short prompt").returncode == 0


def test_duplicate_keys_in_the_agent_file_are_an_error(scripted_server, tmp_path):
    agent_file(tmp_path, "yolo: false\nmaxOutput: 2000\nsessions:\n  enabled: true\n  dir: a\n  enabled: false\n")
    proc = mm_p(scripted_server, tmp_path, "go")
    assert proc.returncode == 2 and proc.stdout == ""
    path = os.path.join(".mm", "agent.yaml")
    assert proc.stderr == (f"mm: {tmp_path / path}:6: sessions.enabled: this key is given twice (first on line 4) "
                           "— keep one of them\n")
    agent_file(tmp_path, "yolo: true\nbashTool: false\nyolo: false\n")
    proc = mm_p(scripted_server, tmp_path, "go")
    assert proc.returncode == 2
    assert proc.stderr.endswith(":3: yolo: this key is given twice (first on line 1) — keep one of them\n")
    assert scripted_server.requests == []  # stopped before any request
