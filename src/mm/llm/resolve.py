"""Choosing the model server: configured, discovered on loopback, or the embedded engine."""

from __future__ import annotations

from dataclasses import dataclass

from mm.config.schema import AgentConfig

PROVIDER_URLS = {
    "llamacpp": "http://127.0.0.1:8080/v1",
    "ollama": "http://127.0.0.1:11434/v1",
    "dmr": "http://127.0.0.1:12434/engines/v1",
    "lmstudio": "http://127.0.0.1:1234/v1",
}
NO_MODEL_LISTED = "the server at {url} lists no model: set `model:` in the agent file or pass --model NAME"


class ResolveError(Exception):
    """No usable model server; `str(err)` is one line saying what to install or configure."""


@dataclass
class Endpoint:
    """The server mm talks to: OpenAI base URL, model name, provider, and the embedded child if any."""

    base_url: str
    model: str
    provider: str
    embedded: object | None = None  # mm.llm.embedded.EmbeddedServer

    def close(self) -> None:
        """Stop the embedded engine, when mm started one."""
        if self.embedded is not None:
            self.embedded.stop()


async def resolve_endpoint(config: AgentConfig) -> Endpoint:
    """Find the server to use, following the zero-set-up rules (issue: agent core, point 4).

    - `baseUrl` set: that server (provider as configured, else `openai`), model as configured or
      the first it lists.
    - `provider: embedded`, or a `.gguf` path as `model` without `baseUrl`: the embedded engine.
    - a provider without `baseUrl`: that provider's usual loopback URL.
    - nothing set: the first server answering on the usual loopback ports, with its first model;
      if none answers, the embedded engine with the default model.
    Raises ResolveError (mm.llm.embedded.EmbeddedError for the embedded engine), one line.
    """
    model, provider = config.model, config.provider
    if config.baseUrl:
        url = config.baseUrl.rstrip("/")
        return Endpoint(url, model or await _first_model(url), provider or "openai")
    if provider == "embedded" or (model and model.endswith(".gguf")):
        return _embedded(config)
    if provider in PROVIDER_URLS:
        url = PROVIDER_URLS[provider]
        return Endpoint(url, model or await _first_model(url), provider)
    from mm.llm.servers import discover

    found = await discover()
    if found is not None:
        url, first, kind = found
        return Endpoint(url, model or first, kind)
    if model:
        raise ResolveError(f"no model server answers on 127.0.0.1 to serve {model!r}: start one, "
                           "or set `baseUrl:` (or --base-url URL) to the server's address")
    return _embedded(config)


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


def _embedded(config: AgentConfig) -> Endpoint:
    from mm.llm.embedded import start_embedded

    server = start_embedded(config.model, config.contextWindow)
    return Endpoint(server.base_url, server.model, "embedded", server)


async def context_window(config: AgentConfig, endpoint: Endpoint) -> int | None:
    """The context window in tokens: `contextWindow` when set, the embedded engine's size, else the
    server's answer (llama.cpp `/props`, ollama `/api/show`, …), or None when it does not say."""
    if config.contextWindow:
        return config.contextWindow
    if endpoint.embedded is not None:
        from mm.llm.embedded import DEFAULT_CONTEXT

        return DEFAULT_CONTEXT
    from mm.llm.servers import probe_context_window

    return await probe_context_window(endpoint.base_url, endpoint.model, endpoint.provider)
