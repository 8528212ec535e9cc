"""exit_plan_mode(plan, allowed_bash): the finished plan shown to the user, who approves it
(plan mode off, the plan saved, allowed_bash pre-approved, the work goes on in the same turn),
edits it in $EDITOR then approves it, or keeps planning (mnemo-tools.md §Ask, plan, and
delegate; notes/mnemoai.md §2.10, §4.3; docs/plan-mode.md §Leaving plan mode).

The front end asks through an optional Interaction method
`async approve_plan(plan: str, allowed_bash: list[str], plan_file: Path) -> (answer, text)`,
answer one of "approve", "edited" (text: the plan as the user left it), "keep" or "nobody"; a
front end without it cannot ask (`mm -p`): nobody can approve, and the model is told so.
"""

from __future__ import annotations

from typing import Any

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult

DESCRIPTION = ("Present your finished plan to the user for approval and leave plan mode. Call it in plan mode once "
               "the plan is complete; when it is approved, carry the plan out at once.")
PLAN_DESCRIPTION = "The plan, in Markdown: the steps, the files to change, how to check the result."
ALLOWED_DESCRIPTION = ("Commands the plan will run (such as pytest), approved with the plan: each covers the "
                       "commands that start with its words (pytest covers pytest tests/unit).")
APPROVED = ("APPROVED — the user approved the plan: plan mode is off and the plan is saved in {path}. "
            "Carry it out now, step by step.{commands}")
APPROVED_EDITED = ("APPROVED — the user edited the plan, then approved it: plan mode is off and the plan is saved in "
                   "{path}. Carry out this version now, step by step.{commands}\n\n{plan}")
NOT_SAVED = ("APPROVED — the user approved the plan and plan mode is off, but the plan could not be saved in "
             "{path} ({error}). Carry it out now, step by step.{commands}")
COMMANDS = " These commands run without asking: {commands}."
KEEP_PLANNING = ("[the user wants to keep planning: plan mode stays on. Ask them what to change, or improve the plan, "
                 "then call exit_plan_mode again]")
NOBODY = ("[nobody can approve a plan in this mode (mm -p): plan mode stays on and nothing will be changed — "
          "give the plan as your answer]")
NOT_IN_PLAN_MODE = "[plan mode is not on: there is no plan to approve — go on with the work]"
EMPTY_PLAN = "[exit_plan_mode: plan is empty — write the whole plan in Markdown in plan, then call again]"


class ExitPlanMode:
    """The exit_plan_mode tool: kind `switch_mode` over ACP, never asked as a permission (it is the
    question itself)."""

    name = "exit_plan_mode"
    kind: ToolKind = "other"
    description = DESCRIPTION
    needs_permission = False
    params = [Param("plan", "string", PLAN_DESCRIPTION),
              Param("allowed_bash", "array", ALLOWED_DESCRIPTION, required=False, default=None,
                    items={"type": "string"})]

    def call_kind(self, args: Any) -> str:
        """The ACP kind of its calls: `switch_mode` (it leaves plan mode)."""
        return "switch_mode"

    @staticmethod
    def normalize_arguments(args: Any) -> Any:
        """One command given as a string in allowed_bash becomes a list of one."""
        if isinstance(args, dict) and isinstance(args.get("allowed_bash"), str):
            return {**args, "allowed_bash": [args["allowed_bash"]]}
        return args

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Ask the user about the plan and return what they decided (APPROVED…, KEEP_PLANNING,
        NOBODY), or NOT_IN_PLAN_MODE, EMPTY_PLAN."""
        plan_mode = ctx.plan_mode
        plan = str(args.get("plan") or "")
        if plan_mode is None or not plan_mode.active:
            return ToolResult(NOT_IN_PLAN_MODE, failed=True)
        if not plan.strip():
            return ToolResult(EMPTY_PLAN, failed=True)
        allowed = [str(c).strip() for c in (args.get("allowed_bash") or []) if str(c).strip()]
        ask = getattr(ctx.interaction, "approve_plan", None)
        if ask is None:
            return ToolResult(NOBODY, failed=True)
        answer, text = await ask(plan, allowed, plan_mode.plan_file)
        if answer == "nobody":
            return ToolResult(NOBODY, failed=True)
        if answer not in ("approve", "edited") or not text.strip():
            return ToolResult(KEEP_PLANNING)
        error = plan_mode.approve(text, allowed)
        commands = COMMANDS.format(commands=", ".join(allowed)) if allowed else ""
        if error:
            return ToolResult(NOT_SAVED.format(path=plan_mode.plan_file, error=error, commands=commands))
        if answer == "edited":
            return ToolResult(APPROVED_EDITED.format(path=plan_mode.plan_file, commands=commands, plan=text))
        return ToolResult(APPROVED.format(path=plan_mode.plan_file, commands=commands))
