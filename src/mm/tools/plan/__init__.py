"""The `plan` tool group (issue 14 point 1; mnemo-tools.md §Ask, plan, and delegate):
exit_plan_mode, which presents the plan of plan mode for the user's approval. Plan mode itself
(mm.tools.plan.state, mm.tools.plan.gate) works whether the group is declared or not."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping


def tools(config: Any, env: Mapping[str, str], cwd: Path | None) -> list[Any]:
    """exit_plan_mode."""
    from mm.tools.plan.exit import ExitPlanMode

    return [ExitPlanMode()]
