"""Model servers on this machine: discovery, model lists, context-window probes.

Loopback ports and shapes: llama.cpp's llama-server 8080 (`/v1`, `GET /props`), ollama 11434
(`/v1`, `POST /api/show`), Docker Model Runner 12434 (`/engines/v1`), LM Studio 1234 (`/v1`,
`GET /api/v0/models/<model>`); vLLM lists `max_model_len` in `/v1/models`. notes/local-model.md §3.
httpx is imported lazily.
"""

from __future__ import annotations

import asyncio
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
    import httpx

    url = base_url.rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        async with httpx.AsyncClient(timeout=timeout, trust_env=not _loopback(url), verify=url.startswith("https:")) as client:
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
    for entry in (body.get("data") or []) + (body.get("models") or []):
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


async def probe_context_window(base_url: str, model: str, provider: str, timeout: float = 5.0) -> int | None:
    """The context window (tokens) the server runs `model` with, or None when it cannot tell.

    llamacpp, embedded: `GET /props` → `default_generation_settings.n_ctx`, else `n_ctx` (router
    mode: `/props?model=`). ollama, llmman: `POST /api/show` → `num_ctx` in `parameters` (what the
    server runs with), else `model_info["<arch>.context_length"]`. lmstudio: `GET
    /api/v0/models/<model>` → `loaded_context_length`, else `max_context_length`. Any provider,
    last: the `/models` entry's `max_model_len` (vLLM) or `context_length`. Other providers try
    `/props` first. timeout: seconds per request. Never raises.
    """
    import httpx

    origin = server_origin(base_url)
    steps: list[Any] = []
    if provider in ("ollama", "llmman"):
        steps.append(lambda c: _ollama(c, origin, model))
    elif provider == "lmstudio":
        steps.append(lambda c: _get(c, f"{origin}/api/v0/models/{quote(model, safe='')}",
                                    "loaded_context_length", "max_context_length"))
    if provider not in ("ollama", "llmman", "lmstudio"):
        steps.append(lambda c: _get(c, f"{origin}/props", "default_generation_settings.n_ctx", "n_ctx"))
        steps.append(lambda c: _get(c, f"{origin}/props?model={quote(model, safe='')}",
                                    "default_generation_settings.n_ctx", "n_ctx"))
    steps.append(lambda c: _models_entry(c, base_url.rstrip("/") + "/models", model))
    try:
        async with httpx.AsyncClient(timeout=timeout, trust_env=not _loopback(origin), verify=origin.startswith("https:")) as client:
            for step in steps:
                try:
                    found = await step(client)
                except (httpx.HTTPError, ValueError, TypeError, AttributeError):
                    continue
                if found:
                    return found
    except httpx.HTTPError:
        return None
    return None


def server_origin(base_url: str) -> str:
    """`http://host:port` plus any path before the OpenAI part (`/v1`, `/engines/v1`)."""
    url = base_url.rstrip("/")
    for suffix in _API_SUFFIXES:
        if url.endswith(suffix):
            return url[: -len(suffix)]
    return url


async def _get(client: Any, url: str, *paths: str) -> int | None:
    response = await client.get(url)
    if response.status_code >= 400:
        return None
    return _first_int(response.json(), paths)


async def _ollama(client: Any, origin: str, model: str) -> int | None:
    response = await client.post(f"{origin}/api/show", json={"model": model, "name": model})
    if response.status_code >= 400:
        return None
    body = response.json()
    for line in str(body.get("parameters") or "").splitlines():
        key, _, value = line.strip().partition(" ")
        if key == "num_ctx" and value.strip().isdigit():
            return int(value.strip())
    info = body.get("model_info") or {}
    arch = info.get("general.architecture")
    keys = [f"{arch}.context_length"] if arch else []
    keys += [k for k in info if k.endswith(".context_length")]
    return _first_int(info, keys, dotted=False)


async def _models_entry(client: Any, url: str, model: str) -> int | None:
    response = await client.get(url)
    if response.status_code >= 400:
        return None
    for entry in response.json().get("data") or []:
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


def _loopback(url: str) -> bool:
    return urlsplit(url).hostname in ("127.0.0.1", "localhost", "::1")
