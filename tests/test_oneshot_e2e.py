"""`mm -p` as a subprocess against the scripted server: a whole small task, end to end."""

import os
import subprocess
import sys

CALC = "def add(a, b):\n\treturn a - b\n\n\ndef main():\n\tprint(add(2, 3))\n\tassert add(2, 3) == 5, 'add is wrong'\n\n\nmain()\n"


def run_mm(args, cwd, env_extra=None, timeout=60):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")}
    env.update({"HOME": str(cwd), **(env_extra or {})})
    return subprocess.run([sys.executable, "-m", "mm", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def tool_results(request: dict) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}


def test_write_edit_run_fix_answer(scripted_server, tmp_path):
    srv = scripted_server
    srv.add_tool_calls([{"id": "call_w", "name": "write_file", "arguments": {"path": "calc.py", "content": CALC}}],
                       content="I'll write the file.")
    srv.add_tool_calls([{"id": "call_e1", "name": "edit_file", "arguments": {"path": "calc.py", "edits": [
        {"old": "def main():\n    print(add(2, 3))", "new": "def main():\n    print('sum:', add(2, 3))"}]}}])
    srv.add_tool_calls([{"id": "call_b1", "name": "bash", "arguments": {"command": "python3 calc.py"}}])
    srv.add_tool_calls([{"id": "call_e2", "name": "edit_file", "arguments": {"path": "calc.py", "edits": [
        {"old": "    return a - b", "new": "    return a + b"}]}}])
    srv.add_tool_calls([{"id": "call_b2", "name": "bash", "arguments": {"command": "python3 calc.py"}}])
    srv.add_reply("Fixed: add() subtracted; it now adds, and calc.py prints sum: 5.")

    proc = run_mm(["-p", "Write calc.py, run it and fix it", "--base-url", srv.base_url, "--model", "m"], tmp_path)

    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "calc.py").read_text() == (
        "def add(a, b):\n\treturn a + b\n\n\ndef main():\n\tprint('sum:', add(2, 3))\n"
        "\tassert add(2, 3) == 5, 'add is wrong'\n\n\nmain()\n")
    assert len(srv.requests) == 6
    results = tool_results(srv.requests[5])
    assert list(results) == ["call_w", "call_e1", "call_b1", "call_e2", "call_b2"]
    assert "matched ignoring whitespace" in results["call_e1"].splitlines()[0]
    assert "AssertionError: add is wrong" in results["call_b1"]
    assert results["call_b1"].rstrip().endswith("[exit code: exit status 1]")
    assert results["call_b2"] == "sum: 5\n"
    # the assistant message that only calls tools carries "" as content, never null
    assert srv.requests[2]["messages"][-2]["content"] == ""
    assert srv.requests[1]["messages"][2]["content"] == "I'll write the file."
    assert proc.stdout == "I'll write the file.\nFixed: add() subtracted; it now adds, and calc.py prints sum: 5.\n"
    err = proc.stderr
    assert "📝 write_file: calc.py" in err and "📝 edit_file: calc.py" in err
    assert "🛠️  bash: python3 calc.py" in err
    assert err.rstrip().splitlines()[-1] == "⚙ 2 command(s) · 📝 3 file op(s)"


def test_rejected_without_yolo(scripted_server, tmp_path):
    (tmp_path / ".mm").mkdir()
    (tmp_path / ".mm" / "agent.yaml").write_text("yolo: false\n")
    scripted_server.add_tool_calls([{"id": "c1", "name": "bash", "arguments": {"command": "touch ran"}}])
    scripted_server.add_tool_calls([{"id": "c2", "name": "write_file", "arguments": {"path": "f", "content": "x"}}])
    scripted_server.add_tool_calls([{"id": "c3", "name": "read_file", "arguments": {"path": ".mm/agent.yaml"}}])
    scripted_server.add_reply("ok")
    proc = run_mm(["-p", "try", "--base-url", scripted_server.base_url, "--model", "m"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    results = tool_results(scripted_server.requests[3])
    assert results == {"c1": "[command rejected by the user]", "c2": "[write_file rejected by the user]",
                       "c3": "yolo: false\n"}
    assert not (tmp_path / "ran").exists() and not (tmp_path / "f").exists()
