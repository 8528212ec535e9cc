"""Stopping a conversion that runs in a thread (issue 10 §9: a cancelled turn ends promptly).

A thread cannot be killed: the caller hands html_to_markdown an event (anything with `is_set()`,
e.g. a threading.Event) that it sets when the conversion is no longer wanted, and the
conversion's own loops look at it every CHECK_EVERY steps. lexbor's parse and html-to-markdown's
convert cannot be interrupted, but they are linear once the nesting is capped (depth.py).
"""

from __future__ import annotations

from typing import Any

CHECK_EVERY = 4096  # tags scanned or nodes cleaned between two looks at the event


class ConversionCancelled(Exception):
    """The caller's `cancelled` event was set during the conversion."""


def check(cancelled: Any) -> None:
    """Raise ConversionCancelled when `cancelled` (an object with `is_set()`, or None) is set."""
    if cancelled is not None and cancelled.is_set():
        raise ConversionCancelled
