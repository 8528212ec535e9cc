"""Waiting for work that the turn's cancellation must be able to stop at once."""

from __future__ import annotations

import asyncio
from contextlib import suppress
from typing import Any, Awaitable


class Cancelled(Exception):
    """The turn was cancelled before the work finished."""


async def unless_cancelled(work: Awaitable[Any], cancelled: asyncio.Event) -> Any:
    """Await `work` and return its result, unless `cancelled` is set first: then `work` is
    cancelled and Cancelled is raised. The work's own exceptions pass through."""
    task = asyncio.ensure_future(work)
    if cancelled.is_set():
        task.cancel()
    stop = asyncio.ensure_future(cancelled.wait())
    try:
        await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop.cancel()
    if not task.done() or task.cancelled():
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task
        raise Cancelled
    return task.result()
