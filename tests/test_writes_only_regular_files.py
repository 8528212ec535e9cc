"""No write replaces anything but a regular file, and nothing is written under /dev, /proc or
/sys, as written or as resolved (docs/tools-edit.md §Files on disk). Every node is made by the
test in its own folder; the only system path given to mm is /dev/stdout, whose resolution leads
back into the test's folder (the `mm -p > answer.txt` of the issue)."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mm.sessions.index import open_index
from mm.sessions.store import SessionFile
from mm.fs import (IS_DIR, NOT_REGULAR, SYSTEM_LINK, SYSTEM_PATH, FileRefused, append_to, write_atomic,
                         write_target)
from mm.ui.line.history import NOT_KEPT, PromptHistory, history_problem


def make_nodes(folder: Path) -> dict[str, str]:
    """A named pipe, a zero device, a socket and a folder in `folder`, and a symlink to each;
    name -> what it is."""
    os.mkfifo(folder / "fifo")
    os.mknod(folder / "zero", stat.S_IFCHR | 0o666, os.makedev(1, 5))
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(folder / "sock"))
    sock.close()
    (folder / "adir").mkdir()
    kinds = {"fifo": "named pipe", "zero": "character device", "sock": "socket", "adir": "directory"}
    for name in list(kinds):
        os.symlink(name, folder / f"to_{name}")
        kinds[f"to_{name}"] = kinds[name]
    return kinds


def kinds_left(folder: Path, names) -> dict[str, str]:
    """What each of `names` is now (never a regular file where there was none)."""
    tests = {"named pipe": stat.S_ISFIFO, "character device": stat.S_ISCHR, "socket": stat.S_ISSOCK,
             "directory": stat.S_ISDIR}
    found = {}
    for name in names:
        mode = os.stat(folder / name).st_mode
        found[name] = next(kind for kind, test in tests.items() if test(mode))
    return found


def refusal(name: str, kind: str) -> str:
    return (IS_DIR if kind == "directory" else NOT_REGULAR).format(path=name, kind=kind)


def test_the_write_helper_refuses_every_node_that_is_not_a_regular_file(tmp_path):
    kinds = make_nodes(tmp_path)
    for name, kind in kinds.items():
        for write in (lambda p: write_atomic(p, "x", name), lambda p: append_to(p, b"x", name)):
            with pytest.raises(FileRefused) as refused:
                write(tmp_path / name)
            assert str(refused.value) == refusal(name, kind)
    assert kinds_left(tmp_path, kinds) == kinds
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kinds)  # no temporary file left


def test_a_regular_file_is_written_and_appended_through_a_link(tmp_path):
    (tmp_path / "real.txt").write_text("old")
    os.symlink("real.txt", tmp_path / "link.txt")
    write_atomic(tmp_path / "link.txt", b"new\x00bytes")
    append_to(tmp_path / "link.txt", "+more")
    assert (tmp_path / "real.txt").read_bytes() == b"new\x00bytes+more" and (tmp_path / "link.txt").is_symlink()
    append_to(tmp_path / "sub" / "log", "a")
    assert (tmp_path / "sub" / "log").read_text() == "a"


def test_system_folders_are_refused_as_written_and_as_resolved(tmp_path):
    """write_target only looks (lstat, readlink): no system path is written by this test."""
    for path, root in (("/dev/null", "/dev"), ("/dev/stdout", "/dev"), ("/proc/self/environ", "/proc"),
                       ("/sys/kernel/notes", "/sys"), ("/dev", "/dev")):
        with pytest.raises(FileRefused) as refused:
            write_target(path)
        assert str(refused.value) == SYSTEM_PATH.format(path=path, root=root)
    os.symlink("/dev/stdout", tmp_path / "out")
    os.symlink("out", tmp_path / "out2")
    os.symlink("/proc/self/fd", tmp_path / "fds")
    for name, target, root in (("out", "/dev/stdout", "/dev"), ("out2", "/dev/stdout", "/dev"),
                               ("fds/1", f"/proc/{os.getpid()}/fd/1", "/proc")):
        with pytest.raises(FileRefused) as refused:
            write_target(tmp_path / name, name)
        assert str(refused.value) == SYSTEM_LINK.format(path=name, target=target, root=root)
    assert write_target(tmp_path / "devices" / "new.txt") == tmp_path / "devices" / "new.txt"  # a name, not /dev


def run_mm(cwd: Path, srv, stdout=subprocess.PIPE, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(cwd)}
    return subprocess.run([sys.executable, "-m", "mm", "-p", "go", "--base-url", srv.base_url, "--model", "m"],
                          cwd=cwd, env=env, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def tool_results(request: dict) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}


def test_write_file_to_dev_stdout_never_replaces_the_answer_file(scripted_server, tmp_path):
    """`mm -p … > answer.txt`: /dev/stdout leads to answer.txt; a write there would replace the
    file the answer is being printed to."""
    with pytest.raises(FileRefused):  # the rule holds before mm is given the path at all
        write_target("/dev/stdout")
    os.symlink("/dev/stdout", tmp_path / "out")
    scripted_server.add_tool_calls([
        {"id": "c1", "name": "write_file", "arguments": {"path": "/dev/stdout", "content": "REPLACED"}},
        {"id": "c2", "name": "write_file", "arguments": {"path": "out", "content": "REPLACED"}}],
        content="Writing it.")
    scripted_server.add_reply("The answer.")
    answer = tmp_path / "answer.txt"
    with open(answer, "w") as out:
        proc = run_mm(tmp_path, scripted_server, stdout=out)
    assert proc.returncode == 0, proc.stderr
    assert answer.read_text() == "Writing it.\nThe answer.\n"
    results = tool_results(scripted_server.requests[1])
    assert results == {
        "c1": SYSTEM_PATH.format(path="/dev/stdout", root="/dev") + "; nothing was written",
        "c2": SYSTEM_LINK.format(path="out", target="/dev/stdout", root="/dev") + "; nothing was written"}


def test_every_writing_tool_refuses_nodes_through_mm_p(scripted_server, tmp_path):
    kinds = make_nodes(tmp_path)
    os.symlink("/proc/self/fd", tmp_path / "fds")
    (tmp_path / ".mm").mkdir()
    (tmp_path / ".mm" / "agent.yaml").write_text("fetchContentTool: true\nsaveAnswerTool: true\n")
    calls = [{"id": f"w_{n}", "name": "write_file", "arguments": {"path": n, "content": "x"}} for n in kinds]
    calls += [{"id": "e_fifo", "name": "edit_file", "arguments": {"path": "to_fifo", "edits": [{"old": "a", "new": "b"}]}},
              {"id": "f_sock", "name": "fetch_content", "arguments": {"url": "https://example.org", "output": "to_sock"}},
              {"id": "f_zero", "name": "fetch_content", "arguments": {"url": "https://example.org", "output": "zero"}},
              {"id": "s_fds", "name": "save_answer", "arguments": {"path": "fds/9"}},
              {"id": "w_ok", "name": "write_file", "arguments": {"path": "ok.txt", "content": "fine\n"}}]
    scripted_server.add_tool_calls(calls, content="An answer to save.")
    scripted_server.add_reply("done")
    proc = run_mm(tmp_path, scripted_server)
    assert proc.returncode == 0, proc.stderr
    results = tool_results(scripted_server.requests[1])
    for name, kind in kinds.items():
        expected = f"{name} is a directory — give the path of a file" if kind == "directory" else refusal(name, kind)
        assert results[f"w_{name}"] == expected + "; nothing was written"
    assert results["e_fifo"] == refusal("to_fifo", "named pipe")
    conversion = "[fetch_content: error 1 (conversion) — {}]"
    assert results["f_sock"] == conversion.format(refusal("to_sock", "socket"))
    assert results["f_zero"] == conversion.format(refusal("zero", "character device"))
    assert results["s_fds"].startswith("[save_answer: fds/9 leads to /proc/")
    assert results["s_fds"].endswith("/fd/9, in /proc, a folder of the system's devices and processes — mm never "
                                     "writes there; nothing was written]")
    assert results.pop("w_ok").startswith("ok.txt: created · 1 line\n")
    assert all("\n" not in text for text in results.values())  # each refusal one line
    assert kinds_left(tmp_path, kinds) == kinds and (tmp_path / "ok.txt").read_text() == "fine\n"


def test_session_files_and_their_index_are_only_regular_files(tmp_path):
    kinds = make_nodes(tmp_path)
    session = SessionFile(tmp_path, id="fifo")  # its file is tmp_path/fifo.json
    os.symlink("fifo", tmp_path / "fifo.json")
    with pytest.raises(FileRefused) as refused:
        session.save([{"role": "user", "content": "q"}], [], {})
    assert str(refused.value) == refusal(str(tmp_path / "fifo.json"), "named pipe")
    session.release()
    for node in ("fifo", "zero", "sock", "adir"):  # SQLite never opens a node as the index
        os.symlink(node, tmp_path / ".index.sqlite")
        assert open_index(tmp_path) is None, node
        os.unlink(tmp_path / ".index.sqlite")
    os.symlink("zero", tmp_path / ".index.sqlite-wal")
    assert open_index(tmp_path) is None
    os.unlink(tmp_path / ".index.sqlite-wal")
    kept = SessionFile(tmp_path)
    os.mkfifo(tmp_path / ".index.sqlite")
    kept.save([{"role": "user", "content": "kept"}], [], {})  # saved; the index let go
    assert json.loads(kept.path.read_text())["messages"] == [{"role": "user", "content": "kept"}]
    assert stat.S_ISFIFO((tmp_path / ".index.sqlite").stat().st_mode)
    kept.release()
    assert kinds_left(tmp_path, kinds) == kinds


def test_a_lock_file_that_is_a_node_is_no_lock_and_no_hang(tmp_path):
    os.mkfifo(tmp_path / ".x.lock")
    session = SessionFile(tmp_path)
    session.claim("x")  # no lock can be made there: not an error (the save says what fails)
    session.save([{"role": "user", "content": "q"}], [], {})
    assert stat.S_ISFIFO((tmp_path / ".x.lock").stat().st_mode) and (tmp_path / "x.json").is_file()


def test_the_prompt_history_is_only_a_regular_file(tmp_path):
    kinds = make_nodes(tmp_path)
    for name, kind in kinds.items():
        history = PromptHistory(tmp_path / name)
        assert list(history.load_history_strings()) == []
        history.store_string("never written")
        assert history_problem(tmp_path / name) == NOT_KEPT.format(reason=refusal(str(tmp_path / name), kind))
    assert kinds_left(tmp_path, kinds) == kinds
    history = PromptHistory(tmp_path / "state" / "history")
    assert history_problem(history.path) is None
    history.store_string("first")
    history.store_string("two\nlines")
    assert list(PromptHistory(history.path).load_history_strings()) == ["two\nlines", "first"]
    from prompt_toolkit.history import FileHistory  # the same format as prompt_toolkit's

    assert list(FileHistory(str(history.path)).load_history_strings()) == ["two\nlines", "first"]


def recalled(term, entry: str) -> None:
    """Press Up until `entry` shows: the history loads in a thread, and may not be there yet."""
    for _ in range(20):
        term.write(b"\x1b[A")
        try:
            term.expect(entry, timeout=1)
            return
        except AssertionError:
            continue
    raise AssertionError(f"{entry!r} never came back with Up")


def test_the_prompt_history_is_kept_across_runs_of_line_mode(scripted_server, tmp_path):
    from test_line_mode_signals import stop
    from test_line_mode_terminal import Terminal, spawn_on_terminal

    scripted_server.add_reply("noted")
    argv = [sys.executable, "-m", "mm", "--base-url", scripted_server.base_url, "--model", "m"]
    env = {"PROMPT_TOOLKIT_NO_CPR": "1", "COLUMNS": "120"}
    for run in ("first", "second"):
        proc, fd = spawn_on_terminal(argv, tmp_path, env, size=(40, 120))
        term = Terminal(fd)
        try:
            term.expect("›")
            if run == "first":
                term.write("remember this line\r")
                term.expect("noted")
                term.expect("›")
            else:
                recalled(term, "/quit")  # Up: the previous run's /quit, then its prompt
                recalled(term, "remember this line")
            term.write(b"\x15/quit\r")  # Ctrl-U clears the line first
            assert proc.wait(15) == 0
        finally:
            stop(proc, term)
    history = tmp_path / ".local" / "state" / "mm" / "history"
    assert list(PromptHistory(history).load_history_strings())[::-1][:2] == ["remember this line", "/quit"]
