"""Choosing the model server (issue: zero set-up), against the scripted server."""

import pytest

from mm.config.schema import AgentConfig
from mm.llm.embedded import EmbeddedError
from mm.llm.resolve import ResolveError, resolve_endpoint


async def test_base_url_without_model_takes_the_first_listed(scripted_server):
    scripted_server.models = ["qwen2.5-coder:1.5b", "nomic-embed"]
    ep = await resolve_endpoint(AgentConfig(baseUrl=scripted_server.base_url + "/"))
    assert (ep.base_url, ep.model, ep.provider) == (scripted_server.base_url, "qwen2.5-coder:1.5b", "openai")


async def test_base_url_listing_no_model_says_what_to_set(scripted_server):
    scripted_server.models = []
    with pytest.raises(ResolveError) as info:
        await resolve_endpoint(AgentConfig(baseUrl=scripted_server.base_url, provider="llamacpp"))
    assert str(info.value) == (f"the server at {scripted_server.base_url} lists no model: set `model:` in the "
                               "agent file or pass --model NAME")


async def test_missing_gguf_file_is_named(tmp_path):
    with pytest.raises(EmbeddedError) as info:
        await resolve_endpoint(AgentConfig(model=str(tmp_path / "nope.gguf")))
    assert f"model file {tmp_path / 'nope.gguf'} does not exist" in str(info.value)


async def test_unreachable_configured_server_is_one_line(tmp_path):
    with pytest.raises(ResolveError) as info:
        await resolve_endpoint(AgentConfig(baseUrl="http://127.0.0.1:9/v1"))
    assert "http://127.0.0.1:9/v1" in str(info.value) and "\n" not in str(info.value)
