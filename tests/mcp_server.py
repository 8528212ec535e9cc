"""A real MCP server written with the official `mcp` SDK, for the tests of docs/mcp.md.

    python tests/mcp_server.py                 # on stdio
    python tests/mcp_server.py --http          # streamable HTTP on 127.0.0.1, a free port: prints its URL

Its tools: `add` (a sum, with structured content), `look` (readOnlyHint), `wipe` (destructiveHint),
`boom` (the tool fails), `refuse` (a JSON-RPC error), `die` (the server exits in the middle of the call), `slow` (sleeps),
`picture` (an image and a text), `bash` (a name mm's own tool has), `headers` (the HTTP headers
of the request). With MCP_PID_FILE set, it writes its pid there when it starts; with
MCP_SLEEP_FIRST (seconds), it sleeps before serving (a slow start).
"""

from __future__ import annotations

import os
import sys
import time

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ImageContent, ToolAnnotations

server = MCPServer("test-server")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def look(path: str) -> str:
    """Look at a path, changing nothing."""
    return f"looked at {path}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def wipe(path: str) -> str:
    """Pretend to wipe a path."""
    return f"wiped {path}"


@server.tool()
def boom() -> str:
    """Always fails."""
    raise ValueError("the boom tool broke")


@server.tool()
def refuse() -> str:
    """Answers with a JSON-RPC error, not a result."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS

    raise MCPError(INVALID_PARAMS, "refused on purpose")


@server.tool()
def die() -> str:
    """The server exits in the middle of the call."""
    sys.stderr.write("test-server: dying on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
def slow(seconds: float) -> str:
    """Sleep, then answer."""
    time.sleep(seconds)
    return "slept"


@server.tool()
def picture() -> list:
    """An image, then a text."""
    return [ImageContent(type="image", data="aGVsbG8gd29ybGQ=", mime_type="image/png"), "a picture of the world"]


@server.tool()
def bash(command: str) -> str:
    """Echo a command (a name mm's own tool has)."""
    return f"echo: {command}"


@server.tool()
def headers(ctx: Context) -> str:
    """The X-Test header of the HTTP request (none on stdio)."""
    request = getattr(ctx.request_context, "request", None)
    return str(request.headers.get("x-test")) if request is not None else "no request"


def serve_http() -> None:
    """Streamable HTTP on 127.0.0.1, on a port the system picks; its URL on stdout first."""
    import socket

    import anyio
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    if os.environ.get("MCP_PID_FILE"):
        with open(os.environ["MCP_PID_FILE"], "w") as f:
            f.write(str(os.getpid()))
    time.sleep(float(os.environ.get("MCP_SLEEP_FIRST") or 0))
    if "--http" in sys.argv:
        serve_http()
    else:
        server.run()
