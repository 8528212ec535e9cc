"""Background sub-agents' reports reaching a conversation (docs/subagents.md): delivered as mm's
notes before each model request, awaited at the end of a `-p` turn."""

from __future__ import annotations

from typing import Any


def deliver_reports(conv: Any) -> None:
    """Append the reports that arrived in `conv.inbox` (mm.tools.agents.runs.SubAgents, or None)
    to `conv`'s history, each as a user-role note."""
    if conv.inbox is not None:
        for report in conv.inbox.take():
            conv.history.append({"role": "user", "content": report})


async def background_reported(conv: Any) -> bool:
    """With `conv.await_background` (`mm -p`), wait for the background sub-agents still running:
    True when a report came for the model to read (the turn goes on), False when none runs or
    when the turn is cancelled."""
    if conv.inbox is None or not conv.await_background or not conv.inbox.busy():
        return False
    from mm.tools.waiting import Cancelled, unless_cancelled

    try:
        await unless_cancelled(conv.inbox.wait(), conv._cancel)
    except Cancelled:
        return False
    return True
