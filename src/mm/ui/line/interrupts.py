"""What stops line mode's work: Esc and Ctrl-C cancel what runs (a turn, a slash command that
waits, `/ask`); SIGTERM and SIGHUP (the terminal closed) cancel it too, then line mode leaves
with status 128 + the signal's number, at once when it was idle at the prompt (as one-shot mode
does, mm.run; docs/line-mode.md §Signals).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import Any, Awaitable, Callable, Iterator

LEAVING = {signal.SIGTERM, signal.SIGHUP}


class Leave(Exception):
    """SIGTERM or SIGHUP came while line mode waited at its prompt: raised by `Interrupts.idle`."""


class Interrupts:
    """The signal handlers and the Esc key reader of one line-mode run.

    `terminal`: the prompt's input (prompt_toolkit), read in raw mode while work runs so that Esc
    and Ctrl-C arrive as keys; `on_hangup()`: called once on SIGHUP (the terminal is gone: the
    console stops writing). `left_by` is the leaving signal's number once one came; `stopped` is
    set when the work running now was cancelled (a question at the prompt gives up on it).
    Use as a context manager around the REPL: SIGTERM and SIGHUP are handled inside it.
    """

    def __init__(self, terminal: Any, on_hangup: Callable[[], None] | None = None):
        self.terminal = terminal
        self.on_hangup = on_hangup
        self.left_by: int | None = None
        self.stopped = asyncio.Event()
        self._cancel: Callable[[], None] | None = None

    @property
    def exit_status(self) -> int:
        """128 + the leaving signal's number (143 for SIGTERM, 129 for SIGHUP); 0 when none came."""
        return 128 + self.left_by if self.left_by else 0

    def __enter__(self) -> "Interrupts":
        loop = asyncio.get_running_loop()
        for sig in LEAVING:
            loop.add_signal_handler(sig, self._leave, sig)
        return self

    def __exit__(self, *exc: Any) -> None:
        loop = asyncio.get_running_loop()
        for sig in LEAVING:
            loop.remove_signal_handler(sig)

    def _leave(self, sig: int) -> None:
        first = self.left_by is None
        self.left_by = self.left_by or sig
        if first and sig == signal.SIGHUP and self.on_hangup is not None:
            self.on_hangup()
        if self._cancel is not None:
            self._cancel()

    @contextlib.contextmanager
    def running(self, cancel: Callable[[], None]) -> Iterator[None]:
        """While the block runs, Ctrl-C (SIGINT, or the key on a terminal in raw mode), Esc,
        SIGTERM and SIGHUP call `cancel()` (and set `stopped`). Raises nothing of its own."""
        self.stopped = asyncio.Event()

        def stop() -> None:
            self.stopped.set()
            cancel()

        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, stop)
        self._cancel = stop
        try:
            if self.left_by is not None:  # a signal came between two pieces of work
                stop()
            with escape_cancels(self.terminal, stop):
                yield
        finally:
            self._cancel = None
            loop.remove_signal_handler(signal.SIGINT)

    async def idle(self, waiting: Awaitable[Any]) -> Any:
        """Await `waiting` (the prompt) and return what it gives; raises Leave, `waiting` being
        cancelled, when SIGTERM or SIGHUP comes first (or came already). Its own exceptions pass,
        KeyboardInterrupt (Ctrl-C at the prompt) included."""
        task = asyncio.ensure_future(_keyboard_interrupt_kept(waiting))
        if self.left_by is not None:
            task.cancel()
        self._cancel = task.cancel
        try:
            return await task
        except _CtrlC:
            raise KeyboardInterrupt() from None
        except asyncio.CancelledError:
            if self.left_by is None:
                raise
            raise Leave() from None
        finally:
            self._cancel = None


class _CtrlC(Exception):
    """KeyboardInterrupt, carried out of a task as an ordinary exception."""


async def _keyboard_interrupt_kept(waiting: Awaitable[Any]) -> Any:
    """`waiting`'s result; its KeyboardInterrupt as _CtrlC: a task whose coroutine lets a
    KeyboardInterrupt out re-raises it out of the event loop itself (asyncio.Task), which would
    end mm instead of clearing the line."""
    try:
        return await waiting
    except KeyboardInterrupt:
        raise _CtrlC() from None


@contextlib.contextmanager
def escape_cancels(terminal: Any, cancel: Callable[[], None]) -> Iterator[None]:
    """While a turn runs, Esc (or Ctrl-C arriving as a key) typed at the terminal cancels it.

    The terminal's keys are read in raw mode through prompt_toolkit's input; a prompt opened
    during the turn (🔐, ask_user) reads them itself and gives them back afterwards. Without a
    terminal (a pipe) nothing is read.
    """
    from prompt_toolkit.keys import Keys

    def keys_ready() -> None:
        keys = terminal.read_keys() + terminal.flush_keys()
        if any(k.key in (Keys.Escape, Keys.ControlC) for k in keys):
            cancel()

    if not hasattr(terminal, "fileno") or not _is_terminal(terminal):
        yield
        return
    with terminal.raw_mode(), terminal.attach(keys_ready):
        yield


def _is_terminal(terminal: Any) -> bool:
    try:
        return os.isatty(terminal.fileno())
    except (OSError, ValueError, NotImplementedError):
        return False
