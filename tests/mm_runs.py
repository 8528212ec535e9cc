"""`mm` run for real by the tests of the wider toolset: line mode on a pseudo-terminal, at its
first prompt (tests/test_line_mode_terminal.py), and `mm -p` as a subprocess."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

from test_line_mode_terminal import Terminal, spawn_on_terminal


def agent_file(cwd: Path, text: str) -> None:
    """`cwd/.mm/agent.yaml` holding `text`."""
    (cwd / ".mm").mkdir(parents=True, exist_ok=True)
    (cwd / ".mm" / "agent.yaml").write_text(text)


@contextlib.contextmanager
def line_mode(srv, cwd: Path, env: dict[str, str] | None = None) -> Iterator[tuple]:
    """`mm` against `srv` in `cwd` (40×160), waiting at its prompt: yields (process, Terminal)."""
    argv = [sys.executable, "-m", "mm", "--base-url", srv.base_url, "--model", "m"]
    proc, fd = spawn_on_terminal(argv, cwd, env=env, size=(40, 160))
    term = Terminal(fd)
    try:
        term.expect("›")
        yield proc, term
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(fd)


def one_shot(srv, cwd: Path, prompt: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`mm -p <prompt>` against `srv` in `cwd` (HOME: `cwd`'s parent, no MM_ variable; `env` added)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(cwd.parent)}
    return subprocess.run([sys.executable, "-m", "mm", "-p", prompt, "--base-url", srv.base_url, "--model", "m"],
                          cwd=cwd, env=base | (env or {}), capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
