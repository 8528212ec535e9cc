"""Reading never blocks mm: a named pipe, a device or a link to one left among the files mm reads
(the file tools' paths, skills, session files, the agent file, the prompt history) is refused at
once with one line, the rest works, and Ctrl-C and SIGINT keep working (docs/tools-edit.md §Files
on disk). Every node is made by the test in its own folder; /proc/kmsg (the case of a file that
stat calls regular but whose read waits) is never read: the same non-blocking read is shown on
a named pipe."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from harness import pids_matching
from mm.sessions.store import session_record, write_session
from mm.fs import NOT_REGULAR, WOULD_WAIT, FileRefused, open_regular, read_bytes, read_chunks
from mm.ui.line.history import NOT_KEPT
from test_line_mode_signals import stop, until
from test_line_mode_terminal import Terminal, spawn_on_terminal


def within(seconds: float, work):
    """`work()`'s value (or its exception), failing the test when it has not returned after
    `seconds` (it is then left on its daemon thread)."""
    box: dict = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as err:  # noqa: BLE001 - handed back to the test
            box["error"] = err

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still blocked after {seconds} s"
    if "error" in box:
        raise box["error"]
    return box.get("value")


def pipe_refusal(path) -> str:
    return NOT_REGULAR.format(path=path, kind="named pipe")


def test_a_named_pipe_is_opened_without_waiting_and_refused(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(FileRefused) as refused:  # no writer: a plain open would wait for one for ever
        within(10, lambda: read_bytes(fifo, 100))
    assert str(refused.value) == pipe_refusal(fifo)
    writer = os.open(fifo, os.O_RDWR)  # a writer that never writes: a plain read would wait for ever
    try:
        with pytest.raises(FileRefused):
            within(10, lambda: open_regular(fifo))
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # as open_regular opens (before its fstat)
        try:
            with pytest.raises(FileRefused) as refused:  # the /proc/kmsg case: the read would wait
                within(10, lambda: list(read_chunks(reader, 100, "fifo")))
            assert str(refused.value) == WOULD_WAIT.format(path="fifo")
        finally:
            os.close(reader)
    finally:
        os.close(writer)


def test_an_endless_device_is_never_read(tmp_path):
    os.mknod(tmp_path / "zero", stat.S_IFCHR | 0o666, os.makedev(1, 5))
    os.symlink("zero", tmp_path / "link")
    with pytest.raises(FileRefused) as refused:
        within(10, lambda: read_bytes(tmp_path / "link", 1 << 30, "link"))
    assert str(refused.value) == NOT_REGULAR.format(path="link", kind="character device")
    (tmp_path / "big").write_bytes(b"x" * 2000)
    with pytest.raises(FileRefused) as refused:
        read_bytes(tmp_path / "big", 1024, "big")
    assert str(refused.value) == "big is larger than 1 KiB"


def hostile_folder(cwd: Path) -> None:
    """Nodes among the skills and the session files of `cwd`, beside one good skill and one good
    session, and an agent file that reads them."""
    os.mknod(cwd / "zero", stat.S_IFCHR | 0o666, os.makedev(1, 5))
    os.mkfifo(cwd / "fifo")
    os.symlink("fifo", cwd / "to_fifo")
    os.symlink("zero", cwd / "to_zero")
    skills = cwd / "skills"
    (skills / "nested").mkdir(parents=True)
    os.mkfifo(skills / "pipe.md")
    os.symlink("../zero", skills / "endless.md")
    os.mkfifo(skills / "nested" / "SKILL.md")
    (skills / "good.md").write_text("---\ndescription: A good skill\n---\nDo it well.\n")
    sessions = cwd / ".mm" / "sessions"
    sessions.mkdir(parents=True)
    os.mkfifo(sessions / "20260101-000000-aaaaaaaa.json")
    os.symlink("../../zero", sessions / "20260101-000000-bbbbbbbb.json")
    record = session_record(id="20260101-000000-cccccccc", created="2026-01-01T00:00:00+00:00",
                            updated="2026-01-01T00:00:00+00:00",
                            messages=[{"role": "user", "content": "which apples?"},
                                      {"role": "assistant", "content": "Green apples."}])
    write_session(sessions / "20260101-000000-cccccccc.json", record, index=False)
    (cwd / ".mm" / "agent.yaml").write_text("skillsDir: skills\nsessions: {enabled: true, autoSearchMemory: true}\n")


def env_for(cwd: Path) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(cwd)}


def test_nodes_among_everything_mm_reads_through_mm_p(scripted_server, tmp_path):
    hostile_folder(tmp_path)
    scripted_server.add_tool_calls([
        {"id": "r_fifo", "name": "read_file", "arguments": {"path": "to_fifo"}},
        {"id": "r_zero", "name": "read_file", "arguments": {"path": "to_zero"}},
        {"id": "e_fifo", "name": "edit_file", "arguments": {"path": "fifo", "edits": [{"old": "a", "new": "b"}]}},
        {"id": "skill", "name": "read_skill", "arguments": {"name": "good"}},
        {"id": "memory", "name": "search_memory", "arguments": {"query": "apples"}}])
    scripted_server.add_reply("done")
    proc = subprocess.run([sys.executable, "-m", "mm", "-p", "go", "--base-url", scripted_server.base_url,
                           "--model", "m"], cwd=tmp_path, env=env_for(tmp_path), capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "done\n"
    skipped = "[warning: skill file {} skipped: it is a {}, not a regular file — mm reads and writes regular files only]"
    for name, kind in (("endless.md", "character device"), ("nested/SKILL.md", "named pipe"),
                       ("pipe.md", "named pipe")):
        assert skipped.format(tmp_path / "skills" / name, kind) in proc.stderr.splitlines()
    tools = [t["function"]["name"] for t in scripted_server.requests[0]["tools"]]
    assert "read_skill" in tools and "search_memory" in tools
    assert "good — A good skill" in next(t["function"]["description"] for t in scripted_server.requests[0]["tools"]
                                         if t["function"]["name"] == "read_skill")
    results = {m["tool_call_id"]: m["content"] for m in scripted_server.requests[1]["messages"] if m["role"] == "tool"}
    assert results["r_fifo"] == pipe_refusal("to_fifo")
    assert results["r_zero"] == NOT_REGULAR.format(path="to_zero", kind="character device")
    assert results["e_fifo"] == pipe_refusal("fifo")
    assert results["skill"].endswith("Do it well.\n")
    assert "Green apples." in results["memory"] and "cccccccc" in results["memory"]


@pytest.mark.parametrize("where", ["-c", "found"])
def test_an_agent_file_that_is_a_node_is_one_line(tmp_path, where):
    os.mknod(tmp_path / "zero", stat.S_IFCHR | 0o666, os.makedev(1, 5))
    os.mkfifo(tmp_path / "fifo")
    if where == "found":
        (tmp_path / ".mm").mkdir()
        os.symlink("../zero", tmp_path / ".mm" / "agent.yaml")
        argv, shown, kind = [], str(tmp_path / ".mm" / "agent.yaml"), "character device"
    else:
        argv, shown, kind = ["-c", "fifo"], "fifo", "named pipe"
    proc = subprocess.run([sys.executable, "-m", "mm", *argv, "-p", "hi"], cwd=tmp_path, env=env_for(tmp_path),
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert proc.stderr == f"mm: {NOT_REGULAR.format(path=shown, kind=kind)}\n"


def test_resuming_a_session_that_is_a_node_is_one_line(scripted_server, tmp_path):
    hostile_folder(tmp_path)
    for name, kind in (("aaaaaaaa", "named pipe"), ("bbbbbbbb", "character device")):
        session_id = f"20260101-000000-{name}"
        proc = subprocess.run([sys.executable, "-m", "mm", "--resume", session_id, "--base-url",
                               scripted_server.base_url, "--model", "m"], cwd=tmp_path, env=env_for(tmp_path),
                              input="/quit\n", capture_output=True, text=True, timeout=60)
        path = tmp_path / ".mm" / "sessions" / f"{session_id}.json"
        assert proc.returncode == 2
        assert proc.stderr.splitlines()[-1] == (f"mm: {path}: not a session file (it is a {kind}, not a regular "
                                                "file — mm reads and writes regular files only)")  # an error: stderr
        assert "not a session file" not in proc.stdout


ENV = {"PROMPT_TOOLKIT_NO_CPR": "1", "COLUMNS": "200", "LINES": "40"}



@pytest.mark.parametrize("how", ["ctrl-c", "sigint"])
def test_line_mode_starts_among_nodes_and_ctrl_c_still_works(scripted_server, tmp_path, how):
    """The prompt history a named pipe, nodes among the skills and the sessions: line mode starts,
    says what it passes over, lists the good session, and a Ctrl-C (typed, or SIGINT sent) still
    cancels a running command."""
    hostile_folder(tmp_path)
    state = tmp_path / ".local" / "state" / "mm"
    state.mkdir(parents=True)
    os.mkfifo(state / "history")
    marker = f"sleep 1019.{os.getpid()}{len(how)}"
    scripted_server.add_tool_calls([{"name": "read_file", "arguments": {"path": "to_fifo"}}])
    scripted_server.add_reply("refused, as it should")
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": marker}}])
    # wide enough for the banner's warning on one line (the banner wraps between words at the width)
    proc, fd = spawn_on_terminal([sys.executable, "-m", "mm", "--base-url", scripted_server.base_url, "--model", "m"],
                                 tmp_path, ENV | {"COLUMNS": "400"}, size=(40, 400))
    term = Terminal(fd)
    try:
        term.expect("skills/pipe.md skipped: it is a named pipe")
        problem = NOT_KEPT.format(reason=pipe_refusal(state / "history"))
        term.expect(problem)
        term.expect("›")
        term.write("/sessions\r")
        term.expect("20260101-000000-cccccccc · 2026-01-01 00:00 · which apples?")
        term.write("read it\r")
        term.expect("refused, as it should")
        term.expect("›")
        term.write("wait\r")
        term.expect(f"bash: {marker}")
        assert until(lambda: pids_matching(marker)), f"{marker} never started"
        if how == "sigint":
            os.kill(proc.pid, signal.SIGINT)
        else:
            term.write(b"\x03")
        term.expect("[error: cancelled]")
        term.expect("›")
        assert until(lambda: not pids_matching(marker)), f"{marker} left running"
        term.write("/quit\r")
        assert proc.wait(15) == 0
        assert "Traceback" not in term.seen.decode(errors="replace")
        assert stat.S_ISFIFO((state / "history").stat().st_mode)
        assert "aaaaaaaa" not in term.seen.decode(errors="replace")  # /sessions passed the pipe over
        assert scripted_server.requests[1]["messages"][-1]["content"] == pipe_refusal("to_fifo")
    finally:
        stop(proc, term)


async def test_every_reader_is_bounded(tmp_path):
    """A file larger than its reader takes is one line, read no further (sparse files: no disk)."""
    from mm.skills import SKILL_BYTES, load_catalogue
    from mm.tools.base import ToolContext
    from mm.tools.edit.tool import EditFile
    from mm.fs import TEXT_FILE_BYTES
    from mm.tools.read_skill import ReadSkill
    from mm.tools.write_file import WriteFile

    with open(tmp_path / "huge.txt", "wb") as f:
        f.truncate(TEXT_FILE_BYTES + 1)
    ctx = ToolContext(cwd=tmp_path)
    edit = await EditFile().run({"path": "huge.txt", "edits": [{"old": "a", "new": "b"}]}, ctx)
    assert edit.failed and edit.text == ("huge.txt is larger than 64 MiB — edit_file and write_file change text files "
                                         "up to that size")
    write = await WriteFile().run({"path": "huge.txt", "content": "small\n"}, ctx)
    assert write.text == "huge.txt: replaced · 1 line (the previous content was larger than 64 MiB: no diff)"
    assert (tmp_path / "huge.txt").read_text() == "small\n"
    skills = tmp_path / "skills"
    skills.mkdir()
    (skills / "big.md").write_text("---\ndescription: big\n---\n" + "x" * SKILL_BYTES)
    catalogue = load_catalogue(skills)
    assert [s.name for s in catalogue] == ["big"]  # the catalogue reads its head only
    read = await ReadSkill([skills], catalogue).run({"name": "big"}, ctx)
    assert read.failed and read.text == f"[read_skill: the skill big ({skills / 'big.md'}) cannot be read: it is larger than 1 MiB]"
    (tmp_path / "agent.yaml").write_text("model: m\n" + "#" * (1 << 20))
    proc = subprocess.run([sys.executable, "-m", "mm", "-c", "agent.yaml", "-p", "hi"], cwd=tmp_path,
                          env=env_for(tmp_path), capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stderr == "mm: agent.yaml is larger than 1 MiB\n"
