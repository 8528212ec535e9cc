"""Running one hook command: the event on stdin, stdout and stderr kept apart and bounded, a
timeout, cancellation, and its process group killed (docs/hooks.md §Running).

mm.tools.process runs a tool's command with no input and its two streams merged; a hook needs
its input and its two streams apart, so it has this runner. Like that one, it never reads a pipe
to its end: stdin, stdout and stderr are unnamed temporary files, so a hook that leaves a
background job holding them does not keep the call waiting, and the event loop never blocks.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

OUTPUT_BYTES = 1024 * 1024  # read of each stream; a hook that writes more is stopped and ignored
WATCH_EVERY = 0.25  # seconds between two looks at the size of its output


@dataclass
class CommandRun:
    """How one hook command ended: its stdout and stderr (decoded, at most OUTPUT_BYTES each),
    its exit status (`returncode`, negative: killed by that signal; None when mm stopped it or
    it could not start), and why mm stopped it (`timed_out`, `cancelled`, `flooded`) or why it
    could not start (`not_started`: the reason)."""

    stdout: str = ""
    stderr: str = ""
    returncode: int | None = None
    timed_out: bool = False
    cancelled: bool = False
    flooded: bool = False
    not_started: str | None = None


async def run_command(argv: list[str], stdin: bytes, *, cwd: Path, env: dict[str, str], timeout: float,
                      cancelled: asyncio.Event) -> CommandRun:
    """Run `argv` (no shell) in `cwd` with `env`, `stdin` as its input, until it exits, `timeout`
    seconds pass, it writes more than OUTPUT_BYTES on a stream, or `cancelled` is set; in the
    three last cases its whole process group is killed (start_new_session makes it a group
    leader). When the awaiting task is itself cancelled, the group is killed and CancelledError
    propagates. Nothing starts when `cancelled` is already set. Never raises OSError: a program
    that cannot start is `not_started`."""
    if cancelled.is_set():
        return CommandRun(cancelled=True)
    try:
        return await _run(argv, stdin, cwd, env, timeout, cancelled)
    except OSError as error:  # no room for the temporary files, too many open files…
        return CommandRun(not_started=error.strerror or str(error))


async def _run(argv: list[str], stdin: bytes, cwd: Path, env: dict[str, str], timeout: float,
               cancelled: asyncio.Event) -> CommandRun:
    with tempfile.TemporaryFile() as given, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        await asyncio.to_thread(_fill, given, stdin)
        try:
            proc = await asyncio.create_subprocess_exec(*argv, cwd=str(cwd), env=env, stdin=given, stdout=out,
                                                        stderr=err, start_new_session=True)
        except (OSError, ValueError) as error:  # no such program, not executable, a NUL in an argument
            return CommandRun(not_started=getattr(error, "strerror", None) or str(error))
        ending = await _wait(proc, (out, err), timeout, cancelled)
        stdout, stderr, over = await asyncio.to_thread(_read_both, out, err)
    if ending:
        return CommandRun(stdout, stderr, timed_out=ending == "timed_out", cancelled=ending == "cancelled",
                          flooded=ending == "flooded")
    return CommandRun(stdout, stderr, proc.returncode, flooded=over)


async def _wait(proc: asyncio.subprocess.Process, outputs: tuple[BinaryIO, ...], timeout: float,
                cancelled: asyncio.Event) -> str:
    """Wait for `proc`; returns "" when it exited by itself, else why its group was killed."""
    exited = asyncio.ensure_future(proc.wait())
    stop = asyncio.ensure_future(cancelled.wait())
    flood = asyncio.ensure_future(_grows_past(outputs, OUTPUT_BYTES))
    try:
        done, _ = await asyncio.wait({exited, stop, flood}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if exited in done:
            return ""
        kill_group(proc.pid)
        await exited
        return "cancelled" if stop in done else "flooded" if flood in done else "timed_out"
    finally:
        stop.cancel()
        flood.cancel()
        if proc.returncode is None:  # the awaiting task was cancelled
            kill_group(proc.pid)
            exited.cancel()


def kill_group(pid: int) -> None:
    """SIGKILL to the process group led by `pid`; nothing when it is gone already."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def _grows_past(files: tuple[BinaryIO, ...], limit: int) -> None:
    """Return once one of `files` holds more than `limit` bytes (looked at every WATCH_EVERY s)."""
    while all(os.fstat(f.fileno()).st_size <= limit for f in files):
        await asyncio.sleep(WATCH_EVERY)


def _fill(f: BinaryIO, data: bytes) -> None:
    f.write(data)
    f.flush()
    f.seek(0)


def _read_both(out: BinaryIO, err: BinaryIO) -> tuple[str, str, bool]:
    """(stdout, stderr, whether one of them holds more than OUTPUT_BYTES), each read up to that."""
    texts, over = [], False
    for f in (out, err):
        f.seek(0)
        data = f.read(OUTPUT_BYTES + 1)
        over = over or len(data) > OUTPUT_BYTES
        texts.append(data[:OUTPUT_BYTES].decode("utf-8", errors="replace"))
    return texts[0], texts[1], over
