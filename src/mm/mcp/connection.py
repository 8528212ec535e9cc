"""One MCP server, run through the official `mcp` SDK (docs/mcp.md §Life of a server).

A task of its own starts the server (a program on stdio, or a streamable-HTTP endpoint),
initialises the session, lists its tools and holds the session until mm leaves or the server
goes. Tool calls come from the turn's task. The SDK is imported in a thread, the first time a
server starts: its half second of import never holds the event loop.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Callable

from mm.mcp.servers import ServerSpec

STARTING, READY, FAILED, STOPPED = "starting", "ready", "failed", "stopped"
TAIL_BYTES = 4096  # of a stdio server's stderr, kept for the line that says why it ended
LAST_LINE = 200  # characters of that line quoted
CLOSE_WAIT = 5.0  # seconds a server is given to stop when mm leaves (the SDK's close, term, kill)
EOF_WAIT = 5.0  # seconds to wait for a server's own ending (its stderr's end, its transport's error)
LIST_PAGES = 100  # tools/list pages read at most
DID_NOT_START = "{name} did not start: {why} — its tools are left out"
STOPPED_LINE = "{name} stopped: {why} — its tools are left out from now on"
SLOW = "no answer within {seconds:g} s (its startupTimeout)"
NO_CWD = "its cwd {cwd} is not a directory"
CANNOT_RUN = "cannot run {program}: {reason}"
EXITED = "it exited"
EXITED_SAYING = "it exited: {line}"
CALL_TIMED_OUT = "[error: {tool}: the MCP server {server} did not answer within {seconds:g} s (its timeout) — the call was given up]"
CALL_GONE = "[error: {tool}: the MCP server {server} is gone ({why}) — its tools cannot be used any more]"
CALL_FAILED = "[error: {tool}: the call to the MCP server {server} failed: {message}]"


class CallProblem(Exception):
    """A tool call that got no result; `str(err)` is the text for the model."""


class Connection:
    """One server: its `spec`, its `state` (STARTING, READY, FAILED: it did not start, STOPPED:
    it went, or mm left), `tools` (the SDK's Tool objects, once READY), `problem` (why it failed
    or stopped) and `settled` (set once it is no longer starting). `report(line)` says, once,
    that it did not start or that it stopped (DID_NOT_START, STOPPED_LINE)."""

    def __init__(self, spec: ServerSpec, report: Callable[[str], None]):
        self.spec, self.report = spec, report
        self.state, self.problem = STARTING, ""
        self.tools: list[Any] = []
        self.settled = asyncio.Event()
        self._left = asyncio.Event()  # set when it leaves READY
        self._session: Any = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._stderr: _Stderr | None = None

    def ensure_started(self) -> None:
        """Start the server's task, once, when an event loop runs (else the next call does)."""
        if self._task is not None:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        self._task = asyncio.ensure_future(self._run())

    async def call(self, tool: str, arguments: dict[str, Any], shown_as: str) -> Any:
        """Call the server's tool `tool` with `arguments` and return the SDK's CallToolResult,
        within the spec's `timeout`. Raises CallProblem (its text names the tool `shown_as`):
        CALL_TIMED_OUT, CALL_GONE (the server went: said once, and left out from now on),
        CALL_FAILED (an error answered, or a result the SDK could not read: the server stays)."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        names = {"tool": shown_as, "server": self.spec.name}
        if self.state != READY:
            raise CallProblem(CALL_GONE.format(why=self.problem or self.state, **names))
        try:
            return await self._session.call_tool(tool, arguments, read_timeout_seconds=self.spec.timeout)
        except MCPError as err:
            if err.code == REQUEST_TIMEOUT:
                raise CallProblem(CALL_TIMED_OUT.format(seconds=self.spec.timeout, **names)) from None
            if err.code == CONNECTION_CLOSED or self.state != READY:
                await self._gone_soon(err)
                raise CallProblem(CALL_GONE.format(why=self.problem, **names)) from None
            raise CallProblem(CALL_FAILED.format(message=err.message, **names)) from None
        except Exception as err:  # the transport failed under the call, or the SDK refused the result
            if self.state != READY:
                raise CallProblem(CALL_GONE.format(why=self.problem, **names)) from None
            raise CallProblem(CALL_FAILED.format(message=describe(err), **names)) from None

    async def close(self) -> None:
        """Stop the server (mm leaves): the SDK closes the session (a stdio server's stdin
        closed, then SIGTERM, then SIGKILL), bounded by CLOSE_WAIT; one still starting is not
        waited for (its start is cancelled, the SDK's close still runs). Nothing is reported."""
        starting = self.state == STARTING
        if self.state in (STARTING, READY):
            self.state = STOPPED
        self._stop.set()
        task = self._task
        if task is None or task.done():
            return
        if starting:
            task.cancel()
        done, _ = await asyncio.wait({task}, timeout=CLOSE_WAIT)
        if not done:
            task.cancel()

    # -- the server's task
    async def _run(self) -> None:
        try:
            await asyncio.to_thread(_import_sdk)
            await self._serve()
        except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
            raise
        except BaseException as err:  # whatever the SDK or the server did: said, and mm goes on
            if self.state == STARTING:
                self._fail(await self._ended(err))
            elif self.state == READY:
                self._gone(await self._ended(err))
        finally:
            if self.state in (STARTING, READY):
                self.state = STOPPED
            self.settled.set()
            self._left.set()
            if self._stderr is not None:
                self._stderr.close()

    async def _serve(self) -> None:
        from contextlib import AsyncExitStack

        import anyio
        from mcp import ClientSession
        from mcp_types import Implementation

        from mm import __version__

        async with AsyncExitStack() as stack:
            read, write = await (self._stdio(stack) if self.spec.url is None else self._http(stack))
            session = await stack.enter_async_context(
                ClientSession(read, write, client_info=Implementation(name="mm", version=__version__)))
            try:
                with anyio.fail_after(self.spec.startup_timeout):
                    await session.initialize()
                    self.tools = await _all_tools(session)
            except TimeoutError:
                self._fail(SLOW.format(seconds=self.spec.startup_timeout))
                return
            if self._stop.is_set():  # mm left meanwhile
                return
            self._session, self.state = session, READY
            self.settled.set()
            await self._stop.wait()

    async def _stdio(self, stack: Any) -> Any:
        """The SDK's stdio transport: the program started in the spec's cwd with mm's environment,
        the spec's `env` and the supervisor's tag over it (docs/mcp.md §Processes), its stderr
        into a pipe whose tail says why it ended."""
        from mcp.client.stdio import StdioServerParameters, stdio_client

        from mm.tools.supervised import SUPERVISOR

        spec = self.spec
        if not os.path.isdir(spec.cwd):
            raise _StartError(NO_CWD.format(cwd=spec.cwd))
        variable, value = await asyncio.to_thread(SUPERVISOR.tag, "mcp")
        env = {**os.environ, **dict(spec.env), variable: value}
        params = StdioServerParameters(command=spec.command or "", args=list(spec.args), env=env, cwd=spec.cwd)
        self._stderr = _Stderr(self._exited)
        errlog = self._stderr.writer()
        try:
            streams = await stack.enter_async_context(stdio_client(params, errlog=errlog))
        except OSError as err:
            raise _StartError(CANNOT_RUN.format(program=spec.command, reason=err.strerror or err)) from None
        finally:
            errlog.close()  # the server has its own copy: the pipe ends when it (and its children) end
        await self._stderr.watch()
        return streams

    async def _http(self, stack: Any) -> Any:
        """The SDK's streamable-HTTP transport, the spec's headers on every request."""
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        client = await stack.enter_async_context(create_mcp_http_client(headers=dict(self.spec.headers)))
        return await stack.enter_async_context(streamable_http_client(self.spec.url or "", http_client=client))

    # -- endings
    def _exited(self) -> None:
        """The stdio server's stderr ended: the server is gone (when it was serving)."""
        if self.state == READY:
            self._gone(self._exit_text())

    async def _ended(self, err: BaseException) -> str:
        """Why the server ended, for `err` raised meanwhile: the last line of its stderr when it
        exited (its stderr is waited for up to EOF_WAIT), else the error itself."""
        if self._stderr is not None and not isinstance(_leaf(err), _StartError):
            await self._stderr.ended(EOF_WAIT)
            if self._stderr.done:
                return self._exit_text()
        return self._why(err)

    async def _gone_soon(self, err: BaseException) -> None:
        """The connection closed under a call: the server's own ending (its stderr's end, the
        transport's error) says why, when it comes within EOF_WAIT; else `err` does."""
        try:
            await asyncio.wait_for(self._left.wait(), EOF_WAIT)
        except asyncio.TimeoutError:
            pass
        self._gone(self._why(err))

    def _why(self, err: BaseException) -> str:
        """`err` in one line (describe), after the url of an HTTP server."""
        text = describe(err)
        return f"{self.spec.url}: {text}" if self.spec.url is not None else text

    def _exit_text(self) -> str:
        line = self._stderr.last_line() if self._stderr is not None else ""
        return EXITED_SAYING.format(line=line) if line else EXITED

    def _fail(self, why: str) -> None:
        if self.state == STARTING:
            self.state, self.problem = FAILED, why
            self.settled.set()
            self.report(DID_NOT_START.format(name=self.spec.name, why=why))
            self._stop.set()

    def _gone(self, why: str) -> None:
        if self.state == READY:
            self.state, self.problem = STOPPED, why
            self.report(STOPPED_LINE.format(name=self.spec.name, why=why))
            self._left.set()
            self._stop.set()


class _StartError(Exception):
    """The server cannot be started; `str(err)` says why."""


class _Stderr(asyncio.Protocol):
    """A stdio server's stderr: a pipe, its last TAIL_BYTES kept, `on_end()` called at its end."""

    def __init__(self, on_end: Callable[[], None]):
        self.on_end = on_end
        self.read_fd, self.write_fd = os.pipe()
        self.tail = b""
        self.done = False
        self._ended = asyncio.Event()
        self._transport: Any = None

    def writer(self) -> Any:
        """The write end, as the file object the SDK hands to the server as its stderr."""
        fd, self.write_fd = self.write_fd, -1
        return os.fdopen(fd, "w")

    async def watch(self) -> None:
        """Read the pipe on the event loop from now on."""
        pipe = os.fdopen(self.read_fd, "rb", buffering=0)
        self.read_fd = -1
        self._transport, _ = await asyncio.get_running_loop().connect_read_pipe(lambda: self, pipe)

    async def ended(self, seconds: float) -> None:
        """Wait up to `seconds` for the end of the pipe."""
        try:
            await asyncio.wait_for(self._ended.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    def last_line(self) -> str:
        """The last line the server wrote that is not blank, cut at LAST_LINE characters."""
        lines = [ln.strip() for ln in self.tail.decode("utf-8", "replace").splitlines() if ln.strip()]
        line = lines[-1] if lines else ""
        return line if len(line) <= LAST_LINE else line[:LAST_LINE - 1] + "…"

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            if fd >= 0:
                os.close(fd)
        self.read_fd = self.write_fd = -1
        if self._transport is not None:
            self._transport.close()

    # asyncio.Protocol
    def data_received(self, data: bytes) -> None:
        self.tail = (self.tail + data)[-TAIL_BYTES:]

    def eof_received(self) -> bool:
        self._end()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._end()

    def _end(self) -> None:
        if not self.done:
            self.done = True
            self._ended.set()
            self.on_end()


async def _all_tools(session: Any) -> list[Any]:
    """Every tool the server lists, page after page (LIST_PAGES at most)."""
    from mcp_types import PaginatedRequestParams

    result = await session.list_tools()
    tools = list(result.tools)
    for _ in range(LIST_PAGES):
        if not result.next_cursor:
            break
        result = await session.list_tools(params=PaginatedRequestParams(cursor=result.next_cursor))
        tools += result.tools
    return tools


def _import_sdk() -> None:
    """Import what a server needs of the SDK (in a thread: ~0.5 s), its loggers kept quiet:
    what mm says of a server is its own one line (the SDK would print its tracebacks)."""
    import logging

    for name in ("mcp", "httpx2"):
        logger = logging.getLogger(name)
        logger.addHandler(logging.NullHandler())
        logger.propagate = False
    import mcp.client.stdio  # noqa: F401
    import mcp.client.streamable_http  # noqa: F401


def _leaf(err: BaseException) -> BaseException:
    """The first error inside exception groups (the SDK's task groups wrap what they raise)."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    return err


def describe(err: BaseException) -> str:
    """One line for an error met while starting or calling a server."""
    from mm.text import one_line

    leaf = _leaf(err)
    if isinstance(leaf, _StartError):
        return str(leaf)
    message = getattr(leaf, "message", None) or str(leaf) or type(leaf).__name__
    if isinstance(leaf, OSError) and leaf.strerror:
        message = leaf.strerror
    return one_line(str(message))
