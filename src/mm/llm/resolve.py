"""Choosing the model server: configured, discovered on loopback, or the embedded engine; what it
says about how it runs the model; the line that names the model (docs/model-servers.md §Naming)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from mm.config.schema import AgentConfig
from mm.llm.types import ResolveError, shown_url

if TYPE_CHECKING:
    from mm.llm.servers import ServerFacts

__all__ = ["Endpoint", "ResolveError", "model_line", "resolve_endpoint", "server_facts"]

PROVIDER_URLS = {
    "llamacpp": "http://127.0.0.1:8080/v1",
    "ollama": "http://127.0.0.1:11434/v1",
    "dmr": "http://127.0.0.1:12434/engines/v1",
    "lmstudio": "http://127.0.0.1:1234/v1",
}
KINDS = {"llamacpp": "llama.cpp", "ollama": "ollama", "dmr": "Docker Model Runner", "lmstudio": "LM Studio",
         "openai": "OpenAI-compatible", "embedded": "embedded"}  # as the model line names them
MODEL_LINE = "{kind} {model} at {url}"
DEMO_LINE = "embedded {name} — a demo model too small to use tools; point mm at a real model: docs/models.md"
NO_MODEL_LISTED = "the server at {url} lists no model: set `model:` in the agent file or pass --model NAME"


@dataclass
class Endpoint:
    """The server mm talks to: OpenAI base URL, model name, provider, the embedded child if any;
    `picked` when mm chose the server or the model itself (discovery, the first model listed, the
    demo model), `demo` for the embedded engine's default model."""

    base_url: str
    model: str
    provider: str
    embedded: object | None = None  # mm.llm.embedded.EmbeddedServer
    picked: bool = False
    demo: bool = False

    def close(self) -> None:
        """Stop the embedded engine, when mm started one."""
        if self.embedded is not None:
            self.embedded.stop()


async def resolve_endpoint(config: AgentConfig) -> Endpoint:
    """Find the server to use, following the zero-set-up rules (issue: agent core, point 4).

    - `baseUrl` set: that server, model as configured or the first it lists; its provider as
      configured, else the kind whose usual port it is on loopback (11434 ollama…), else `openai`.
    - `provider: embedded`, or a `.gguf` path as `model` without `baseUrl`: the embedded engine.
    - a provider without `baseUrl`: that provider's usual loopback URL.
    - nothing set: the first server answering on the usual loopback ports, with its first model;
      if none answers, the embedded engine with the default model.
    Raises ResolveError (mm.llm.embedded.EmbeddedError for the embedded engine), one line.
    """
    model, provider = config.model, config.provider
    if config.baseUrl:
        url = config.baseUrl.rstrip("/")
        return Endpoint(url, model or await _first_model(url), provider or _kind_of(url), picked=not model)
    if provider == "embedded" or (model and model.endswith(".gguf")):
        return _embedded(config)
    if provider in PROVIDER_URLS:
        url = PROVIDER_URLS[provider]
        return Endpoint(url, model or await _first_model(url), provider, picked=not model)
    from mm.llm.servers import discover

    found = await discover()
    if found is not None:
        url, first, kind = found
        return Endpoint(url, model or first, kind, picked=True)
    if model:
        raise ResolveError(f"no model server answers on 127.0.0.1 to serve {model!r}: start one, "
                           "or set `baseUrl:` (or --base-url URL) to the server's address")
    return _embedded(config)


def model_line(endpoint: Endpoint) -> str:
    """Which model answers and where (issue 10 point 11): DEMO_LINE for the embedded demo model,
    else MODEL_LINE, e.g. `ollama qwen2.5-coder:7b at http://127.0.0.1:11434/v1`."""
    if endpoint.demo:
        from mm.llm.embedded import DEFAULT_MODEL_NAME

        return DEMO_LINE.format(name=DEFAULT_MODEL_NAME)
    return MODEL_LINE.format(kind=KINDS.get(endpoint.provider, endpoint.provider), model=endpoint.model,
                             url=shown_url(endpoint.base_url))


async def server_facts(config: AgentConfig, endpoint: Endpoint, load_timeout: float = 300.0) -> ServerFacts:
    """How the server runs the model (mm.llm.servers.probe_server), the agent file's `contextWindow`
    applied: it wins, except over a smaller window a silently cutting server (ollama) states. The
    embedded engine is not asked: its window is the one it was started with, and it always has a
    template with tools (mm.llm.embedded). load_timeout: seconds an ollama model may take to load.
    Never raises."""
    from mm.llm.servers import ServerFacts, probe_server, warning_lines

    if endpoint.embedded is not None:
        from mm.llm.embedded import DEFAULT_CONTEXT

        return ServerFacts(context_window=config.contextWindow or DEFAULT_CONTEXT)
    facts = await probe_server(endpoint.base_url, endpoint.model, endpoint.provider, load_timeout=load_timeout)
    configured = config.contextWindow
    if configured and not (facts.cuts_silently and facts.window_from == "server"
                           and facts.context_window and facts.context_window < configured):
        facts.context_window, facts.window_from = configured, "agent file"
        facts.warnings = warning_lines(facts, endpoint.model, shown_url(endpoint.base_url))
    return facts


async def _first_model(url: str) -> str:
    from mm.llm.servers import list_models
    from mm.llm.types import LLMError

    try:
        models = await list_models(url)
    except LLMError as err:
        raise ResolveError(str(err)) from None
    if not models:
        raise ResolveError(NO_MODEL_LISTED.format(url=url))
    return models[0]


def _kind_of(url: str) -> str:
    """The provider whose usual port `url` is on, on loopback (127.0.0.1:11434 → ollama), else openai."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # no port to read: the request itself will say what is wrong with the URL
        return "openai"
    if parts.hostname in ("127.0.0.1", "localhost", "::1"):
        for kind, usual in PROVIDER_URLS.items():
            if urlsplit(usual).port == port:
                return kind
    return "openai"


def _embedded(config: AgentConfig) -> Endpoint:
    from mm.llm.embedded import start_embedded

    server = start_embedded(config.model, config.contextWindow)
    return Endpoint(server.base_url, server.model, "embedded", server, picked=not config.model,
                    demo=not config.model)
