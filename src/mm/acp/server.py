"""`mm -acp`: the agent side of the Agent Client Protocol (mm-acp.md §Methods).

The class below is handed to the SDK's AgentSideConnection, which routes each JSON-RPC method to
the method of the same name. It deliberately does not subclass `acp.Agent` (notes/acp.md
P-SDK-1): the methods it does not define — `session/set_config_option`,
`session/list`, `session/resume`, `session/close`, `logout` — answer `method not found`.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from mm import __version__
from mm.acp.outbox import CallIds
from mm.config.schema import AgentConfig

INIT_LOG = "[acp] initialize: client {client}, protocol {version}, elicitation(form)={forms}"
NEW_LOG = "[acp] session {id} created in {cwd} ({mcp} MCP server(s) ignored)"
LOADED_LOG = "[acp] session {id} loaded from {dir}: {n} message(s) replayed"
INSTRUCTIONS_LOG = "[acp] session {id}: {line}"  # mm.instructions.Instructions.lines
BAD_CWD = "cwd must be the absolute path of an existing directory: {cwd!r}"
UNKNOWN_SESSION = "unknown session {id}: create it with session/new (or session/load)"
NO_SESSION_FILE = "no saved session {id} in {dir}"
BAD_SESSION_ID = "{id!r} is not a session id"
SKILL_HINT = "parameters, if this skill needs any"


class EditorAgent:
    """The ACP agent: sessions by id, one process-wide turn lock, the model handle.

    `early(session_id, update)` (awaitable, set by whoever serves it) sends a `session/update`
    while the SDK is not loaded yet (mm.acp.early.EarlyAnswers.notify); without it, updates need
    the SDK's connection.
    """

    def __init__(self, config: AgentConfig, model: Any, log: Any = None):
        self.config, self.model = config, model
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self.sessions: dict[str, Any] = {}
        self.turns = asyncio.Lock()  # turns are serialised process-wide (mm-acp.md §Methods)
        self.ids = CallIds()
        self.forms = False
        self.conn: Any = None
        self.early: Any = None
        self._tasks: set[asyncio.Task] = set()

    def on_connect(self, conn: Any) -> None:
        """The SDK hands over the connection to the client."""
        self.conn = conn

    # -- methods
    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **_: Any) -> dict[str, Any]:
        """The `initialize` response (mm-acp.md §initialize response)."""
        elicitation = getattr(client_capabilities, "elicitation", None)
        self.forms = getattr(elicitation, "form", None) is not None
        client = f"{client_info.name} {client_info.version}" if client_info is not None else "(unnamed)"
        self.log(INIT_LOG.format(client=client, version=protocol_version, forms=str(self.forms).lower()))
        info = {"name": self.config.acp.name, "version": f"v{__version__}"}
        if self.config.acp.title:
            info["title"] = self.config.acp.title
        capabilities = {"loadSession": True} if self.config.sessions.enabled else {}
        return {"protocolVersion": 1, "agentCapabilities": capabilities, "agentInfo": info, "authMethods": []}

    async def authenticate(self, method_id: str, **_: Any) -> dict[str, Any]:
        """Nothing to authenticate: an empty response."""
        return {}

    async def new_session(self, cwd: str, mcp_servers: list | None = None, **_: Any) -> dict[str, Any]:
        """Create a session in `cwd`; the commands go out once the response is written."""
        from mm.sessions.store import new_session_id

        where = self._cwd(cwd)
        session = self._register(new_session_id(), where, await self._instructions(where))
        if session.conv.on_turn_end is not None:  # sessions.enabled: the file exists at once
            session.conv.on_turn_end(session.conv)
        self.log(NEW_LOG.format(id=session.id, cwd=where, mcp=len(mcp_servers or [])))
        self._log_instructions(session)
        self._later(self._send_commands(session))  # after the response (notes/acp.md P-SDK-5)
        from mm.acp.modes import modes_of

        return {"sessionId": session.id, "modes": modes_of(session.conv)}

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list | None = None, **_: Any) -> dict:
        """Replay a saved session, then the commands, then `{}` (mm-acp.md §session/load replay)."""
        from acp import RequestError

        from mm.acp.replay import replay_updates
        from mm.engine.resume import resume_session
        from mm.sessions.load import SessionError, load_session

        if not self.config.sessions.enabled:
            raise RequestError.method_not_found("session/load")
        where = self._cwd(cwd)
        directory = where / self.config.sessions.dir
        if not session_id or "/" in session_id or "\\" in session_id or session_id.startswith("."):
            raise RequestError.invalid_params({"sessionId": session_id, "error": BAD_SESSION_ID.format(id=session_id)})
        path = directory / f"{session_id}.json"
        previous = self.sessions.get(session_id)
        if previous is not None:  # its turn in flight stops and saves its history before the file is read
            previous.cancel()
            async with self.turns:
                await previous.conv.close()  # its agents stopped, its file let go for this load
        if not path.exists() or path.is_dir():  # a named pipe is found, and refused when read
            raise RequestError.invalid_params({"sessionId": session_id,
                                               "error": NO_SESSION_FILE.format(id=session_id, dir=directory)})
        try:  # in a thread: the event loop never waits on the disk
            meta, messages = await asyncio.to_thread(load_session, path)
        except SessionError as err:
            raise RequestError.invalid_params({"sessionId": session_id, "error": str(err)}) from None
        session = self._register(session_id, where, await self._instructions(where))
        try:
            resume_session(session.conv, path, (meta, messages), session_id)
        except SessionError as err:  # another mm holds it
            del self.sessions[session_id]
            raise RequestError.invalid_params({"sessionId": session_id, "error": str(err)}) from None
        updates = list(replay_updates(messages, meta.unanswered, where, session.conv.registry))
        self.ids.skip_past([u["toolCallId"] for u in updates if "toolCallId" in u])
        for update in updates:
            await self._notify(session_id, update)
        await self._send_commands(session)
        self.log(LOADED_LOG.format(id=session_id, dir=directory, n=len(updates)))
        self._log_instructions(session)
        from mm.acp.modes import modes_of

        return {"modes": modes_of(session.conv)}

    async def prompt(self, session_id: str, prompt: list, **_: Any) -> dict[str, Any]:
        """Run one prompt (mm-acp.md §session/prompt); a failed turn is an `internal error`."""
        from acp import RequestError

        from mm.acp.session import TurnFailed

        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": session_id, "error": UNKNOWN_SESSION.format(id=session_id)})
        try:
            return await session.prompt(prompt)
        except TurnFailed as err:
            raise RequestError.internal_error({"error": str(err)}) from None

    async def set_session_mode(self, session_id: str, mode_id: str, **_: Any) -> dict[str, Any]:
        """`session/set_mode`: `plan` turns plan mode on, `default` off (mm.acp.modes), at once —
        a turn in flight meets the new mode at its next tool call."""
        from acp import RequestError

        from mm.acp.modes import MODE_LOG, UNKNOWN_MODE

        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": session_id, "error": UNKNOWN_SESSION.format(id=session_id)})
        if mode_id not in ("plan", "default"):
            raise RequestError.invalid_params({"modeId": mode_id, "error": UNKNOWN_MODE.format(mode=mode_id)})
        line = session.conv.set_plan_mode(mode_id == "plan")
        self.log(MODE_LOG.format(id=session_id, mode=mode_id, line=line))
        return {}

    async def cancel(self, session_id: str, **_: Any) -> None:
        """`session/cancel`: the turn in flight for that session stops; unknown ids are ignored."""
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    # -- helpers
    def front_end(self, session: Any) -> Any:
        """The Interaction of one prompt of `session` (mm.acp.frontend.EditorFrontEnd)."""
        from mm.acp.frontend import EditorFrontEnd

        return EditorFrontEnd(session.id, session.cwd, session.conv.registry,
                              lambda update: self._notify(session.id, update), self._request, self.ids,
                              self.log, self.forms, lambda: session.conv.context_window or 0)

    async def server_facts(self) -> Any:
        """What the server says of the model (mm.llm.servers.ServerFacts), once it is known; while
        it is unreachable, only the configured `contextWindow`."""
        from mm.llm.types import LLMError

        try:
            await self.model.client()
        except LLMError:
            pass
        return self.model.facts

    async def stop(self, seconds: float = 5.0) -> None:
        """The client is gone: cancel every turn, then give the turns and pending notifications
        up to `seconds` to finish (commands killed, sessions saved, answers written)."""
        for session in self.sessions.values():
            session.cancel()
        pending = [t for t in self._tasks if not t.done()]
        try:
            await asyncio.wait_for(self._idle(pending), seconds)
        except asyncio.TimeoutError:
            pass
        for session in list(self.sessions.values()):
            await session.conv.close()  # the agents ask_agent started, the session file let go

    async def _idle(self, pending: list[asyncio.Task]) -> None:
        if pending:
            await asyncio.wait(pending)
        async with self.turns:
            await asyncio.sleep(0)  # let the answer of the last turn go out

    def _register(self, session_id: str, cwd: Path, instructions: Any) -> Any:
        from mm.acp.model import LazyClient
        from mm.acp.session import Session
        from mm.run import build_conversation

        conv = build_conversation(self.config, LazyClient(self.model), cwd, instructions=instructions)
        conv.session_id = session_id  # the id hooks are given (docs/hooks.md §Input)
        if conv.session is not None:
            conv.session.id = session_id
        session = self.sessions[session_id] = Session(session_id, cwd, conv, self, instructions=instructions.lines())
        return session

    async def _instructions(self, cwd: Path) -> Any:
        """The project instructions of a session in `cwd` (mm.instructions), read in a thread:
        the event loop never waits on the disk."""
        from mm.instructions import read_instructions

        return await asyncio.to_thread(read_instructions, cwd, self.config.instructions.maxTokens)

    def _log_instructions(self, session: Any) -> None:
        for line in session.instructions:  # which AGENTS.md files the session's model reads
            self.log(INSTRUCTIONS_LOG.format(id=session.id, line=line))

    def _cwd(self, cwd: str) -> Path:
        path = Path(cwd) if isinstance(cwd, str) else None
        if path is None or not path.is_absolute() or not path.is_dir():
            from acp import RequestError  # only here: session/new is answered before the SDK loads (mm.acp.early)

            raise RequestError.invalid_params({"cwd": cwd, "error": BAD_CWD.format(cwd=cwd)})
        return path

    async def _send_commands(self, session: Any) -> None:
        from mm.acp.commands import advertised_commands
        from mm.skills import advertised_skills

        commands: list[dict[str, Any]] = []
        for command in advertised_commands(session):  # mm-acp.md §Available commands, issues 11 and 12's
            commands.append({"name": command.name, "description": command.description})
            if command.hint:
                commands[-1]["input"] = {"hint": command.hint}
        for skill in advertised_skills(session.catalogue):
            commands.append({"name": skill.name, "description": skill.description, "input": {"hint": SKILL_HINT}})
        await self._notify(session.id, {"sessionUpdate": "available_commands_update", "availableCommands": commands})

    async def _notify(self, session_id: str, update: dict[str, Any]) -> None:
        if self.conn is None and self.early is not None:  # the SDK is still loading: sent as built (mm.acp.early)
            await self.early(session_id, update)
            return
        from acp.schema import SessionNotification

        notification = SessionNotification.model_validate({"sessionId": session_id, "update": update})
        await self.conn.session_update(session_id, notification.update)

    async def _request(self, method: str, params: dict[str, Any]) -> Any:
        """A request to the client with params exactly as built (the SDK's connection underneath)."""
        return await self.conn._conn.send_request(method, params)

    def _later(self, coroutine: Any) -> None:
        """Run `coroutine` after the current response; a failure is logged in one line."""
        async def guarded() -> None:
            try:
                await coroutine
            except Exception as err:  # the client left before it could be told
                self.log(f"[acp] not sent: {err}")

        task = asyncio.ensure_future(guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
