"""`execute_bash`: a shell command whose working directory carries over between calls
(mnemo-tools.md §Run commands; notes/mnemoai.md §2.6; decisions in docs/tools-bash.md §execute_bash).

Every command passes the safety floor first (mm.tools.floor); it runs under bash through mm's
command supervisor (a session of its own: a timeout or a cancel kills its whole tree; nothing
outlives mm), stdout and stderr kept apart.
"""

from __future__ import annotations

import contextlib
import math
import os
import shlex
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult

DESCRIPTION = (
    "Run a shell command with bash, returning stdout, stderr, and exit status as JSON. The working "
    "directory carries over: a `cd` stays for the next call (the result's `cwd` says where you are). "
    "The command runs in its own process group; `timeout` (seconds, default 30) kills the whole tree. "
    "Each stream is capped at 30,000 characters, cut in the middle."
)
BESIDE_BASH = (" Prefer execute_bash to `bash` for commands: `bash` starts afresh in the project directory "
               "each time and merges the two streams.")
COMMAND_DESCRIPTION = "The bash command to run."
TIMEOUT_DESCRIPTION = "Seconds before the command and every process it started are killed (at most 3600)."
DEFAULT_TIMEOUT = 30  # seconds (mnemo-tools.md: timeout = 30)
MAX_TIMEOUT = 3600  # seconds: the reference has no bound (notes §2.6); one hour, its transport's cap
NO_COMMAND = "execute_bash: no command — call execute_bash again with the command to run"
BAD_TIMEOUT = "execute_bash: timeout {value} is not a number of seconds from more than 0 to {limit} — nothing was run"
TIMED_OUT = "Command timed out after {seconds} seconds"  # notes §2.6, the reference's text
CANCELLED = "Command cancelled: the turn was stopped"
FLOODED = "Command stopped: it wrote more than 256 MiB of output"
LOST = "mm's command supervisor stopped while the command ran: how it ended is unknown"
CANNOT_START = "bash cannot be started: {reason}"
CWD_GONE = "the working directory {old} no longer exists: the command ran in {cwd}"
PROBE = "trap 'pwd > {probe} 2>/dev/null' EXIT; "  # where the shell ended, written as it exits


@dataclass
class ExecuteBash:
    """The `execute_bash` tool: kind `execute`, permission asked when `yolo: false`.

    `cwd` is where the next command starts (None: the conversation's working directory); it
    moves to where each command that exits by itself ends.
    """

    name: str = "execute_bash"
    kind: ToolKind = "execute"
    description: str = DESCRIPTION
    params: list[Param] = field(default_factory=lambda: [
        Param("command", "string", COMMAND_DESCRIPTION),
        Param("timeout", "number", TIMEOUT_DESCRIPTION, required=False, default=DEFAULT_TIMEOUT),
    ])
    needs_permission: bool = True
    cwd: Path | None = None

    def title(self, args: dict[str, Any], ctx: Any = None) -> str:
        """`execute_bash: <command>` for front ends."""
        return f"{self.name}: {args.get('command', '')}"

    def requires_permission(self, args: dict[str, Any], ctx: ToolContext) -> bool:
        """No permission is asked for a command the safety floor refuses: it is refused."""
        return self._refusal(args.get("command"), ctx) is None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run `args["command"]` in the tracked working directory, with `args["timeout"]` seconds.

        Returns the reference's JSON: `{"stdout", "stderr", "exit_status", "cwd"}`, or
        `{"error": true, "message", …}` (timed out, cancelled, refused by the safety floor with
        `"blocked": true`, bad arguments). Never raises except CancelledError.
        """
        from mm.tools.commands.output import result_json

        command, timeout = args.get("command"), args.get("timeout", DEFAULT_TIMEOUT)
        if not isinstance(command, str) or not command.strip():
            return _error(NO_COMMAND, ctx)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= MAX_TIMEOUT \
                or math.isnan(timeout):
            return _error(BAD_TIMEOUT.format(value=json_value(timeout), limit=MAX_TIMEOUT), ctx)
        cwd, note = self._start_directory(ctx)
        if note:
            self.cwd = None
        refusal = self._refusal(command, ctx)
        if refusal is not None:
            return _error(refusal, ctx, blocked=True, command=command)
        outcome, error = await self._run(command, cwd, timeout, ctx)
        if outcome is None:
            return _error(error or "", ctx)
        fields: dict[str, Any] = {}
        if outcome.timed_out:
            fields = {"error": True, "message": TIMED_OUT.format(seconds=_seconds(timeout))}
        elif outcome.cancelled or outcome.flooded or outcome.lost:
            fields = {"error": True, "message": CANCELLED if outcome.cancelled else FLOODED if outcome.flooded else LOST}
        else:
            fields = {"exit_status": outcome.returncode}
        fields["cwd"] = str(self.cwd or cwd)
        if note:
            fields["note"] = note
        streams = {"stdout": (_plain(outcome.output), outcome.size), "stderr": (_plain(outcome.errors),
                                                                                 outcome.errors_size)}
        text = result_json(fields, streams, ctx.settings.max_output)
        return ToolResult(text, failed="error" in fields or bool(outcome.returncode))

    # -- inside
    def _refusal(self, command: Any, ctx: ToolContext) -> str | None:
        from mm.tools.floor import check_command
        from mm.tools.process import command_environment

        if not isinstance(command, str) or not command.strip():
            return None
        cwd, _ = self._start_directory(ctx)
        return check_command(command, cwd, command_environment(), workdirs=(ctx.cwd,))

    def _start_directory(self, ctx: ToolContext) -> tuple[Path, str]:
        """Where the next command starts, and a note when the tracked directory is gone (then
        it is the conversation's working directory again)."""
        if self.cwd is None:
            return ctx.cwd, ""
        if self.cwd.is_dir():
            return self.cwd, ""
        return ctx.cwd, CWD_GONE.format(old=self.cwd, cwd=ctx.cwd)

    async def _run(self, command: str, cwd: Path, timeout: float, ctx: ToolContext):
        """Run the command with the directory probe; returns (outcome, None) or (None, error)."""
        from mm.tools.bash import start_failure_reason
        from mm.tools.process import run_process

        fd, probe = tempfile.mkstemp(prefix="mm-cwd-")
        os.close(fd)
        try:
            script = PROBE.format(probe=shlex.quote(probe)) + command
            try:
                outcome = await run_process(["bash", "-c", script], cwd=cwd, timeout=timeout,
                                            cancelled=ctx.cancelled, separate=True)
            except OSError as err:
                return None, CANNOT_START.format(reason=start_failure_reason("bash", err))
            if not (outcome.timed_out or outcome.cancelled or outcome.flooded or outcome.lost):
                self._moved_to(probe, cwd)
            return outcome, None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(probe)

    def _moved_to(self, probe: str, cwd: Path) -> None:
        """Keep where the shell ended (the first line of the probe: an existing absolute folder)."""
        try:
            with open(probe, encoding="utf-8", errors="replace") as f:
                where = f.readline().rstrip("\n")
        except OSError:
            return
        if where.startswith("/") and os.path.isdir(where):  # else: exec, or a trap of its own: no move
            self.cwd = Path(where)


def _error(message: str, ctx: ToolContext, **more: Any) -> ToolResult:
    import json

    body = {"error": True, **({"blocked": True} if more.pop("blocked", False) else {}), "message": message, **more}
    return ToolResult(json.dumps(body, ensure_ascii=False), failed=True)


def json_value(value: Any) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _seconds(timeout: float) -> str:
    return str(int(timeout)) if float(timeout).is_integer() else f"{timeout:g}"


def _plain(text: str) -> str:
    """The stream without terminal control sequences (docs/tools-bash.md §Terminal control sequences)."""
    from mm.tools.terminal_text import plain_text

    return plain_text(text)[0]
