"""unload_model, every row of mm-tools.md §unload_model, against loopback servers answering as
ollama and llmman (a model loaded, one not), llama.cpp in router and in single-model mode, LM
Studio, a server of unknown kind, Docker Model Runner, mm's embedded engine, and nothing at all —
through the real engine (the scripted server is both the model and the server that holds it), in
`mm -p` and over ACP. Texts are compared whole."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from harness import RecordingUI
from test_acp_sdk import ScriptedClient, calls_of, cwd, running_mm, write_agent_file  # noqa: F401 (cwd: fixture)

from mm.config.load import agent_config_adapter
from mm.events import ToolCallStarted
from mm.run import build_conversation, make_client
from mm.tools.registry import build_registry

ASK = "free the memory"


def conversation(srv, tmp_path: Path, provider: str, model: str = "m", **config):
    """A real Conversation of `provider` talking to `srv` as model `model` (yolo false: nothing may
    be asked all the same)."""
    cfg = agent_config_adapter().validate_python({"yolo": False, **config})
    return build_conversation(cfg, make_client(cfg, srv.base_url, model, provider), tmp_path)


async def unload(srv, tmp_path: Path, provider: str, arguments: dict, model: str = "m"):
    """One turn: the model calls unload_model with `arguments`, then answers. Returns (the call's
    ToolCallDone, the RecordingUI)."""
    srv.add_tool_calls([{"name": "unload_model", "arguments": arguments}])
    srv.add_reply("done")
    conv = conversation(srv, tmp_path, provider, model)
    ui = RecordingUI()
    done = await conv.run_turn(ASK, ui)
    assert done.stop_reason == "end_turn", done.error
    (call,) = ui.done_calls()
    assert ui.asked == []  # never a permission request, even with yolo false
    assert srv.requests[1]["messages"][-1]["content"] == call.result.text  # what the model reads
    return call, ui


def ollama_ps(*names: str) -> dict:
    return {"models": [{"name": n, "model": n, "size": 1, "size_vram": 0, "context_length": 4096} for n in names]}


# ---------------------------------------------------------------------------------------------
# Declaration


def test_declared_by_default_and_not_beside_a_structured_output(tmp_path):
    def names(**config):
        return build_registry(agent_config_adapter().validate_python(config), {}, tmp_path).names

    assert "unload_model" in names() and "ask_user" in names()
    assert "unload_model" not in names(unloadModels=False)
    schema = {"type": "object"}
    assert "unload_model" not in names(structuredOutput=schema)
    assert "ask_user" not in names(structuredOutput=schema)


def test_declared_schema(tmp_path):
    registry = build_registry(agent_config_adapter().validate_python({}), {}, tmp_path)
    (schema,) = [s for s in registry.schemas() if s["function"]["name"] == "unload_model"]
    assert schema["function"]["parameters"] == {
        "type": "object", "required": [],
        "properties": {"model": {"type": "string", "description":
                                 "The model to unload, as the server names it. Empty: your own model."}}}


# ---------------------------------------------------------------------------------------------
# ollama and llmman


@pytest.mark.parametrize("provider", ["ollama", "llmman"])
async def test_ollama_a_loaded_model_is_unloaded(scripted_server, tmp_path, provider):
    srv = scripted_server
    srv.ps = ollama_ps("qwen2.5:7b", "m")
    call, _ = await unload(srv, tmp_path, provider, {"model": "qwen2.5:7b"})
    assert call.result.text == "unloaded qwen2.5:7b" and not call.result.failed
    assert srv.unloads == [{"model": "qwen2.5:7b", "keep_alive": 0}]
    assert [m["name"] for m in srv.ps["models"]] == ["m"]


async def test_ollama_a_model_not_loaded_is_never_asked_for(scripted_server, tmp_path):
    srv = scripted_server
    srv.ps = ollama_ps("m")
    call, _ = await unload(srv, tmp_path, "ollama", {"model": "qwen2.5:7b"})
    assert call.result.text == "qwen2.5:7b was not loaded: nothing to unload" and not call.result.failed
    assert srv.unloads == []  # the request would have loaded it first


async def test_ollama_a_tagless_name_is_its_latest_tag(scripted_server, tmp_path):
    srv = scripted_server
    srv.ps = ollama_ps("llama3.2:latest")
    call, _ = await unload(srv, tmp_path, "ollama", {"model": "llama3.2"})
    assert call.result.text == "unloaded llama3.2"
    assert srv.unloads == [{"model": "llama3.2:latest", "keep_alive": 0}]  # as /api/ps names it


async def test_ollama_without_confirmation_cannot_unload(scripted_server, tmp_path):
    srv = scripted_server
    srv.ps, srv.unload_done_reason = ollama_ps("qwen"), "stop"
    call, _ = await unload(srv, tmp_path, "ollama", {"model": "qwen"})
    assert call.result.text == (f"cannot unload qwen: the server at {srv.origin}/api/generate did not confirm it "
                                "(done_reason: 'stop')")
    assert call.result.failed
    srv.ps, srv.unload_done_reason = ollama_ps("qwen"), None
    srv.requests.clear()
    call, _ = await unload(srv, tmp_path, "ollama", {"model": "qwen"})
    assert call.result.text == (f"cannot unload qwen: the server at {srv.origin}/api/generate did not confirm it "
                                "(no done_reason in its answer)")


async def test_ollama_an_error_answer_is_the_servers_words(scripted_server, tmp_path):
    srv = scripted_server  # no /api/ps: the server's 404
    call, _ = await unload(srv, tmp_path, "ollama", {"model": "qwen"})
    assert call.result.text == (f"cannot unload qwen: the model server at {srv.origin}/api/ps answered HTTP 404: "
                                "File Not Found")
    assert call.result.failed


async def test_own_model_is_unloaded_and_back_for_the_next_step(scripted_server, tmp_path):
    srv = scripted_server
    srv.ps = ollama_ps("qwen3:8b")
    call, ui = await unload(srv, tmp_path, "ollama", {"model": ""}, model="qwen3:8b")
    (started,) = [e for e in ui.events if isinstance(e, ToolCallStarted)]
    assert started.title == "unload_model: (own model)"
    assert call.result.text == "unloaded qwen3:8b"
    assert srv.unloads == [{"model": "qwen3:8b", "keep_alive": 0}]
    assert [r["model"] for r in srv.requests] == ["qwen3:8b", "qwen3:8b"]  # the next step asks for it again


# ---------------------------------------------------------------------------------------------
# llama.cpp, and a server of unknown kind


async def test_llamacpp_router_unloads_a_running_model(scripted_server, tmp_path):
    srv = scripted_server
    srv.router = {"gemma": "loaded", "m": "loaded"}
    call, _ = await unload(srv, tmp_path, "llamacpp", {"model": "gemma"})
    assert call.result.text == "unloaded gemma" and not call.result.failed
    assert srv.unloads == [{"model": "gemma"}] and srv.router["gemma"] == "unloaded"


async def test_llamacpp_router_a_model_not_running(scripted_server, tmp_path):
    srv = scripted_server
    srv.router = {"gemma": "unloaded", "m": "loaded"}
    call, _ = await unload(srv, tmp_path, "llamacpp", {"model": "gemma"})
    assert call.result.text == "gemma was not loaded: nothing to unload" and not call.result.failed


async def test_llamacpp_router_a_model_it_does_not_know(scripted_server, tmp_path):
    srv = scripted_server
    srv.router = {"m": "loaded"}
    call, _ = await unload(srv, tmp_path, "llamacpp", {"model": "nope"})
    assert call.result.text == (f"cannot unload nope: the model server at {srv.origin}/models/unload answered "
                                "HTTP 400: model is not found")
    assert call.result.failed


async def test_llamacpp_single_model_server_explains_the_alternatives(scripted_server, tmp_path):
    srv = scripted_server  # router None: POST /models/unload is a 404
    call, _ = await unload(srv, tmp_path, "llamacpp", {"model": "m"})
    assert call.result.text == (
        f"cannot unload m: the llama.cpp server at {srv.origin} runs a single model (POST /models/unload answered "
        "HTTP 404: it exists in router mode only) — start llama-server without a model (router mode) to unload "
        "models on demand, start it with --sleep-idle-seconds N to free the model after N idle seconds, or stop "
        "the server")
    assert call.result.failed


async def test_a_server_of_unknown_kind_tries_the_router_request(scripted_server, tmp_path):
    srv = scripted_server
    call, _ = await unload(srv, tmp_path, "openai", {"model": "m"})
    assert call.result.text == (
        f"cannot unload m: the server at {srv.origin} has no way to unload a model that mm knows (POST "
        "/models/unload answered HTTP 404) — if it is llama.cpp, ollama or LM Studio, set provider: to that kind "
        "in the agent file")
    srv.router, srv.requests[:] = {"m": "loaded"}, []  # a llama-server router behind an unusual port
    call, _ = await unload(srv, tmp_path, "openai", {"model": "m"})
    assert call.result.text == "unloaded m"


# ---------------------------------------------------------------------------------------------
# LM Studio, Docker Model Runner, the embedded engine


async def test_lmstudio_unloads_every_instance_of_the_model(scripted_server, tmp_path):
    srv = scripted_server
    srv.lmstudio = [{"key": "qwen/qwen3-4b", "type": "llm", "loaded_instances": [{"id": "qwen/qwen3-4b"},
                                                                                   {"id": "qwen/qwen3-4b:2"}]},
                    {"key": "m", "type": "llm", "loaded_instances": [{"id": "m"}]}]
    call, _ = await unload(srv, tmp_path, "lmstudio", {"model": "qwen/qwen3-4b"})
    assert call.result.text == "unloaded qwen/qwen3-4b"
    assert srv.unloads == [{"instance_id": "qwen/qwen3-4b"}, {"instance_id": "qwen/qwen3-4b:2"}]
    srv.requests.clear()
    call, _ = await unload(srv, tmp_path, "lmstudio", {"model": "qwen/qwen3-4b"})
    assert call.result.text == "qwen/qwen3-4b was not loaded: nothing to unload"
    assert len(srv.unloads) == 2


async def test_lmstudio_one_instance_by_its_id(scripted_server, tmp_path):
    srv = scripted_server
    srv.lmstudio = [{"key": "q", "loaded_instances": [{"id": "q"}, {"id": "q:2"}]}]
    call, _ = await unload(srv, tmp_path, "lmstudio", {"model": "q:2"})
    assert call.result.text == "unloaded q:2"
    assert srv.unloads == [{"instance_id": "q:2"}] and srv.lmstudio[0]["loaded_instances"] == [{"id": "q"}]


async def test_lmstudio_without_its_rest_api(scripted_server, tmp_path):
    srv = scripted_server
    call, _ = await unload(srv, tmp_path, "lmstudio", {"model": "qwen"})
    assert call.result.text == (
        f"cannot unload qwen: the LM Studio server at {srv.origin} has no REST API to unload with (GET "
        "/api/v1/models gave HTTP 404; LM Studio 0.4 or later has one) — unload it in LM Studio, or with "
        "`lms unload qwen`")
    srv.lmstudio, srv.requests[:] = {"error": "Unexpected endpoint or method. (GET /api/v1/models)"}, []
    call, _ = await unload(srv, tmp_path, "lmstudio", {"model": "qwen"})
    assert "(GET /api/v1/models gave no model list; LM Studio 0.4 or later has one)" in call.result.text
    assert call.result.failed


async def test_dmr_refuses_without_asking_the_server(scripted_server, tmp_path):
    srv = scripted_server
    srv.ps, srv.router = ollama_ps("m"), {"m": "loaded"}
    call, _ = await unload(srv, tmp_path, "dmr", {"model": "m"})
    assert call.result.text == "cannot unload m: the dmr provider cannot unload a model"
    assert call.result.failed and srv.unloads == []


async def test_the_embedded_engine_keeps_its_model(scripted_server, tmp_path):
    srv = scripted_server
    call, _ = await unload(srv, tmp_path, "embedded", {})
    assert call.result.text == ("cannot unload m: mm's embedded engine keeps its one model loaded while mm runs — "
                                "it is freed when mm exits (or run the model in a server of its own: docs/models.md)")
    assert call.result.failed and srv.unloads == []


# ---------------------------------------------------------------------------------------------
# A server that does not answer


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_an_unreachable_server():
    from mm.llm.unload import unload_model

    port = closed_port()
    outcome = await unload_model(f"http://127.0.0.1:{port}/v1", "ollama", "qwen")
    assert outcome.failed
    assert outcome.text == (f"cannot unload qwen: nothing answers at http://127.0.0.1:{port}/api/ps "
                            "(connection refused) — is the model server running?")


async def test_each_request_is_bounded(scripted_server):
    from mm.llm.unload import unload_model

    srv = scripted_server
    srv.router, srv.unload_seconds = {"m": "loaded"}, 30
    outcome = await unload_model(srv.base_url, "llamacpp", "m", timeout=0.5)
    assert outcome.text == f"cannot unload m: the server at {srv.origin}/models/unload did not answer within 0.5 s"
    assert outcome.failed


def test_the_timeout_is_30_seconds():
    from mm.llm.unload import TIMEOUT

    assert TIMEOUT == 30.0


# ---------------------------------------------------------------------------------------------
# Front ends: the terminal display in `mm -p`, the ACP tool call


def test_oneshot_display(scripted_server, tmp_path):
    srv = scripted_server
    srv.ps = ollama_ps("qwen", "m")
    srv.add_tool_calls([{"name": "unload_model", "arguments": {"model": "qwen"}}])
    srv.add_tool_calls([{"name": "unload_model", "arguments": {}}])
    srv.add_reply("done")
    (tmp_path / ".mm").mkdir()
    (tmp_path / ".mm" / "agent.yaml").write_text("yolo: false\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MM_", "OPENAI_"))}
    run = subprocess.run([sys.executable, "-m", "mm", "-p", ASK, "--base-url", srv.base_url, "--model", "m",
                          "--provider", "ollama"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "done\n"
    lines = run.stderr.splitlines()
    assert lines[lines.index("🧹 unload_model: qwen") + 1].strip() == "unloaded qwen"
    assert lines[lines.index("🧹 unload_model: (own model)") + 1].strip() == "unloaded m"
    assert "🔐" not in run.stderr and "nobody can be asked" not in run.stderr


async def test_acp_kind_other_and_a_failed_call(cwd, scripted_server):  # noqa: F811
    srv = scripted_server
    srv.router = {"gemma": "loaded"}
    write_agent_file(cwd, srv.base_url, provider="llamacpp", yolo=False)
    srv.add_tool_calls([{"id": "u1", "name": "unload_model", "arguments": {"model": "gemma"}},
                        {"id": "u2", "name": "unload_model", "arguments": {"model": "nope"}}])
    srv.add_reply("done")
    async with running_mm(cwd, srv, ScriptedClient()) as mm:  # no permission answer scripted: none asked
        session = await mm.new_session()
        mark = len(mm.wire)
        response = await mm.prompt(session, ASK)
        assert response["result"]["stopReason"] == "end_turn"
        calls = calls_of(mm.updates_after(mark, session))
    first, second = [c for c in calls if c["sessionUpdate"] == "tool_call"]  # mm's own ids, in order
    assert first["kind"] == second["kind"] == "other"
    assert (first["title"], second["title"]) == ("unload_model: gemma", "unload_model: nope")
    final = {c["toolCallId"]: c for c in calls}  # each call's last update
    assert final[first["toolCallId"]]["status"] == "completed"
    assert final[first["toolCallId"]]["content"][0]["content"]["text"] == "unloaded gemma"
    assert final[second["toolCallId"]]["status"] == "failed"
    assert final[second["toolCallId"]]["content"][0]["content"]["text"] == (
        f"cannot unload nope: the model server at {srv.origin}/models/unload answered HTTP 400: model is not found")
    assert json.loads(json.dumps(srv.unloads)) == [{"model": "gemma"}, {"model": "nope"}]


def test_llmman_is_a_provider_that_needs_its_address(tmp_path):
    from mm.config.load import ConfigError, load_config

    with pytest.raises(ConfigError) as err:
        load_config(None, tmp_path, {"provider": "llmman"}, env={})
    assert str(err.value) == ("--provider: provider: llmman has no usual address — set baseUrl (or --base-url URL) "
                              "to the server's OpenAI-compatible endpoint")
    loaded = load_config(None, tmp_path, {"provider": "llmman", "baseUrl": "http://127.0.0.1:9999/v1"}, env={})
    assert loaded.config.provider == "llmman"
