"""Resident memory of an idle line-mode session after one turn, against a bare interpreter.

Starts `mm` (line mode) on a pseudo-terminal against the scripted server, sends one prompt,
waits for the answer, then reads VmRSS from /proc. Target: at most 80 MB.
Run: python bench/line_rss.py
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from harness import read_until  # noqa: E402
from scripted_server import ScriptedServer  # noqa: E402

BIN = Path(sys.executable).parent


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def spawn(argv: list[str], cwd: str) -> tuple[subprocess.Popen, int]:
    main, child = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": cwd, "TERM": "xterm"}
    proc = subprocess.Popen(argv, cwd=cwd, stdin=child, stdout=child, stderr=child, env=env, close_fds=True)
    os.close(child)
    return proc, main


def main() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as cwd, ScriptedServer() as srv:
        srv.add_reply("Here is **an answer** with a list:\n\n- one\n- two\n")
        proc, fd = spawn([str(BIN / "mm"), "--base-url", srv.base_url, "--model", "m"], cwd)
        read_until(fd, "›".encode())
        os.write(fd, b"hello\r")
        read_until(fd, b"file op(s)")
        time.sleep(1.0)
        mm_rss = rss_mb(proc.pid)
        os.write(fd, b"/quit\r")
        proc.wait(10)
        base = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3)"])
        time.sleep(1.0)
        base_rss = rss_mb(base.pid)
        base.kill()
        base.wait()
    print(f"idle line mode after one turn: {mm_rss:.1f} MB resident; bare interpreter {base_rss:.1f} MB "
          f"({mm_rss / base_rss:.1f}x; target <= 80 MB)")
    return {"mm_mb": mm_rss, "python_mb": base_rss}


if __name__ == "__main__":
    main()
