"""One language server, running: its process, the pygls client over its pipes, its lifecycle, the
documents it was told of and the diagnostics it published (mm-tools.md §lsp: File sync, Server
lifecycle; docs/lsp.md).

The process is started by mm's command supervisor with pipes for its stdio (mm.tools.lsp.pipes),
so that it never outlives mm, however mm ends. pygls's `LanguageClient` (mm.tools.lsp.protocol)
does the JSON-RPC framing and the typed messages (lsprotocol); its `start_io` is not used,
because it pipes the server's stderr without ever reading it (a server that logs fills the pipe
and hangs) and starts the process itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mm.tools.lsp import pipes as stdio
from mm.tools.lsp.protocol import one_line
from mm.tools.lsp.servers import ServerSpec, language_id

SHUTDOWN_WAIT = 3.0  # seconds for `shutdown`'s answer, then for the process to exit after `exit`
KILL_WAIT = 10.0  # seconds for the supervisor to report the killed process
NO_ANSWER = "no answer within {seconds:g}s"
STOPPED = "the server stopped ({how})"
STOPPED_SAID = "the server stopped ({how}): {line}"
EXIT_STATUS = "exit status {code}"
KILLED_BY = "killed by signal {signal}"
CANNOT_START = "the server cannot be started: {reason}"
SERVER_ERROR = "{message}"


class ServerFailure(Exception):
    """A request the server did not answer: `str(err)` is the reason, for `[lsp: <server>: <action>
    failed: <reason>]` (NO_ANSWER, STOPPED, CANNOT_START, the server's error, or
    mm.tools.lsp.protocol.UNREADABLE)."""


class NoAnswer(ServerFailure):
    """The server did not answer within the time given (NO_ANSWER)."""


class Stopped(ServerFailure):
    """The server's process ended, or its output did (STOPPED, CANNOT_START)."""


class Cancelled(Exception):
    """The turn was cancelled while the server was busy."""


@dataclass
class Document:
    """A file the server was told of: the version and text it holds."""

    version: int
    text: str


@dataclass
class Published:
    """The diagnostics the server last published for a file, and when (`serial`: the count of
    publications of this server when they came)."""

    diagnostics: list[Any]
    serial: int


class LanguageServer:
    """One configured server (`spec`) for the project at `root`, started on first use with the
    environment `env`, started again when it died (mm-tools.md §lsp, Server lifecycle)."""

    def __init__(self, spec: ServerSpec, root: Path, env: dict[str, str]):
        self.spec, self.root, self.env = spec, root, env
        self.documents: dict[str, Document] = {}  # by path, what the running server was told
        self.published: dict[str, Published] = {}  # by path
        self.synced_at: dict[str, int] = {}  # by path, the publication count when its content was last sent
        self.publications = 0
        self.capabilities: Any = None
        self._news = asyncio.Event()  # set at each publication
        self._client: Any = None
        self._pipes: stdio.Pipes | None = None
        self._ids = itertools.count(1)
        self._lock = asyncio.Lock()

    @property
    def running(self) -> bool:
        """Whether the server's process runs and its stdout is open."""
        pipes = self._pipes
        return (pipes is not None and not pipes.command.exited.done() and pipes.reading is not None
                and not pipes.reading.done())

    async def ready(self, cancelled: asyncio.Event) -> bool:
        """Start the server when it does not run (first use, or it died); returns whether it was
        started now. Raises ServerFailure (CANNOT_START, STOPPED, NO_ANSWER…) or Cancelled."""
        async with self._lock:
            if self.running:
                return False
            await self._end(kill=True)  # one that died: let go
            try:
                await self._start(cancelled)
            except BaseException:
                await self._end(kill=True)
                raise
            return True

    async def request(self, method: str, params: Any, cancelled: asyncio.Event, timeout: float | None = None) -> Any:
        """The server's answer to `method` (lsprotocol types) within `timeout` seconds (default: the
        server's `timeout`); raises ServerFailure or Cancelled (then the request is cancelled with
        `$/cancelRequest`)."""
        timeout = self.spec.timeout if timeout is None else timeout
        msg_id = f"mm-{next(self._ids)}"
        answer = self._client.protocol.send_request_async(method, params, msg_id=msg_id)
        try:
            return await self._answer(answer, cancelled, timeout)
        except (Cancelled, NoAnswer):
            if self.running:
                self.notify("$/cancelRequest", self._types().CancelParams(id=msg_id))
            raise
        finally:
            answer.cancel()

    def notify(self, method: str, params: Any) -> None:
        """Send the notification `method` (a server that stopped drops it)."""
        if self._client is not None:
            self._client.protocol.notify(method, params)

    def sync(self, path: Path, text: str) -> bool:
        """Tell the server the content `text` of the file `path`: `didOpen` the first time, a
        whole-document `didChange` when it moved since; returns whether anything was sent."""
        types, key = self._types(), str(path)
        document = self.documents.get(key)
        if document is not None and document.text == text:
            return False
        uri = path.as_uri()
        if document is None:
            self.documents[key] = Document(1, text)
            item = types.TextDocumentItem(uri=uri, language_id=language_id(path.name), version=1, text=text)
            self.notify("textDocument/didOpen", types.DidOpenTextDocumentParams(text_document=item))
        else:
            document.version, document.text = document.version + 1, text
            self.notify("textDocument/didChange", types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=document.version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
        self.synced_at[key] = self.publications
        return True

    def saved(self, path: Path, text: str) -> None:
        """Tell the server the file `path` was written with `text` (`didSave`, the text included
        when the server asked for it)."""
        types = self._types()
        sync = getattr(self.capabilities, "text_document_sync", None)
        save = getattr(sync, "save", None)
        include = bool(getattr(save, "include_text", False))
        self.notify("textDocument/didSave", types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri()), text=text if include else None))

    async def publication(self, path: Path, wait: float, cancelled: asyncio.Event) -> Published | None:
        """The diagnostics published for `path` since its content was last sent, waiting up to
        `wait` seconds for them; None when none came. Raises Cancelled, ServerFailure (STOPPED)."""
        key = str(path)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while True:
            found = self.published.get(key)
            if found is not None and found.serial > self.synced_at.get(key, -1):
                return found
            left = deadline - loop.time()
            if left <= 0:
                return None
            self._news.clear()
            news = asyncio.ensure_future(self._news.wait())
            try:
                await self._answer(news, cancelled, left)
            except NoAnswer:
                return None
            finally:
                news.cancel()

    async def stop(self) -> None:
        """`shutdown`, `exit`, then the process is killed when it did not leave (mm leaves)."""
        async with self._lock:
            if self.running:
                with contextlib.suppress(ServerFailure, Cancelled, Exception):
                    await self.request("shutdown", None, asyncio.Event(), SHUTDOWN_WAIT)
                self.notify("exit", None)
            await self._end(kill=False)

    # -- inside
    def _types(self) -> Any:
        from lsprotocol import types

        return types

    async def _start(self, cancelled: asyncio.Event) -> None:
        from mm.tools.lsp import protocol

        await asyncio.to_thread(protocol.load)  # ~0.5 s of imports, not on the event loop
        from pygls.io_ import run_async

        self._pipes = await stdio.start([self.spec.program, *self.spec.args], self.root, self.env)
        self._client = protocol.make_client(self.root, self._published)
        self._client.protocol.set_writer(stdio.PipeWriter(self._pipes.stdin))
        self._pipes.reading = asyncio.ensure_future(run_async(
            stop_event=self._pipes.stop, reader=self._pipes.stdout, protocol=self._client.protocol,
            logger=logging.getLogger("pygls.mm")))
        result = await self.request("initialize", protocol.initialize_params(self.root), cancelled)
        self.capabilities = result.capabilities
        self.notify("initialized", self._types().InitializedParams())

    async def _answer(self, answer: asyncio.Future, cancelled: asyncio.Event, timeout: float) -> Any:
        """`answer`'s result, unless the server stops, the turn is cancelled or `timeout` seconds pass."""
        from pygls.exceptions import JsonRpcException

        exited = asyncio.ensure_future(asyncio.shield(self._pipes.command.exited))
        reading = asyncio.ensure_future(asyncio.shield(self._pipes.reading))
        stop = asyncio.ensure_future(cancelled.wait())
        try:
            done, _ = await asyncio.wait({answer, exited, reading, stop}, timeout=timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in (exited, reading, stop):
                waiter.cancel()
        if answer in done:
            try:
                return answer.result()
            except JsonRpcException as err:
                raise ServerFailure(SERVER_ERROR.format(message=one_line(err.message or str(err)))) from err
            except RuntimeError as err:  # pygls: the client stopped
                raise ServerFailure(str(err)) from err
        if stop in done:
            raise Cancelled
        if exited in done or reading in done:
            raise Stopped(await self._stopped())
        raise NoAnswer(NO_ANSWER.format(seconds=timeout))

    async def _stopped(self) -> str:
        """STOPPED (with the last line of the server's stderr), once the process was reported."""
        exited = self._pipes.command.exited
        with contextlib.suppress(asyncio.TimeoutError, Exception):
            await asyncio.wait_for(asyncio.shield(exited), KILL_WAIT)
        if not exited.done():
            how = "its output ended"
        elif exited.exception() is not None:
            return CANNOT_START.format(reason=_start_error(exited.exception()))
        else:
            code = exited.result()
            how = KILLED_BY.format(signal=-code) if code < 0 else EXIT_STATUS.format(code=code)
        lines = [ln for ln in bytes(self._pipes.stderr).decode("utf-8", "replace").splitlines() if ln.strip()]
        if lines:
            return STOPPED_SAID.format(how=how, line=one_line(lines[-1]))
        return STOPPED.format(how=how)

    async def _end(self, kill: bool) -> None:
        """Let the process go (killed when it does not exit within SHUTDOWN_WAIT, or at once with
        `kill`), close the pipes, release the command."""
        pipes = self._pipes
        if pipes is not None:
            command = pipes.command
            pipes.stdin.close()  # end of file on its stdin
            if not kill:
                with contextlib.suppress(asyncio.TimeoutError, Exception):
                    await asyncio.wait_for(asyncio.shield(command.exited), SHUTDOWN_WAIT)
            if not command.exited.done():
                command.kill()
                with contextlib.suppress(asyncio.TimeoutError, Exception):
                    await asyncio.wait_for(asyncio.shield(command.exited), KILL_WAIT)
            command.release()
            pipes.close()
            if pipes.reading is not None:
                pipes.reading.cancel()
                with contextlib.suppress(BaseException):
                    await pipes.reading
        self._client = self._pipes = None  # what it was told or said is forgotten
        self.documents.clear()
        self.published.clear()
        self.synced_at.clear()

    def _published(self, params: Any) -> None:
        from mm.tools.lsp.edits import path_of

        path = path_of(params.uri)
        if path is None:
            return
        self.publications += 1
        self.published[str(path)] = Published(list(params.diagnostics or []), self.publications)
        self._news.set()


def _start_error(err: BaseException) -> str:
    """Why the program could not be started, in a few words (`No such file or directory`)."""
    return getattr(err, "strerror", None) or str(err) or type(err).__name__

