"""The lsp tool in `mm -p` and piped line mode, as subprocesses against the scripted model server:
the `🔎` display and the recap counter, the warning for a server not on the PATH (and the banner
when none is), and no language server outliving mm — SIGKILLed included (mm-tools.md §lsp)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from lsp_helpers import fake_entry, jedi_entry, program, pyright_entry, server_pids
from test_oneshot_e2e import run_mm, tool_results

MAIN = 'from talk import greet\n\n# say it\nprint(greet("ana"))\n'
TALK = 'def greet(name):\n    return "hello " + name\n'
needs_jedi = pytest.mark.skipif(program("jedi-language-server") is None, reason="jedi-language-server is not installed")


def agent_file(tmp_path, *entries: dict) -> None:
    lines = ["lsp:", "  servers:"]
    for entry in entries:
        lines.append(f"    - name: {entry['name']}")
        lines.append(f"      command: {entry['command']}")
        lines.append(f"      args: {entry.get('args', [])}")
        lines.append(f"      extensions: {entry['extensions']}")
    (tmp_path / ".mm").mkdir(exist_ok=True)
    (tmp_path / ".mm" / "agent.yaml").write_text("\n".join(lines) + "\n")
    (tmp_path / "main.py").write_text(MAIN)
    (tmp_path / "talk.py").write_text(TALK)


def ghost() -> dict:
    return {"name": "ghost", "command": "no-such-language-server-mm", "extensions": [".py"]}


def declared(request: dict) -> dict:
    return {t["function"]["name"]: t["function"] for t in request.get("tools", [])}


def until(condition, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return bool(condition())


@needs_jedi
def test_oneshot_shows_each_lsp_call_and_counts_them(scripted_server, tmp_path):
    agent_file(tmp_path, jedi_entry())
    scripted_server.add_tool_calls([{"id": "c1", "name": "lsp", "arguments": {
        "action": "definition", "path": "main.py", "symbol": "greet"}}])
    scripted_server.add_tool_calls([{"id": "c2", "name": "lsp", "arguments": {
        "action": "references", "path": "main.py", "line": 4, "column": 7}}])
    scripted_server.add_tool_calls([{"id": "c3", "name": "lsp", "arguments": {
        "action": "rename", "path": "talk.py", "symbol": "person.greet", "new_name": "hello"}}])
    scripted_server.add_reply("greet is defined in talk.py.")
    proc = run_mm(["-p", "where is greet?", "--base-url", scripted_server.base_url, "--model", "m"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "greet is defined in talk.py.\n"
    results = tool_results(scripted_server.requests[3])
    assert results["c1"] == "talk.py:1:5  def greet(name):"
    assert results["c2"] == ('3 reference(s):\nmain.py:1:18  from talk import greet\nmain.py:4:7  print(greet("ana"))\n'
                             "talk.py:1:5  def greet(name):")
    err = proc.stderr.splitlines()
    at = err.index("🔎 lsp: definition main.py greet")
    assert err[at + 1] == "   talk.py:1:5  def greet(name):"
    at = err.index("🔎 lsp: references main.py:4:7")
    assert err[at + 1:at + 5] == ["   3 reference(s):", "   main.py:1:18  from talk import greet",
                                  '   main.py:4:7  print(greet("ana"))', "   talk.py:1:5  def greet(name):"]
    assert "🔎 lsp: rename talk.py greet → hello" in err
    assert err[-1] == "⚙ 0 command(s) · 📝 0 file op(s) · 🔎 3 lsp call(s)"
    assert (tmp_path / "main.py").read_text() == MAIN.replace("greet", "hello")
    assert server_pids(tmp_path, "jedi-language-server") == []  # stopped when mm left


@needs_jedi
def test_a_server_not_on_the_path_is_skipped_with_a_warning(scripted_server, tmp_path):
    agent_file(tmp_path, ghost(), jedi_entry())
    scripted_server.add_reply("ok")
    proc = run_mm(["-p", "hi", "--base-url", scripted_server.base_url, "--model", "m"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    warning = "[warning: lsp server ghost (no-such-language-server-mm) not found on the PATH — skipped]"
    assert proc.stderr.splitlines().count(warning) == 1
    description = declared(scripted_server.requests[0])["lsp"]["description"]
    assert description.endswith("Servers available: jedi (.py).")
    for action in ("definition", "references", "hover", "symbols", "diagnostics", "rename"):
        assert action in description
    assert server_pids(tmp_path, "jedi-language-server") == []  # never used: never started


def test_no_server_on_the_path_no_tool_and_the_banner_says_so(scripted_server, tmp_path):
    agent_file(tmp_path, ghost())
    scripted_server.add_reply("ok")
    scripted_server.add_reply("ok")
    proc = run_mm(["-p", "hi", "--base-url", scripted_server.base_url, "--model", "m"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "[warning: lsp server ghost (no-such-language-server-mm) not found on the PATH — skipped]" in proc.stderr
    assert "lsp" not in declared(scripted_server.requests[0])
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(tmp_path)}
    line_mode = subprocess.run([sys.executable, "-m", "mm", "--base-url", scripted_server.base_url, "--model", "m"],
                               input="hi\n", capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)
    assert line_mode.returncode == 0, line_mode.stderr
    banner = next(line for line in line_mode.stdout.splitlines() if line.startswith("mm v"))
    assert banner.endswith(" · lsp: no server of lsp.servers is on the PATH — the lsp tool is not declared")
    assert "lsp" not in banner.split("tools: ")[1].split(" · ")[0].split(", ")


def servers_for(kind: str, tmp_path):
    if kind == "jedi":
        return (program("jedi-language-server") is not None, jedi_entry(), "jedi-language-server")
    if kind == "lingering":  # stays when its input ends and never looks at its parent: only the supervisor ends it
        return (True, fake_entry(tmp_path, {"linger": True}), "lsp_fake_server.py")
    return (shutil.which("node") is not None and program("pyright-langserver") is not None, pyright_entry(),
            "pyright")


@pytest.mark.parametrize("kind", ["lingering", "jedi", "pyright"])
def test_a_sigkilled_mm_leaves_no_language_server(scripted_server, tmp_path, kind):
    present, entry, needle = servers_for(kind, tmp_path)
    if not present:
        pytest.skip(f"{kind} is not installed")
    agent_file(tmp_path, entry)
    scripted_server.add_tool_calls([{"id": "c1", "name": "lsp", "arguments": {
        "action": "definition", "path": "main.py", "symbol": "greet"}}])
    scripted_server.add_tool_calls([{"id": "c2", "name": "bash", "arguments": {"command": "touch started; sleep 1000"}}])
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "mm", "-p", "go", "--base-url", scripted_server.base_url,
                             "--model", "m"], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert until(lambda: (tmp_path / "started").exists()), proc.stderr
        assert server_pids(tmp_path, needle)  # the server runs while mm does
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        assert until(lambda: server_pids(tmp_path, needle) == [], 30), server_pids(tmp_path, needle)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)
        for pid in server_pids(tmp_path, needle):
            os.kill(pid, signal.SIGKILL)
