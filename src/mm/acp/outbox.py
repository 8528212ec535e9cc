"""Notifications sent in the order the engine emitted them (the engine's `emit` is synchronous)."""

from __future__ import annotations

import asyncio
import itertools
import re
from collections import deque
from typing import Any, Awaitable, Callable


class Outbox:
    """A queue of items sent one at a time, in order, by `send(item)` (awaitable).

    `put` never blocks; `flush` waits until everything put so far was sent. A failed send is
    reported to `on_error(exc)` and the next items still go.
    """

    def __init__(self, send: Callable[[Any], Awaitable[None]], on_error: Callable[[Exception], None]):
        self._send, self._on_error = send, on_error
        self._queue: deque[Any] = deque()
        self._task: asyncio.Task | None = None

    def put(self, item: Any) -> None:
        """Queue `item`; the drain starts when none is running."""
        self._queue.append(item)
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._drain())

    async def flush(self) -> None:
        """Wait until every queued item was sent."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    async def _drain(self) -> None:
        while self._queue:
            item = self._queue.popleft()
            try:
                await self._send(item)
            except Exception as err:  # a closed pipe: the turn goes on, the log says why
                self._on_error(err)


class CallIds:
    """ACP tool call ids `call_1`, `call_2`, … numbered per process and never reset
    (mm-acp.md §Tool call identifiers). Ids replayed by `session/load` are skipped."""

    def __init__(self) -> None:
        self._next = itertools.count(1)
        self._floor = 0

    def next(self) -> str:
        """The next id."""
        while True:
            n = next(self._next)
            if n > self._floor:
                return f"call_{n}"

    def skip_past(self, ids: list[str]) -> None:
        """Never give out an id of `ids` (the `call_N` refs of a replayed session)."""
        for ref in ids:
            match = re.fullmatch(r"call_(\d+)", ref)
            if match:
                self._floor = max(self._floor, int(match.group(1)))
