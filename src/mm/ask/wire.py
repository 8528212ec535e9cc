"""The asked agent's stdio as the SDK's Transport (acp._transport.Transport), with limits.

An asked agent may be any program: one that writes an endless line, floods its stdout with
text, or echoes mm's own requests back is not an ACP agent, and must neither exhaust memory nor
starve the event loop. A line over LINE_LIMIT, BAD_LINES lines in a row that are not JSON-RPC,
mm's own `initialize` coming back, or text first and then NOISE_GRACE seconds of nothing end
the connection, and `broken` says why in one line.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

LINE_LIMIT = 16 * 1024 * 1024  # bytes of one JSON-RPC line from the agent
BAD_LINES = 20  # lines in a row that are not JSON-RPC before the agent is given up
NOISE_GRACE = 5.0  # seconds an agent that wrote text first has to start speaking JSON-RPC
TOO_LONG = "it is not an ACP agent: it wrote a line of more than {mib} MiB"
NOT_JSON_RPC = "it is not an ACP agent: its output is not JSON-RPC ({line!r} …)"
ECHO = "it is not an ACP agent: it sent mm's own initialize request back"


class ChildTransport:
    """JSON-RPC messages over the child's stdout (`reader`, created with limit LINE_LIMIT) and
    stdin (`writer`)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer
        self.broken: str | None = None
        self.messages = 0  # JSON-RPC messages received
        self.noise: str | None = None  # the first line that was not JSON-RPC

    async def receive(self) -> dict[str, Any] | None:
        """The next message, or None at the end of the agent's output or when it broke a limit."""
        bad = 0
        while True:
            try:
                line = await self._next_line()
            except asyncio.TimeoutError:  # it wrote text, then nothing that is JSON-RPC
                self.broken = NOT_JSON_RPC.format(line=self.noise)
                return None
            except asyncio.IncompleteReadError as end:
                line = end.partial
                if not line.strip():
                    return None
            except asyncio.LimitOverrunError:
                self.broken = TOO_LONG.format(mib=LINE_LIMIT // (1024 * 1024))
                return None
            if not line.strip():
                continue
            message = _message(line)
            if message is None:
                bad += 1
                self.noise = self.noise or line.decode("utf-8", "replace").strip()[:60]
                if bad >= BAD_LINES:
                    self.broken = NOT_JSON_RPC.format(line=self.noise)
                    return None
                continue
            if message.get("method") == "initialize":
                self.broken = ECHO
                return None
            self.messages += 1
            return message

    async def _next_line(self) -> bytes:
        """The next line; once the agent wrote a line that is not JSON-RPC before any message, the
        next must come within NOISE_GRACE seconds (raises asyncio.TimeoutError)."""
        if self.noise is not None and not self.messages:
            return await asyncio.wait_for(self.reader.readuntil(b"\n"), NOISE_GRACE)
        return await self.reader.readuntil(b"\n")

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as one line; raises ConnectionError when the agent's stdin is closed."""
        data = (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8", "replace")
        try:
            self.writer.write(data)
            await self.writer.drain()
        except (OSError, RuntimeError) as err:
            raise ConnectionError(str(err) or "the agent's input is closed") from None

    async def close(self) -> None:
        """Close the agent's stdin (an ACP agent ends at the end of its input)."""
        try:
            self.writer.close()
        except (OSError, RuntimeError):
            pass


def _message(line: bytes) -> dict[str, Any] | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) and ("method" in message or "id" in message) else None
