"""This process's MCP servers: started once each, shared by its conversations (an ACP agent's
sessions), stopped when mm leaves; and the lines that list them (the banner, /mcp) (docs/mcp.md).

Importing this module imports no SDK: mm.mcp.connection does, in a thread, when a server starts.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Callable, Mapping

from mm.mcp.connection import FAILED, READY, STARTING, Connection
from mm.mcp.servers import ServerSpec, server_specs

LINE = "🔌 mcp: {text}"  # every line said of a server (docs/mcp.md §What mm says)
BANNER = "🔌 mcp: {servers}"
BANNER_SERVER = {READY: "{name} ({n} tools)", STARTING: "{name} (starting)", FAILED: "{name} (did not start)"}
BANNER_STOPPED = "{name} (stopped)"
HEAD = "🔌 MCP servers:"
ROW = "{name} · {state} · {where} ({origin})"
STATES = {READY: "ready, {n} tools: {tools}", STARTING: "starting", FAILED: "did not start: {why}"}
STATE_STOPPED = "stopped: {why}"
NO_SERVER = ("no MCP server is configured: add mcpServers to the agent file, or a .mcp.json to the project "
             "(docs/mcp.md)")


class Hub:
    """The servers started by this process, by spec (the same server named by two sessions runs
    once), and what they reported. `reporter(line)` says a line at once; until one is set (line
    mode sets none: it prints `unsaid()` between turns), lines wait in `pending`."""

    def __init__(self) -> None:
        self.connections: dict[ServerSpec, Connection] = {}
        self.reporter: Callable[[str], None] | None = None
        self.pending: list[str] = []
        self._said: set[str] = set()
        self._loop: Any = None

    def report(self, text: str) -> None:
        """Say `text` as LINE, once per process however often it comes."""
        line = LINE.format(text=text)
        if line in self._said:
            return
        self._said.add(line)
        if self.reporter is not None:
            self.reporter(line)
        else:
            self.pending.append(line)

    def unsaid(self) -> list[str]:
        """The lines reported since the last call, taken."""
        lines, self.pending = self.pending, []
        return lines

    def connect(self, config: Any, cwd: Path, env: Mapping[str, str] | None = None) -> list[Connection]:
        """The servers configured for `cwd` (mm.mcp.servers.server_specs; the lines of a .mcp.json
        entry left out reported), each started now when it does not run yet (from a running event
        loop; else when it is first needed)."""
        self._forget_other_loop()
        specs, problems = server_specs(config, cwd, env)
        for problem in problems:
            self.report(problem)
        found = []
        for spec in specs:
            connection = self.connections.get(spec)
            if connection is None:
                connection = self.connections[spec] = Connection(spec, self.report)
            connection.ensure_started()
            found.append(connection)
        return found

    async def close(self) -> None:
        """Stop every server (mm leaves), all at once."""
        connections = list(self.connections.values())
        self.connections.clear()
        await asyncio.gather(*(c.close() for c in connections), return_exceptions=True)

    def _forget_other_loop(self) -> None:
        """Servers of an event loop that ended (a test runs several) are no one's any more."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._loop is not loop:
            self._loop = loop
            self.connections = {spec: c for spec, c in self.connections.items() if c._task is None}


HUB = Hub()  # this process's (mm.mcp.start_servers, stop_servers)


def banner(connections: list[Connection], names: Mapping[Any, int]) -> str:
    """BANNER: each server and its state, with its number of tools once ready (`names`: the
    number of tools it declares, by connection)."""
    shown = []
    for c in connections:
        template = BANNER_SERVER.get(c.state, BANNER_STOPPED)
        shown.append(template.format(name=c.spec.name, n=names.get(c, len(c.tools))))
    return BANNER.format(servers=", ".join(shown))


def listing(connections: list[Connection], declared: Mapping[Any, list[str]]) -> str:
    """`/mcp`: HEAD, then one ROW per server (its state — with its tools by the names they are
    declared under, `declared` by connection — how it is reached, where it is configured); or
    NO_SERVER."""
    if not connections:
        return NO_SERVER
    rows = [HEAD]
    for c in connections:
        tools = declared.get(c, [t.name for t in c.tools])
        state = STATES.get(c.state, STATE_STOPPED).format(n=len(tools), tools=", ".join(tools) or "none",
                                                          why=c.problem)
        rows.append(ROW.format(name=c.spec.name, state=state, where=c.spec.where, origin=c.spec.origin))
    return "\n".join(rows)
