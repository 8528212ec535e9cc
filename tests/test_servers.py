"""Discovery, model lists and context-window probes against the scripted server."""

from __future__ import annotations

import socket

import pytest

from mm.llm.servers import (ServerFacts, discover, list_models, probe_context_window, probe_server, server_origin,
                            warning_lines)
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


QWEN_INFO = {"model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768}}


@pytest.mark.parametrize("show, ps, ps_after_load, version, window, source, loads", [
    # loaded: /api/ps states the window it runs with (whatever the Modelfile or the model say)
    (QWEN_INFO, {"models": [{"name": "m:latest", "model": "m:latest", "context_length": 4096}]}, None, None,
     4096, "server", 0),
    # the Modelfile's num_ctx, not loaded: that is what it will run with, no load needed
    ({"parameters": "stop \"<|im_end|>\"\nnum_ctx                        8192", **QWEN_INFO}, {"models": []}, None,
     None, 8192, "server", 0),
    # not loaded, nothing said: loaded as the first request would, then /api/ps asked again
    (QWEN_INFO, {"models": []}, {"models": [{"name": "m", "model": "m", "context_length": 16384}]}, None,
     16384, "server", 1),
    # an ollama whose /api/ps has no context_length: its default, by version, within the model's own length
    (QWEN_INFO, {"models": [{"name": "m"}]}, None, {"version": "0.9.0"}, 4096, "default", 1),
    (QWEN_INFO, {"models": [{"name": "m"}]}, None, {"version": "0.6.2"}, 2048, "default", 1),
    ({"model_info": {"llama.context_length": 1024}}, None, None, None, 1024, "default", 1),
    ({"model_info": {}}, None, None, None, 4096, "default", 1),
])
async def test_ollama_window(scripted_server, show, ps, ps_after_load, version, window, source, loads):
    scripted_server.show, scripted_server.ps, scripted_server.ps_after_load = show, ps, ps_after_load
    scripted_server.version = version
    facts = await probe_server(scripted_server.base_url, "m", "ollama")
    assert (facts.context_window, facts.window_from, facts.cuts_silently) == (window, source, True)
    assert scripted_server.loads == [{"model": "m", "stream": False}] * loads
    assert scripted_server.requests == []  # nothing taken from the chat script


def test_ollama_warnings():
    small = ServerFacts(context_window=4096, cuts_silently=True, trained_window=131072)
    assert warning_lines(small, "qwen3:8b", "http://127.0.0.1:11434/v1") == [
        "[warning: ollama runs qwen3:8b with a context window of 4096 tokens (the model takes 131072) and cuts a "
        "longer prompt silently: mm compacts to fit and refuses what cannot — for more, restart ollama with "
        "OLLAMA_CONTEXT_LENGTH=32768 (docs/models.md)]"]
    assert warning_lines(ServerFacts(context_window=4096, cuts_silently=True, trained_window=4096), "m", "u") == []
    assert warning_lines(ServerFacts(context_window=32768, cuts_silently=True, trained_window=131072), "m", "u") == []
    guessed = ServerFacts(context_window=2048, cuts_silently=True, window_from="default", trained_window=32768)
    assert warning_lines(guessed, "m", "u") == [
        "[warning: ollama does not say which context window it runs m with: mm assumes 2048 tokens, its default — "
        "set contextWindow: in the agent file to the OLLAMA_CONTEXT_LENGTH ollama runs with]"]


@pytest.mark.parametrize("caps, dropped", [
    ({"supports_tools": False, "supports_tool_calls": False, "supports_system_role": True}, "supports_tools"),
    ({"supports_tools": True, "supports_tool_calls": False}, "supports_tool_calls"),
    ({"supports_tools": True, "supports_tool_calls": True, "supports_parallel_tool_calls": False}, ""),
    (None, ""),
])
async def test_llamacpp_template_caps(scripted_server, caps, dropped):
    scripted_server.props = {"default_generation_settings": {"n_ctx": 4096}}
    if caps is not None:
        scripted_server.props["chat_template_caps"] = caps
    facts = await probe_server(scripted_server.base_url, "qwen", "llamacpp")
    assert (facts.context_window, facts.tools_dropped, facts.cuts_silently) == (4096, dropped, False)
    assert facts.warnings == ([
        f"[warning: the chat template of qwen at {scripted_server.base_url} cannot carry tools (/props: "
        f"chat_template_caps.{dropped} is false), so the model never sees mm's tools — start llama-server with "
        "--jinja, or give it a template with tools: --chat-template-file FILE (docs/models.md)]"] if dropped else [])


async def test_models_entry_for_vllm(scripted_server):
    scripted_server.models = [{"id": "other", "max_model_len": 1}, {"id": "qwen", "max_model_len": 16384}]
    assert await probe_context_window(scripted_server.base_url, "qwen", "openai") == 16384


async def test_probe_never_raises():
    assert await probe_context_window(closed_url(), "m", "llamacpp") is None
    assert await probe_context_window(closed_url(), "m", "ollama") is None


async def test_probe_sends_the_model_to_ollama(scripted_server):
    scripted_server.show = {"model_info": {"x.context_length": 10}}
    scripted_server.ps = {"models": [{"name": "qwen2.5:7b", "context_length": 8}]}
    assert await probe_context_window(scripted_server.base_url, "qwen2.5:7b", "ollama") == 8
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


async def test_configured_window_wins_except_over_a_smaller_silent_one(scripted_server):
    from mm.config.schema import AgentConfig
    from mm.llm.resolve import Endpoint, server_facts

    scripted_server.props = {"default_generation_settings": {"n_ctx": 4096}}
    llamacpp = Endpoint(scripted_server.base_url, "m", "llamacpp")
    assert (await server_facts(AgentConfig(), llamacpp)).context_window == 4096
    assert (await server_facts(AgentConfig(contextWindow=2048), llamacpp)).context_window == 2048
    assert (await server_facts(AgentConfig(contextWindow=9000), llamacpp)).context_window == 9000
    ollama = Endpoint(scripted_server.base_url, "m", "ollama")
    scripted_server.show = QWEN_INFO
    scripted_server.ps = {"models": [{"name": "m", "context_length": 4096}]}
    facts = await server_facts(AgentConfig(contextWindow=16384), ollama)
    assert (facts.context_window, facts.cuts_silently) == (4096, True)  # ollama would cut at 4096: it wins
    assert (await server_facts(AgentConfig(contextWindow=2048), ollama)).context_window == 2048
    scripted_server.ps = {"models": [{"name": "m"}]}  # an ollama that does not say: the agent file is believed
    facts = await server_facts(AgentConfig(contextWindow=16384), ollama)
    assert (facts.context_window, facts.window_from, facts.warnings) == (16384, "agent file", [])
