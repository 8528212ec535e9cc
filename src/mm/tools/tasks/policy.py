"""The safety floor for a background task's command (issue 13 §5: "Every command passes the safety
floor first"; notes/mnemoai.md §3, Commands refused outright)."""

from __future__ import annotations

from pathlib import Path


def floor_refusal(command: str, cwd: Path) -> str | None:
    """The safety floor's one-line refusal of `command` (str) run in `cwd` with the commands'
    environment (mm.tools.floor.check_command), or None to let it run. Never raises."""
    from mm.tools.floor import check_command
    from mm.tools.process import command_environment

    return check_command(command, cwd, command_environment())
