"""AGENTS.md files reach the model through each front end: `mm -p` (subprocess), line mode (a
pseudo-terminal) and `mm -acp` (the SDK's client; the session's cwd decides), against the
scripted model server; the banner of each says which files were read (docs/configuration.md
§Project instructions)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from mm.engine.tokens import count_text
from mm.instructions import CUT_LINE, CUT_NOTE, FILE_HEADER, READ_LINE, SKIPPED

RULES = "".join(f"Pkg rule {i}: keep functions short.\n" for i in range(300))


def make_repo(tmp_path: Path) -> tuple[Path, Path]:
    """tmp/home (HOME, with the user's AGENTS.md) and tmp/repo (a repository: `.git`, AGENTS.md at
    its root and in pkg/); returns (home, repo/pkg)."""
    home, repo = tmp_path / "home", tmp_path / "repo"
    (home / ".config" / "mm").mkdir(parents=True)
    (home / ".config" / "mm" / "AGENTS.md").write_text("USER-RULE: answer in English.\n")
    (repo / ".git").mkdir(parents=True)
    (repo / "pkg").mkdir()
    (repo / "AGENTS.md").write_text("# Repo\nROOT-RULE: run `make test`.\n")
    (repo / "pkg" / "AGENTS.md").write_text("PKG-RULE: this package is pure Python.\n")
    return home, repo / "pkg"


def run_mm(args: list[str], cwd: Path, home: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MM_", "OPENAI_", "XDG_"))}
    env["HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "mm", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def system_of(request: dict) -> str:
    assert request["messages"][0]["role"] == "system"
    return request["messages"][0]["content"]


def assert_three_files(system: str) -> None:
    """The user's file, the root's, the folder's: in that order, each under its header."""
    order = [FILE_HEADER.format(name="~/.config/mm/AGENTS.md"), "USER-RULE: answer in English.",
             FILE_HEADER.format(name="../AGENTS.md"), "# Repo\nROOT-RULE: run `make test`.",
             FILE_HEADER.format(name="AGENTS.md"), "PKG-RULE: this package is pure Python."]
    at = 0
    for part in order:
        found = system.find(part, at)
        assert found >= 0, f"{part!r} missing or out of order in:\n{system}"
        at = found + len(part)


THREE = READ_LINE.format(files="~/.config/mm/AGENTS.md, ../AGENTS.md, AGENTS.md")


def test_oneshot_sends_the_files_from_the_user_and_the_root_down(scripted_server, tmp_path):
    home, pkg = make_repo(tmp_path)
    scripted_server.add_reply("ok")
    proc = run_mm(["-p", "hi", "--base-url", scripted_server.base_url, "--model", "m"], pkg, home)
    assert proc.returncode == 0, proc.stderr
    system = system_of(scripted_server.requests[0])
    assert system.startswith("You are mm, a careful coding assistant")
    assert_three_files(system)
    assert THREE in proc.stderr.splitlines()
    assert proc.stdout == "ok\n"


def test_oneshot_cap_is_said_in_the_prompt_and_on_stderr(scripted_server, tmp_path):
    home, pkg = make_repo(tmp_path)
    (pkg / "AGENTS.md").write_text(RULES)
    (pkg.parent / ".mm").mkdir()
    (pkg.parent / ".mm" / "agent.yaml").write_text("instructions:\n  maxTokens: 300\n")  # found from pkg/
    scripted_server.add_reply("ok")
    proc = run_mm(["-p", "hi", "--base-url", scripted_server.base_url, "--model", "m"], pkg, home)
    assert proc.returncode == 0, proc.stderr
    system = system_of(scripted_server.requests[0])
    instructions = system[system.index("# Project instructions"):]
    assert count_text(instructions) <= 300
    last = max(int(n) for n in re.findall(r"Pkg rule (\d+):", instructions))  # whole lines 0..last kept
    assert f"Pkg rule {last}: keep functions short.\n\n[mm: " in instructions
    left = f"the last {299 - last} of 300 lines of AGENTS.md"
    assert instructions.endswith(CUT_NOTE.format(limit=300, left=left))
    assert CUT_LINE.format(limit=300, left=left) in proc.stderr.splitlines()
    assert "Pkg rule 299" not in system


def test_oneshot_a_named_pipe_for_agents_md_does_not_hang(scripted_server, tmp_path):
    home, pkg = make_repo(tmp_path)
    (pkg / "AGENTS.md").unlink()
    os.mkfifo(pkg / "AGENTS.md")
    scripted_server.add_reply("ok")
    proc = run_mm(["-p", "hi", "--base-url", scripted_server.base_url, "--model", "m"], pkg, home, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert SKIPPED.format(path="AGENTS.md", reason="it is a named pipe, not a regular file — mm reads and writes "
                                                   "regular files only") in proc.stderr.splitlines()
    assert "ROOT-RULE" in system_of(scripted_server.requests[0])


def test_oneshot_without_instruction_files_says_nothing(scripted_server, tmp_path):
    scripted_server.add_reply("ok")
    proc = run_mm(["-p", "hi", "--base-url", scripted_server.base_url, "--model", "m"], tmp_path, tmp_path)
    assert proc.returncode == 0 and "instructions" not in proc.stderr
    assert "# Project instructions" not in system_of(scripted_server.requests[0])


def test_line_mode_banner_names_the_files_and_the_model_reads_them(scripted_server, tmp_path):
    from test_line_mode_terminal import Terminal, spawn_on_terminal

    home, pkg = make_repo(tmp_path)
    scripted_server.add_reply("ok")
    proc, fd = spawn_on_terminal([sys.executable, "-m", "mm", "--base-url", scripted_server.base_url, "--model", "m"],
                                 pkg, env={"HOME": str(home)}, size=(40, 200))
    try:
        terminal = Terminal(fd)
        assert terminal.expect_line("instructions: ") == THREE
        terminal.expect("›")
        terminal.write("hello\r")
        terminal.expect("ok")
        terminal.expect("›")
        terminal.write("/quit\r")
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(fd)
    assert_three_files(system_of(scripted_server.requests[0]))


async def test_acp_each_session_reads_the_files_of_its_cwd(scripted_server, tmp_path):
    from test_acp_sdk import ScriptedClient, running_mm, step, until, write_agent_file

    srv = scripted_server
    work = tmp_path / "work"  # the process's folder: its agent file, no AGENTS.md
    work.mkdir()
    home = tmp_path / "home"  # running_mm's HOME and XDG_CONFIG_HOME=home/.config
    _, pkg = make_repo(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "CLAUDE.md").write_text("OTHER-RULE: no repository here.\n")
    write_agent_file(work, srv.base_url, sessions={"enabled": True})
    srv.add_reply("first")
    srv.add_reply("second")
    srv.add_reply("third")
    client = ScriptedClient()
    async with running_mm(work, srv, client) as mm:
        async def session_in(cwd: Path) -> str:
            n = len(client.updates)
            sid = (await step(mm.conn.new_session(cwd=str(cwd), mcp_servers=[]))).session_id
            await until(lambda: any(u["sessionUpdate"] == "available_commands_update" for _, u in client.updates[n:]),
                        "available_commands_update")
            return sid

        in_pkg = await session_in(pkg)
        in_other = await session_in(other)
        assert (await mm.prompt(in_pkg, "one"))["result"]["stopReason"] == "end_turn"
        assert (await mm.prompt(in_other, "two"))["result"]["stopReason"] == "end_turn"
        assert_three_files(system_of(srv.requests[0]))
        system = system_of(srv.requests[1])
        assert "OTHER-RULE" in system and "ROOT-RULE" not in system and "PKG-RULE" not in system
        assert FILE_HEADER.format(name="CLAUDE.md") in system

        (pkg / "AGENTS.md").write_text("PKG-RULE-2: changed since.\n")  # session/load reads them again
        await step(mm.conn.load_session(cwd=str(pkg), session_id=in_pkg, mcp_servers=[]))
        assert (await mm.prompt(in_pkg, "three"))["result"]["stopReason"] == "end_turn"
        system = system_of(srv.requests[2])
        assert "PKG-RULE-2: changed since." in system and "PKG-RULE:" not in system
        log = mm.stderr
    assert f"[acp] session {in_pkg}: {THREE}" in log
    assert f"[acp] session {in_other}: {READ_LINE.format(files='~/.config/mm/AGENTS.md, CLAUDE.md')}" in log
    assert log.count(f"[acp] session {in_pkg}: {THREE}") == 2  # session/new, then session/load
