"""Choosing the model server (issue: zero set-up), against the scripted server."""

import pytest

from mm.config.schema import AgentConfig
from mm.llm.embedded import EmbeddedError
from mm.llm.resolve import Endpoint, ResolveError, model_line, resolve_endpoint


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


@pytest.mark.parametrize("url, provider", [
    ("http://127.0.0.1:11434/v1", "ollama"),
    ("http://localhost:1234/v1", "lmstudio"),
    ("http://127.0.0.1:8080/v1", "llamacpp"),
    ("http://127.0.0.1:12434/engines/v1", "dmr"),
    ("http://10.0.0.5:11434/v1", "openai"),  # not loopback: a port says nothing
    ("http://127.0.0.1:8000/v1", "openai"),
])
async def test_a_base_url_on_a_usual_port_names_its_kind(url, provider):
    ep = await resolve_endpoint(AgentConfig(baseUrl=url, model="qwen"))  # model given: nothing is asked
    assert (ep.provider, ep.picked, ep.demo) == (provider, False, False)
    assert (await resolve_endpoint(AgentConfig(baseUrl=url, model="qwen", provider="openai"))).provider == "openai"


async def test_picked_when_mm_chose_the_model(scripted_server):
    ep = await resolve_endpoint(AgentConfig(baseUrl=scripted_server.base_url))
    assert (ep.model, ep.picked) == ("m", True)


@pytest.mark.parametrize("endpoint, line", [
    (Endpoint("http://127.0.0.1:11434/v1", "qwen2.5-coder:7b", "ollama"),
     "ollama qwen2.5-coder:7b at http://127.0.0.1:11434/v1"),
    (Endpoint("http://127.0.0.1:8080/v1", "Qwen3-8B", "llamacpp"), "llama.cpp Qwen3-8B at http://127.0.0.1:8080/v1"),
    (Endpoint("http://127.0.0.1:12434/engines/v1", "ai/qwen3", "dmr"),
     "Docker Model Runner ai/qwen3 at http://127.0.0.1:12434/engines/v1"),
    (Endpoint("http://127.0.0.1:1234/v1", "qwen", "lmstudio"), "LM Studio qwen at http://127.0.0.1:1234/v1"),
    (Endpoint("https://u:secret@host/v1", "m", "openai"), "OpenAI-compatible m at https://u:***@host/v1"),
    (Endpoint("http://127.0.0.1:4242/v1", "own.gguf", "embedded"), "embedded own.gguf at http://127.0.0.1:4242/v1"),
    (Endpoint("http://127.0.0.1:4242/v1", "SmolLM2-135M-Instruct.Q4_1.gguf", "embedded", demo=True),
     "embedded SmolLM2-135M-Instruct — a demo model too small to use tools; point mm at a real model: docs/models.md"),
])
def test_model_line(endpoint, line):
    assert model_line(endpoint) == line


async def test_a_base_url_with_a_bad_port_is_an_openai_server():
    ep = await resolve_endpoint(AgentConfig(baseUrl="http://127.0.0.1:99999999/v1", model="m"))
    assert ep.provider == "openai"
