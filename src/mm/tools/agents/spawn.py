"""spawn_agent and resume_agent: a self-contained task handed to a fresh sub-agent, and a
follow-up to one that finished (mnemo-tools.md, Ask, plan, and delegate; mnemoai.md §2.10)."""

from __future__ import annotations

from typing import Any

from mm.tools.agents.relay import HeadlessUI, SubAgentUI
from mm.tools.agents.runs import Run, SubAgents
from mm.tools.base import Param, ToolContext, ToolKind, ToolResult

SPAWN_DESCRIPTION = (
    "Delegate a self-contained task to a fresh sub-agent with its own context; only its report comes back. "
    "It does not see this conversation: put everything it needs in the prompt. In the background (the "
    "default) you carry on and its report arrives as a message when it finishes; run_in_background=false "
    "waits for the report. Types:"
)
RESUME_DESCRIPTION = "Continue a sub-agent that finished, with a follow-up prompt; it keeps its own context."
UNKNOWN_TYPE = "Unknown agent_type '{name}'. Available types: {names}."
EMPTY_PROMPT = "spawn_agent needs a non-empty prompt describing the task."
EMPTY_FOLLOW_UP = "resume_agent needs a non-empty follow-up prompt."
UNKNOWN_ID = "Unknown agent_id '{id}' (no live or persisted record). Known sub-agents this session: {known}."
STILL_RUNNING = ("Sub-agent '{id}' is still running — wait for it to finish (its report arrives as a message), "
                 "then resume it.")
TYPE_GONE = "The '{type}' agent type no longer exists."
STARTED = ("Started background sub-agent '{id}' (type: {type}). Its report will arrive as a message when it "
           "finishes. Do not wait for it — carry on.")
RESUMED = ("Resumed background sub-agent '{id}' (type: {type}). Its report will arrive as a message when it "
           "finishes. Do not wait for it — carry on.")
RESULT = "[{type} sub-agent result]\n{report}\n\n(This result is not shown to the user — summarize what matters for them yourself.)"
FAILED = "[{type} sub-agent failed: {error}]"
AGENT_ID = "\n(agent_id '{id}': resume_agent continues this sub-agent.)"
REBRIEF = "You previously worked on this task:\n{task}\n\nYour prior report was:\n{report}\n\nFollow-up instruction:\n{prompt}"
SUMMARY = "{id} reported ({n} characters)"
NONE = "none"


class _AgentTool:
    """What spawn_agent and resume_agent share: the conversation's sub-agents and their catalogue."""

    kind: ToolKind = "other"
    needs_permission = False  # the sub-agent's own calls ask, each in its turn

    def __init__(self, runs: SubAgents, catalogue: Any):
        self.runs, self.catalogue = runs, catalogue

    async def _go(self, run: Run, kind: Any, prompt: str, background: bool, ctx: ToolContext,
                  started: str) -> ToolResult:
        if background:
            self.runs.start_background(run, kind, prompt, HeadlessUI())
            return ToolResult(started.format(id=run.id, type=run.type))
        report, error = await self.runs.execute(run, kind, prompt, SubAgentUI(run.id, ctx.interaction),
                                                ctx.cancelled, headless=False)
        tail = AGENT_ID.format(id=run.id)
        if error:
            body = FAILED.format(type=run.type, error=error)
            return ToolResult((report + "\n" + body if report else body) + tail, failed=True)
        text = RESULT.format(type=run.type, report=report) + tail
        return ToolResult(text, summary=SUMMARY.format(id=run.id, n=len(report)))


class SpawnAgent(_AgentTool):
    """spawn_agent(agent_type, prompt, description="", run_in_background=True)."""

    name = "spawn_agent"

    def __init__(self, runs: SubAgents, catalogue: Any):
        super().__init__(runs, catalogue)
        self.description = SPAWN_DESCRIPTION + "\n" + catalogue.listing()
        self.params = [
            Param("agent_type", "string", "The type of sub-agent: " + ", ".join(catalogue.names) + "."),
            Param("prompt", "string", "The task, complete and self-contained."),
            Param("description", "string", "A few words on the task, shown to the user.", required=False,
                  default=""),
            Param("run_in_background", "boolean", "Carry on while it works (true), or wait for its report.",
                  required=False, default=True),
        ]

    async def close(self) -> None:
        """Stop the background sub-agents (mm leaves)."""
        await self.runs.close()

    def title(self, args: dict[str, Any], ctx: ToolContext | None = None) -> str:
        """`spawn_agent: <type> — <description or the prompt's first line>`."""
        about = str(args.get("description") or "").strip() or \
            (str(args.get("prompt") or "").strip().splitlines() or [""])[0]
        return f"{self.name}: {args.get('agent_type', '')}" + (f" — {about}" if about else "")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Start the sub-agent; the errors of mnemoai.md §2.10."""
        name, prompt = str(args.get("agent_type") or ""), str(args.get("prompt") or "")
        kind = self.catalogue.find(name)
        if kind is None:
            return ToolResult(UNKNOWN_TYPE.format(name=name, names=", ".join(self.catalogue.names)), failed=True)
        if not prompt.strip():
            return ToolResult(EMPTY_PROMPT, failed=True)
        run = Run(self.runs.new_id(kind.name), kind.name, str(args.get("description") or "").strip(), prompt)
        self.runs.runs[run.id] = run
        return await self._go(run, kind, prompt, args.get("run_in_background", True) is not False, ctx, STARTED)


class ResumeAgent(_AgentTool):
    """resume_agent(agent_id, prompt, run_in_background=True)."""

    name = "resume_agent"
    description = RESUME_DESCRIPTION
    params = [
        Param("agent_id", "string", "The id spawn_agent gave."),
        Param("prompt", "string", "The follow-up instruction."),
        Param("run_in_background", "boolean", "Carry on while it works (true), or wait for its report.",
              required=False, default=True),
    ]

    def title(self, args: dict[str, Any], ctx: ToolContext | None = None) -> str:
        return f"{self.name}: {args.get('agent_id', '')}"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Re-brief the sub-agent on its own history; the errors of mnemoai.md §2.10."""
        agent_id, prompt = str(args.get("agent_id") or "").strip(), str(args.get("prompt") or "")
        if not prompt.strip():
            return ToolResult(EMPTY_FOLLOW_UP, failed=True)
        run = self.runs.find(agent_id)
        if run is None:
            known = ", ".join(self.runs.runs) or NONE
            return ToolResult(UNKNOWN_ID.format(id=agent_id, known=known), failed=True)
        if run.status == "running":
            return ToolResult(STILL_RUNNING.format(id=agent_id), failed=True)
        kind = self.catalogue.find(run.type)
        if kind is None:
            return ToolResult(TYPE_GONE.format(type=run.type), failed=True)
        brief = REBRIEF.format(task=run.task, report=run.report or "(none)", prompt=prompt)
        return await self._go(run, kind, brief, args.get("run_in_background", True) is not False, ctx, RESUMED)
