"""MCP servers: their tools declared to the model (docs/mcp.md).

`servers` reads the entries (`mcpServers` of the agent file, a project's `.mcp.json`) without the
SDK; `connection` runs one server through the official `mcp` SDK, imported only when a server is
configured; `hub` holds this process's servers. mm.tools.mcp_tools turns their tools into mm tools that
join a conversation's registry when their server is ready.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

MCP_JSON = ".mcp.json"  # a project's servers, in the folders from the repository root down to the working directory


def find_mcp_json(cwd: Path) -> Path | None:
    """The nearest `.mcp.json` from `cwd` up to its repository's root (just `cwd` outside a
    repository), or None. A few `stat` calls, nothing read."""
    from mm.config.places import project_folders

    for folder in reversed(project_folders(cwd)):
        candidate = folder / MCP_JSON
        if candidate.exists() and not candidate.is_dir():  # a named pipe is found, and refused when read
            return candidate
    return None


def configured(config: Any, cwd: Path) -> bool:
    """Whether any server is configured for `cwd`: `mcpServers` in the agent file (`config`, an
    AgentConfig), or a `.mcp.json` found (find_mcp_json). Cheap: it runs at every start."""
    return bool(config.mcpServers) or find_mcp_json(cwd) is not None


def start_servers(config: Any, cwd: Path, reporter: Callable[[str], None] | None = None) -> Callable[[], list[str]] | None:
    """Start the servers configured for `cwd` (`config`: the AgentConfig) in the background, at
    start-up; nothing happens, and nothing is imported, when none is. `reporter(line)` says at once
    what a server reports (it did not start, it stopped); without one the lines wait, and the
    function returned (None when no server is configured) takes them (line mode prints them
    between turns)."""
    if not configured(config, cwd):
        return None
    from mm.mcp.hub import HUB

    HUB.reporter = reporter
    HUB.connect(config, cwd)
    return HUB.unsaid


async def stop_servers() -> None:
    """Stop every server this process started (mm leaves); nothing to do when none was."""
    import sys

    hub = sys.modules.get("mm.mcp.hub")
    if hub is not None:
        await hub.HUB.close()
