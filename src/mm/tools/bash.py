"""The `bash` tool: one `bash -c <command>` per call (mm-tools.md §bash)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult

DESCRIPTION = (
    "Run a shell command with `bash -c` in the working directory and return its output "
    "(stdout and stderr merged), followed by the exit status when it is not 0. Each call is a "
    "new shell with no input: a program that waits for an answer gets end of file. "
    "Start a server or other long job in the background (`nohup cmd > log 2>&1 &`): "
    "the call returns when the shell exits."
)
COMMAND_DESCRIPTION = "The shell command to run."  # mm-tools.md §bash, field table
NO_COMMAND = "[bash: no command — call bash again with the command to run]"
CANNOT_START = "[error: {program} cannot be started: {reason}]"
NO_WORKING_DIRECTORY = "the working directory {cwd} does not exist"


def start_failure_reason(program: str, err: OSError) -> str:
    """Return why `program` could not be started, in Go's words when it was not found on the PATH.

    `err` is the OSError raised by the spawn. Used by bash and declared tools
    (mm-tools.md §Declared tools, Program not found).
    """
    from mm.tools.supervised import WorkingDirectoryGone  # loaded already: it raised `err`

    if not program:
        return "the program name is empty"
    if isinstance(err, WorkingDirectoryGone):
        return NO_WORKING_DIRECTORY.format(cwd=err.filename)
    if isinstance(err, FileNotFoundError) and "/" not in program:
        return "executable file not found in $PATH"
    return (err.strerror or str(err)).lower()


def floor_refusal(command: Any, ctx: ToolContext) -> str | None:
    """The safety floor's refusal of the shell command `command` run in `ctx.cwd` with the
    commands' environment (mm.tools.floor.check_command), None when it may run (or is no text)."""
    if not isinstance(command, str) or not command.strip():
        return None
    from mm.tools.floor import check_command
    from mm.tools.process import command_environment

    return check_command(command, ctx.cwd, command_environment())


@dataclass
class Bash:
    """The `bash` tool: kind `execute`, permission requested when `yolo: false`."""

    name: str = "bash"
    kind: ToolKind = "execute"
    description: str = DESCRIPTION
    params: list[Param] = field(
        default_factory=lambda: [Param("command", "string", COMMAND_DESCRIPTION)]
    )
    needs_permission: bool = True

    def requires_permission(self, args: dict[str, Any], ctx: ToolContext) -> bool:
        """No permission is asked for a command the safety floor refuses: it is refused."""
        return floor_refusal(args.get("command"), ctx) is None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run `args["command"]` with `bash -c` in `ctx.cwd`, unless the safety floor refuses it
        (mm.tools.floor: its one-line refusal, failed, nothing run).

        Timeout: `ctx.settings.bash_timeout` seconds; output capped at `ctx.settings.max_output`
        characters; `ctx.cancelled` stops it. Returns the output, failed on a non-zero exit,
        timeout or cancellation. Never raises except CancelledError.
        """
        from mm.tools.process import format_outcome, run_process  # on first use: start-up time

        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            return ToolResult(NO_COMMAND, failed=True)
        refusal = floor_refusal(command, ctx)
        if refusal is not None:
            return ToolResult(refusal, failed=True)
        timeout = ctx.settings.bash_timeout
        try:
            outcome = await run_process(
                ["bash", "-c", command], cwd=ctx.cwd, timeout=timeout, cancelled=ctx.cancelled
            )
        except OSError as err:
            reason = start_failure_reason("bash", err)
            return ToolResult(CANNOT_START.format(program="bash", reason=reason), failed=True)
        text, failed = format_outcome(outcome, timeout=timeout, max_output=ctx.settings.max_output)
        return ToolResult(text, failed=failed)
