"""ACP session modes: `default` and `plan` (docs/plan-mode.md §Over ACP; issue 14 point 1).

Every session advertises both in the `session/new` and `session/load` responses (`modes`); a
client that shows modes switches them with `session/set_mode`; `/plan` and an approved plan
send `current_mode_update`. A client that ignores modes still has `/plan`.
"""

from __future__ import annotations

from typing import Any

AVAILABLE = [
    {"id": "default", "name": "Default", "description": "The tools run as the agent file says"},
    {"id": "plan", "name": "Plan", "description": "Read and plan; change nothing until a plan is approved"},
]
UNKNOWN_MODE = "unknown mode {mode!r}: the modes are default and plan"
MODE_LOG = "[acp] session {id}: mode {mode} — {line}"


def current(conv: Any) -> str:
    """The id of the mode `conv` (a Conversation) is in."""
    return "plan" if conv.plan_mode.active else "default"


def modes_of(conv: Any) -> dict[str, Any]:
    """The `modes` field of a session/new or session/load response (SessionModeState)."""
    return {"currentModeId": current(conv), "availableModes": AVAILABLE}


def mode_update(conv: Any) -> dict[str, Any]:
    """The `current_mode_update` session update for `conv`'s mode."""
    return {"sessionUpdate": "current_mode_update", "currentModeId": current(conv)}
