"""Asking an agent without a model turn: `/ask <agent> <prompt>` in line mode and
`mm --ask <agent> "<prompt>"` (mm-tools.md §ask_agent: the same machinery as the tool)."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

from mm.config.schema import AgentConfig

NO_AGENTS = "no agent to ask: name some under `mmConfigs:` in the agent file (docs/ask.md)"
ASK_USAGE = "/ask <agent> <prompt> — agents: {names}"
EXCHANGE_QUESTION = "/ask {agent} {prompt}"


async def ask_agent_once(tool: Any, agent: str, prompt: str, ui: Any, cwd: Path, settings: Any,
                         cancelled: asyncio.Event, hooks: Any = None, session_id: str = "") -> Any:
    """Ask `agent` through `tool` (mm.tools.ask_agent.AskAgent) with `ui` as the front end, the
    preAsk and postAsk `hooks` around it (mm.hooks.point.Hooks, given `session_id`); returns the
    ToolResult the tool would give (its errors included)."""
    from mm.tools.base import ToolContext

    ctx = ToolContext(cwd=cwd, settings=settings, cancelled=cancelled, interaction=ui, hooks=hooks,
                      session_id=session_id)
    return await tool.run({"agent": agent, "prompt": prompt}, ctx)


def split_ask(text: str) -> tuple[str, str]:
    """`/ask <agent> <prompt>` → (agent, prompt); missing parts are ""."""
    parts = text.split(None, 2)
    return (parts[1] if len(parts) > 1 else ""), (parts[2] if len(parts) > 2 else "")


def run_ask(config: AgentConfig, agent: str, prompt: str) -> int:
    """`mm --ask`: the answer on stdout, the agent's tool calls on stderr; nobody can be asked.
    Returns 0 answered, 1 failed, 2 unknown agent or no agents, 130 interrupted."""
    from mm.ask.agents import ask_depth, asked_agents
    from mm.tools.ask_agent import UNKNOWN, AskAgent

    agents = asked_agents(config, Path.cwd())
    if not agents:
        print(f"mm: {NO_AGENTS}", file=sys.stderr)
        return 2
    if agent not in agents:
        print(UNKNOWN.format(name=agent, names=", ".join(sorted(agents))), file=sys.stderr)
        return 2
    try:
        return asyncio.run(_ask(config, AskAgent(agents, ask_depth()), agent, prompt))
    except KeyboardInterrupt:
        return 130


async def _ask(config: AgentConfig, tool: Any, agent: str, prompt: str) -> int:
    from mm.events import RelayedText, TextChunk
    from mm.tools.base import Settings
    from mm.ui.oneshot import OneShotUI

    class AskUI(OneShotUI):
        """One-shot display, the asked agent's answer as the answer (its thoughts left out)."""

        mode = "mm --ask"

        def emit(self, event: Any) -> None:
            if isinstance(event, RelayedText):
                if not event.thought:
                    super().emit(TextChunk(event.text))
                return
            super().emit(event)

    cancelled = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, cancelled.set)
    ui = AskUI(config.previewLines, on_closed_output=cancelled.set)
    settings = Settings(max_output=config.maxOutput, preview_lines=config.previewLines,
                        watchdog_timeout=config.watchdogTimeout)
    hooks, session_id = None, ""
    if any(getattr(config.hooks, event) for event in ("preAsk", "postAsk")):
        from mm.hooks.point import Hooks
        from mm.sessions.store import new_session_id

        hooks, session_id = Hooks(config.hooks), new_session_id()
    try:
        result = await ask_agent_once(tool, agent, prompt, ui, Path.cwd(), settings, cancelled, hooks, session_id)
    finally:
        await tool.close()
    ui.finish()
    if ui.closed_output:
        return 141
    if cancelled.is_set():
        print("mm: interrupted", file=sys.stderr)
        return 130
    if result.failed:  # the text streamed already: the line that says why it stopped, or the error
        print(result.summary or result.text, file=sys.stderr)
        return 1
    return 0
