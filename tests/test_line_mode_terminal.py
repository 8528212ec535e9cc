"""Line mode on a real pseudo-terminal: Ctrl-C typed during `sleep 100` cancels the turn."""

import fcntl
import os
import sys
import termios
import time

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


def test_ctrl_c_cancels_a_running_command_and_the_prompt_comes_back(scripted_server, tmp_path):
    marker = "sleep 1009"
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": marker}}])
    scripted_server.add_reply("after")
    proc, fd = spawn_on_terminal([sys.executable, "-m", "mm", "--base-url", scripted_server.base_url,
                                  "--model", "m"], tmp_path)
    try:
        read_until(fd, "›".encode())
        os.write(fd, b"wait\r")
        read_until(fd, f"bash: {marker}".encode())
        for _ in range(100):
            if pids_matching(marker):
                break
            time.sleep(0.05)
        os.write(fd, b"\x03")
        seen = read_until(fd, b"[error: cancelled]")
        read_until(fd, "›".encode())
        assert b"Traceback" not in seen
        time.sleep(0.5)
        assert pids_matching(marker) == []
        os.write(fd, b"/quit\r")
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(fd)


def test_escape_cancels_too(scripted_server, tmp_path):
    marker = "sleep 1011"
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": marker}}])
    proc, fd = spawn_on_terminal([sys.executable, "-m", "mm", "--base-url", scripted_server.base_url,
                                  "--model", "m"], tmp_path)
    try:
        read_until(fd, "›".encode())
        os.write(fd, b"wait\r")
        read_until(fd, f"bash: {marker}".encode())
        for _ in range(100):
            if pids_matching(marker):
                break
            time.sleep(0.05)
        os.write(fd, b"\x1b")
        read_until(fd, b"[error: cancelled]")
        read_until(fd, "›".encode())
        time.sleep(0.5)
        assert pids_matching(marker) == []
        os.write(fd, b"/quit\r")
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(fd)


def test_the_permission_prompt_reads_keys_during_a_turn(scripted_server, tmp_path):
    (tmp_path / ".mm").mkdir()
    (tmp_path / ".mm" / "agent.yaml").write_text("yolo: false\n")
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": "touch allowed"}}])
    scripted_server.add_reply("done")
    proc, fd = spawn_on_terminal([sys.executable, "-m", "mm", "--base-url", scripted_server.base_url,
                                  "--model", "m"], tmp_path)
    try:
        read_until(fd, "›".encode())
        os.write(fd, b"go\r")
        read_until(fd, b"allow?")
        os.write(fd, b"a\r")
        read_until(fd, b"file op(s)")
        assert (tmp_path / "allowed").exists()
        os.write(fd, b"/quit\r")
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(fd)
