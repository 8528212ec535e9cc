"""A sub-agent's front end and tool set: its calls shown through the parent's display titled
`<agent> · <title>`, its permission requests and questions put to the parent's user (a
foreground run), or refused in clear words (a background run, which nobody watches);
the tools it may not use answered with the reference's refusals (mnemoai.md §2.10, §4.4)."""

from __future__ import annotations

from typing import Any

from mm.ask.relay import ASKING, ASKS, TITLE
from mm.events import HookLine, ToolCallDone, ToolCallRunning, ToolCallStarted
from mm.tools.base import ToolContext, ToolResult
from mm.tools.registry import Registry

NESTED = "A sub-agent cannot spawn its own sub-agents. Do the work directly with your tools."
NESTED_RESUME = ("A sub-agent cannot resume sub-agents: that would run them one level deeper. Do the work "
                 "directly with your tools.")
IN_SUBAGENT = ("You cannot ask the user a question here (you are a sub-agent with no direct user). Make the "
               "choice yourself, and say which in your report.")
HEADLESS_REFUSED = ("[{tool} refused: this background sub-agent cannot ask the user for permission (nobody watches "
                    "it). Do without it, or say in your report what should be run.]")


class SubAgentUI:
    """The Interaction of a foreground sub-agent (`label`) inside the parent's front end `ui`."""

    def __init__(self, label: str, ui: Any, kinds: dict[str, str] | None = None):
        self.label, self.ui, self.kinds = label, ui, kinds if kinds is not None else {}
        self._titles: dict[str, str] = {}
        if getattr(ui, "ask_user", None) is not None:
            self.ask_user = self._ask_user

    def _id(self, call_id: str) -> str:
        return f"{self.label}/{call_id}"

    def emit(self, event: Any) -> None:
        """The sub-agent's calls and hook lines go through; its text, thoughts and counters do not
        (its report is the result of spawn_agent)."""
        from mm.tools.titles import tool_title

        if isinstance(event, ToolCallStarted):
            title = TITLE.format(agent=self.label, title=tool_title(event.name, event.arguments, event.title))
            self._titles[event.call_id] = title
            self.ui.emit(ToolCallStarted(self._id(event.call_id), self.label, event.arguments, title, event.change,
                                         kind=event.kind or self.kinds.get(event.name)))
        elif isinstance(event, ToolCallRunning):
            self.ui.emit(ToolCallRunning(self._id(event.call_id)))
        elif isinstance(event, ToolCallDone):  # a refused or unknown call has had no ToolCallStarted
            title = TITLE.format(agent=self.label, title=event.title) if event.title else \
                self._titles.pop(event.call_id, None) or \
                TITLE.format(agent=self.label, title=tool_title(event.name, event.arguments))
            self.ui.emit(ToolCallDone(self._id(event.call_id), self.label, event.arguments, event.result, title))
        elif isinstance(event, HookLine):
            self.ui.emit(event)

    async def request_permission(self, name: str, arguments: dict[str, Any], preview: str) -> str:
        """Put to the parent's user as `<agent> asks` (as ask_agent's relayed requests are)."""
        return await self.ui.request_permission(ASKING.format(agent=self.label), arguments, preview)

    async def _ask_user(self, questions: list) -> Any:
        """ask_user's questions put to the parent's user, each prefixed `<agent> asks: `."""
        from dataclasses import replace

        prefix = ASKS.format(agent=self.label)
        return await self.ui.ask_user([replace(q, text=prefix + q.text) for q in questions])


class HeadlessUI:
    """The Interaction of a background sub-agent: nothing shown, nobody asked (no `ask_user`:
    ask_user answers that the user cannot be asked)."""

    def emit(self, event: Any) -> None:
        pass

    async def request_permission(self, name: str, arguments: dict[str, Any], preview: str) -> str:
        return "reject_once"


class Refusal:
    """A tool a sub-agent may not use, never declared to it: called anyway, it answers `text`."""

    kind = "other"
    needs_permission = False
    params: list = []
    description = ""
    extra_keys = True  # whatever it was sent, the answer is the refusal

    def __init__(self, name: str, text: str):
        self.name, self.text = name, text

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(self.text, failed=True)


REFUSALS = {"spawn_agent": NESTED, "resume_agent": NESTED_RESUME, "ask_user_question": IN_SUBAGENT}


class Headless:
    """A tool of a background sub-agent: itself, except that a refused permission says why
    (HEADLESS_REFUSED, through the engine's `rejection()` hook)."""

    def __init__(self, tool: Any):
        self._tool = tool

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tool, name)

    def rejection(self) -> str:
        return HEADLESS_REFUSED.format(tool=self._tool.name)


class ChildRegistry(Registry):
    """A sub-agent's tools: those of `registry` its type `allows` (MCP tools that join later
    too); spawn_agent, resume_agent and ask_user_question answered with REFUSALS; with
    `headless`, every tool wrapped in Headless."""

    def __init__(self, registry: Registry, allows: Any, headless: bool):
        self._allows, self._headless = allows, headless
        super().__init__([self._wrapped(t) for t in registry.tools.values() if allows(t.name)], registry.joining)

    def _wrapped(self, tool: Any) -> Any:
        return Headless(tool) if self._headless else tool

    def refresh(self) -> None:
        super().refresh()
        dropped = [n for n in self.tools if not self._allows(n)]
        if dropped:
            self.tools = {n: t for n, t in self.tools.items() if n not in dropped}
            self._schemas = None
        if self._headless:
            self.tools = {n: (t if isinstance(t, Headless) else Headless(t)) for n, t in self.tools.items()}

    def get(self, name: str) -> Any:
        found = super().get(name)
        if found is None and name in REFUSALS:
            return Refusal(name, REFUSALS[name])
        return found
