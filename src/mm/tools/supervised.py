"""Commands started through mm's command supervisor (mm.tools.supervisor), the client side.

One supervisor per mm process, started at the first command and ended with mm: when mm exits
or dies, the supervisor kills every process the commands left (docs/tools-bash.md §No command
outlives mm). Messages go over a stream socket, one JSON object per line; a reader thread hands
the supervisor's answers to the event loop that waits for them, whichever loop that is.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import errno
import itertools
import json
import os
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

SCRIPT = Path(__file__).with_name("supervisor.py")
EXIT_WAIT = 5.0  # seconds mm waits at exit for the supervisor to have killed what is left
ARGUMENT_REASON = "the command holds a null character or an unpaired surrogate, which no program can be given"
SUPERVISOR_LOST = "mm's command supervisor stopped"


class WorkingDirectoryGone(FileNotFoundError):
    """The working directory of a command does not exist (any more)."""


class SupervisorLost(OSError):
    """The supervisor ended while a command was starting or running."""


@dataclass
class Command:
    """A command sent to the supervisor. `exited` gives its exit code (negative: killed by that
    signal), or raises the OSError that kept it from starting (WorkingDirectoryGone, the exec's
    error: a FileNotFoundError when the program is not found), or SupervisorLost."""

    id: int
    owner: "Supervisor"
    argv: list[str]
    cwd: Path
    exited: asyncio.Future = field(repr=False)

    def kill(self) -> None:
        """Kill the command's session, process tree and every process carrying its tag."""
        self.owner.send({"op": "kill", "id": self.id})

    def release(self) -> None:
        """The call has returned: the supervisor keeps the output file (emptied) while a job
        holds it, and closes it once none does."""
        self.owner.forget(self.id)
        self.owner.send({"op": "done", "id": self.id})


class Supervisor:
    """The connection to this process's supervisor; started on first use, again if it died."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._process: subprocess.Popen | None = None
        self._ids = itertools.count(1)
        self._waiting: dict[int, tuple[asyncio.AbstractEventLoop, Command]] = {}
        self._exit_registered = False

    def start(self, argv: list[str], cwd: Path, env: dict[str, str], output: int | tuple[int, int, int],
              errors: int | None = None) -> Command:
        """Have `argv` started in `cwd` with the environment `env`, stdout and stderr into the
        file open as `output` — stderr into `errors` when given (stdin from /dev/null, a new
        session) — or, `output` being three descriptors, with them as its stdin, stdout and stderr
        (the ends of pipes a language server talks over; the caller closes its copies once this
        returns). Returns at once (a failure to start comes through `Command.exited`). Call from a
        running event loop. Raises SupervisorLost when the supervisor cannot be reached, OSError
        when it cannot be started.
        """
        loop = asyncio.get_running_loop()
        cid = next(self._ids)
        command = Command(cid, self, argv, cwd, loop.create_future())
        fds = list(output) if isinstance(output, tuple) else [output] if errors is None else [output, errors]
        message = {"op": "run", "id": cid, "argv": argv, "cwd": str(cwd), "env": env, "streams": len(fds)}
        with self._lock:
            sock = self._connect()
            self._waiting[cid] = (loop, command)
            data = _line(message)
            try:
                sent = socket.send_fds(sock, [data], fds)
                sock.sendall(data[sent:])
            except OSError:
                self._waiting.pop(cid, None)
                raise SupervisorLost(errno.EPIPE, SUPERVISOR_LOST) from None
        return command

    def tag(self, label: str) -> tuple[str, str]:
        """The environment variable, and its value, that make a process mm starts itself (an MCP
        server, docs/mcp.md §Processes) one the supervisor kills when mm ends however it ends —
        it, and every process it starts that keeps its environment (mm.tools.supervisor:
        Supervisor.shutdown kills what carries a tag of its own). `label` (letters, digits) tells
        such tags from the commands' numbers. Starts the supervisor when none runs; raises OSError
        when it cannot be started."""
        from mm.tools.supervisor import TAG

        with self._lock:
            self._connect()
            assert self._process is not None
            return TAG, f"{self._process.pid}-{label}"

    def send(self, message: dict) -> None:
        """Send one message; a supervisor already gone is ignored (it killed everything)."""
        with self._lock:
            if self._sock is None:
                return
            with contextlib.suppress(OSError):
                self._sock.sendall(_line(message))

    def forget(self, cid: int) -> None:
        with self._lock:
            self._waiting.pop(cid, None)

    def close(self, wait: float = EXIT_WAIT) -> None:
        """End the supervisor (it kills what the commands left) and wait for it up to `wait` s."""
        with self._lock:
            sock, process = self._sock, self._process
            self._sock = self._process = None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        if process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(wait)

    # -- inside
    def _connect(self) -> socket.socket:
        """The socket to a running supervisor, started now when there is none (lock held)."""
        if self._sock is not None:
            return self._sock
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", str(SCRIPT), str(theirs.fileno())], pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                cwd="/", start_new_session=True)  # "/": it holds no folder busy; its own session: no Ctrl-C
        except OSError:
            ours.close()
            raise
        finally:
            theirs.close()
        self._sock = ours
        threading.Thread(target=self._read, args=(ours, self._process), daemon=True,
                         name="mm-supervisor-reader").start()
        if not self._exit_registered:
            atexit.register(self.close)
            self._exit_registered = True
        return ours

    def _read(self, sock: socket.socket, process: subprocess.Popen) -> None:
        """Hand each answer of the supervisor to the loop waiting for it; at its end, fail what
        still waits."""
        buffer = b""
        while True:
            try:
                data = sock.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                break
            buffer += data
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                self._deliver(json.loads(line))
        with self._lock:
            lost = list(self._waiting.values()) if self._sock is sock else []
            if self._sock is sock:
                self._sock = self._process = None
                self._waiting.clear()
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            process.wait(EXIT_WAIT)
        for loop, command in lost:
            _settle(loop, command.exited, exception=SupervisorLost(errno.ECHILD, SUPERVISOR_LOST))

    def _deliver(self, message: dict) -> None:
        with self._lock:
            waiting = self._waiting.get(message.get("id"))
        if waiting is None:
            return
        loop, command = waiting
        if message["op"] == "failed":
            _settle(loop, command.exited, exception=_start_error(message, command.argv, command.cwd))
        elif message["op"] == "exit":
            _settle(loop, command.exited, result=message["code"])


def _settle(loop: asyncio.AbstractEventLoop, future: asyncio.Future, result=None, exception=None) -> None:
    """Set `future`'s result or exception from the reader thread (a closed loop is ignored)."""

    def settle() -> None:
        if not future.done():
            if exception is not None:
                future.set_exception(exception)
            else:
                future.set_result(result)

    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(settle)


def _line(message: dict) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _start_error(answer: dict, argv: list[str], cwd: Path) -> OSError:
    code = answer.get("errno") or errno.EINVAL
    if answer.get("step") == "cwd":
        return WorkingDirectoryGone(code, os.strerror(code), str(cwd))
    if answer.get("step") == "argument":
        return OSError(errno.EINVAL, ARGUMENT_REASON)
    return OSError(code, os.strerror(code), argv[0])


SUPERVISOR = Supervisor()  # this process's
