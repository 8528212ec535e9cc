"""The chat-completions client: one streamed request, every server quirk absorbed.

POSTs `{base_url}/chat/completions` with `stream: true` and `stream_options.include_usage`, reads
the event stream with httpx-sse (lines end at CR or LF only: U+2028, U+2029 or U+0085 inside a
JSON string never cut a `data:` line; comments, `event:`/`id:` fields, a missing final blank line
or `[DONE]` are accepted), or, when the body starts with `{`, JSON lines or one whole JSON answer
whatever the content type (stream-12), and turns every failure into one LLMError line naming the
URL (cases llm-streams/*, DESIGN.md "Model servers: what the client must absorb",
notes/local-model.md §5, issue 10.6). httpx and httpx-sse are imported lazily.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable
from urllib.parse import urlsplit

from mm.text import one_line
from mm.llm.types import MALFORMED, AssistantMessage, LLMError, StreamDelta, shown_url

if TYPE_CHECKING:
    from mm.llm.stream import StreamAssembler

UNREACHABLE = "nothing answers at {url} ({cause}) — is the model server running?"
HTTP_ERROR = "the model server at {url} answered HTTP {status}: {detail}"
LOADING = "the model server at {url} was still loading the model after {seconds:g} s (HTTP 503: {detail})"
INCOMPLETE = "the model server at {url} closed the stream before the answer was complete ({detail})"
IDLE = "the model server at {url} sent nothing for {seconds:g} s — stopped waiting"
NO_END = "no finish_reason and no [DONE]"
BAD_DATA = "a data line is not a JSON object: {excerpt}"
NOT_A_STREAM = "the body is neither an event stream nor JSON: {excerpt}"
NO_CHOICES = "the JSON answer has no choices: {excerpt}"
REFUSED = "connection refused"
ERROR_BODY_LIMIT = 64 * 1024  # bytes of an error body read for its message
MAX_POLL = 4.0  # seconds between two tries while the model loads
SSE_TYPE = "text/event-stream; charset=utf-8"  # what the body is read as when it does not start with `{`
SSE_FIELDS = ("data", "event", "id", "retry")  # the fields of an event stream (a line starting with `:` is a comment)


class ChatClient:
    """Client of one model on one OpenAI-compatible server.

    base_url: the OpenAI base, e.g. "http://127.0.0.1:8080/v1". model: the name sent as `model`.
    api_key: sent as a Bearer token when set. provider: the server kind (llamacpp, ollama, dmr,
    llmman, lmstudio, openai, embedded), kept for callers. idle_timeout: seconds without a byte
    from the server before the request fails (None: wait forever). connect_timeout: seconds to
    open the connection. loading_timeout: total seconds a 503 (model loading) is retried, with
    backoff from loading_poll seconds doubling up to MAX_POLL. options: request fields added to
    every request (temperature, max_tokens…). headers: extra HTTP headers.
    """

    def __init__(self, base_url: str, model: str, api_key: str | None = None, provider: str = "openai", *,
                 idle_timeout: float | None = 300.0, connect_timeout: float = 10.0,
                 loading_timeout: float = 300.0, loading_poll: float = 0.5,
                 options: dict[str, Any] | None = None, headers: dict[str, str] | None = None):
        self.base_url = base_url.rstrip("/")
        self.model, self.api_key, self.provider = model, api_key, provider
        self.idle_timeout, self.connect_timeout = idle_timeout, connect_timeout
        self.loading_timeout, self.loading_poll = loading_timeout, loading_poll
        self.options = dict(options or {})
        self.headers = dict(headers or {})
        self._client: Any = None
        self._client_loop: Any = None

    @property
    def url(self) -> str:
        """The chat-completions endpoint."""
        return self.base_url + "/chat/completions"

    async def complete(self, messages: list[dict], tools: list[dict],
                       on_delta: Callable[[StreamDelta], None] | None = None, **options: Any) -> AssistantMessage:
        """Send one request and return the assembled assistant message.

        messages: the chat history (an assistant `content: null` beside tool calls is sent as "",
        notes/local-model.md §5.1). tools: the OpenAI `tools` array (may be empty). on_delta: called
        for each text, reasoning and tool-arguments delta; if it raises, the connection is closed at
        once and the exception propagates unchanged. options: request fields for this request only.
        Raises LLMError (kind unreachable, server_error, loading, incomplete_stream,
        malformed_stream or timeout) with a one-line message naming the URL.
        """
        import httpx

        body = self._body(messages, tools, options)
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        headers.update(self.headers)
        deadline, poll = None, self.loading_poll
        while True:
            try:
                async with self._http().stream("POST", self.url, json=body, headers=headers) as response:
                    if response.status_code < 400:
                        return await self._read(response, tools, on_delta)
                    detail = await error_detail(response)
                    if response.status_code != 503:
                        raise self._error("server_error", HTTP_ERROR, status=response.status_code, detail=detail)
            except (httpx.ConnectError, httpx.ConnectTimeout) as err:
                raise self._error("unreachable", UNREACHABLE, cause=connect_cause(err)) from None
            except httpx.TimeoutException:
                raise self._error("timeout", IDLE, seconds=self.idle_timeout or 0) from None
            except httpx.TransportError as err:
                raise self._error("incomplete_stream", INCOMPLETE, detail=one_line(str(err) or type(err).__name__, 200)) from None
            now = time.monotonic()
            deadline = deadline if deadline is not None else now + self.loading_timeout
            if now >= deadline:
                raise self._error("loading", LOADING, seconds=self.loading_timeout, detail=detail)
            await asyncio.sleep(min(poll, deadline - now))
            poll = min(poll * 2, MAX_POLL)

    async def aclose(self) -> None:
        """Close the pooled connections (the client stays usable: a new pool opens on demand)."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    def _body(self, messages: list[dict], tools: list[dict], options: dict) -> dict:
        sent = [dict(m, content="") if m.get("role") == "assistant" and m.get("content") is None else m
                for m in messages]
        body: dict[str, Any] = {"model": self.model, "messages": sent, "stream": True,
                                "stream_options": {"include_usage": True}}
        if tools:
            body["tools"] = tools
        body.update({k: v for k, v in {**self.options, **options}.items() if v is not None})
        if body.get("stream") is False:
            body.pop("stream_options", None)
        return body

    def _http(self) -> Any:
        """One httpx.AsyncClient per event loop (a pool cannot outlive its loop)."""
        import httpx

        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop or self._client.is_closed:
            timeout = httpx.Timeout(connect=self.connect_timeout, read=self.idle_timeout,
                                    write=self.idle_timeout, pool=self.connect_timeout)
            loopback = urlsplit(self.base_url).hostname in ("127.0.0.1", "localhost", "::1")
            # No TLS on plain http: skip loading the CA bundle (about 20 ms of start-up).
            plain = self.base_url.startswith("http://")
            self._client = httpx.AsyncClient(timeout=timeout, trust_env=not loopback, verify=not plain)
            self._client_loop = loop
        return self._client

    def _error(self, kind: str, template: str, **fields: Any) -> LLMError:
        url = shown_url(self.url)
        return LLMError(kind, one_line(template.format(url=url, **fields), 600), url)  # type: ignore[arg-type]

    async def _read(self, response: Any, tools: list[dict], on_delta: Any) -> AssistantMessage:
        """Read an event stream (httpx-sse), or JSON when the body starts with `{`: one whole
        answer (stream-12) or one chunk per line."""
        import httpx

        from mm.llm.stream import StreamAssembler  # after the request is sent: start-up time

        assembler = StreamAssembler(tools, on_delta, shown_url(self.url))
        body = response.aiter_bytes()
        head = await _head(body)
        if not head.strip():
            raise self._error("incomplete_stream", INCOMPLETE, detail=NO_END)
        try:
            if head.lstrip().startswith(b"{"):
                done = await self._read_json(_chain(head, body), assembler)
            else:
                done = await self._read_sse(_chain(head, body), assembler)
        except (httpx.TransportError, httpx.TimeoutException):
            if assembler.finish_reason is None:
                raise
            done = True  # the answer was complete; only usage or [DONE] was lost
        if not done and assembler.finish_reason is None:
            first = one_line(head.decode("utf-8", "replace").lstrip().split("\n", 1)[0], 80)
            if not assembler.chunks and not _is_sse_line(first):
                raise self._error("malformed_stream", MALFORMED, detail=NOT_A_STREAM.format(excerpt=first))
            raise self._error("incomplete_stream", INCOMPLETE, detail=NO_END)
        return assembler.finish()

    async def _read_sse(self, body: AsyncIterator[bytes], assembler: StreamAssembler) -> bool:
        """Feed every event's data to `assembler` (httpx-sse: lines end at CR or LF only, so a
        U+2028 inside a JSON string stays in its line); True once `[DONE]` came."""
        import httpx
        from httpx_sse import EventSource

        events = httpx.Response(200, headers={"content-type": SSE_TYPE}, content=body)
        async for event in EventSource(events).aiter_sse():
            if self._dispatch(event.data, assembler):
                return True
        return False

    async def _read_json(self, body: AsyncIterator[bytes], assembler: StreamAssembler) -> bool:
        """A body that starts with `{`: JSON lines, each a chunk (or a whole `chat.completion`),
        fed as they come; else the whole body as one JSON answer (stream-12). Returns True when
        the answer needs no finish_reason: a single JSON answer."""
        lines, count, line = _json_lines(body), 0, ""
        async for line in lines:
            obj = _json_object(line)
            if obj is None and count == 0:  # an indented answer: the object spans lines
                rest = [more async for more in lines]
                self._feed_answer("\n".join([line] + rest), assembler)
                return True
            if obj is None:
                raise self._error("malformed_stream", MALFORMED, detail=BAD_DATA.format(excerpt=one_line(line, 80)))
            count += 1
            assembler.feed(_as_chunk(obj))
        if not assembler.chunks or not assembler.answered:
            raise self._error("malformed_stream", MALFORMED, detail=NO_CHOICES.format(excerpt=one_line(line, 80)))
        return count == 1

    def _dispatch(self, payload: str, assembler: StreamAssembler) -> bool:
        """Feed one event; True at `[DONE]`. Raises LLMError("malformed_stream") for bad JSON."""
        payload = payload.strip()
        if payload == "[DONE]":
            return True
        if not payload:
            return False
        chunk = _json_object(payload)
        if chunk is None:
            raise self._error("malformed_stream", MALFORMED, detail=BAD_DATA.format(excerpt=one_line(payload, 80)))
        assembler.feed(chunk)
        return False

    def _feed_answer(self, text: str, assembler: StreamAssembler) -> None:
        """A non-streamed `chat.completion` (or a lone chunk) read as one chunk (stream-12)."""
        obj = _json_object(text)
        if obj is None:
            raise self._error("malformed_stream", MALFORMED, detail=NOT_A_STREAM.format(excerpt=one_line(text, 80)))
        assembler.feed(_as_chunk(obj))
        if not assembler.answered:
            raise self._error("malformed_stream", MALFORMED, detail=NO_CHOICES.format(excerpt=one_line(text, 80)))


def connect_cause(err: Exception) -> str:
    """Why a connection failed, in a few words ("connection refused" for a closed port)."""
    cause = one_line(str(err), 120)
    if "refused" in cause or "attempts failed" in cause:
        return REFUSED
    return cause or type(err).__name__


async def _head(body: AsyncIterator[bytes]) -> bytes:
    """The body's first bytes, up to and including its first one that is not blank (b"" when
    the body is empty or blank)."""
    head = bytearray()
    async for part in body:
        head += part
        if part.strip():
            break
    return bytes(head)


async def _chain(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    yield first
    async for part in rest:
        yield part


async def _json_lines(body: AsyncIterator[bytes]) -> AsyncIterator[str]:
    """The body's non-blank lines, cut at LF only (never inside a JSON string), as text."""
    pending: list[bytes] = []
    async for part in body:
        *done, last = part.split(b"\n")
        for piece in done:
            pending.append(piece)
            line = b"".join(pending).decode("utf-8", "replace")
            pending = []
            if line.strip():
                yield line
        pending.append(last)
    line = b"".join(pending).decode("utf-8", "replace")
    if line.strip():
        yield line


def _is_sse_line(line: str) -> bool:
    """Whether `line` is a comment or a field line of an event stream (`data: …`, `event: …`)."""
    field, sep, _ = line.partition(":")
    return line.startswith(":") or (bool(sep) and field in SSE_FIELDS)


def _json_object(text: str) -> dict | None:
    """`text` decoded when it is one JSON object, else None."""
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def _as_chunk(obj: dict) -> dict:
    """A whole `chat.completion` as a chunk: its first choice's `message` as the `delta`, each
    tool call given its position as `index`; any other object as it is."""
    choices = obj.get("choices")
    if not (isinstance(choices, list) and choices and isinstance(choices[0], dict)):
        return obj
    choice = dict(choices[0])
    message = choice.get("message")
    if "delta" in choice or not isinstance(message, dict):
        return obj
    message = dict(message)
    if isinstance(message.get("tool_calls"), list):
        message["tool_calls"] = [dict(c, index=c.get("index", i)) if isinstance(c, dict) else c
                                 for i, c in enumerate(message["tool_calls"])]
    del choice["message"]
    return dict(obj, choices=[dict(choice, delta=message)] + choices[1:])


async def error_detail(response: Any) -> str:
    """The server's own words from an error body: `error.message`, `error`, `message`, `detail`,
    else the text; one line."""
    raw = b""
    async for part in response.aiter_bytes():
        raw += part
        if len(raw) >= ERROR_BODY_LIMIT:
            break
    text = raw[:ERROR_BODY_LIMIT].decode("utf-8", "replace")
    try:
        obj = json.loads(text)
    except ValueError:
        obj = None
    if isinstance(obj, dict):
        err = obj.get("error")
        for value in ((err.get("message") if isinstance(err, dict) else err), obj.get("message"), obj.get("detail")):
            if isinstance(value, str) and value.strip():
                return one_line(value, 300)
    return one_line(text, 300) or f"HTTP {response.status_code} with an empty body"
