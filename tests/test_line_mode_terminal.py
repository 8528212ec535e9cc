"""Line mode on a real pseudo-terminal: Ctrl-C or Esc during a command cancels the turn; prompts read keys."""

import contextlib
import fcntl
import os
import sys
import termios
import time
from typing import Iterator

import pytest

from harness import pids_matching, read_until


def spawn_on_terminal(argv: list[str], cwd) -> tuple:
    """Start `argv` as the session leader of a new pseudo-terminal, which becomes its terminal."""
    import pty
    import subprocess

    main, child = pty.openpty()

    def controlling_terminal() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(cwd), "TERM": "xterm"}
    proc = subprocess.Popen(argv, cwd=cwd, stdin=child, stdout=child, stderr=child, env=env,
                            preexec_fn=controlling_terminal, close_fds=True)
    os.close(child)
    return proc, main


@contextlib.contextmanager
def line_mode_on_terminal(srv, cwd) -> Iterator[int]:
    """`mm` line mode on a pseudo-terminal, at its first prompt; yields the terminal's fd.
    On leaving, `/quit` must end it with status 0."""
    proc, fd = spawn_on_terminal([sys.executable, "-m", "mm", "--base-url", srv.base_url, "--model", "m"], cwd)
    try:
        read_until(fd, "›".encode())
        yield fd
        os.write(fd, b"/quit\r")
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(fd)


@pytest.mark.parametrize("key,marker", [(b"\x03", "sleep 1009"), (b"\x1b", "sleep 1011")], ids=["ctrl-c", "esc"])
def test_a_key_cancels_a_running_command_and_the_prompt_comes_back(scripted_server, tmp_path, key, marker):
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": marker}}])
    with line_mode_on_terminal(scripted_server, tmp_path) as fd:
        os.write(fd, b"wait\r")
        read_until(fd, f"bash: {marker}".encode())
        for _ in range(100):
            if pids_matching(marker):
                break
            time.sleep(0.05)
        os.write(fd, key)
        seen = read_until(fd, b"[error: cancelled]")
        read_until(fd, "›".encode())
        assert b"Traceback" not in seen
        time.sleep(0.5)
        assert pids_matching(marker) == []


def test_the_permission_prompt_reads_keys_during_a_turn(scripted_server, tmp_path):
    (tmp_path / ".mm").mkdir()
    (tmp_path / ".mm" / "agent.yaml").write_text("yolo: false\n")
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": "touch allowed"}}])
    scripted_server.add_reply("done")
    with line_mode_on_terminal(scripted_server, tmp_path) as fd:
        os.write(fd, b"go\r")
        read_until(fd, b"allow?")
        os.write(fd, b"a\r")
        read_until(fd, b"file op(s)")
        assert (tmp_path / "allowed").exists()
