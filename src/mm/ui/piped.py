"""The prompt of `mm -p`: its text, and what is piped to mm (docs/scripting.md §Piped input).

`cat build.log | mm -p "explain the failure"` sends the prompt, then the input in a fenced
block; `mm -p -` (or `-p` with no text) takes the whole prompt from standard input. Standard
input is read only when it is a pipe, a file or a socket — never a terminal (nothing is waited
for there) nor a device such as /dev/null — to its end, at most PROMPT_BYTES: a larger prompt is
refused, not cut. When nothing has come after WAIT_NOTICE seconds (a caller that left its stdin
open), WAITING says so on stderr, once, and mm goes on waiting: input is never dropped.
"""

from __future__ import annotations

import os
import re
import select
import stat
from typing import Callable

from mm.fs import CHUNK, size_text

PROMPT_BYTES = 1 << 20  # the largest prompt `-p` takes, piped input included (docs/scripting.md)
WAIT_NOTICE = 3.0  # seconds without a byte before WAITING is said
STDIN = "-"  # `mm -p -`: the prompt is standard input
EMPTY_PROMPT = 'the prompt is empty: mm -p "what to do" (or pipe it: echo "what to do" | mm -p -)'
TOO_LARGE = ("the prompt is larger than {limit} with its piped input — mm -p takes at most {limit}: pipe the part "
             "that matters (tail -n 200 build.log | mm -p …), or name the file in the prompt")
BINARY = ("the piped input is binary (it holds NUL bytes) — mm -p takes text: pipe text, or name the file in "
          "the prompt")
WAITING = ("mm: waiting for the piped input to end (standard input is open and nothing came for {seconds:g} s) "
           "— run mm -p … < /dev/null when there is none")


class PromptError(ValueError):
    """A prompt `-p` cannot take; `str(err)` is the one-line reason (a usage error, exit 2)."""


def read_piped(fd: int = 0, notice: Callable[[str], None] | None = None, limit: int = PROMPT_BYTES,
               wait: float = WAIT_NOTICE) -> str:
    """What is piped to standard input (`fd`), as text ("" when it is a terminal, a device or
    closed). Bytes that are not UTF-8 become U+FFFD. `notice(WAITING)` is called once when
    nothing came for `wait` seconds. Raises PromptError (more than `limit` bytes, NUL bytes)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:  # no standard input at all
        return ""
    if os.isatty(fd) or not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode)):
        return ""
    data = _read_to_end(fd, limit, notice, wait)
    if len(data) > limit:
        raise PromptError(TOO_LARGE.format(limit=size_text(limit)))
    if b"\0" in data:
        raise PromptError(BINARY)
    return data.decode("utf-8", errors="replace")


def _read_to_end(fd: int, limit: int, notice: Callable[[str], None] | None, wait: float) -> bytes:
    """At most `limit` + 1 bytes of `fd`, to its end; works on a descriptor left non-blocking."""
    data = bytearray()
    while len(data) <= limit:
        quiet = notice is not None and not data
        ready, _, _ = select.select([fd], [], [], wait if quiet else None)
        if not ready:
            notice(WAITING.format(seconds=wait))
            notice = None
            continue
        try:
            chunk = os.read(fd, min(CHUNK, limit + 1 - len(data)))
        except BlockingIOError:
            continue
        if not chunk:
            break
        data += chunk
    return bytes(data)


def prompt_with_input(prompt: str | None, piped: str, limit: int = PROMPT_BYTES) -> str:
    """The prompt `-p` sends: `prompt`, then `piped` in a fenced block; `piped` alone when the
    prompt is None, empty or STDIN. Raises PromptError: nothing to send (EMPTY_PROMPT), or more
    than `limit` bytes (TOO_LARGE)."""
    asked = "" if prompt is None or prompt.strip() in ("", STDIN) else prompt
    if not piped.strip():
        text = asked
    elif not asked:
        text = piped
    else:
        text = f"{asked}\n\n{fenced(piped)}"
    if not text.strip():
        raise PromptError(EMPTY_PROMPT)
    if len(text.encode("utf-8", errors="replace")) > limit:
        raise PromptError(TOO_LARGE.format(limit=size_text(limit)))
    return text


def fenced(text: str) -> str:
    """`text` in a Markdown fenced block whose fence is longer than any run of backticks in it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}{'' if text.endswith(chr(10)) else chr(10)}{fence}"
