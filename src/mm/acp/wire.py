"""JSON-RPC on stdio, one message per line (mm-acp.md §Transport).

stdout carries JSON-RPC only: at start the real stdout is kept on a private descriptor for the
messages and descriptor 1 is pointed at stderr, so a stray `print`, a library's warning or a
child process that inherits stdout can never corrupt the stream. A line that is not JSON gets
a parse error (-32700, id null) and one that is not a JSON-RPC object an invalid request
(-32600); the agent keeps serving (case acp-10).
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import sys
import threading
from typing import Any

PARSE_ERROR = {"code": -32700, "message": "Parse error"}
READ_SIZE = 1 << 16  # bytes read from stdin at a time
BAD_LOGGED = 3  # bad messages said one by one on stderr; then one line per thousand
INVALID_REQUEST = {"code": -32600, "message": "Invalid Request"}


def claim_stdout() -> int:
    """Keep the real stdout on a new descriptor (returned) and send descriptor 1 to stderr."""
    sys.stdout.flush()
    wire = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return wire


class StdioTransport:
    """The SDK's Transport protocol (acp._transport.Transport) over `reader` and descriptor `out`.

    Lines are read from descriptor `reader` by a thread (stdin may be a pipe, a file or a
    terminal), with os.read rather than a buffered file: a thread blocked in a buffered read holds
    its lock, and the interpreter aborts at exit when it cannot take it (a SIGTERM while the
    editor is idle). Messages are written whole, in the order `send` is called. At the end of input `before_eof()` (awaitable) runs
    before the end is reported, while answers can still be written.
    """

    def __init__(self, reader: int, out: int, log: Any = None, before_eof: Any = None):
        self._out, self._log, self._before_eof = out, log or (lambda line: None), before_eof
        self._bad_count = 0
        self._unread: list[dict[str, Any]] = []
        self._lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._outgoing: queue.Queue[tuple[bytes, asyncio.Future]] = queue.Queue()
        self._loop = loop = asyncio.get_running_loop()
        threading.Thread(target=self._read, args=(reader, loop), daemon=True, name="acp-stdin").start()
        threading.Thread(target=self._write, daemon=True, name="acp-stdout").start()

    def _read(self, reader: int, loop: asyncio.AbstractEventLoop) -> None:
        pending = b""
        try:
            while True:
                chunk = os.read(reader, READ_SIZE)
                if not chunk:
                    break
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    loop.call_soon_threadsafe(self._lines.put_nowait, line + b"\n")
            if pending:
                loop.call_soon_threadsafe(self._lines.put_nowait, pending)
        except (OSError, ValueError, RuntimeError):  # stdin closed, or the loop closed at exit
            pass
        finally:
            try:
                loop.call_soon_threadsafe(self._lines.put_nowait, None)
            except RuntimeError:  # the loop is closed: the process is ending
                pass

    def unread(self, message: dict[str, Any]) -> None:
        """Make `message` the next one `receive` returns (read before the SDK took over, mm.acp.early)."""
        self._unread.append(message)

    async def receive(self) -> dict[str, Any] | None:
        """The next JSON-RPC object, or None at the end of input; bad lines are answered here."""
        if self._unread:
            return self._unread.pop()
        while True:
            line = await self._lines.get()
            if line is None:
                if self._before_eof is not None:
                    await self._before_eof()
                return None
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):  # RecursionError: brackets nested too deep to read
                self._bad("a line that is not JSON was answered with a parse error")
                await self.send({"jsonrpc": "2.0", "id": None, "error": PARSE_ERROR})
                continue
            problem = _invalid(message)
            if problem is None:
                return message
            self._bad(f"{problem}: answered with an invalid request")
            ident = message.get("id") if isinstance(message, dict) and _valid_id(message.get("id")) else None
            await self.send({"jsonrpc": "2.0", "id": ident, "error": INVALID_REQUEST})

    def _bad(self, what: str) -> None:
        """Say on stderr that a bad message came: the first ones, then one line per thousand."""
        self._bad_count += 1
        n = self._bad_count
        if n <= BAD_LOGGED or n % 1000 == 0:
            more = f" ({n} bad messages so far)" if n > BAD_LOGGED else ""
            self._log(f"[acp] {what}{more}")

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as one line, in the order of the calls (by one writer thread: a slow
        reader never blocks the event loop). Raises OSError when stdout is closed."""
        message = _one_line_errors(message)
        data = (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8", "replace")
        done = self._loop.create_future()
        self._outgoing.put((data, done))
        await done

    def _write(self) -> None:
        while True:
            data, done = self._outgoing.get()
            error: OSError | None = None
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(self._out, view):]
            except OSError as err:
                error = err
            try:
                self._loop.call_soon_threadsafe(_settle, done, error)
            except RuntimeError:  # the loop is closed: the process is ending
                return

    async def close(self) -> None:
        """Nothing to release: the descriptors end with the process."""


def _settle(done: asyncio.Future, error: OSError | None) -> None:
    if done.done():
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)


def _valid_id(ident: object) -> bool:
    """A JSON-RPC id: a string, a number or null."""
    return ident is None or (isinstance(ident, (str, int, float)) and not isinstance(ident, bool))


def _invalid(message: object) -> str | None:
    """Why `message` is not a JSON-RPC request, notification or response (None: it is one)."""
    if not isinstance(message, dict) or not ("method" in message or "id" in message):
        return "a message that is not a JSON-RPC object"
    if "method" in message and not isinstance(message["method"], str):
        return "a method that is not a string"
    if "id" in message and not _valid_id(message["id"]):
        return "an id that is neither a string, a number nor null"
    return None


def _one_line_errors(message: dict) -> dict:
    """An `invalid params` answer's validation errors (the SDK's pydantic list) as one line:
    `prompt.0.text: Field required; …`."""
    error = message.get("error")
    data = error.get("data") if isinstance(error, dict) else None
    if not (isinstance(data, dict) and isinstance(data.get("errors"), list)):
        return message
    rest = {k: v for k, v in data.items() if k != "errors"}
    return {**message, "error": {**error, "data": {**rest, "error": errors_line(data["errors"]) or "invalid params"}}}


def errors_line(errors: list) -> str:
    """The first five of pydantic's validation errors (`ValidationError.errors()`) as one line:
    `prompt.0.text: Field required; …` ("" for none)."""
    parts = []
    for item in errors[:5]:
        if isinstance(item, dict):
            where = ".".join(str(p) for p in item.get("loc", ()))
            parts.append(f"{where}: {item.get('msg', 'invalid')}" if where else str(item.get("msg", "invalid")))
    return "; ".join(parts)
