"""A language server's process and the pipes to it (docs/lsp.md §Lifecycle).

The process is started by mm's command supervisor (mm.tools.supervised), which is given the
server's ends of three pipes as its stdin, stdout and stderr: like every command, the server
never outlives mm, however mm ends. mm keeps the other ends, as asyncio transports: stdin
written by pygls, stdout read by pygls, stderr read into a short tail (read, so that a server
that logs never fills the pipe and hangs; kept, for the reason it stopped).
"""

from __future__ import annotations

import asyncio
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STDERR_KEPT = 4096  # bytes of the server's stderr kept


@dataclass
class Pipes:
    """A running server: its `command` (mm.tools.supervised.Command), the write transport of its
    stdin, its stdout as a StreamReader, the read transports to close, the task handing its
    messages to pygls (`reading`, set by the caller) and the tail of its stderr."""

    command: Any
    stdin: Any
    stdout: asyncio.StreamReader
    transports: list[Any] = field(default_factory=list)
    reading: asyncio.Future | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    stderr: bytearray = field(default_factory=bytearray)

    def close(self) -> None:
        """Close every pipe (the server reads the end of its input)."""
        self.stop.set()
        for transport in [self.stdin, *self.transports]:
            transport.close()


async def start(argv: list[str], cwd: Path, env: dict[str, str]) -> Pipes:
    """Have the supervisor start `argv` in `cwd` with `env`, its stdio on pipes; returns at once
    (a failure to start comes through `command.exited`). Raises OSError when the supervisor
    cannot be reached."""
    from mm.tools.supervised import SUPERVISOR

    ends = [os.pipe(), os.pipe(), os.pipe()]  # stdin, stdout, stderr: (read, write) each
    theirs = (ends[0][0], ends[1][1], ends[2][1])
    ours = [ends[0][1], ends[1][0], ends[2][0]]
    try:
        command = SUPERVISOR.start(argv, cwd, env, theirs)
    except BaseException:
        for fd in ours:
            os.close(fd)
        raise
    finally:
        for fd in theirs:
            os.close(fd)
    loop = asyncio.get_running_loop()
    stdin, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(ours[0], "wb", 0))
    stdout = asyncio.StreamReader(limit=1 << 20)
    pipes = Pipes(command, stdin, stdout)
    out, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdout), os.fdopen(ours[1], "rb", 0))
    err, _ = await loop.connect_read_pipe(lambda: _Tail(pipes.stderr), os.fdopen(ours[2], "rb", 0))
    pipes.transports = [out, err]
    return pipes


class PipeWriter:
    """pygls's writer over the server's stdin: what is written after the pipe closed is dropped."""

    def __init__(self, transport: Any):
        self.transport = transport

    def write(self, data: bytes) -> None:
        if not self.transport.is_closing():
            self.transport.write(data)

    def close(self) -> None:
        self.transport.close()


class _Tail(asyncio.Protocol):
    """Keeps the last STDERR_KEPT bytes a server writes on stderr."""

    def __init__(self, kept: bytearray):
        self.kept = kept

    def data_received(self, data: bytes) -> None:
        self.kept += data
        del self.kept[:-STDERR_KEPT]
