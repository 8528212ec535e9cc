"""An asked agent as a child process, driven as an ACP client (mm-tools.md §ask_agent; mm-acp.md,
"When mm is the client").

The child is started on the first question and kept; each question gets a fresh session. Its
updates, permission requests and forms go to the `Sink` of the question in flight. Every event
of the child feeds the watchdog: silence longer than `watchdog` seconds stops the question.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Protocol

from mm import __version__
from mm.ask.wire import LINE_LIMIT, NOT_JSON_RPC, ChildTransport
from mm.text import one_line

RELAYED_META = "mm.askedAgent"  # mm.acp.frontend marks the chunks its own asked agents wrote
START_SECONDS = 60.0  # the least time the agent has to start and open a session
STOP_SECONDS = 1.0  # the child's time to end at each step of close()
HEARTBEAT = 1.0  # seconds between the watchdog's beats while the user is being asked
STDERR_LINES = 20
ROUTINE = ("mm v", "[acp] initialize", "[acp] session", "[acp] turn done")  # an asked mm's ordinary log lines  # the child's last stderr lines kept for error messages
EXITED = "the agent exited (status {status}){why}"
SILENT_PREFIX = "no sign of life"
SILENT = SILENT_PREFIX + " for {seconds:.0f}s (watchdogTimeout)"
NOT_READY = "it did not start and open a session within {seconds:.0f}s"
NOT_ACP_ANSWER = "it is not an ACP agent: its answer does not fit the protocol ({faults})"
KILLED = "the agent was killed by signal {signal}{why}"
CANCELLED = "cancelled"
NOT_STARTED = "cannot start {argv0}: {error}"


class Sink(Protocol):
    """Where a question's events go (mm.ask.relay.Relay)."""

    def update(self, update: Any) -> None: ...

    async def permission(self, tool_call: Any, options: list) -> str | None: ...

    async def elicit(self, message: str, mode: Any) -> dict[str, Any]: ...


@dataclass
class Answer:
    """What a question got: the text answered, and why it stopped early (None: it finished)."""

    text: str
    stopped: str | None = None
    failed: str | None = None  # nothing could be asked: the reason


class ChildAgent:
    """The child process of one asked agent, and the ACP connection to it."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], cwd: Path):
        self.name, self.argv, self.env, self.cwd = name, argv, env, cwd
        self.process: asyncio.subprocess.Process | None = None
        self.conn: Any = None
        self.transport: ChildTransport | None = None
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._sink: Sink | None = None
        self._session: str | None = None
        self._texts: list[str] = []
        self._alive = asyncio.Event()  # set at every event of the child (the watchdog)
        self._beat = HEARTBEAT  # seconds between beats while the user is asked (below the watchdog's)
        self._start_lock = asyncio.Lock()

    async def ask(self, prompt: str, cwd: Path, sink: Sink, watchdog: float, cancelled: asyncio.Event) -> Answer:
        """Put `prompt` to the agent in a fresh session in `cwd`; never raises for the agent's faults."""
        start = max(watchdog, START_SECONDS)  # starting a program is not a silence of the agent
        try:
            await self._within(self._start(), start, cancelled, NOT_READY)
            session = await self._within(self.conn.new_session(cwd=str(cwd), mcp_servers=[]), start, cancelled,
                                         NOT_READY)
        except _Stop as stop:
            noise = self._noise()
            await self.close()  # it could not even start: the next question starts it afresh
            reason = NOT_JSON_RPC.format(line=noise) if noise and stop.reason != CANCELLED else stop.reason
            return Answer("", failed=reason)
        except Exception as err:
            why = await self._why(err)
            await self.close()
            return Answer("", failed=why)
        self._sink, self._session, self._texts = sink, session.session_id, []
        self._beat = min(HEARTBEAT, watchdog / 4)
        try:
            response = await self._within(self._prompt(session.session_id, prompt), watchdog, cancelled)
        except _Stop as stop:
            await self._cancel(session.session_id)
            return Answer("".join(self._texts), stopped=stop.reason)
        except Exception as err:  # an error answer, or the child gone: nothing answered is a failure
            text, why = "".join(self._texts), await self._why(err)
            if self.transport is None or self.transport.broken or self.process is None \
                    or self.process.returncode is not None:
                await self.close()  # gone or not an ACP agent: the next question starts it afresh
            return Answer(text, stopped=why) if text.strip() else Answer(text, failed=why)
        finally:
            self._sink = None
        reason = response.stop_reason
        return Answer("".join(self._texts), stopped=None if reason == "end_turn" else str(reason).replace("_", " "))

    async def _prompt(self, session_id: str, prompt: str) -> Any:
        from acp import text_block

        return await self.conn.prompt(session_id=session_id, prompt=[text_block(prompt)])

    async def _within(self, request: Any, watchdog: float, cancelled: asyncio.Event, silent: str = SILENT) -> Any:
        """Await `request` while the child shows signs of life (within `watchdog` seconds of each
        other, else `silent` is the reason) and the turn is not cancelled."""
        task = asyncio.ensure_future(request)
        stop = asyncio.ensure_future(cancelled.wait())
        try:
            while True:
                self._alive.clear()
                beat = asyncio.ensure_future(self._alive.wait())
                done, _ = await asyncio.wait({task, stop, beat}, timeout=watchdog,
                                             return_when=asyncio.FIRST_COMPLETED)
                beat.cancel()
                if task in done:
                    return task.result()
                if stop in done:
                    raise _Stop(CANCELLED)
                if not done:
                    raise _Stop(silent.format(seconds=watchdog))
        finally:
            stop.cancel()
            if not task.done():
                task.cancel()

    async def _cancel(self, session_id: str) -> None:
        try:
            await asyncio.wait_for(self.conn.cancel(session_id=session_id), 2)
        except Exception:  # the child is gone or stuck: it is stopped with mm
            pass

    async def _start(self) -> None:
        async with self._start_lock:
            if self.process is not None and self.process.returncode is None and self.conn is not None:
                return
            from acp import PROTOCOL_VERSION
            from acp.client.connection import ClientSideConnection

            from mm.sdk_logs import route_sdk_logs

            route_sdk_logs(to_stderr=False)  # its failures reach the user as ask_agent's error text
            from acp.schema import (ClientCapabilities, ElicitationCapabilities, ElicitationFormCapabilities,
                                    FileSystemCapabilities, Implementation)

            try:
                self.process = await asyncio.create_subprocess_exec(
                    *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE, env=self.env, cwd=str(self.cwd), limit=LINE_LIMIT,
                    start_new_session=True)  # a Ctrl-C at the terminal is mm's to handle, not the child's
            except OSError as err:
                raise _Stop(NOT_STARTED.format(argv0=self.argv[0], error=err.strerror or err)) from None
            asyncio.ensure_future(self._drain_stderr(self.process))
            self.transport = ChildTransport(self.process.stdout, self.process.stdin)
            self.conn = ClientSideConnection(_Client(self), self.transport, use_unstable_protocol=True)
            capabilities = ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=False, write_text_file=False), terminal=False,
                elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities()))
            await self.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities,
                                       client_info=Implementation(name="mm", version=f"v{__version__}"))

    async def _drain_stderr(self, process: asyncio.subprocess.Process) -> None:
        assert process.stderr is not None
        async for line in process.stderr:
            text = line.decode("utf-8", "replace").strip()
            if text:
                self.stderr.append(text)

    async def _why(self, err: Exception) -> str:
        """Why a request failed: the agent's error, or its exit (waited for a moment) and its last
        stderr line."""
        from acp import RequestError

        process = self.process
        if not isinstance(err, RequestError) and process is not None and process.returncode is None:
            try:
                await asyncio.wait_for(process.wait(), 1)
                await asyncio.sleep(0.1)  # its last stderr line
            except asyncio.TimeoutError:
                pass

        if self.transport is not None and self.transport.broken:
            return self.transport.broken
        from pydantic import ValidationError

        if isinstance(err, ValidationError):  # the SDK read the agent's answer against the schema
            faults = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in err.errors()[:3])
            return one_line(NOT_ACP_ANSWER.format(faults=faults), 300)
        if isinstance(err, RequestError):
            import json

            data = err.data if isinstance(err.data, dict) else {}
            detail = data.get("error") or data.get("details") or err.data
            if detail is not None and not isinstance(detail, str):
                detail = json.dumps(detail, ensure_ascii=False)
            return one_line(f"{err}: {detail}" if detail else str(err), 300)
        if self.process is not None and self.process.returncode is not None:
            last = [line for line in self.stderr if not line.startswith(ROUTINE)]
            noise = self._noise()
            why = f": {one_line(last[-1], 300)}" if last else ""
            if noise:
                why += " — " + NOT_JSON_RPC.format(line=noise)
            code = self.process.returncode
            if code < 0:
                return KILLED.format(signal=_signal_name(-code), why=why)
            return EXITED.format(status=code, why=why)
        return one_line(str(err), 300) or type(err).__name__

    def _noise(self) -> str | None:
        """The first line the child wrote that was not JSON-RPC, when it never wrote JSON-RPC."""
        transport = self.transport
        return transport.noise if transport is not None and not transport.messages else None

    async def close(self) -> None:
        """Stop the child and its process group: its stdin closed (an ACP agent ends at the end of
        its input), then SIGTERM, then SIGKILL, a moment apart."""
        import signal

        process, self.process, self.conn, self.transport = self.process, None, None, None
        if process is None:
            return
        if process.returncode is None and process.stdin is not None:
            process.stdin.close()
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if process.returncode is not None:
                break
            if sig is not None:
                try:
                    os.killpg(process.pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
            try:
                await asyncio.wait_for(process.wait(), STOP_SECONDS)
            except asyncio.TimeoutError:
                continue
        pipes = getattr(process, "_transport", None)  # its pipes, closed while the event loop runs
        if pipes is not None:
            pipes.close()

    @contextlib.asynccontextmanager
    async def waiting_for_the_user(self) -> AsyncIterator[None]:
        """While this agent's user answers the asked agent's question, the watchdog is beaten every
        second (more often for a watchdog under 4 s): waiting for a human does not end the turn
        (mm-tools.md §ask_user, Watchdog); the answer itself is a sign of life."""
        async def beat() -> None:
            while True:
                self._alive.set()
                await asyncio.sleep(self._beat)

        beating = asyncio.ensure_future(beat())
        try:
            yield
        finally:
            beating.cancel()
            self._alive.set()

    # -- called by _Client
    def _update(self, session_id: str, update: Any) -> None:
        self._alive.set()
        if session_id != self._session or self._sink is None:
            return
        kind = getattr(update, "session_update", "")
        relayed = RELAYED_META in (getattr(update, "field_meta", None) or {})  # its own asked agent's text
        if kind == "agent_message_chunk" and not relayed:
            text = getattr(getattr(update, "content", None), "text", None)
            if isinstance(text, str):
                self._texts.append(text)
        self._sink.update(update)

    def _current(self, session_id: str) -> Sink | None:
        self._alive.set()
        return self._sink if session_id == self._session else None


class _Client:
    """The ACP client callbacks (acp.Client, by duck typing: what is not here is `method not found`)."""

    def __init__(self, child: ChildAgent):
        self.child = child

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.child._update(session_id, update)  # recorded before any await (notes/acp.md P-SDK-7)

    async def request_permission(self, session_id: str, tool_call: Any, options: list, **_: Any) -> Any:
        from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

        sink = self.child._current(session_id)
        async with self.child.waiting_for_the_user():
            picked = await sink.permission(tool_call, options) if sink is not None else None
        if picked is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=picked))

    async def create_elicitation(self, message: str, mode: Any, **_: Any) -> Any:
        from acp import RequestError

        sink = self.child._current(session_id=getattr(mode, "session_id", None) or self.child._session or "")
        if sink is None:
            raise RequestError.invalid_request({"error": "no question in flight"})
        async with self.child.waiting_for_the_user():
            return await sink.elicit(message, mode)

    async def complete_elicitation(self, elicitation_id: str, **_: Any) -> None:
        return None


class _Stop(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _signal_name(number: int) -> str:
    import signal

    try:
        return f"{number} ({signal.Signals(number).name})"
    except ValueError:
        return str(number)


def child_env(depth: int, yolo: bool | None) -> dict[str, str]:
    """The child's environment: this one, without mm's own overrides (the child has its own agent
    file), with MM_ASK_DEPTH one deeper and MM_YOLO when the entry decides."""
    from mm.config.files import ENV_OVERRIDES

    env = {k: v for k, v in os.environ.items() if k not in ENV_OVERRIDES}
    env["MM_ASK_DEPTH"] = str(depth + 1)
    if yolo is not None:
        env["MM_YOLO"] = "true" if yolo else "false"
    return env
