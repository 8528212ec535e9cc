"""Running one sub-agent turn in this process: a Conversation of its own, on the parent's model
(or the model its type names), with the tools its type allows (mnemoai.md §2.10, §4.4;
docs/subagents.md). Given to the tools' SubAgents by mm.run.build_conversation."""

from __future__ import annotations

import asyncio
import copy
from dataclasses import replace
from typing import Any, Callable

from mm.config.schema import AgentConfig
from mm.engine.conversation import Conversation
from mm.tools.agents.relay import ChildRegistry

WORKING_DIRECTORY = "\n\nWorking directory: {cwd}"


class SubagentRunner:
    """Runs sub-agent turns for the conversation `parent`, whose agent file is `config`."""

    def __init__(self, parent: Conversation, config: AgentConfig):
        self.parent, self.config = parent, config

    def _registry(self, kind: Any, headless: bool) -> ChildRegistry:
        from mm.tools.registry import build_registry

        # never one level deeper, and never approving the parent's plan (docs/plan-mode.md)
        toolsets = [g for g in self.config.toolsets if g not in ("agents", "plan")]
        tools = build_registry(replace(self.config, toolsets=toolsets), cwd=self.parent.cwd)
        return ChildRegistry(tools, kind.allows, headless)

    def _client(self, kind: Any) -> Any:
        """The parent's client, or a copy asking for the type's model on the same server (§4.4)."""
        if not kind.model:
            return self.parent.client
        client = copy.copy(self.parent.client)
        client.model = kind.model
        return client

    async def run(self, kind: Any, history: list[dict], prompt: str, ui: Any, save: Callable[[list[dict]], None],
                  cancelled: asyncio.Event, headless: bool) -> tuple[str, str | None]:
        """One turn of the sub-agent of type `kind` on `history` (its own, empty for a new one;
        changed in place), for `prompt`. `save(history)` runs as the turn goes; `cancelled`
        stops it. Returns (its report: the last answer, the error that ended the turn or None)."""
        parent = self.parent
        registry = self._registry(kind, headless)
        relay_kinds = getattr(ui, "kinds", None)
        if isinstance(relay_kinds, dict):
            relay_kinds.update({name: tool.kind for name, tool in registry.tools.items()})
        system = kind.prompt + WORKING_DIRECTORY.format(cwd=parent.cwd)
        if history and history[0].get("role") == "system":
            history[0] = {"role": "system", "content": system}
        conv = Conversation(client=self._client(kind), registry=registry, cwd=parent.cwd, system_prompt=system,
                            settings=parent.settings, yolo=parent.yolo, max_turns=parent.max_turns, history=history,
                            permissions=parent.permissions,  # "for this session" answers hold for its sub-agents
                            context=parent.context, hooks=parent.hooks, session_id=parent.id_for_hooks,
                            context_window=parent.context_window, refuse_overflow=parent.refuse_overflow,
                            plan_mode=parent.plan_mode)  # the parent's plan mode holds its sub-agents too
        conv.on_change = conv.on_turn_end = lambda c: save(c.history)

        async def stop_when_cancelled() -> None:
            await cancelled.wait()
            conv.cancel()

        watcher = asyncio.ensure_future(stop_when_cancelled())
        start = len(conv.history)
        try:
            done = await conv.run_turn(prompt, ui)
        finally:
            watcher.cancel()
            await registry.close()
        report = ""
        for message in reversed(conv.history[start:]):
            if message.get("role") == "assistant" and isinstance(message.get("content"), str) \
                    and message["content"].strip():
                report = message["content"].strip()
                break
        if done.stop_reason == "end_turn":
            return report, None
        return report, done.error or done.stop_reason
