"""The agents `mmConfigs` names, and the children started for them (mm-tools.md §ask_agent)."""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mm.config.schema import AcpConfig, AgentConfig

MAX_DEPTH = 2  # an asked agent may ask in turn, two levels at most (MM_ASK_DEPTH)
NO_DESCRIPTION = "(no description)"


@dataclass
class AgentSpec:
    """One askable agent: its name, the command that starts it as an ACP agent, what it is for,
    whether its calls run without asking (`yolo`), and its model and provider when known."""

    name: str
    argv: list[str]
    purpose: str
    yolo: bool
    model: str = ""
    provider: str = ""
    is_mm: bool = False  # another mm: its yolo is set through MM_YOLO


def ask_depth(env: dict[str, str] | None = None) -> int:
    """How deep this mm is in a chain of asked agents: MM_ASK_DEPTH, 0 when unset or unreadable."""
    value = (os.environ if env is None else env).get("MM_ASK_DEPTH", "0")
    return int(value) if value.strip().isdigit() else 0


def asked_agents(config: AgentConfig, cwd: Path) -> dict[str, AgentSpec]:
    """The agents of `config.mmConfigs`, by name (relative agent files resolve against `cwd` when
    the loader did not make them absolute already)."""
    specs = {}
    for name, entry in config.mmConfigs.items():
        yolo = config.yolo if entry.yolo is None else entry.yolo
        if entry.config:
            path = cwd / Path(entry.config).expanduser()
            model, provider, title = _about(path)
            purpose = entry.description or title or NO_DESCRIPTION
            specs[name] = AgentSpec(name, [sys.executable, "-m", "mm", "-acp", "-c", str(path)], purpose, yolo,
                                    model, provider, is_mm=True)
        else:
            specs[name] = AgentSpec(name, list(entry.command or []), entry.description or NO_DESCRIPTION, yolo)
    return specs


def _about(path: Path) -> tuple[str, str, str]:
    """(model, provider, title) an agent file sets ("" for each it leaves out); the built-in
    `acp.title` does not count as a purpose."""
    import yaml

    from mm.config.files import AGENT_FILE_BYTES
    from mm.fs import read_bytes

    try:  # without blocking, bounded: a named pipe or a device is no agent file
        data = yaml.safe_load(read_bytes(path, AGENT_FILE_BYTES).decode("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return "", "", ""
    data = data if isinstance(data, dict) else {}
    acp = data.get("acp") if isinstance(data.get("acp"), dict) else {}
    title = acp.get("title") if isinstance(acp.get("title"), str) else ""
    if title == AcpConfig.title:
        title = ""
    provider = data.get("provider") or ("openai" if data.get("baseUrl") else "")
    return tuple(_expanded(str(v)) for v in (data.get("model") or "", provider, title))  # type: ignore[return-value]


def _expanded(text: str) -> str:
    """`text` with its `${VAR}` expanded as the agent's own mm will (an unset one left out)."""
    from mm.config.files import expand_text

    return expand_text(text, os.environ)[0] if "${" in text else text


class Children:
    """The children started for one conversation, by agent name: each started on its first
    question and reused; `close()` stops them all (when mm leaves)."""

    def __init__(self) -> None:
        self._children: dict[str, Any] = {}

    def get(self, spec: AgentSpec, cwd: Path) -> Any:
        """The child for `spec`, made (not started) on first use."""
        from mm.ask.child import ChildAgent, child_env

        child = self._children.get(spec.name)
        if child is None:
            env = child_env(ask_depth(), spec.yolo if spec.is_mm else None)
            child = self._children[spec.name] = ChildAgent(spec.name, spec.argv, env, cwd)
        return child

    async def close(self) -> None:
        """Stop every child."""
        children, self._children = list(self._children.values()), {}
        await asyncio.gather(*(c.close() for c in children), return_exceptions=True)
