"""Plan mode's state: a plain piece of state a conversation carries and hands to every tool call
(ToolContext.plan_mode), so that a sub-agent given its parent's object is held by the same rule
(docs/plan-mode.md; issue 14 point 1; notes/mnemoai.md §4.3).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

PLAN_ON = ("📋 plan mode on: mm reads and plans, and changes nothing; the plan goes in {path} — "
           "/plan again leaves plan mode")
PLAN_OFF = "📋 plan mode off: the tools run as before"
# The reminder each request of a turn carries while plan mode is on, never stored in the history.
REMINDER = (
    "<plan-mode-active>\n"
    "Plan mode is on: the user wants a plan before any change. This supersedes any other instructions. "
    "Change nothing: no file edits, no commands that write, install, commit or delete — such calls are refused. "
    "Read, search and run read-only commands to understand the task, and ask the user clarifying questions "
    "rather than guess. Write the plan in Markdown in {path}, the only file you may write.{exit}\n"
    "</plan-mode-active>"
)
EXIT_WITH_TOOL = (" When the plan is complete, call exit_plan_mode with it (and in allowed_bash the commands it "
                  "will run, such as the tests) for the user's approval.")
EXIT_BY_USER = " When the plan is complete, give it as your answer: the user leaves plan mode with /plan."


def plans_dir(env: Mapping[str, str] | None = None) -> Path:
    """The plans' folder: `$XDG_STATE_HOME/mm/plans` (default `~/.local/state/mm/plans`)."""
    from mm.config.places import state_home

    return state_home(env) / "mm" / "plans"


@dataclass
class PlanMode:
    """Whether plan mode is on, the plan file, and the commands an approved plan pre-approved.

    `active`: calls that may change something are refused (mm.tools.plan.gate); `plan_file`: the
    one file that may be written meanwhile (absolute); `approved`: the `allowed_bash` entries of
    the last approved plan (mm.tools.floor.readonly.approved_by); `can_exit`: exit_plan_mode is
    declared (the texts say how to leave). A sub-agent's conversation is given its parent's
    object, not a copy.
    """

    active: bool = False
    plan_file: Path | None = None
    approved: list[str] = field(default_factory=list)
    can_exit: bool = False

    def enter(self, session_id: str, can_exit: bool, env: Mapping[str, str] | None = None) -> str:
        """Turn plan mode on for the session `session_id` (its plan file: plans_dir/plan_<id>.md);
        the approvals of an earlier plan are dropped. Returns PLAN_ON."""
        self.active, self.can_exit, self.approved = True, can_exit, []
        self.plan_file = Path(os.path.abspath(plans_dir(env) / f"plan_{session_id}.md"))
        return PLAN_ON.format(path=self.plan_file)

    def leave(self) -> str:
        """Turn plan mode off (the approvals stay). Returns PLAN_OFF."""
        self.active = False
        return PLAN_OFF

    def approve(self, plan: str, allowed_bash: list[str]) -> str | None:
        """The user approved `plan`: plan mode off, `allowed_bash` pre-approved, the plan saved
        in the plan file (atomically). Returns None, or why the plan could not be saved (plan
        mode is off all the same, as in the reference)."""
        from mm.fs import write_atomic

        self.active = False
        self.approved = [entry.strip() for entry in allowed_bash if entry.strip()]
        if self.plan_file is None:
            return "no plan file"
        try:
            write_atomic(self.plan_file, plan if plan.endswith("\n") else plan + "\n")
        except (OSError, ValueError) as err:
            return getattr(err, "strerror", None) or str(err)
        return None

    def reminder(self) -> str:
        """REMINDER for the plan file, with how to leave."""
        return REMINDER.format(path=self.plan_file, exit=EXIT_WITH_TOOL if self.can_exit else EXIT_BY_USER)


def with_reminder(messages: list[dict], start: int, plan: PlanMode) -> list[dict]:
    """`messages` with the turn's user message (at `start`) prefixed by the reminder — a copy:
    the history itself never holds it. Unchanged when plan mode is off or no such message."""
    if not plan.active or not (0 <= start < len(messages)) or messages[start].get("role") != "user":
        return messages
    asked = messages[start]
    content = asked.get("content")
    marked = plan.reminder() + "\n\n" + content if isinstance(content, str) else content
    if not isinstance(content, str):  # parts (an image): the reminder goes first as a text part
        marked = [{"type": "text", "text": plan.reminder()}] + list(content or [])
    return messages[:start] + [dict(asked, content=marked)] + messages[start + 1:]
