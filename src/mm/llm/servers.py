"""Model servers on this machine: discovery, model lists, and what a server says about how it runs
a model (context window, silent cuts, a chat template that drops tools).

Loopback ports and shapes: llama.cpp's llama-server 8080 (`/v1`, `GET /props`), ollama 11434
(`/v1`, `POST /api/show`), Docker Model Runner 12434 (`/engines/v1`), LM Studio 1234 (`/v1`,
`GET /api/v0/models/<model>`); vLLM lists `max_model_len` in `/v1/models`. notes/local-model.md §3.
httpx is imported lazily.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from mm.llm.client import UNREACHABLE, connect_cause
from mm.llm.types import LLMError, shown_url

CANDIDATES: list[tuple[str, str]] = [
    ("http://127.0.0.1:8080/v1", "llamacpp"),
    ("http://127.0.0.1:11434/v1", "ollama"),
    ("http://127.0.0.1:12434/engines/v1", "dmr"),
    ("http://127.0.0.1:1234/v1", "lmstudio"),
]
LIST_FAILED = "the model server at {url} answered HTTP {status} when asked for its models"
NOT_A_LIST = "the model server at {url} did not answer with a model list"
_API_SUFFIXES = ("/engines/llama.cpp/v1", "/engines/v1", "/v1")


async def list_models(base_url: str, timeout: float = 5.0, api_key: str | None = None) -> list[str]:
    """The model names `GET {base_url}/models` lists (OpenAI `data[].id`, or llama-server's
    `models[].name`), in the server's order.

    timeout: seconds for the whole request. Raises LLMError: unreachable (nothing answers),
    server_error (HTTP status ≥ 400), malformed_stream (not a model list); one line naming the URL.
    """
    return await _model_names(base_url.rstrip("/") + "/models", timeout, api_key)


async def server_models(base_url: str, provider: str, timeout: float = 5.0, api_key: str | None = None) -> list[str]:
    """The models a server offers, for `/model`: ollama's `GET /api/tags` (every model pulled,
    `models[].name`), falling back to `GET {base_url}/models`; any other server's
    `GET {base_url}/models` (list_models). Raises LLMError as list_models does."""
    if provider == "ollama":
        try:
            return await _model_names(server_origin(base_url) + "/api/tags", timeout, api_key)
        except LLMError:
            pass
    return await list_models(base_url, timeout, api_key)


async def _model_names(url: str, timeout: float, api_key: str | None) -> list[str]:
    """The model names a list at `url` gives (see list_models)."""
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        async with server_http(url, timeout) as client:
            response = await client.get(url, headers=headers)
    except httpx.HTTPError as err:
        raise LLMError("unreachable", UNREACHABLE.format(url=shown_url(url), cause=connect_cause(err)), url) from None
    if response.status_code >= 400:
        raise LLMError("server_error", LIST_FAILED.format(url=shown_url(url), status=response.status_code), url)
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise LLMError("malformed_stream", NOT_A_LIST.format(url=shown_url(url)), url)
    names: list[str] = []
    entries = [e for key in ("data", "models") if isinstance(body.get(key), list) for e in body[key]]
    for entry in entries:
        if isinstance(entry, dict):
            name = entry.get("id") or entry.get("name") or entry.get("model")
            if isinstance(name, str) and name and name not in names:
                names.append(name)
    return names


async def discover(timeout: float = 0.3, candidates: list[tuple[str, str]] | None = None
                   ) -> tuple[str, str, str] | None:
    """The first loopback server, in `candidates` order, that lists at least one model.

    timeout: seconds each probe may take (all run at once). candidates: (base_url, provider)
    pairs, default CANDIDATES (llama.cpp, ollama, Docker Model Runner, LM Studio).
    Returns (base_url, model, provider), the model being the first listed that is not an
    embedding model (by name), else the first; None when none answers. Never raises.
    """
    pairs = candidates if candidates is not None else CANDIDATES

    async def probe(url: str) -> list[str]:
        try:
            return await asyncio.wait_for(list_models(url, timeout), timeout)
        except (LLMError, asyncio.TimeoutError, OSError):
            return []

    tasks = [asyncio.ensure_future(probe(url)) for url, _ in pairs]
    try:
        for (url, provider), task in zip(pairs, tasks):
            models = await task
            if models:
                chat = [m for m in models if "embed" not in m.lower()]
                return url.rstrip("/"), (chat or models)[0], provider
        return None
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


SILENT_CUTTERS = ("ollama", "llmman")  # servers that cut a prompt longer than the window without an error
TOOL_CAPS = ("supports_tools", "supports_tool_calls")  # llama.cpp /props chat_template_caps, both needed
OLLAMA_DEFAULT_WINDOW, OLLAMA_OLD_DEFAULT_WINDOW = 4096, 2048  # ollama ≥ 0.6.7 (its lowest tier) / older
OLLAMA_SUGGESTED_WINDOW = 32768  # below this (and the model's own length) the user is told how to raise it
TOOLS_DROPPED = (
    "[warning: the chat template of {model} at {url} cannot carry tools (/props: chat_template_caps.{cap} is "
    "false), so the model never sees mm's tools — start llama-server with --jinja, or give it a template with "
    "tools: --chat-template-file FILE (docs/models.md)]"
)
OLLAMA_SMALL_WINDOW = (
    "[warning: ollama runs {model} with a context window of {window} tokens (the model takes {trained}) and cuts "
    "a longer prompt silently: mm compacts to fit and refuses what cannot — for more, restart ollama with "
    "OLLAMA_CONTEXT_LENGTH={suggested} (docs/models.md)]"
)
OLLAMA_WINDOW_GUESSED = (
    "[warning: ollama does not say which context window it runs {model} with: mm assumes {window} tokens, its "
    "default — set contextWindow: in the agent file to the OLLAMA_CONTEXT_LENGTH ollama runs with]"
)


@dataclass
class ServerFacts:
    """What a server says about how it runs a model (probe_server); `warnings` are the lines to
    show the user once (TOOLS_DROPPED, OLLAMA_SMALL_WINDOW, OLLAMA_WINDOW_GUESSED)."""

    context_window: int | None = None  # tokens the model runs with; None when the server does not say
    cuts_silently: bool = False  # a longer prompt is cut without an error (ollama): never send one
    window_from: str = "server"  # "server" (it said), "default" (ollama did not: its default), "agent file"
    trained_window: int | None = None  # the model's own length (ollama `model_info`), when known
    tools_dropped: str = ""  # the chat_template_caps flag that is false (llama.cpp), else ""
    warnings: list[str] = field(default_factory=list)


def cuts_silently(provider: str) -> bool:
    """True for servers that cut a prompt longer than the context window without an error
    (ollama, behind its OpenAI API too): the window must be known before the first request."""
    return provider in SILENT_CUTTERS


async def probe_context_window(base_url: str, model: str, provider: str, timeout: float = 5.0) -> int | None:
    """The context window (tokens) the server runs `model` with, or None (probe_server's)."""
    return (await probe_server(base_url, model, provider, timeout)).context_window


async def probe_server(base_url: str, model: str, provider: str, timeout: float = 5.0,
                       load_timeout: float = 300.0) -> ServerFacts:
    """Ask the server how it runs `model`: its context window, whether it cuts silently, and
    whether its chat template drops tools. Never raises; what it cannot learn stays unknown.

    llamacpp and unknown providers: `GET /props` → `default_generation_settings.n_ctx`, else
    `n_ctx` (router mode: `/props?model=`), and `chat_template_caps` (TOOL_CAPS false: the
    TOOLS_DROPPED warning). ollama, llmman (docs/model-servers.md §What the server says): `GET /api/ps` →
    `context_length` of the loaded model, else `POST /api/show` → `num_ctx` in `parameters`, else the
    model is loaded (`POST /api/generate`, as the first request would, within `load_timeout` seconds)
    and `/api/ps` asked again, else ollama's default (OLLAMA_DEFAULT_WINDOW, 2048 before 0.6.7 by
    `/api/version`) capped by `model_info["<arch>.context_length"]`. lmstudio: `GET
    /api/v0/models/<model>` → `loaded_context_length`, else `max_context_length`. Any provider, last:
    the `/models` entry's `max_model_len` (vLLM) or `context_length`. timeout: seconds per request.
    """
    import httpx

    origin = server_origin(base_url)
    facts = ServerFacts(cuts_silently=cuts_silently(provider))
    try:
        async with server_http(origin, timeout) as client:
            if facts.cuts_silently:
                await _ollama(client, origin, model, facts, load_timeout)
            elif provider == "lmstudio":
                facts.context_window = await _tolerant(_get(
                    client, f"{origin}/api/v0/models/{quote(model, safe='')}",
                    "loaded_context_length", "max_context_length"))
            else:
                await _llamacpp(client, origin, model, facts)
            if facts.context_window is None:
                facts.context_window = await _tolerant(_models_entry(client, base_url.rstrip("/") + "/models", model))
    except httpx.HTTPError:
        pass
    facts.warnings = warning_lines(facts, model, shown_url(base_url))
    return facts


def tools_dropped(props: Any) -> str:
    """The TOOL_CAPS flag a llama.cpp `/props` answer says is false ("" when none is, or no caps)."""
    caps = props.get("chat_template_caps") if isinstance(props, dict) else None
    if isinstance(caps, dict):
        for cap in TOOL_CAPS:
            if caps.get(cap) is False:
                return cap
    return ""


def server_origin(base_url: str) -> str:
    """`http://host:port` plus any path before the OpenAI part (`/v1`, `/engines/v1`)."""
    url = base_url.rstrip("/")
    for suffix in _API_SUFFIXES:
        if url.endswith(suffix):
            return url[: -len(suffix)]
    return url


async def _tolerant(step: Any) -> Any:
    """`await step`, or None when the server's answer is missing or not what was expected."""
    import httpx

    try:
        return await step
    except (httpx.HTTPError, ValueError, TypeError, AttributeError):
        return None


async def _json(client: Any, method: str, url: str, **kwargs: Any) -> Any:
    """The JSON body of a 2xx answer, else None."""
    response = await client.request(method, url, **kwargs)
    return response.json() if response.status_code < 400 else None


async def _get(client: Any, url: str, *paths: str) -> int | None:
    return _first_int(await _json(client, "GET", url), paths)


async def _llamacpp(client: Any, origin: str, model: str, facts: ServerFacts) -> None:
    """`/props`, then `/props?model=` (router mode): the window and the template's tool caps."""
    for url in (f"{origin}/props", f"{origin}/props?model={quote(model, safe='')}"):
        props = await _tolerant(_json(client, "GET", url))
        facts.tools_dropped = facts.tools_dropped or tools_dropped(props)
        facts.context_window = _first_int(props, ("default_generation_settings.n_ctx", "n_ctx"))
        if facts.context_window:
            return


async def _ollama(client: Any, origin: str, model: str, facts: ServerFacts, load_timeout: float) -> None:
    """The window ollama runs `model` with (probe_server's ollama rule); none when `/api/show`
    does not answer."""
    show = await _tolerant(_json(client, "POST", f"{origin}/api/show", json={"model": model, "name": model}))
    if not isinstance(show, dict):  # not an ollama, or it does not know the model: unknown
        return
    num_ctx = None
    for line in str(show.get("parameters") or "").splitlines():
        key, _, value = line.strip().partition(" ")
        if key == "num_ctx" and value.strip().isdigit():
            num_ctx = int(value.strip())
    info = show.get("model_info") if isinstance(show.get("model_info"), dict) else {}
    arch = info.get("general.architecture")
    lengths = [f"{arch}.context_length"] + [k for k in info if k.endswith(".context_length")]
    facts.trained_window = _first_int(info, lengths, dotted=False)
    window = await _tolerant(_ollama_running(client, origin, model))
    if window is None and num_ctx is None:  # not loaded: load it, as the first request would
        loaded = await _tolerant(_json(client, "POST", f"{origin}/api/generate",
                                       json={"model": model, "stream": False}, timeout=load_timeout))
        window = await _tolerant(_ollama_running(client, origin, model)) if loaded is not None else None
    window = window or num_ctx
    if window is None:
        version = await _tolerant(_json(client, "GET", f"{origin}/api/version"))
        window = OLLAMA_OLD_DEFAULT_WINDOW if _older(version, (0, 6, 7)) else OLLAMA_DEFAULT_WINDOW
        window = min(window, facts.trained_window or window)
        facts.window_from = "default"
    facts.context_window = window


async def _ollama_running(client: Any, origin: str, model: str) -> int | None:
    """`context_length` of `model` in `/api/ps` (the models loaded), else None."""
    entry = ollama_entry(await _json(client, "GET", f"{origin}/api/ps"), model)
    return _first_int(entry, ("context_length",)) if entry is not None else None


def ollama_entry(ps: Any, model: str) -> dict | None:
    """The entry of `model` in an ollama `GET /api/ps` answer (`models[]`, by `name` or `model`;
    `x` and `x:latest` are one model), or None when it is not loaded (or the answer is no list)."""
    bare = model.removesuffix(":latest")
    names = (bare, f"{bare}:latest")
    for entry in (ps.get("models") if isinstance(ps, dict) else None) or []:
        if isinstance(entry, dict) and (entry.get("name") in names or entry.get("model") in names):
            return entry
    return None


def _older(version: Any, than: tuple[int, ...]) -> bool:
    """True when an `/api/version` answer names a version before `than` (unknown: False)."""
    text = version.get("version") if isinstance(version, dict) else None
    parts = str(text or "").split("-")[0].split(".")
    if not text or not all(p.isdigit() for p in parts):
        return False
    return tuple(int(p) for p in parts) < than


def warning_lines(facts: ServerFacts, model: str, url: str) -> list[str]:
    """The lines to show the user once about `facts` (TOOLS_DROPPED, OLLAMA_WINDOW_GUESSED,
    OLLAMA_SMALL_WINDOW), for `model` served at `url` (a password in it already hidden)."""
    lines = []
    if facts.tools_dropped:
        lines.append(TOOLS_DROPPED.format(model=model, url=url, cap=facts.tools_dropped))
    window, trained = facts.context_window, facts.trained_window
    if facts.window_from == "default" and window:
        lines.append(OLLAMA_WINDOW_GUESSED.format(model=model, window=window))
    elif (facts.window_from == "server" and facts.cuts_silently and window and trained
          and window < min(trained, OLLAMA_SUGGESTED_WINDOW)):
        lines.append(OLLAMA_SMALL_WINDOW.format(model=model, window=window, trained=trained,
                                                suggested=min(trained, OLLAMA_SUGGESTED_WINDOW)))
    return lines


async def _models_entry(client: Any, url: str, model: str) -> int | None:
    for entry in (await _json(client, "GET", url) or {}).get("data") or []:
        if isinstance(entry, dict) and entry.get("id") == model:
            return _first_int(entry, ("max_model_len", "context_length", "context_window"))
    return None


def _first_int(obj: Any, paths: Any, dotted: bool = True) -> int | None:
    """The first positive integer found at one of `paths` (dotted paths unless dotted=False)."""
    for path in paths:
        value = obj
        for key in (path.split(".") if dotted else [path]):
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def server_http(url: str, timeout: float) -> Any:
    """An httpx.AsyncClient for requests to the server at `url` (timeout: seconds per request):
    the environment's proxies ignored on loopback, TLS certificates loaded for https only."""
    import httpx

    return httpx.AsyncClient(timeout=timeout, trust_env=not _loopback(url), verify=url.startswith("https:"))


def _loopback(url: str) -> bool:
    return urlsplit(url).hostname in ("127.0.0.1", "localhost", "::1")
