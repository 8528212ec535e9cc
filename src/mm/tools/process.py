"""Running one command for a tool: output into a temporary file, timeout, cancellation, kill.

Shared by the `bash` tool and declared tools (mm-tools.md §bash, §Declared tools: "Cancellation,
output, non-zero exit: as bash").
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

READ_BACK_END_BYTES = 1024 * 1024  # mm-tools.md §bash, Very large output: "1 MiB each"
TOO_LARGE_MARKER = "[... output too large to read back in full ...]"
TIMEOUT_LINE = "[error: {timeout} timeout exceeded]"
CANCELLED_LINE = "[error: cancelled]"
EXIT_STATUS_LINE = "[exit code: exit status {code}]"
EXIT_SIGNAL_LINE = "[exit code: signal: {name}]"
OUTPUT_CAP_BYTES = 256 * 1024 * 1024  # beyond this the command is stopped: only 2 MiB are ever read back
OUTPUT_CAP_LINE = "[error: the command wrote more than 256 MiB of output — stopped]"
LOST_LINE = "[error: mm's command supervisor stopped while the command ran: how it ended is unknown]"
# Editors and pagers cannot take over, colours and terminal features are off (docs/tools-bash.md
# §Non-interactive; what Claude Code and Codex set for their commands).
NON_INTERACTIVE = {
    "GIT_EDITOR": "true", "GIT_SEQUENCE_EDITOR": "true", "EDITOR": "true", "VISUAL": "true",
    "PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb", "NO_COLOR": "1", "GIT_TERMINAL_PROMPT": "0",
}  # fmt: skip
OUTPUT_CUT_MARKER = "[... {omitted} characters omitted: the output is longer than maxOutput ({limit}) ...]"


@dataclass
class ProcessOutcome:
    """What became of a command: its read-back output and how it ended.

    `output` is the merged stdout+stderr (both ends only when huge); `returncode` is the
    asyncio return code (negative = killed by that signal), None when mm killed it.
    """

    output: str
    returncode: int | None
    timed_out: bool = False
    cancelled: bool = False
    flooded: bool = False  # stopped for writing more than OUTPUT_CAP_BYTES
    lost: bool = False  # the supervisor ended while the command ran: how it ended is unknown
    size: int = 0  # bytes the command wrote in all (more than `output` holds when it was too large)
    errors: str = ""  # stderr, when it was kept apart (`run_process(separate=True)`); `output` is stdout then
    errors_size: int = 0


def format_seconds(seconds: float) -> str:
    """Return `seconds` as the timeout line writes it: 30 → "30s", 1.5 → "1.5s"."""
    if float(seconds).is_integer():
        return f"{int(seconds)}s"
    return f"{seconds:g}s"


def signal_name(signum: int) -> str:
    """Return the lowercase description of a signal, as Go's `signal: killed` does.

    glibc's strsignal texts lowercased are Go's texts ("killed", "terminated", "segmentation fault").
    """
    try:
        text = signal.strsignal(signum)
    except ValueError:
        text = None
    return (text or f"signal {signum}").lower()


def _read_back(f: BinaryIO) -> str:
    """Read the output file: whole, or its first and last 1 MiB around TOO_LARGE_MARKER.

    Each end is cut back to whole lines when it contains a line break (docs/tools-bash.md).
    """
    size = os.fstat(f.fileno()).st_size
    f.seek(0)
    if size <= 2 * READ_BACK_END_BYTES:
        return f.read().decode("utf-8", errors="replace")
    head = f.read(READ_BACK_END_BYTES)
    f.seek(size - READ_BACK_END_BYTES)
    tail = f.read(READ_BACK_END_BYTES)
    cut = head.rfind(b"\n")
    if cut >= 0:
        head = head[: cut + 1]
    cut = tail.find(b"\n")
    if 0 <= cut < len(tail) - 1:
        tail = tail[cut + 1 :]
    text_head = head.decode("utf-8", errors="replace")
    text_tail = tail.decode("utf-8", errors="replace")
    if not text_head.endswith("\n"):
        text_head += "\n"
    return f"{text_head}{TOO_LARGE_MARKER}\n{text_tail}"


async def run_process(
    argv: list[str], *, cwd: Path, timeout: float, cancelled: asyncio.Event, separate: bool = False
) -> ProcessOutcome:
    """Run `argv` (no shell) until it exits, `timeout` seconds pass, or `cancelled` is set.

    The command is started by mm's command supervisor (mm.tools.supervised): stdin from
    /dev/null, a session of its own, the environment of `command_environment()`, and
    stdout+stderr merged into an unnamed temporary file in append mode — not a pipe — so a
    background job left holding the output does not keep the call waiting (mm-tools.md §bash,
    Background jobs). On timeout, cancellation or a flood of output, the command's session, its
    process tree and every process carrying its tag are killed; when the awaiting task is itself
    cancelled, the same, and CancelledError propagates. Nothing starts when `cancelled` is
    already set. Jobs left running when the call returns live until mm ends.

    `separate`: stderr goes to a second file of its own, read back into `errors` (execute_bash).

    Raises OSError when the program cannot be started (mm.tools.supervised.WorkingDirectoryGone
    when `cwd` does not exist).
    """
    if cancelled.is_set():  # the turn was cancelled before the command started
        return ProcessOutcome("", None, cancelled=True)
    from mm.tools.supervised import SUPERVISOR

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        files = [out, err] if separate else [out]
        for f in files:
            _append_only(f.fileno())
        command = SUPERVISOR.start(argv, cwd, command_environment(), out.fileno(), err.fileno() if separate else None)
        try:
            ending, returncode = await _wait(command, files, timeout, cancelled)
            texts = [await asyncio.to_thread(_read_back, f) for f in files]
            sizes = [os.fstat(f.fileno()).st_size for f in files]
        finally:
            command.release()  # a job still holding the file: the supervisor keeps it empty
    return ProcessOutcome(texts[0], returncode, timed_out=ending == "timed_out", cancelled=ending == "cancelled",
                          flooded=ending == "flooded", lost=ending == "lost", size=sizes[0],
                          errors=texts[-1] if separate else "", errors_size=sizes[-1] if separate else 0)


def command_environment() -> dict[str, str]:
    """The environment commands run with: mm's own, with editors, pagers and terminal
    features turned off (NON_INTERACTIVE, docs/tools-bash.md §Non-interactive)."""
    return {**os.environ, **NON_INTERACTIVE}


def _append_only(fd: int) -> None:
    """Put the output file in append mode: writers always add at its end, so a file the
    supervisor empties never grows back as a sparse file."""
    import fcntl

    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_APPEND)


async def _wait(command, files: list[BinaryIO], timeout: float, cancelled: asyncio.Event) -> tuple[str, int | None]:
    """Wait for `command` to exit; returns how it ended ("" when it exited by itself, else
    "timed_out", "cancelled", "flooded" or "lost") and its exit code (None unless it exited).
    Raises the OSError that kept it from starting. Any other way out kills it."""
    from mm.tools.supervised import SupervisorLost

    exited = command.exited
    cancel_wait = asyncio.ensure_future(cancelled.wait())
    flood = asyncio.ensure_future(_grows_past(files, OUTPUT_CAP_BYTES))
    try:
        done, _ = await asyncio.wait({exited, cancel_wait, flood}, timeout=timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        if exited in done:
            if isinstance(exited.exception(), SupervisorLost):
                return "lost", None
            return "", exited.result()  # raises the error that kept it from starting
        ending = "cancelled" if cancel_wait in done else "flooded" if flood in done else "timed_out"
        command.kill()
        with contextlib.suppress(SupervisorLost):
            await exited
        return ending, None
    finally:
        cancel_wait.cancel()
        flood.cancel()
        if not exited.done():  # the awaiting task was cancelled
            command.kill()


async def _grows_past(files: list[BinaryIO], limit: int, every: float = 0.25) -> None:
    """Return once the files hold more than `limit` bytes together (checked every `every` seconds)."""
    while sum(os.fstat(f.fileno()).st_size for f in files) <= limit:
        await asyncio.sleep(every)


def _cut_middle(text: str, budget: int, limit: int, size: int = 0) -> str:
    """Cut `text` to at most `budget` characters, keeping both ends around OUTPUT_CUT_MARKER.

    `limit` is the maxOutput quoted in the marker. Ends are cut back to whole lines when that
    keeps at least half of each end. When `text` is only the two ends of a huge output (it holds
    TOO_LARGE_MARKER), that marker stays in the cut and the count is of the whole output
    (`size` bytes, read as characters).
    """
    if len(text) <= budget:
        return text
    huge = TOO_LARGE_MARKER in text
    whole = max(size, len(text)) if huge else len(text)
    prefix = TOO_LARGE_MARKER + "\n" if huge else ""
    marker = prefix + OUTPUT_CUT_MARKER.format(omitted=whole, limit=limit)  # longest possible form
    room = budget - len(marker) - 2
    if room <= 0:
        return text[: max(budget, 0)]
    head, tail = text[: room - room // 2], text[len(text) - room // 2 :]
    cut = head.rfind("\n")
    if cut >= len(head) // 2:
        head = head[: cut + 1]
    cut = tail.find("\n")
    if 0 <= cut < len(tail) // 2:
        tail = tail[cut + 1 :]
    omitted = whole - len(head) - len(tail)
    marker = prefix + OUTPUT_CUT_MARKER.format(omitted=omitted, limit=limit)
    sep = "" if head.endswith("\n") or not head else "\n"
    return f"{head}{sep}{marker}\n{tail}"


def format_outcome(outcome: ProcessOutcome, *, timeout: float, max_output: int) -> tuple[str, bool]:
    """Return the tool text for `outcome` and whether the call failed.

    The text is the output cut to `max_output` characters (middle cut, see docs/tools-bash.md),
    then the ending line when there is one: timeout, cancellation, or non-zero exit
    (mm-tools.md §bash). An empty successful output is "" (front ends show `(no output)`); an
    output that is not text is one notice with its size (mm.tools.binary). Terminal control
    sequences are removed first, and CONTROL_NOTE then heads the output (docs/tools-bash.md
    §Terminal control sequences).
    """
    from mm.tools.binary import text_or_notice
    from mm.tools.terminal_text import CONTROL_NOTE, plain_text

    outcome = text_or_notice(outcome)
    output, rewritten = plain_text(outcome.output)
    if rewritten:
        output = f"{CONTROL_NOTE}\n{output}"
    if outcome.timed_out:
        ending = TIMEOUT_LINE.format(timeout=format_seconds(timeout))
    elif outcome.cancelled:
        ending = CANCELLED_LINE
    elif outcome.flooded:
        ending = OUTPUT_CAP_LINE
    elif outcome.lost:
        ending = LOST_LINE
    elif outcome.returncode is not None and outcome.returncode < 0:
        ending = EXIT_SIGNAL_LINE.format(name=signal_name(-outcome.returncode))
    elif outcome.returncode:
        ending = EXIT_STATUS_LINE.format(code=outcome.returncode)
    else:
        ending = ""
    if not ending:
        return _cut_middle(output, max_output, max_output, outcome.size), False
    body = _cut_middle(output, max_output - len(ending) - 1, max_output, outcome.size)
    if body and not body.endswith("\n"):
        body += "\n"
    return body + ending, True
