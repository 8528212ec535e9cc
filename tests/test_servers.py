"""Discovery, model lists and context-window probes against the scripted server."""

from __future__ import annotations

import socket

import pytest

from mm.llm.servers import discover, list_models, probe_context_window, server_origin
from mm.llm.types import LLMError
from scripted_server import ScriptedServer


def closed_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


@pytest.mark.parametrize("props, n_ctx", [
    ({"default_generation_settings": {"n_ctx": 4096}, "n_ctx": 1}, 4096),
    ({"n_ctx": 8192}, 8192),
    ({"default_generation_settings": {}}, None),
])
async def test_llamacpp_props(scripted_server, props, n_ctx):
    scripted_server.props = props
    assert await probe_context_window(scripted_server.base_url, "m", "llamacpp") == n_ctx


@pytest.mark.parametrize("show, n_ctx", [
    ({"model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768}}, 32768),
    ({"parameters": "stop \"<|im_end|>\"\nnum_ctx                        8192",
      "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768}}, 8192),
    ({"model_info": {"llama.context_length": 2048}}, 2048),
    ({"model_info": {}}, None),
])
async def test_ollama_show(scripted_server, show, n_ctx):
    scripted_server.show = show
    assert await probe_context_window(scripted_server.base_url, "m", "ollama") == n_ctx


async def test_models_entry_for_vllm(scripted_server):
    scripted_server.models = [{"id": "other", "max_model_len": 1}, {"id": "qwen", "max_model_len": 16384}]
    assert await probe_context_window(scripted_server.base_url, "qwen", "openai") == 16384


async def test_probe_never_raises():
    assert await probe_context_window(closed_url(), "m", "llamacpp") is None
    assert await probe_context_window(closed_url(), "m", "ollama") is None


async def test_probe_sends_the_model_to_ollama(scripted_server):
    scripted_server.show = {"model_info": {"x.context_length": 10}}
    await probe_context_window(scripted_server.base_url, "qwen2.5:7b", "ollama")
    # /api/show is not a chat request: nothing was taken from the script
    assert scripted_server.requests == []


async def test_list_models(scripted_server):
    scripted_server.models = ["a", "b"]
    assert await list_models(scripted_server.base_url) == ["a", "b"]


async def test_list_models_unreachable():
    url = closed_url()
    with pytest.raises(LLMError) as info:
        await list_models(url)
    assert info.value.kind == "unreachable" and url in str(info.value) and "\n" not in str(info.value)


async def test_discover_takes_the_first_answering_in_order(scripted_server):
    with ScriptedServer() as second:
        second.models = ["later"]
        scripted_server.models = ["nomic-embed-text", "qwen"]
        found = await discover(candidates=[(closed_url(), "llamacpp"), (scripted_server.base_url, "ollama"),
                                           (second.base_url, "lmstudio")])
    assert found == (scripted_server.base_url, "qwen", "ollama")


async def test_discover_skips_a_server_without_models(scripted_server):
    with ScriptedServer() as second:
        scripted_server.models = []
        found = await discover(candidates=[(scripted_server.base_url, "llamacpp"), (second.base_url, "dmr")])
    assert found == (second.base_url, "m", "dmr")


async def test_discover_finds_nothing():
    assert await discover(candidates=[(closed_url(), "llamacpp"), (closed_url(), "ollama")]) is None


@pytest.mark.parametrize("base, origin", [
    ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080"),
    ("http://127.0.0.1:12434/engines/v1/", "http://127.0.0.1:12434"),
    ("http://127.0.0.1:12434/engines/llama.cpp/v1", "http://127.0.0.1:12434"),
    ("http://host/proxy/v1", "http://host/proxy"),
])
def test_server_origin(base, origin):
    assert server_origin(base) == origin


async def test_context_window_from_config_embedded_or_probe(scripted_server):
    from mm.config.schema import AgentConfig
    from mm.llm.resolve import Endpoint, context_window

    scripted_server.props = {"default_generation_settings": {"n_ctx": 4096}}
    endpoint = Endpoint(scripted_server.base_url, "m", "llamacpp")
    assert await context_window(AgentConfig(), endpoint) == 4096
    assert await context_window(AgentConfig(contextWindow=2048), endpoint) == 2048
