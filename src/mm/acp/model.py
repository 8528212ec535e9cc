"""The model server of `mm -acp`, found in the background: the editor's `initialize` and
`session/new` are answered at once while discovery (or the embedded engine) gets ready."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from mm.config.schema import AgentConfig


class ModelHandle:
    """The endpoint, its client and what the server says of the model (mm.llm.servers.ServerFacts:
    the context window…), resolved once (again after a failure).

    `on_ready(endpoint, facts)` is called once the first resolution succeeds (the banner and the
    server's warnings).
    """

    def __init__(self, config: AgentConfig, on_ready: Callable[[Any, Any], None] | None = None):
        from mm.llm.servers import ServerFacts

        self.config, self.on_ready = config, on_ready
        self.endpoint: Any = None
        self.facts = ServerFacts(context_window=config.contextWindow)
        self._client: Any = None
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        """Begin resolving in the background."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._resolve())

    async def client(self) -> Any:
        """The model client; raises mm.llm.types.LLMError (class `unreachable`) when no server can
        be used — the next call tries again."""
        from mm.llm.types import LLMError

        self.start()
        assert self._task is not None
        try:
            return await asyncio.shield(self._task)
        except LLMError:
            self._task = None
            raise

    async def _resolve(self) -> Any:
        from mm.llm.resolve import ResolveError, resolve_endpoint, server_facts
        from mm.llm.types import LLMError
        from mm.run import make_client

        if self._client is not None:
            return self._client
        try:
            endpoint = await resolve_endpoint(self.config)
        except ResolveError as err:
            raise LLMError("unreachable", str(err)) from None
        self.endpoint = endpoint
        self._client = make_client(self.config, endpoint.base_url, endpoint.model, endpoint.provider)
        self.facts = await server_facts(self.config, endpoint, load_timeout=self.config.watchdogTimeout)
        if self.on_ready is not None:
            self.on_ready(endpoint, self.facts)
        return self._client

    def close(self) -> None:
        """Stop the embedded engine, when one was started; cancel a resolution in flight."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
        if self.endpoint is not None:
            self.endpoint.close()


class LazyClient:
    """A model client (mm.engine.conversation.ModelClient) that waits for the handle's client.

    Setting `model` (`/model NAME`, mm.commands.model) makes this session's requests name that
    model; the handle's client, shared by every session, is left as it is."""

    def __init__(self, handle: ModelHandle):
        self.handle = handle
        self.chosen: str | None = None

    @property
    def model(self) -> str:
        """The model's name: the one chosen for this session, else the server's once known, else
        the configured one."""
        if self.chosen:
            return self.chosen
        endpoint = self.handle.endpoint
        return endpoint.model if endpoint is not None else (self.handle.config.model or "")

    @model.setter
    def model(self, name: str) -> None:
        self.chosen = name

    @property
    def base_url(self) -> str:
        """The server's OpenAI base URL once found, else "" (unload_model reads it)."""
        return self.handle.endpoint.base_url if self.handle.endpoint is not None else ""

    @property
    def provider(self) -> str:
        """The server's kind once found, else the configured one (or openai)."""
        endpoint = self.handle.endpoint
        return endpoint.provider if endpoint is not None else (self.handle.config.provider or "openai")

    @property
    def options(self) -> dict[str, Any]:
        """The fields every request carries (`max_tokens`…: mm.run.make_client) once the handle's
        client is made, else {} (the engine names the output limit with them: mm.engine.outputlimit)."""
        client = self.handle._client
        return client.options if client is not None else {}

    @property
    def api_key(self) -> str | None:
        """The agent file's apiKey."""
        return self.handle.config.apiKey

    async def complete(self, messages: list[dict], tools: list[dict], on_delta: Any = None, **options: Any) -> Any:
        """One chat completion through the real client (mm.llm.client.ChatClient.complete), with
        the model chosen for this session as the request's `model`."""
        client = await self.handle.client()
        if self.chosen:
            options = {**options, "model": self.chosen}
        return await client.complete(messages, tools, on_delta, **options)
