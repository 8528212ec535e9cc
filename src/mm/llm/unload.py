"""Unloading a model from the server that holds it in memory (mm-tools.md §unload_model;
docs/model-servers.md §Unloading a model).

ollama and llmman: `GET /api/ps` first (a model not loaded is never asked for: the request would
load it), then `POST /api/generate {"model", "keep_alive": 0}`, confirmed by `done_reason:
"unload"`. llama.cpp (and a server of unknown kind, `openai`): `POST /models/unload {"model"}`,
which llama-server has in router mode only. LM Studio (0.4 or later): `GET /api/v1/models`, then
`POST /api/v1/models/unload {"instance_id"}` per loaded instance. Docker Model Runner and mm's
embedded engine cannot unload. Each request may take TIMEOUT seconds. httpx is imported lazily.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mm.llm.client import HTTP_ERROR, UNREACHABLE, connect_cause, error_detail
from mm.llm.servers import ollama_entry, server_http, server_origin
from mm.llm.types import shown_url
from mm.text import one_line

TIMEOUT = 30.0  # seconds per request to the server (mm-tools.md §unload_model)
LINE_LIMIT = 2000  # characters of the result, one line whatever the model's name holds
UNLOADED = "unloaded {model}"
NOT_LOADED = "{model} was not loaded: nothing to unload"
CANNOT = "cannot unload {model}: {reason}"
DMR = "the dmr provider cannot unload a model"
EMBEDDED = ("mm's embedded engine keeps its one model loaded while mm runs — it is freed when mm exits "
            "(or run the model in a server of its own: docs/models.md)")
SINGLE_MODEL = (
    "the llama.cpp server at {url} runs a single model (POST /models/unload answered HTTP 404: it exists in "
    "router mode only) — start llama-server without a model (router mode) to unload models on demand, start it "
    "with --sleep-idle-seconds N to free the model after N idle seconds, or stop the server"
)
NO_UNLOAD_ROUTE = (
    "the server at {url} has no way to unload a model that mm knows (POST /models/unload answered HTTP 404) — "
    "if it is llama.cpp, ollama or LM Studio, set provider: to that kind in the agent file"
)
LMSTUDIO_TOO_OLD = (
    "the LM Studio server at {url} has no REST API to unload with (GET /api/v1/models gave {what}; LM Studio 0.4 "
    "or later has one) — unload it in LM Studio, or with `lms unload {model}`"
)
NO_MODEL_LIST = "no model list"
NOT_CONFIRMED = "the server at {url} did not confirm it ({said})"
NOT_JSON = "the server at {url} did not answer with JSON"
TIMED_OUT = "the server at {url} did not answer within {seconds:g} s"
FAILED = "the request to {url} failed: {error}"
NOT_KNOWN = "mm does not know the model server yet"
NOT_RUNNING = ("model is not running", "model is not loaded")  # llama.cpp router's 400 for a model not loaded


@dataclass
class Unloaded:
    """The outcome of one unload: the result line (UNLOADED, NOT_LOADED or CANNOT) and whether
    the call failed (a `cannot unload` result: mm-tools.md §unload_model, ACP and window)."""

    text: str
    failed: bool = False


class _Refused(Exception):
    """The reason an unload cannot be done, as CANNOT's `reason`."""


async def unload_model(base_url: str, provider: str, model: str, api_key: str | None = None,
                       timeout: float = TIMEOUT) -> Unloaded:
    """Unload `model` (str, as the server names it) from the server at `base_url` (its OpenAI base,
    e.g. http://127.0.0.1:11434/v1) of kind `provider` (llamacpp, ollama, dmr, llmman, lmstudio,
    openai, embedded; any other is treated as openai). api_key: sent as a Bearer token when set.
    timeout: seconds per request. Never raises: every failure is a CANNOT line."""
    try:
        if provider == "dmr":
            raise _Refused(DMR)
        if provider == "embedded":
            raise _Refused(EMBEDDED)
        if not base_url:
            raise _Refused(NOT_KNOWN)
        origin = server_origin(base_url)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        async with server_http(origin, timeout) as http:
            if provider in ("ollama", "llmman"):
                loaded = await _ollama(http, origin, model, headers)
            elif provider == "lmstudio":
                loaded = await _lmstudio(http, origin, model, headers)
            else:
                loaded = await _router(http, origin, model, headers, provider == "llamacpp")
    except _Refused as refused:
        return Unloaded(one_line(CANNOT.format(model=model, reason=refused), LINE_LIMIT), failed=True)
    return Unloaded(one_line((UNLOADED if loaded else NOT_LOADED).format(model=model), LINE_LIMIT))


async def _ollama(http: Any, origin: str, model: str, headers: dict) -> bool:
    """ollama, llmman: False when `/api/ps` does not list `model`; else unloaded (True)."""
    entry = ollama_entry(await _call(http, "GET", f"{origin}/api/ps", headers), model)
    if entry is None:
        return False
    name = entry.get("name") or entry.get("model") or model
    url = f"{origin}/api/generate"
    answer = await _call(http, "POST", url, headers, {"model": name, "keep_alive": 0})
    reason = answer.get("done_reason") if isinstance(answer, dict) else None
    if reason != "unload":
        said = f"done_reason: {reason!r}" if reason is not None else "no done_reason in its answer"
        raise _Refused(NOT_CONFIRMED.format(url=shown_url(url), said=said))
    return True


async def _router(http: Any, origin: str, model: str, headers: dict, llamacpp: bool) -> bool:
    """llama.cpp in router mode: False when the router says the model is not running; else
    unloaded (True). A 404: SINGLE_MODEL for llamacpp, NO_UNLOAD_ROUTE for a server of unknown kind."""
    url = f"{origin}/models/unload"
    try:
        answer = await _call(http, "POST", url, headers, {"model": model})
    except _NotFound:
        raise _Refused((SINGLE_MODEL if llamacpp else NO_UNLOAD_ROUTE).format(url=shown_url(origin))) from None
    except _HttpError as err:
        if err.status == 400 and any(words in err.detail for words in NOT_RUNNING):
            return False
        raise _Refused(str(err)) from None
    if not (isinstance(answer, dict) and answer.get("success") is True):
        raise _Refused(NOT_CONFIRMED.format(url=shown_url(url), said=f"it answered {_excerpt(answer)}"))
    return True


async def _lmstudio(http: Any, origin: str, model: str, headers: dict) -> bool:
    """LM Studio: False when no loaded instance has `model` as its model key or its own id; else
    every such instance unloaded (True)."""
    try:
        listed = await _call(http, "GET", f"{origin}/api/v1/models", headers)
    except _NotFound:
        listed = "HTTP 404"
    if not (isinstance(listed, dict) and isinstance(listed.get("models"), list)):
        what = listed if listed == "HTTP 404" else NO_MODEL_LIST
        raise _Refused(LMSTUDIO_TOO_OLD.format(url=shown_url(origin), what=what, model=model))
    instances = _lmstudio_instances(listed["models"], model)
    url = f"{origin}/api/v1/models/unload"
    for instance in instances:
        answer = await _call(http, "POST", url, headers, {"instance_id": instance})
        if not (isinstance(answer, dict) and answer.get("instance_id") == instance):
            raise _Refused(NOT_CONFIRMED.format(url=shown_url(url), said=f"it answered {_excerpt(answer)}"))
    return bool(instances)


def _lmstudio_instances(models: list, model: str) -> list[str]:
    """The ids of the loaded instances of `model` in the `models` of a `GET /api/v1/models` answer:
    every instance of the model whose key it is, else the one instance of that id (`key:2`)."""
    loaded = {}  # model key → its loaded instances' ids
    for entry in (e for e in models if isinstance(e, dict)):
        ids = [i.get("id") for i in entry.get("loaded_instances") or [] if isinstance(i, dict)]
        loaded[entry.get("key")] = [i for i in ids if isinstance(i, str) and i]
    if model in loaded:
        return loaded[model]
    return [model] if any(model in ids for ids in loaded.values()) else []


class _HttpError(_Refused):
    """An HTTP error answer; `str()` is HTTP_ERROR with the server's own words."""

    def __init__(self, url: str, status: int, detail: str):
        super().__init__(HTTP_ERROR.format(url=shown_url(url), status=status, detail=detail))
        self.status, self.detail = status, detail


class _NotFound(_HttpError):
    """HTTP 404: the server has no such route."""


async def _call(http: Any, method: str, url: str, headers: dict, body: dict | None = None) -> Any:
    """The JSON a request answers (the last line of JSON lines, as ollama may stream). Raises
    _NotFound (404), _HttpError (another status ≥ 400), _Refused (unreachable, timed out, not JSON)."""
    import httpx

    try:
        response = await http.request(method, url, headers=headers, json=body)
    except httpx.TimeoutException:
        raise _Refused(TIMED_OUT.format(url=shown_url(url), seconds=http.timeout.read or 0)) from None
    except (httpx.ConnectError, httpx.ConnectTimeout) as err:
        raise _Refused(UNREACHABLE.format(url=shown_url(url), cause=connect_cause(err))) from None
    except httpx.HTTPError as err:
        raise _Refused(FAILED.format(url=shown_url(url), error=one_line(str(err) or type(err).__name__, 200))) from None
    if response.status_code >= 400:
        error = _NotFound if response.status_code == 404 else _HttpError
        raise error(url, response.status_code, await error_detail(response))
    lines = [line for line in response.text.splitlines() if line.strip()]
    for text in (response.text, lines[-1] if lines else ""):
        try:
            return json.loads(text)
        except ValueError:
            continue
    raise _Refused(NOT_JSON.format(url=shown_url(url)))


def _excerpt(answer: Any) -> str:
    """An answer shown in a reason: its JSON on one line, cut to 120 characters."""
    return one_line(json.dumps(answer, ensure_ascii=False), 120)
