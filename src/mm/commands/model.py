"""`/model`: the models the server offers, and switching the conversation to one of them (issue 11
point 6; docs/line-mode.md §Slash commands, docs/acp.md §Commands).

The switch holds for the rest of the conversation: the model client sends the new name, and the
context window is probed again for it (mm.llm.resolve.server_facts), as at start.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

MODELS_HEAD = "models at {url}:"
MODEL_ROW = "{mark} {name}"
IN_USE, NOT_IN_USE = "●", " "
SWITCH_HINT = "switch with /model NAME"
NO_MODELS = "the server at {url} lists no model"
NOT_LISTED = 'the server at {url} has no model "{name}": /model lists them'
ALREADY = "{name} is already the model in use"
SWITCHED = "🔁 model: {line} · context window {window}"
OLLAMA_DEFAULT_TAG = ":latest"  # ollama's name for `llama3` is `llama3:latest`


async def models_text(config: Any, endpoint: Any, current: str) -> str:
    """`/model`: MODELS_HEAD, one MODEL_ROW per model the server lists (`current` marked IN_USE),
    SWITCH_HINT; or NO_MODELS, or the one-line reason the list cannot be had. `config`: the
    AgentConfig (its apiKey); `endpoint`: mm.llm.resolve.Endpoint. Never raises."""
    from mm.llm.types import shown_url

    names = await _listed(config, endpoint)
    if isinstance(names, str):
        return names
    url = shown_url(endpoint.base_url)
    if not names:
        return NO_MODELS.format(url=url)
    rows = [MODEL_ROW.format(mark=IN_USE if n == current else NOT_IN_USE, name=n) for n in names]
    return "\n".join([MODELS_HEAD.format(url=url)] + rows + [SWITCH_HINT])


async def switch_model(conv: Any, config: Any, endpoint: Any, name: str) -> tuple[str, Any]:
    """`/model NAME`: make `conv` (mm.engine.conversation.Conversation) talk to the model `name`
    of the server at `endpoint` for the rest of the conversation — the name its client sends,
    the context window probed again and applied, the token measure of the other model
    forgotten, the session file's `model` — once the server lists it (ollama's `NAME:latest`
    counts as `NAME`). Returns (the text to show: SWITCHED and the server's warnings, or why
    nothing changed; the new mm.llm.servers.ServerFacts, or None when nothing changed).
    Never raises."""
    from mm.llm.resolve import model_line, server_facts
    from mm.llm.types import shown_url
    from mm.run import apply_facts

    names = await _listed(config, endpoint)
    if isinstance(names, str):
        return names, None
    if name not in names and name + OLLAMA_DEFAULT_TAG in names:
        name += OLLAMA_DEFAULT_TAG
    if name not in names:
        return NOT_LISTED.format(url=shown_url(endpoint.base_url), name=name), None
    if name == conv.client.model:
        return ALREADY.format(name=name), None
    chosen = replace(endpoint, model=name, picked=False, demo=False)
    facts = await server_facts(config, chosen, load_timeout=config.watchdogTimeout)
    conv.client.model = name
    apply_facts(conv, facts)
    conv.meter.forget()
    if conv.session is not None:
        conv.session.meta["model"] = name
    window = f"{facts.context_window} tokens" if facts.context_window else "unknown"
    return "\n".join([SWITCHED.format(line=model_line(chosen), window=window)] + facts.warnings), facts


async def _listed(config: Any, endpoint: Any) -> list[str] | str:
    """The server's models (mm.llm.servers.server_models), or the one-line reason they cannot be had."""
    from mm.llm.servers import server_models
    from mm.llm.types import LLMError

    try:
        return await server_models(endpoint.base_url, endpoint.provider, api_key=config.apiKey)
    except LLMError as err:
        return str(err)
