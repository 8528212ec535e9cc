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
from typing import Any, BinaryIO

PARSE_ERROR = {"code": -32700, "message": "Parse error"}
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

    Lines are read by a thread (stdin may be a pipe, a file or a terminal); messages are written
    whole, in the order `send` is called. At the end of input `before_eof()` (awaitable) runs
    before the end is reported, while answers can still be written.
    """

    def __init__(self, reader: BinaryIO, out: int, log: Any = None, before_eof: Any = None):
        self._out, self._log, self._before_eof = out, log or (lambda line: None), before_eof
        self._lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._outgoing: queue.Queue[tuple[bytes, asyncio.Future]] = queue.Queue()
        self._loop = loop = asyncio.get_running_loop()
        threading.Thread(target=self._read, args=(reader, loop), daemon=True, name="acp-stdin").start()
        threading.Thread(target=self._write, daemon=True, name="acp-stdout").start()

    def _read(self, reader: BinaryIO, loop: asyncio.AbstractEventLoop) -> None:
        try:
            for line in iter(reader.readline, b""):
                loop.call_soon_threadsafe(self._lines.put_nowait, line)
        except (OSError, ValueError):
            pass
        finally:
            try:
                loop.call_soon_threadsafe(self._lines.put_nowait, None)
            except RuntimeError:  # the loop is closed: the process is ending
                pass

    async def receive(self) -> dict[str, Any] | None:
        """The next JSON-RPC object, or None at the end of input; bad lines are answered here."""
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
            except ValueError:
                self._log("[acp] a line that is not JSON was answered with a parse error")
                await self.send({"jsonrpc": "2.0", "id": None, "error": PARSE_ERROR})
                continue
            if isinstance(message, dict) and ("method" in message or "id" in message):
                return message
            self._log("[acp] a message that is not a JSON-RPC object was answered with an invalid request")
            await self.send({"jsonrpc": "2.0", "id": None, "error": INVALID_REQUEST})

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as one line, in the order of the calls (by one writer thread: a slow
        reader never blocks the event loop). Raises OSError when stdout is closed."""
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
