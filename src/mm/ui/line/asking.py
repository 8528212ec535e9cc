"""`/ask <agent> <prompt>` in line mode: an agent of `mmConfigs` asked directly, without a model
turn (mm-tools.md §ask_agent: the same machinery as the tool; docs/ask.md)."""

from __future__ import annotations

import asyncio
from typing import Any

from mm.events import ToolCallDone, ToolCallStarted


async def ask_command(conv: Any, text: str, view: Any, make_ui: Any, running: Any) -> None:
    """Run `/ask` typed at the prompt: the agent's output streams like a turn's; the exchange joins
    the history (the question as typed, the answer as the assistant's message) and the session
    is saved. `make_ui(stop)` gives the line-mode Interaction whose questions stop with `stop`;
    `running(cancel)` is the context in which Esc, Ctrl-C and the leaving signals call `cancel`
    (mm.ui.line.interrupts.Interrupts.running)."""
    from mm.ui.handoff import ASK_USAGE, NO_AGENTS, ask_agent_once, split_ask

    tool = conv.registry.get("ask_agent")
    if tool is None:
        view.say(NO_AGENTS)
        return
    agent, prompt = split_ask(text)
    if not agent or not prompt.strip():
        view.say(ASK_USAGE.format(names=", ".join(sorted(tool.agents))))
        return
    cancelled = asyncio.Event()
    arguments = {"agent": agent, "prompt": prompt}
    try:
        view.emit(ToolCallStarted("ask", tool.name, arguments, tool.title(arguments)))
        with running(cancelled.set):
            result = await ask_agent_once(tool, agent, prompt, make_ui(cancelled.set), conv.cwd, conv.settings,
                                          cancelled, conv.hooks, conv.id_for_hooks)
        view.emit(ToolCallDone("ask", tool.name, arguments, result))
    finally:
        view.close()
    if not result.failed:
        conv.history += [{"role": "user", "content": text}, {"role": "assistant", "content": result.text}]
        if conv.on_turn_end is not None:
            conv.on_turn_end(conv)
