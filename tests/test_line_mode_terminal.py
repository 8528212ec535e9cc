"""Line mode on a real pseudo-terminal: Ctrl-C or Esc during a command cancels the turn; prompts read keys."""

import contextlib
import fcntl
import os
import re
import sys
import termios
import time
from typing import Iterator

import pytest

from harness import pids_matching, read_until


def spawn_on_terminal(argv: list[str], cwd, env: dict[str, str] | None = None,
                      size: tuple[int, int] | None = None) -> tuple:
    """Start `argv` as the session leader of a new pseudo-terminal, which becomes its terminal.

    env: variables added to the child's environment; size: the terminal's (rows, columns)."""
    import pty
    import struct
    import subprocess

    main, child = pty.openpty()
    if size is not None:
        fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", size[0], size[1], 0, 0))

    def controlling_terminal() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    env = ({k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(cwd), "TERM": "xterm"}
           | (env or {}))
    proc = subprocess.Popen(argv, cwd=cwd, stdin=child, stdout=child, stderr=child, env=env,
                            preexec_fn=controlling_terminal, close_fds=True)
    os.close(child)
    return proc, main


ANSI = re.compile(rb"\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-Za-z]|[=>78])")


class Terminal:
    """The main side of a pseudo-terminal (`fd`): what the child printed, read in order.

    `expect(needle)` reads until `needle` shows after the previous expectation and returns the
    output in between, terminal escape sequences removed (text, `\\r` kept); `write(keys)` types."""

    def __init__(self, fd: int):
        self.fd = fd
        self.raw = b""  # every byte read
        self.seen = b""  # the same without escape sequences, made again from `raw` (one may span two reads)
        self.at = 0  # where the next expectation starts looking in `seen`

    def expect(self, needle: str, timeout: float = 15) -> str:
        import select

        wanted = needle.encode()
        deadline = time.monotonic() + timeout
        while wanted not in self.seen[self.at:] and time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if ready:
                try:
                    self.raw += os.read(self.fd, 65536)
                except OSError:  # the child closed the terminal
                    break
                self.seen = ANSI.sub(b"", self.raw)
        found = self.seen.find(wanted, self.at)
        if found < 0:
            last = self.seen[-1500:].decode(errors="replace")
            raise AssertionError(f"{needle!r} never came; the last output: {last!r}")
        between = self.seen[self.at:found]
        self.at = found + len(wanted)
        return between.decode(errors="replace")

    def expect_line(self, start: str, timeout: float = 15) -> str:
        """The whole line that begins with `start`, once it has ended (its `\\r`/`\\n` removed)."""
        self.expect(start, timeout)
        return start + self.next_line(timeout)

    def next_line(self, timeout: float = 15) -> str:
        """The line after the previous expectation, once it has ended (its `\\r`/`\\n` removed)."""
        return self.expect("\n", timeout).rstrip("\r")

    def write(self, keys: str | bytes) -> None:
        os.write(self.fd, keys.encode() if isinstance(keys, str) else keys)


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
        deadline = time.monotonic() + 10  # the process group is killed: wait for it to be gone
        while pids_matching(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
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
