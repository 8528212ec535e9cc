"""The ask_agent tool: a task handed to another agent, its answer the result (mm-tools.md §ask_agent)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult

DESCRIPTION = (
    "Hand a task to another agent and get its answer. The agent works on its own, with its own model "
    "and tools, in the same working directory; it does not see this conversation, so give it a "
    "complete, self-contained task (or set with_context). Use it when one of these agents is better "
    "placed to do the task than you are."
)
UNKNOWN = '[ask_agent: unknown agent "{name}" — agents: {names}]'
EMPTY = "[ask_agent: the prompt is empty — say what {agent} must do]"
FAILED = "[ask_agent: {agent} failed: {reason}]"
NO_ANSWER = "[ask_agent: {agent} gave no answer]"
STOPPED = "[ask_agent: {agent} stopped before finishing: {reason}]"
TOO_DEEP = ("[ask_agent: {agent} cannot be asked: this agent was itself asked {depth} levels deep (MM_ASK_DEPTH), "
            "and agents ask each other at most {most} levels deep — do the task yourself]")
ANSWERED = "{agent} answered ({n} characters)"
ASK_DENIED = "[ask denied by a hook: {reason}]"  # mm-tools.md §ask_agent, Hooks
REPLACED = "{agent} answered; a hook replaced the answer ({n} characters)"


class AskAgent:
    """ask_agent: kind `other`, gated like bash (declared when `mmConfigs` names an agent)."""

    name = "ask_agent"
    kind: ToolKind = "other"
    needs_permission = True

    def __init__(self, agents: dict[str, Any], depth: int = 0):
        from mm.ask.agents import Children

        self.agents, self.depth = agents, depth
        self.children = Children()
        lines = [f"  {name} — {self.agents[name].purpose}" for name in sorted(self.agents)]
        self.description = "\n".join([DESCRIPTION, "Agents:", *lines])
        self.params = [
            Param("agent", "string", "The agent to ask: one of " + ", ".join(sorted(self.agents)) + "."),
            Param("prompt", "string", "The task, complete and self-contained."),
            Param("with_context", "boolean", "Send this conversation (questions, answers, tool calls) before the "
                  "task.", required=False, default=False),
        ]

    def title(self, args: dict[str, Any], ctx: ToolContext | None = None) -> str:
        """`ask_agent: <agent> (<provider>/<model>) — <first line of the prompt>`."""
        name = str(args.get("agent", ""))
        spec = self.agents.get(name)
        first = (str(args.get("prompt") or "").strip().splitlines() or [""])[0]
        where = f" ({spec.provider or 'auto'}/{spec.model or 'auto'})" if spec is not None and spec.is_mm else ""
        return f"{self.name}: {name}{where}" + (f" — {first}" if first else "")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Ask the agent and return its answer (truncated to maxOutput), or the reference's error texts."""
        from mm.ask.agents import MAX_DEPTH
        from mm.ask.context import with_context

        name, prompt = str(args.get("agent") or "").strip(), str(args.get("prompt") or "")
        spec = self.agents.get(name)
        if spec is None:
            return ToolResult(UNKNOWN.format(name=name, names=", ".join(sorted(self.agents))), failed=True)
        if not prompt.strip():
            return ToolResult(EMPTY.format(agent=name), failed=True)
        if self.depth >= MAX_DEPTH:
            return ToolResult(TOO_DEEP.format(agent=name, depth=self.depth, most=MAX_DEPTH), failed=True)
        if args.get("with_context"):
            prompt = with_context(prompt, ctx.history, ctx.settings.max_output)
        hooks = ctx.hooks if ctx.hooks is not None and (ctx.hooks.wants("preAsk", name)
                                                         or ctx.hooks.wants("postAsk", name)) else None
        if hooks is None:
            return await self._ask(name, spec, prompt, ctx)
        return await self._hooked_ask(hooks, name, spec, prompt, ctx)

    async def _ask(self, name: str, spec: Any, prompt: str, ctx: ToolContext) -> ToolResult:
        from mm.ask.relay import Relay

        child = self.children.get(spec, Path(ctx.cwd))
        answer = await child.ask(prompt, Path(ctx.cwd), Relay(name, ctx.interaction, spec.yolo),
                                 ctx.settings.watchdog_timeout, ctx.cancelled)
        return answer_result(name, answer, ctx.settings.max_output)

    async def _hooked_ask(self, hooks: Any, name: str, spec: Any, prompt: str, ctx: ToolContext) -> ToolResult:
        """The hand-off between the preAsk and postAsk hooks (mm-tools.md §ask_agent, Hooks;
        docs/hooks.md): a denial returns ASK_DENIED (the agent not asked, or its answer withheld),
        a replaced answer is summed up as REPLACED, hook context follows the answer."""
        from mm.text import add_context

        where = {"name": name, "cwd": Path(ctx.cwd), "session_id": ctx.session_id, "ui": ctx.interaction,
                 "cancelled": ctx.cancelled}
        before = await hooks.run("preAsk", {"agent": name, "prompt": prompt}, **where)
        if before.denied:
            return ToolResult(ASK_DENIED.format(reason=before.reason), failed=True)
        contexts, replace = list(before.contexts), before.replace
        if replace is None:
            result = await self._ask(name, spec, prompt, ctx)
            if result.failed or ctx.cancelled.is_set():  # no answer to look at
                return result
            after = await hooks.run("postAsk", {"agent": name, "prompt": prompt, "answer": result.text}, **where)
            if after.denied:
                return ToolResult(ASK_DENIED.format(reason=after.reason), failed=True)
            contexts, replace = contexts + after.contexts, after.replace
        if replace is not None:
            result = ToolResult(replace[:ctx.settings.max_output], summary=REPLACED.format(agent=name, n=len(replace)))
        result.text = add_context(result.text, contexts, ctx.settings.max_output)
        return result

    async def close(self) -> None:
        """Stop the agents started for this conversation."""
        await self.children.close()


def answer_result(agent: str, answer: Any, max_output: int) -> ToolResult:
    """The tool result of an Answer (mm.ask.child.Answer): the answer, else the error texts; a
    silent agent also ends the turn (the watchdog)."""
    from mm.ask.child import SILENT_PREFIX

    if answer.failed is not None:
        return ToolResult(FAILED.format(agent=agent, reason=answer.failed), failed=True)
    text = answer.text
    if len(text) > max_output:
        text = text[:max_output]
    if answer.stopped is None:
        if not text.strip():
            return ToolResult(NO_ANSWER.format(agent=agent), failed=True)
        return ToolResult(text, summary=ANSWERED.format(agent=agent, n=len(answer.text)))
    stopped = STOPPED.format(agent=agent, reason=answer.stopped)
    body = f"{text.rstrip()}\n{stopped}" if text.strip() else stopped
    stop = stopped if answer.stopped.startswith(SILENT_PREFIX) else None
    return ToolResult(body, failed=True, summary=stopped, stop=stop)
