"""What a server says about how it runs the model, through the real front ends (issue 9 point 7,
issue 10 point 11): a llama.cpp server whose chat template drops tools is named once, with the fix;
an ollama model whose window is smaller than the request is compacted or refused, never sent; and
the model that answers is named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mm.engine.turns import WINDOW_EXCEEDED
from mm.llm.servers import OLLAMA_SMALL_WINDOW, TOOLS_DROPPED
from test_acp_logs import Agent

NO_TOOLS = {"default_generation_settings": {"n_ctx": 8192},
            "chat_template_caps": {"supports_tools": False, "supports_tool_calls": False, "supports_system_role": True}}
WITH_TOOLS = {"default_generation_settings": {"n_ctx": 8192},
              "chat_template_caps": {"supports_tools": True, "supports_tool_calls": True}}
QWEN = {"general.architecture": "qwen2", "qwen2.context_length": 32768}


def run_mm(args: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(cwd)}
    return subprocess.run([sys.executable, "-m", "mm", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120, input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL)


def server_args(srv, provider: str) -> list[str]:
    return ["--base-url", srv.base_url, "--model", "m", "--provider", provider]


def tools_warning(srv) -> str:
    return TOOLS_DROPPED.format(model="m", url=srv.base_url, cap="supports_tools")


# -- a llama.cpp template that cannot carry tools: said once, with the fix, by every front end

@pytest.mark.parametrize("props, warned", [(NO_TOOLS, True), (WITH_TOOLS, False)])
def test_oneshot_warns_once_when_the_template_drops_tools(scripted_server, tmp_path, props, warned):
    scripted_server.props = props
    scripted_server.add_reply("Paris.")
    proc = run_mm(["-p", "capital of France?", *server_args(scripted_server, "llamacpp")], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Paris.\n"
    warning = [tools_warning(scripted_server)] if warned else []
    assert sorted(proc.stderr.splitlines()) == sorted(["⚙ 0 command(s) · 📝 0 file op(s)"] + warning), proc.stderr
    assert "--jinja" in tools_warning(scripted_server) and "--chat-template-file" in tools_warning(scripted_server)


def test_line_mode_warns_once_under_the_banner(scripted_server, tmp_path):
    scripted_server.props = NO_TOOLS
    scripted_server.add_reply("One.")
    scripted_server.add_reply("Two.")
    proc = run_mm(server_args(scripted_server, "llamacpp"), tmp_path, stdin="first\nsecond\n")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    banner = (f"mm v{__import__('mm').__version__} · llama.cpp m at {scripted_server.base_url} · context window 8192 "
              "tokens · tools: bash, read_file, write_file, edit_file")
    assert lines[1].startswith(banner), proc.stdout
    assert lines[2] == tools_warning(scripted_server)
    assert lines.count(tools_warning(scripted_server)) == 1
    assert "One." in proc.stdout and "Two." in proc.stdout


def test_acp_logs_the_warning_once(scripted_server, tmp_path):
    cwd = Path(os.path.realpath(tmp_path))
    scripted_server.props = NO_TOOLS
    scripted_server.add_reply("One.")
    scripted_server.add_reply("Two.")
    agent = Agent(cwd, scripted_server, {"provider": "llamacpp"})
    agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    sid = agent.call("session/new", {"cwd": str(cwd), "mcpServers": []})[0]["result"]["sessionId"]
    for text in ("first", "second"):
        answer, _ = agent.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]})
        assert answer["result"]["stopReason"] == "end_turn"
    err = agent.stderr().splitlines()
    assert err.count(tools_warning(scripted_server)) == 1, err
    (banner,) = [line for line in err if line.startswith("mm v")]
    assert f" · acp · llama.cpp m at {scripted_server.base_url} · context window 8192 tokens · " in banner
    assert err.index(tools_warning(scripted_server)) == err.index(banner) + 1


async def test_the_embedded_engine_is_never_warned_about(scripted_server):
    """The embedded engine substitutes a template with tools itself: its /props is not even asked."""
    from mm.config.schema import AgentConfig
    from mm.llm.resolve import Endpoint, server_facts

    scripted_server.props = NO_TOOLS
    facts = await server_facts(AgentConfig(), Endpoint(scripted_server.base_url, "x.gguf", "embedded",
                                                       embedded=object()))
    assert (facts.warnings, facts.context_window) == ([], 8192)


# -- ollama, whose window cuts a longer prompt silently: compact, or refuse with one line

def small_ollama(srv, num_ctx: int) -> None:
    srv.show = {"parameters": f"num_ctx                        {num_ctx}", "model_info": QWEN}
    srv.ps = {"models": []}


def expected_refusal(tmp_path: Path, prompt: str, window: int) -> str:
    """WINDOW_EXCEEDED as mm computes it for `prompt` in a fresh conversation in `tmp_path`."""
    from mm.config.schema import AgentConfig
    from mm.run import build_conversation, make_client

    cfg = AgentConfig(baseUrl="http://127.0.0.1:9/v1", model="m", provider="ollama")
    conv = build_conversation(cfg, make_client(cfg, cfg.baseUrl, "m", "ollama"), tmp_path)
    conv.history.append({"role": "user", "content": prompt})
    return WINDOW_EXCEEDED.format(used=conv.used_tokens(), window=window)


def small_window_warning(window: int) -> str:
    return OLLAMA_SMALL_WINDOW.format(model="m", window=window, trained=32768, suggested=32768)


def test_oneshot_refuses_what_ollama_would_cut(scripted_server, tmp_path):
    small_ollama(scripted_server, 512)  # mm's system prompt and tools alone are about 1,000 tokens
    proc = run_mm(["-p", "hi", *server_args(scripted_server, "ollama")], tmp_path)
    assert proc.returncode == 1
    assert scripted_server.requests == []  # nothing was sent: the window was known before the first request
    assert proc.stderr.splitlines() == [small_window_warning(512), expected_refusal(tmp_path, "hi", 512),
                                        "⚙ 0 command(s) · 📝 0 file op(s)"]


def test_oneshot_refuses_a_prompt_longer_than_ollamas_window(scripted_server, tmp_path):
    """A pasted prompt that only fits the window cut is refused with its own line, not cut (issue 10,
    point 12; docs/engine.md §Context): ollama's window is known before the first request."""
    from mm.engine.compaction import PROMPT_TOO_LARGE

    scripted_server.show = {"model_info": QWEN}
    scripted_server.ps = {"models": [{"name": "m", "model": "m", "context_length": 4096}]}  # loaded, 4096
    prompt = "Summarise this log:\n" + "\n".join(f"line {i}: the service answered 200 in {i} ms" for i in range(900))
    proc = run_mm(["-p", prompt, *server_args(scripted_server, "ollama")], tmp_path)
    assert proc.returncode == 1, proc.stderr
    err = proc.stderr.splitlines()
    assert err[0] == small_window_warning(4096)
    assert err[1].startswith(PROMPT_TOO_LARGE.split("{tokens}")[0])
    assert "(80% of the model's context window of 4096) — not sent, rather than cut" in err[1]
    assert scripted_server.requests == []  # nothing sent, nothing cut
    assert scripted_server.loads == []  # loaded already: not loaded again


def test_oneshot_loads_an_unloaded_ollama_model_to_learn_its_window(scripted_server, tmp_path):
    scripted_server.show = {"model_info": QWEN}
    scripted_server.ps = {"models": []}
    scripted_server.ps_after_load = {"models": [{"name": "m:latest", "context_length": 600}]}
    proc = run_mm(["-p", "hi", *server_args(scripted_server, "ollama")], tmp_path)
    assert scripted_server.loads == [{"model": "m", "stream": False}]
    assert scripted_server.requests == []
    assert proc.returncode == 1 and expected_refusal(tmp_path, "hi", 600) in proc.stderr.splitlines()


def test_ctrl_c_while_ollama_loads_the_model_ends_mm(scripted_server, tmp_path):
    """The window is learnt before the first request, and that may mean loading the model: Ctrl-C
    (SIGINT) still ends mm at once, nothing sent."""
    import signal
    import time

    scripted_server.show = {"model_info": QWEN}
    scripted_server.ps = {"models": []}
    scripted_server.load_seconds = 60
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "mm", "-p", "hi", *server_args(scripted_server, "ollama")],
                            cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):
            if scripted_server.loads:
                break
            time.sleep(0.1)
        assert scripted_server.loads, "mm never asked ollama to load the model"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130 and err.splitlines() == ["mm: interrupted"], err
    assert scripted_server.requests == [] and out == ""


def test_line_mode_refuses_each_request_and_warns_once(scripted_server, tmp_path):
    small_ollama(scripted_server, 512)
    proc = run_mm(server_args(scripted_server, "ollama"), tmp_path, stdin="hi\nhi\n")
    assert proc.returncode == 0, proc.stderr
    shown = proc.stdout + proc.stderr
    assert shown.count(small_window_warning(512)) == 1
    refusal = expected_refusal(tmp_path, "hi", 512)
    assert shown.count(refusal) == 2, shown  # each request refused, the history left as it was
    assert scripted_server.requests == []


def test_acp_refuses_what_ollama_would_cut(scripted_server, tmp_path):
    cwd = Path(os.path.realpath(tmp_path))
    small_ollama(scripted_server, 512)
    agent = Agent(cwd, scripted_server, {"provider": "ollama"})
    agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    sid = agent.call("session/new", {"cwd": str(cwd), "mcpServers": []})[0]["result"]["sessionId"]
    answer, _ = agent.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]})
    assert answer["error"]["data"] == {"error": expected_refusal(cwd, "hi", 512)}
    err = agent.stderr().splitlines()
    assert err.count(small_window_warning(512)) == 1
    assert scripted_server.requests == []


# -- which model answers (issue 10 point 11)

def test_oneshot_names_the_model_it_picked(scripted_server, tmp_path):
    scripted_server.models = ["qwen2.5-coder:7b"]
    scripted_server.add_reply("Paris.")
    proc = run_mm(["-p", "capital of France?", "--base-url", scripted_server.base_url], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[0] == f"OpenAI-compatible qwen2.5-coder:7b at {scripted_server.base_url}"
    assert scripted_server.requests[0]["model"] == "qwen2.5-coder:7b"


@pytest.mark.parametrize("config", [{"model": "m"}, {"model": "m", "provider": "llamacpp"}])
def test_oneshot_names_no_model_the_user_named(scripted_server, tmp_path, config):
    scripted_server.add_reply("Paris.")
    (tmp_path / ".mm").mkdir()
    (tmp_path / ".mm" / "agent.yaml").write_text(json.dumps({"baseUrl": scripted_server.base_url, **config}))
    proc = run_mm(["-p", "capital of France?"], tmp_path)
    assert proc.stderr == "⚙ 0 command(s) · 📝 0 file op(s)\n"
