"""A scripted OpenAI-compatible model server on 127.0.0.1, for tests (DESIGN.md §Testing). Stdlib only.

    srv = ScriptedServer().start()          # or: with ScriptedServer() as srv: ...
    srv.add_sse([chunk_dict, "data: [DONE]"])   # dict -> "data: <compact json>\\n\\n"; str -> the line + "\\n\\n"
    srv.add_reply("Hello.")                 # a streamed text answer
    ChatClient(srv.base_url, "m") ...       # srv.base_url == "http://127.0.0.1:PORT/v1"

Each POST to a path ending in /chat/completions takes the next scripted response (HTTP 500 with
NO_MORE once the script is used up) and records its JSON body in `requests`. A request whose
messages carry an image (an `image_url` content part: describe_image's) is answered from a script
of its own instead (`add_image`, `add_image_reply`; NO_MORE once used up) and recorded in
`image_requests` (headers in `image_request_headers`), so it never shifts the chat script. An SSE body is sent
with chunked transfer encoding, then the connection closes. `abandoned` tells, per SSE response,
whether the client closed before everything was sent; to observe it, give `delay` (or `$sleep`
items) so the server is still sending when the client gives up. A chunk list may hold
`{"$sleep": seconds}` and `{"$cut": true}` (close at once, without ending the chunked body).

Run as `python tests/scripted_server.py script.json [--port N] [--log requests.json]`: the script
is a list of responses (or {"responses": [...], "models": [...], "props": {...}, "show": {...},
"ps": {...}, "version": {...}, "tags": {...}, "router": {...}, "lmstudio": [...], "images": [...],
"embedding_topics": [[word, ...], ...]}),
each in the form `add()` takes; it prints the base URL, then serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import signal
import socket
import sys
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

NO_MORE = {"error": {"message": "scripted server: no more responses"}}


class ScriptedServer:
    """The server; see the module docstring. `port` 0 picks a free one."""

    def __init__(self, port: int = 0):
        self.port = port
        self.models: list[str | dict] = ["m"]  # a dict is sent as the whole /models entry
        self.props: dict | None = None
        self.show: dict | None = None
        self.ps: dict | None = None  # ollama's GET /api/ps (the models loaded)
        self.ps_after_load: dict | None = None  # /api/ps once a POST /api/generate loaded the model
        self.version: dict | None = None  # ollama's GET /api/version
        self.tags: dict | None = None  # ollama's GET /api/tags (every model pulled: `/model` lists them)
        self.loads: list[Any] = []  # the bodies of POST /api/generate (ollama: load the model)
        self.load_seconds = 0.0  # how long that load takes
        # Unloading (mm-tools.md §unload_model): ollama's `keep_alive: 0` takes the model out of `ps`
        # and answers `unload_done_reason`; llama.cpp's router (`router`: model → "loaded"/"unloaded";
        # None: a single-model server, whose POST /models/unload is a 404); LM Studio's REST API
        # (`lmstudio`: its GET /api/v1/models `models` list; None: no such API, 404). Bodies in `unloads`.
        self.unloads: list[Any] = []
        self.unload_done_reason: str | None = "unload"
        self.unload_seconds = 0.0  # how long an unload request takes to be answered
        self.router: dict[str, str] | None = None
        self.lmstudio: list[dict] | dict | None = None
        # POST /embeddings (OpenAI): None answers 404, as a server without embeddings does; a list of
        # topics (each a list of words) gives every input a vector with one dimension per topic, its
        # words' count in the input (then 0.001), so that texts on one topic are near without
        # sharing a word. The bodies are kept in `embedding_requests`.
        self.embedding_topics: list[list[str]] | None = None
        self.embedding_requests: list[Any] = []
        self.requests: list[Any] = []
        self.request_headers: list[dict[str, str]] = []
        self.requests_file: str | None = None
        self.image_requests: list[Any] = []  # the bodies of requests that carry an image
        self.image_request_headers: list[dict[str, str]] = []
        self._image_script: deque[dict] = deque()
        self._to_images = False  # add_image is pushing: _push goes to the image script
        self._script: deque[dict] = deque()
        # Responses kept for requests whose first user message holds a marker (add_for), and how
        # many such requests were answered at once at most (sub-agents: tests/test_agents*.py).
        self._routes: dict[str, deque[dict]] = {}
        self.routed_active = 0
        self.most_routed_active = 0
        self._abandoned: list[bool] = []
        self._lock = threading.Condition()
        self._active = 0
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None

    # -- life cycle
    def start(self) -> "ScriptedServer":
        httpd = ThreadingHTTPServer(("127.0.0.1", self.port), _Handler)
        httpd.daemon_threads = True
        httpd.block_on_close = False
        httpd.scripted = self  # type: ignore[attr-defined]
        self._httpd, self.port = httpd, httpd.server_address[1]
        threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "ScriptedServer":
        return self.start() if self._httpd is None else self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"

    # -- the script
    def add_sse(self, chunks: list[dict | str], status: int = 200, headers: dict | None = None,
                delay: float = 0.0) -> None:
        """One event-stream response; `delay` seconds are waited before every chunk but the first."""
        self._push({"kind": "sse", "chunks": list(chunks), "status": status, "headers": headers or {}, "delay": delay})

    def add_json(self, body: dict | str, status: int = 200, headers: dict | None = None) -> None:
        """One whole-body response (a dict is sent as JSON)."""
        self._push({"kind": "json", "body": body, "status": status, "headers": headers or {}})

    def add_stall(self, seconds: float) -> None:
        """Answer 200 with event-stream headers, then send nothing for `seconds` (or until the client leaves)."""
        self._push({"kind": "stall", "seconds": seconds})

    def add_reply(self, content: str, reasoning: str | None = None, usage: tuple[int, int] | None = (10, 5),
                  delay: float = 0.0, finish: str = "stop") -> None:
        """A streamed text answer: role, reasoning and content in a few pieces, `finish_reason`
        `finish` ("length": cut at the token limit), usage, [DONE]."""
        chunks = [_chunk({"role": "assistant", "content": ""})]
        chunks += [_chunk({"reasoning_content": p}) for p in _pieces(reasoning or "")]
        chunks += [_chunk({"content": p}) for p in _pieces(content)]
        chunks.append(_chunk({}, finish))
        self.add_sse(chunks + _tail(usage), delay=delay)

    def add_tool_calls(self, calls: list[dict], content: str = "", usage: tuple[int, int] | None = (10, 5),
                       delay: float = 0.0, reasoning: str | None = None, finish: str = "tool_calls") -> None:
        """Streamed calls, llama-server style: `{"name", "arguments": dict or raw str, "id"?}` each
        (an explicit "id": "" sends an empty id); the id and name come once, arguments in pieces.
        `reasoning` comes first, as `reasoning_content` deltas; `finish_reason` is `finish`
        ("length": cut at the token limit, the last call's raw arguments cut where the test cut them)."""
        chunks = [_chunk({"role": "assistant", "content": None})]
        chunks += [_chunk({"reasoning_content": p}) for p in _pieces(reasoning or "")]
        chunks += [_chunk({"content": p}) for p in _pieces(content)]
        for i, call in enumerate(calls):
            args = call.get("arguments", {})
            args = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
            call_id = call["id"] if "id" in call else f"call_{next(self._ids)}"
            chunks.append(_chunk({"tool_calls": [{"index": i, "id": call_id, "type": "function",
                                                  "function": {"name": call["name"], "arguments": ""}}]}))
            chunks += [_chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]}) for p in _pieces(args, 2)]
        chunks.append(_chunk({}, finish))
        self.add_sse(chunks + _tail(usage), delay=delay)

    def add(self, spec: dict) -> None:
        """One response from plain data: a llm-streams case (`chunks` or `body`), or one of
        {"sse": [...]}, {"json": body}, {"tool_calls": [...], "content"?}, {"reply"|"content": text,
        "reasoning"?}, {"stall": seconds}; `status`/`http_status`, `headers`/`response_headers`,
        `delay` and `finish` (the finish_reason of a reply or of tool calls) apply where they make sense."""
        status = spec.get("status", spec.get("http_status", 200))
        headers = spec.get("headers", spec.get("response_headers"))
        if "sse" in spec or "chunks" in spec:
            self.add_sse(spec.get("sse", spec.get("chunks")), status, headers, spec.get("delay", 0.0))
        elif "json" in spec or "body" in spec:
            self.add_json(spec.get("json", spec.get("body")), status, headers)
        elif "tool_calls" in spec:
            self.add_tool_calls(spec["tool_calls"], spec.get("content") or "", delay=spec.get("delay", 0.0),
                                finish=spec.get("finish", "tool_calls"))
        elif "reply" in spec or "content" in spec:
            usage = spec.get("usage", (10, 5))
            self.add_reply(spec.get("reply", spec.get("content")) or "", spec.get("reasoning"),
                           tuple(usage) if usage else None, spec.get("delay", 0.0), spec.get("finish", "stop"))
        elif "stall" in spec:
            self.add_stall(spec["stall"])
        else:
            raise ValueError(f"unknown scripted response: {spec!r}")

    def add_image(self, spec: dict) -> None:
        """One response for the next request that carries an image, in any form `add` takes."""
        with self._lock:  # reentrant: _push takes it again
            self._to_images = True
            try:
                self.add(spec)
            finally:
                self._to_images = False

    def add_image_reply(self, content: str) -> None:
        """A streamed text answer for the next request that carries an image."""
        self.add_image({"reply": content})

    def add_for(self, marker: str, spec: dict) -> None:
        """One response in add()'s form, kept for the next request whose first user message
        holds `marker` (before the shared script is used)."""
        with self._lock:
            self.add(spec)
            response = self._script.pop()
            response["routed"] = True
            self._routes.setdefault(marker, deque()).append(response)

    @property
    def abandoned(self) -> list[bool]:
        """Per SSE response: did the client close before all was sent (waits for responses in flight)."""
        self.wait_idle()
        return list(self._abandoned)

    @property
    def pending(self) -> int:
        """Scripted responses not used yet."""
        return len(self._script)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until no response is being sent; False if one still is after `timeout` seconds."""
        with self._lock:
            return self._lock.wait_for(lambda: self._active == 0, timeout)

    # -- used by the handler
    def _push(self, response: dict) -> None:
        with self._lock:
            (self._image_script if self._to_images else self._script).append(response)

    def _take(self, body: Any, headers: dict[str, str]) -> dict:
        if _carries_image(body):
            return self._take_image(body, headers)
        with self._lock:
            self.requests.append(body)
            self.request_headers.append(headers)
            self._active += 1
            if self.requests_file:
                _write_atomic(self.requests_file, json.dumps(self.requests, ensure_ascii=False, indent=1))
            first = _first_user(body)
            for marker, queue in self._routes.items():
                if queue and marker in first:
                    self.routed_active += 1
                    self.most_routed_active = max(self.most_routed_active, self.routed_active)
                    return queue.popleft()
            if self._script:
                return self._script.popleft()
        return {"kind": "json", "body": NO_MORE, "status": 500, "headers": {}}

    def _take_image(self, body: Any, headers: dict[str, str]) -> dict:
        with self._lock:
            self.image_requests.append(body)
            self.image_request_headers.append(headers)
            self._active += 1
            if self._image_script:
                return self._image_script.popleft()
        return {"kind": "json", "body": NO_MORE, "status": 500, "headers": {}}

    def _done(self, abandoned: bool | None, routed: bool = False) -> None:
        with self._lock:
            self.routed_active -= 1 if routed else 0
            if abandoned is not None:
                self._abandoned.append(abandoned)
            self._active -= 1
            self._lock.notify_all()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    @property
    def scripted(self) -> ScriptedServer:
        return self.server.scripted  # type: ignore[attr-defined]

    def do_GET(self) -> None:  # noqa: N802
        path, srv = urlsplit(self.path).path.rstrip("/"), self.scripted
        if path == "/api/v1/models" and srv.lmstudio is not None:  # a dict: an answer of another shape
            self._send_json(200, srv.lmstudio if isinstance(srv.lmstudio, dict) else {"models": srv.lmstudio})
        elif path.endswith("/models") and not path.startswith("/api/"):
            self._send_json(200, {"object": "list", "data": [
                m if isinstance(m, dict) else {"id": m, "object": "model", "owned_by": "scripted"} for m in srv.models]})
        elif path == "/health":
            self._send_json(200, {"status": "ok"})
        elif path == "/props" and srv.props is not None:
            self._send_json(200, srv.props)
        elif path == "/api/ps" and srv.ps is not None:
            self._send_json(200, srv.ps)
        elif path == "/api/version" and srv.version is not None:
            self._send_json(200, srv.version)
        elif path == "/api/tags" and srv.tags is not None:
            self._send_json(200, srv.tags)
        else:
            self._send_json(404, {"error": {"code": 404, "message": "File Not Found"}})

    def do_POST(self) -> None:  # noqa: N802
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path, srv = urlsplit(self.path).path.rstrip("/"), self.scripted
        if path.endswith("/chat/completions"):
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
            response = srv._take(body, {k.lower(): v for k, v in self.headers.items()})
            abandoned = None
            try:
                if response["kind"] == "json":
                    self._send_json(response["status"], response["body"], response["headers"])
                elif response["kind"] == "sse":
                    abandoned = self._send_sse(response)
                else:
                    abandoned = self._stall(response["seconds"])
            finally:
                srv._done(abandoned, bool(response.get("routed")))
        elif path.endswith("/embeddings") and srv.embedding_topics is not None:
            self._embeddings(json.loads(raw or b"{}"))
        elif path == "/api/show" and srv.show is not None:
            self._send_json(200, srv.show)
        elif path == "/api/generate" and json.loads(raw or b"{}").get("keep_alive") == 0 and srv.ps is not None:
            self._unload_ollama(json.loads(raw))
        elif path == "/models/unload" and srv.router is not None:
            self._unload_router(json.loads(raw or b"{}"))
        elif path == "/api/v1/models/unload" and srv.lmstudio is not None:
            self._unload_lmstudio(json.loads(raw or b"{}"))
        elif path == "/api/generate" and srv.show is not None:  # an empty prompt loads the model
            srv.loads.append(json.loads(raw or b"{}"))
            self._sleep(srv.load_seconds)
            srv.ps = srv.ps_after_load if srv.ps_after_load is not None else srv.ps
            self._send_json(200, {"model": srv.loads[-1].get("model"), "response": "", "done": True,
                                  "done_reason": "load"})
        else:
            self._send_json(404, {"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}})

    def _embeddings(self, body: dict) -> None:
        """OpenAI's embeddings answer: one vector per input (a string or a list of them)."""
        srv = self.scripted
        srv.embedding_requests.append(body)
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else list(texts or [])
        data = [{"object": "embedding", "index": i, "embedding": _topic_vector(str(t), srv.embedding_topics or [])}
                for i, t in enumerate(texts)]
        self._send_json(200, {"object": "list", "data": data, "model": body.get("model"),
                              "usage": {"prompt_tokens": 0, "total_tokens": 0}})

    def _unload_ollama(self, body: dict) -> None:
        """`keep_alive: 0`: the model leaves `ps` (ollama answers so even for a model not loaded,
        after loading it: mm never asks for one)."""
        srv = self.scripted
        srv.unloads.append(body)
        self._sleep(srv.unload_seconds)
        names = (body.get("model"), f"{body.get('model')}:latest")
        srv.ps = {**srv.ps, "models": [m for m in srv.ps.get("models", []) if m.get("name") not in names]}
        answer = {"model": body.get("model"), "created_at": "2026-01-01T00:00:00Z", "response": "", "done": True}
        if srv.unload_done_reason is not None:
            answer["done_reason"] = srv.unload_done_reason
        self._send_json(200, answer)

    def _unload_router(self, body: dict) -> None:
        """llama-server in router mode (tools/server/server-models.cpp): 400 for a model it does
        not know or that is not running, else `{"success": true}`."""
        srv, name = self.scripted, body.get("model")
        srv.unloads.append(body)
        self._sleep(srv.unload_seconds)
        if name not in srv.router:
            return self._send_json(400, _error(400, "model is not found"))
        if srv.router[name] != "loaded":
            return self._send_json(400, _error(400, "model is not running"))
        srv.router[name] = "unloaded"
        self._send_json(200, {"success": True})

    def _unload_lmstudio(self, body: dict) -> None:
        """LM Studio 0.4's REST API: the instance leaves `loaded_instances`; its id is answered."""
        srv, instance = self.scripted, body.get("instance_id")
        srv.unloads.append(body)
        for entry in srv.lmstudio:
            ids = [i.get("id") for i in entry.get("loaded_instances", [])]
            if instance in ids:
                entry["loaded_instances"] = [i for i in entry["loaded_instances"] if i.get("id") != instance]
                return self._send_json(200, {"instance_id": instance})
        self._send_json(404, {"error": {"message": f"no loaded instance {instance}"}})

    def _send_json(self, status: int, body: Any, headers: dict | None = None) -> None:
        data = (body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)).encode()
        self._head(status, {"Content-Type": "application/json", "Content-Length": str(len(data)), **(headers or {})})
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            pass

    def _head(self, status: int, headers: dict) -> None:
        self.close_connection = True
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Connection", "close")
        self.end_headers()

    def _send_sse(self, response: dict) -> bool:
        headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        headers.update(response["headers"])
        headers["Transfer-Encoding"] = "chunked"
        self._head(response["status"], headers)
        self.wfile.flush()
        chunks = response["chunks"]
        for i, item in enumerate(chunks):
            if isinstance(item, dict) and "$sleep" in item:
                self._sleep(item["$sleep"])
                continue
            if isinstance(item, dict) and item.get("$cut"):
                return False
            if i and response["delay"]:
                self._sleep(response["delay"])
            line = item if isinstance(item, str) else "data: " + json.dumps(item, separators=(",", ":"), ensure_ascii=False)
            data = _chunked((line + "\n\n").encode())
            if i == len(chunks) - 1:
                data += _chunked(b"")  # the end in the same write: a client that read [DONE] read it too
            if self._peer_closed() or not self._write(data):
                return True
        if not chunks and not self._write(_chunked(b"")):
            return True
        return self._closed_with_reset()

    def _stall(self, seconds: float) -> bool:
        self._head(200, {"Content-Type": "text/event-stream", "Transfer-Encoding": "chunked"})
        self.wfile.flush()
        end = time.monotonic() + seconds
        while time.monotonic() < end and not self.scripted._stopping.is_set():
            if self._peer_closed():
                return True
            time.sleep(0.02)
        return not self._write(_chunked(b""))

    def _write(self, data: bytes) -> bool:
        try:
            self.wfile.write(data)
            self.wfile.flush()
            return True
        except OSError:
            return False

    def _closed_with_reset(self, timeout: float = 2.0) -> bool:
        """Everything was sent: wait for the client to close. A reset means it closed with unread
        data (it gave up before the end); a clean close means it read everything."""
        try:
            readable, _, _ = select.select([self.connection], [], [], timeout)
            if readable:
                self.connection.recv(1)
        except ConnectionResetError:
            return True
        except OSError:
            pass
        return False

    def _peer_closed(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _sleep(self, seconds: float) -> None:
        self.scripted._stopping.wait(seconds)


def _first_user(body: Any) -> str:
    """The text of the first user message of a request body ("" when none)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


def _topic_vector(text: str, topics: list[list[str]]) -> list[float]:
    """A vector of `text` with one dimension per topic: how many of its words are the topic's,
    then 0.001 (never a zero vector)."""
    import re

    words = re.findall(r"\w+", text.lower())
    return [float(sum(words.count(w.lower()) for w in topic)) for topic in topics] + [0.001]


def _error(code: int, message: str) -> dict:
    """llama-server's error body."""
    return {"error": {"code": code, "message": message, "type": "invalid_request_error"}}


def _carries_image(body: Any) -> bool:
    """Whether a chat request's messages hold an `image_url` content part."""
    messages = body.get("messages") if isinstance(body, dict) else None
    return any(isinstance(part, dict) and part.get("type") == "image_url"
               for message in messages or [] if isinstance(message, dict) and isinstance(message.get("content"), list)
               for part in message["content"])


def _chunked(data: bytes) -> bytes:
    """One HTTP/1.1 chunk (the empty one ends the body)."""
    return b"%x\r\n%s\r\n" % (len(data), data)


def _chunk(delta: dict, finish: str | None = None) -> dict:
    return {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def _tail(usage: tuple[int, int] | None) -> list:
    tail: list = []
    if usage:
        tail.append({"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": "m", "choices": [],
                     "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                               "total_tokens": usage[0] + usage[1]}})
    return tail + ["data: [DONE]"]


def _pieces(text: str, n: int = 3) -> list[str]:
    """`text` cut in up to n pieces (none when empty)."""
    if not text:
        return []
    size = max(1, -(-len(text) // n))
    return [text[i:i + size] for i in range(0, len(text), size)]


def _write_atomic(path: str, text: str) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv: list[str]) -> int:
    """`scripted_server.py SCRIPT.json [--port N] [--log FILE]`: serve the script until a signal."""
    args, port, log = [], 0, None
    it = iter(argv)
    for arg in it:
        if arg == "--port":
            port = int(next(it))
        elif arg == "--log":
            log = next(it)
        else:
            args.append(arg)
    if len(args) != 1:
        print("usage: scripted_server.py SCRIPT.json [--port N] [--log FILE]", file=sys.stderr)
        return 2
    with open(args[0], encoding="utf-8") as f:
        script = json.load(f)
    if isinstance(script, list):
        script = {"responses": script}
    srv = ScriptedServer(port)
    for key in ("models", "props", "show", "ps", "version", "tags", "router", "lmstudio", "embedding_topics"):
        if key in script:
            setattr(srv, key, script[key])
    for spec in script.get("responses", []):
        srv.add(spec)
    for spec in script.get("images", []):
        srv.add_image(spec)
    srv.requests_file = log
    srv.start()
    print(srv.base_url, flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT}) if hasattr(signal, "sigwait") else threading.Event().wait()
    srv.stop()
    return 0


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    sys.exit(main(sys.argv[1:]))
