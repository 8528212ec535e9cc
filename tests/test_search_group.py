"""The `search` tool group (`toolsets:`, docs/tools.md): what the model is sent, and the group's
configuration key `search.timeout` (docs/configuration.md)."""

from __future__ import annotations

import subprocess
import sys

from harness import RecordingUI, make_conversation
from search_support import environment_without_mm


async def test_the_group_is_declared_after_core_when_named(scripted_server, tmp_path):
    scripted_server.add_reply("ok")
    scripted_server.add_reply("ok")
    for toolsets in (["core", "search"], ["search"]):
        conv = make_conversation(scripted_server.base_url, tmp_path, {"toolsets": toolsets})
        await conv.run_turn("hi", RecordingUI())
    with_core, alone = ([t["function"]["name"] for t in body["tools"]] for body in scripted_server.requests)
    assert with_core[-2:] == ["glob_search", "grep_search"] and "bash" in with_core
    assert alone == ["glob_search", "grep_search"]
    grep = next(t for t in scripted_server.requests[1]["tools"] if t["function"]["name"] == "grep_search")
    assert grep["function"]["parameters"]["required"] == ["pattern"]
    mode = grep["function"]["parameters"]["properties"]["output_mode"]["description"]
    assert all(name in mode for name in ("files_with_matches", "content", "count"))


def test_not_imported_unless_named(tmp_path):
    """A default agent file never imports the group (start-up time: issue 13, the brief's tool groups)."""
    code = ("import sys; from mm.config.load import agent_config_adapter; from mm.tools.registry import build_registry; "
            "build_registry(agent_config_adapter().validate_python({}), {}, None); "
            "print(any(m.startswith('mm.tools.search') for m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.stdout.strip() == "False", done.stderr


def test_a_timeout_that_is_not_positive_is_a_configuration_error(tmp_path):
    (tmp_path / "agent.yaml").write_text("model: m\ntoolsets: [search]\nsearch:\n  timeout: 0\n")
    env = environment_without_mm() | {"HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "mm", "-p", "hi", "-c", "agent.yaml"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stderr.startswith("mm: agent.yaml:4: search.timeout") and done.stderr.count("\n") == 1, done.stderr
