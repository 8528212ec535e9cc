"""The ACP SDK's log records (it logs on the root logger, tracebacks included) as one line each.

In `mm -acp`, stderr is the log: a record becomes `[acp] <message>: <error>` there (the first
three of a kind, then one per thousand: a client flooding bad notifications must not flood it). Anywhere
else (line mode, `-p`, `--ask` talking to an asked agent) stderr is the user's terminal, and the
records are dropped: what went wrong reaches the user as the tool's own error text.
"""

from __future__ import annotations

import logging
import sys

_INSTALLED: list[logging.Handler] = []
SAID_EACH = 3  # records of one kind said one by one; then one line per thousand
LINE_LIMIT = 300  # characters of one record's line


class _OneLine(logging.Handler):
    def __init__(self, to_stderr: bool):
        super().__init__(logging.WARNING)
        self.to_stderr = to_stderr
        self.seen: dict[str, int] = {}  # records by their message template (a flood of one kind)

    def emit(self, record: logging.LogRecord) -> None:
        if not self.to_stderr:
            return
        n = self.seen[str(record.msg)] = self.seen.get(str(record.msg), 0) + 1
        if n > SAID_EACH and n % 1000:
            return
        try:
            line = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                error = record.exc_info[1]
                line += f": {type(error).__name__}: {error}"
            more = f" ({n} such records so far)" if n > SAID_EACH else ""
            print(f"[acp] {' '.join(line.split())[:LINE_LIMIT]}{more}", file=sys.stderr, flush=True)
        except Exception:  # a log line must never fail the agent
            pass


def route_sdk_logs(to_stderr: bool) -> None:
    """Send the root logger's records to one-line stderr lines (`to_stderr`) or nowhere; once."""
    if _INSTALLED:
        _INSTALLED[0].to_stderr = _INSTALLED[0].to_stderr or to_stderr  # type: ignore[attr-defined]
        return
    handler = _OneLine(to_stderr)
    logging.getLogger().addHandler(handler)
    _INSTALLED.append(handler)
