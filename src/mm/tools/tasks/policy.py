"""The safety floor for a background task's command (issue 13 §5: "Every command passes the safety
floor first"; notes/mnemoai.md §3, Commands refused outright)."""

from __future__ import annotations

from pathlib import Path


def floor_refusal(command: str, cwd: Path) -> str | None:
    """The safety floor's one-line refusal of `command` (str) run in `cwd`, or None to let it run.

    CALL POINT FOR THE LEAD: the floor, `mm.tools.floor.check_command(command, cwd)`, is written
    on the `safety` branch and was not in main when this group was; wire it here (its refusal
    becomes `{"error": true, "blocked": true, "message": <refusal>, "command": …}`). Until then
    nothing is refused here.
    """
    return None
