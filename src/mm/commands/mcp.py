"""`/mcp` and the banner's line: the MCP servers of a conversation, their state and their tools
(docs/mcp.md §What mm says; docs/line-mode.md §Slash commands, docs/acp.md §Commands)."""

from __future__ import annotations

from typing import Any


def servers_text(registry: Any) -> str:
    """`/mcp` for a conversation's tools (mm.tools.registry.Registry): each server with its
    state, how it is reached and where it is configured, its tools by the names they are
    declared under once it is ready (mm.mcp.hub.listing); NO_SERVER when none is configured."""
    from mm.mcp.hub import NO_SERVER, listing

    joining = registry.joining
    if joining is None:
        return NO_SERVER
    registry.refresh()  # the servers ready by now declare their tools
    return listing(joining.connections, joining.declared())


def servers_line(registry: Any) -> str | None:
    """The banner's line of the servers and their number of tools (mm.mcp.hub.banner), or None
    when no server is configured."""
    joining = registry.joining
    if joining is None:
        return None
    from mm.mcp.hub import banner

    registry.refresh()
    return banner(joining.connections, {c: len(names) for c, names in joining.declared().items()})
