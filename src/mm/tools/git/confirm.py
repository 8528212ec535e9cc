"""The user's word on a dangerous git operation: `allow_dangerous` takes a reason and the user's
confirmation at a `🔐` prompt (an editor's permission dialog over ACP) — never the model's word
alone (notes/mnemoai.md §3: the model approving its own allow_dangerous; issue 13 §8;
docs/tools-git.md §Confirmation)."""

from __future__ import annotations

from typing import Any

from mm.tools.base import ToolContext, ToolResult
from mm.tools.json_reply import refusal

NEEDS_REASON = "When using allow_dangerous=True, you must provide a reason"
NEEDS_REASON_EXAMPLE = '{tool}(command="{command}", allow_dangerous=True, reason="Explanation here")'
RISKY = "This command has potential risks"
NEXT_STEP = ("To proceed, call {tool} with allow_dangerous=True and provide a reason explaining why this is "
             "intentional.")
CONFIRMATION = "mm then shows the user the risks and the reason, and runs it only if they agree."
DECLINED = ("The user was shown the risks of this operation and declined it. Do NOT retry with allow_dangerous=True "
            "— ask them how they want to proceed instead.")
NOBODY = ("Nobody can be asked to confirm a dangerous git operation here (mm -p, or a client that cannot ask): it was "
          "not run. Do NOT retry with allow_dangerous=True — say what you would run and why, and let the user run it.")
PROMPT_NAME = "{tool}: override the safety check"  # the 🔐 line: `🔐 git_safe: override the safety check: allow? …`
WARNING_LINE = "⚠️  {message}"
REASON_LINE = "reason: {reason}"


def can_ask(ctx: ToolContext) -> bool:
    """Whether a person can be asked: a front end that can put questions to the user has
    `ask_user` (line mode, an editor); one-shot mode has not (mm.tools.ask_user.tool)."""
    return ctx.interaction is not None and callable(getattr(ctx.interaction, "ask_user", None))


async def user_refusal(tool: str, args: dict[str, Any], shown: str, warnings: list[dict[str, str]],
                       reason: str, ctx: ToolContext) -> ToolResult | None:
    """Ask the user whether the dangerous `shown` (`git …`) may run, showing each warning and the
    model's `reason`: None when they agreed (once or for the session: each dangerous operation is
    asked anew), else the refusal for the model (DECLINED, or NOBODY where nobody can be asked)."""
    if not can_ask(ctx):
        return refusal(NOBODY, command=shown)
    lines = [shown] + [WARNING_LINE.format(message=w["message"]) for w in warnings] + [REASON_LINE.format(reason=reason)]
    answer = await ctx.interaction.request_permission(PROMPT_NAME.format(tool=tool), args, "\n".join(lines))
    if answer in ("allow_once", "allow_always"):
        return None
    return refusal(DECLINED, declined_by_user=True, command=shown)
