"""The `lsp` tool: code navigation and refactoring through language servers (mm-tools.md §lsp;
docs/lsp.md).

Light at start-up: declaring the tool only looks the servers' commands up on the PATH
(mm.tools.lsp.servers); the LSP client (pygls, lsprotocol) is imported on the first call.

Modules: `servers` (the configured servers, the PATH check), `tool` (the tool the model calls,
its texts), `symbols` (symbol cleaning, occurrences, UTF-16 columns), `client` (one running
server: process, pygls client, lifecycle, file sync, diagnostics), `actions` (the six actions),
`answers` (the text of each answer), `edits` (a rename's WorkspaceEdit applied on disk).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping


def lsp_tools(config: Any, env: Mapping[str, str], cwd: Path | None, say: Callable[[str], None]) -> list[Any]:
    """[the lsp tool] when `config.lsp.servers` (mm.config.schema.LspConfig) names a server whose
    command is on `env`'s PATH; `say(line)` is told each server skipped (mm-tools.md §lsp; when
    none is left the banner says so: mm.tools.lsp.servers.banner_note). `cwd`: the project root
    (None: the process directory)."""
    from mm.tools.lsp.servers import found_servers

    servers, skipped = found_servers(config.lsp.servers, env)
    for line in skipped:
        say(line)
    if not servers:
        return []
    from mm.tools.lsp.tool import Lsp

    return [Lsp(servers, (cwd or Path.cwd()).resolve(), dict(env))]
