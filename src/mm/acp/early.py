"""The first messages of `mm -acp`, answered before the ACP SDK is loaded (docs/acp.md §Start-up).

Importing the SDK (`acp`) takes about half a second, nearly all of it building its ~270 pydantic
schema models, and an editor spawns mm for every project it opens and waits for `session/new`.
So `initialize` and `session/new` are answered here, from the JSON as it came, by the very
EditorAgent methods the SDK would call, with the arguments it would give them. Once the first
session is open the SDK is imported in a thread, and the first message left to it (a
prompt, a `session/load`, anything else) waits until it is loaded; from then on the SDK's
connection serves every message, that one first. The protocol stays the SDK's: nothing is
answered here that it would answer differently.

A request is answered here only when the SDK's model of it (InitializeRequest, NewSessionRequest)
would accept it: `initialize` with an integer `protocolVersion` in 0–65535, `session/new` with a
string `cwd`, a list `mcpServers` and `additionalDirectories` absent or a list, both with camelCase
names. What the SDK reads leniently is read the same way here: a `clientInfo` without string
`name` and `version`, or an `elicitation.form` that is not an object, counts as absent; `_meta`'s
entries become keyword arguments. Anything else goes to the SDK, whose answer (`invalid params`
with its validation errors) is the reference. The one difference: `mcpServers` entries are counted
as sent, where the SDK leaves out those it cannot read (mm ignores them all).
"""

from __future__ import annotations

import asyncio
import json
import logging
from types import SimpleNamespace
from typing import Any, Awaitable, Callable

from mm.acp.wire import errors_line

VERSIONS = range(0, 65536)  # InitializeRequest.protocolVersion: a uint16
# The models' Python names, which the SDK also takes (populate_by_name): such a request goes to it.
PYTHON_NAMES = {"initialize": frozenset({"protocol_version", "client_capabilities", "client_info", "field_meta"}),
                "session/new": frozenset({"mcp_servers", "additional_directories", "field_meta"})}
NOT_ANSWERED = "[acp] {method}: the answer was not sent: {error}"
UNHANDLED = "Unhandled error while handling request method=%s"  # the SDK's own record (Connection)
UNCHECKED = "[acp] an update sent before the SDK was loaded ({kind}) does not match its schema: {error}"

Call = tuple[Callable[..., Awaitable[Any]], dict[str, Any]]


def load_sdk() -> type:
    """The SDK's AgentSideConnection class (importing it imports the whole SDK)."""
    from acp.agent.connection import AgentSideConnection

    return AgentSideConnection


class EarlyAnswers:
    """Serves `mm -acp`'s connection: the first messages here, then the SDK's connection.

    `transport`: the StdioTransport (the SDK's Transport protocol, with `unread`); `log(line)`
    writes one stderr line; `on_warm_up()` runs once, when the SDK starts loading (the model
    server's discovery starts then too). `at_once`: load the SDK before anything is answered, for
    a client that prompts as soon as its session is open and counts the wait for the answer as
    the agent's silence (an asking mm, docs/acp.md §Start-up).
    """

    def __init__(self, transport: Any, log: Callable[[str], None], on_warm_up: Callable[[], None] = lambda: None,
                 at_once: bool = False):
        self.transport, self.log, self.on_warm_up, self.at_once = transport, log, on_warm_up, at_once
        self._connection: asyncio.Task | None = None
        self._sent: list[dict[str, Any]] = []  # the notifications sent before the SDK could check them

    async def serve(self, agent: Any) -> None:
        """Answer `agent`'s requests (mm.acp.server.EditorAgent) until the end of input: here while
        the SDK is not loaded, then through it. Raises what importing the SDK raises (ImportError:
        a broken installation)."""
        held = None
        if not self.at_once:
            held = await self._answer_first(agent)
            if held is None:
                return
        connection = await self._warm_up(agent)
        if held is not None:
            self.transport.unread(held)
        await connection.listen()

    async def notify(self, session_id: str, update: dict[str, Any]) -> None:
        """Send a `session/update` as built (the SDK's schema checks it once loaded)."""
        params = {"sessionId": session_id, "update": update}
        self._sent.append(params)
        await self.transport.send({"jsonrpc": "2.0", "method": "session/update", "params": params})

    def _warm_up(self, agent: Any) -> asyncio.Task:
        """The SDK's connection to the client, made once the SDK is imported in a thread (started
        at the first call); `agent` gets it through `on_connect`."""
        if self._connection is None:
            self._connection = asyncio.ensure_future(self._connect(agent))
            self.on_warm_up()
        return self._connection

    async def _connect(self, agent: Any) -> Any:
        connection_class = await asyncio.to_thread(load_sdk)
        connection = connection_class(agent, self.transport, listening=False)
        from acp.schema import SessionNotification
        from pydantic import ValidationError

        for params in self._sent:  # checked now: a mistake of mm's is said, as the SDK would have refused it
            try:
                SessionNotification.model_validate(params)
            except ValidationError as err:
                self.log(UNCHECKED.format(kind=params["update"].get("sessionUpdate"), error=errors_line(err.errors())))
        self._sent.clear()
        return connection

    async def _answer_first(self, agent: Any) -> dict[str, Any] | None:
        """Answer messages here until one is the SDK's (returned; None at the end of input)."""
        while True:
            message = await self.transport.receive()
            if message is None:
                return None
            loaded = self._connection is not None and self._connection.done()
            call = None if loaded else early_call(agent, message)
            if call is None:
                return message
            if await self._answer(message, *call) and message["method"] == "session/new":
                self._warm_up(agent)  # a session is open: the SDK loads while the user types

    async def _answer(self, message: dict[str, Any], handler: Callable[..., Awaitable[Any]],
                      arguments: dict[str, Any]) -> bool:
        """Send the response to `message`: `handler`'s result, or the error it raised as the SDK
        would answer it (Connection._execute_request). Returns whether it was a result."""
        method = message["method"]
        payload: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            payload["result"] = await handler(**arguments)
        except Exception as err:
            payload["error"] = self._error(method, err)
        try:
            await self.transport.send(payload)
        except OSError as err:  # stdout closed: the client is gone
            self.log(NOT_ANSWERED.format(method=method, error=err))
        return "result" in payload

    def _error(self, method: str, err: Exception) -> dict[str, Any]:
        """The error object of a failed request, and its log record, as the SDK makes them."""
        from acp import RequestError  # loaded already when the agent raised one: an error costs the import

        if isinstance(err, RequestError):
            return err.to_error_obj()
        logging.error(UNHANDLED, method, exc_info=err)  # one line on stderr (mm.sdk_logs)
        try:
            data = json.loads(str(err))
        except (ValueError, RecursionError):
            data = {"details": str(err)}
        return RequestError.internal_error(data).to_error_obj()


def early_call(agent: Any, message: dict[str, Any]) -> Call | None:
    """The agent's method and the keyword arguments the SDK would call it with, for an
    `initialize` or `session/new` request it would accept; else None (the SDK's to answer)."""
    method, params = message.get("method"), message.get("params")
    if "id" not in message or method not in PYTHON_NAMES:
        return None
    if not isinstance(params, dict) or PYTHON_NAMES[method] & params.keys():
        return None
    arguments = initialize_arguments(params) if method == "initialize" else new_session_arguments(params)
    if arguments is None:
        return None
    meta = params.get("_meta")
    if isinstance(meta, dict):  # the SDK passes `_meta`'s entries as keyword arguments
        arguments.update(meta)
    handler = agent.initialize if method == "initialize" else agent.new_session
    return handler, arguments


def initialize_arguments(params: dict[str, Any]) -> dict[str, Any] | None:
    """`initialize`'s arguments (InitializeRequest): the version, the client's capabilities (only
    `elicitation.form`, as mm reads it) and `clientInfo` (`name`, `version`, `title`); None when
    `protocolVersion` is missing or not an integer in range (the SDK coerces or refuses it)."""
    version = params.get("protocolVersion")
    if type(version) is not int or version not in VERSIONS:
        return None
    capabilities = params.get("clientCapabilities")
    elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
    form = elicitation.get("form") if isinstance(elicitation, dict) else None
    info = params.get("clientInfo")
    named = isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str)
    client = None
    if named:
        title = info.get("title")
        client = SimpleNamespace(name=info["name"], version=info["version"],
                                 title=title if isinstance(title, str) else None)
    elicitation_read = SimpleNamespace(form=SimpleNamespace()) if isinstance(form, dict) else None
    return {"protocol_version": version, "client_capabilities": SimpleNamespace(elicitation=elicitation_read),
            "client_info": client}


def new_session_arguments(params: dict[str, Any]) -> dict[str, Any] | None:
    """`session/new`'s arguments (NewSessionRequest); None when `cwd` is not a string,
    `mcpServers` not a list or `additionalDirectories` neither absent nor a list."""
    cwd, servers, more = params.get("cwd"), params.get("mcpServers"), params.get("additionalDirectories")
    if not isinstance(cwd, str) or not isinstance(servers, list) or not (more is None or isinstance(more, list)):
        return None
    if more is not None:  # the SDK leaves out the entries that are not strings
        more = [d for d in more if isinstance(d, str)]
    return {"cwd": cwd, "additional_directories": more, "mcp_servers": servers}
