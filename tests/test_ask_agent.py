"""ask_agent, `/ask` and `mm --ask` end to end (mm-tools.md §ask_agent, §ask_user "Asked agent" and
"Editor (ACP)"; mm-acp.md §elicitation/create "When mm is the client…", §session/request_permission).

Every agent is real: each has its own agent file and its own scripted model server, the asking mm
runs as a subprocess (`mm -p`, `mm -acp` driven by the Python ACP SDK's client, `mm --ask`) or as
line mode on prompt_toolkit's pipe input, and the asked agent is the child `mm -acp` it starts.
"""

from __future__ import annotations

import asyncio
import io
import os
import random
import signal
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness import pids_matching
from scripted_server import ScriptedServer

MM = [sys.executable, "-m", "mm"]
CANNOT_ASK = "[the user cannot be asked in this mode: make a reasonable assumption, say which, and go on]"


# -- helpers -------------------------------------------------------------------------------------

def clean_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """This environment without any MM_* variable, HOME a temporary directory."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")}
    env["HOME"] = str(home)
    env.update(extra or {})
    return env


def agent_file(path: Path, server: ScriptedServer | None = None, model: str = "m", **keys: Any) -> Path:
    """Write an agent file talking to `server` (block YAML, keys in the given order)."""
    data: dict[str, Any] = {}
    if server is not None:
        data.update({"baseUrl": server.base_url, "model": model})
    data.update(keys)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def child_server(model: str = "cm") -> ScriptedServer:
    srv = ScriptedServer()
    srv.models = [model]
    return srv.start()


def run_mm(args: list[str], cwd: Path, env_extra: dict[str, str] | None = None,
           timeout: float = 60) -> subprocess.CompletedProcess:
    (cwd / "home").mkdir(exist_ok=True)
    return subprocess.run(MM + args, cwd=cwd, env=clean_env(cwd / "home", env_extra), capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def tool_messages(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def last_tool_message(request: dict) -> str:
    message = request["messages"][-1]
    assert message["role"] == "tool", request["messages"]
    return message["content"]


def wait_for_pids(pattern: str, present: bool, timeout: float = 20) -> list[int]:
    """Poll `pgrep -f pattern` until some process matches (present) or none does; returns the last pids."""
    deadline = time.monotonic() + timeout
    while True:
        pids = pids_matching(pattern)
        if bool(pids) == present or time.monotonic() > deadline:
            return pids
        time.sleep(0.05)


def assert_no_process(pattern: str) -> None:
    """No process matches `pattern` (waited for a moment); any that does is killed, by pid, and fails."""
    left = wait_for_pids(pattern, present=False, timeout=5)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"still running: {pattern}"


def sleep_marker() -> str:
    """A `sleep` command line no other process has (its own argument is the marker)."""
    return f"sleep 59.{random.randint(10000, 99999)}"


@pytest.fixture
def servers():
    """Start scripted servers on demand (`servers()`, `servers("cm")`), all stopped after the test."""
    started: list[ScriptedServer] = []

    def make(model: str = "m") -> ScriptedServer:
        started.append(child_server(model))
        return started[-1]

    yield make
    for srv in started:
        srv.stop()


# -- the ACP client ---------------------------------------------------------------------------------

class RecordingClient:
    """An editor that takes forms: records every update, permission request and form, and answers
    permissions (`allow`, `reject`, …) and forms (the `content` dicts) from its lists in turn."""

    def __init__(self, permissions: list[str] | None = None, forms: list[dict] | None = None):
        self.updates: list[dict] = []
        self.permissions: list[dict] = []
        self.forms: list[dict] = []
        self._permission_answers = list(permissions or [])
        self._form_answers = list(forms or [])

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append({"sessionId": session_id, **update.model_dump(by_alias=True, exclude_none=True)})

    async def request_permission(self, session_id: str, tool_call: Any, options: list, **_: Any) -> Any:
        from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

        self.permissions.append({"sessionId": session_id, "toolCall": tool_call.model_dump(by_alias=True,
                                                                                           exclude_none=True),
                                 "options": [o.option_id for o in options]})
        if not self._permission_answers:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected",
                                                                option_id=self._permission_answers.pop(0)))

    async def create_elicitation(self, message: str, mode: Any, **meta: Any) -> Any:
        self.forms.append({"message": message, "mode": mode.model_dump(by_alias=True, exclude_none=True),
                           "meta": meta})
        if not self._form_answers:
            return {"action": "decline"}
        return {"action": "accept", "content": self._form_answers.pop(0)}

    async def complete_elicitation(self, elicitation_id: str, **_: Any) -> None:
        return None

    # what the updates show
    def calls(self) -> dict[str, dict]:
        """Each tool call by id: its `tool_call` merged with its later `tool_call_update`s."""
        calls: dict[str, dict] = {}
        for update in self.updates:
            if update["sessionUpdate"] in ("tool_call", "tool_call_update"):
                calls.setdefault(update["toolCallId"], {}).update(update)
        return calls

    def call_titled(self, title: str) -> dict:
        found = [c for c in self.calls().values() if c.get("title") == title]
        assert len(found) == 1, (title, [c.get("title") for c in self.calls().values()])
        return found[0]

    def text(self, start: int = 0, end: int | None = None) -> str:
        """The `agent_message_chunk` texts of updates[start:end], joined."""
        return "".join(u["content"]["text"] for u in self.updates[start:end]
                       if u["sessionUpdate"] == "agent_message_chunk")

    def announced(self, start: int = 0, end: int | None = None) -> list[str]:
        """The titles of the `tool_call`s of updates[start:end], in order."""
        return [u["title"] for u in self.updates[start:end] if u["sessionUpdate"] == "tool_call"]


@asynccontextmanager
async def mm_acp(client: RecordingClient, cwd: Path, config: Path | str, env_extra: dict[str, str] | None = None,
                 session_cwd: Path | None = None):
    """`mm -acp -c config` started in `cwd`, initialized with `elicitation.form`, one session in
    `session_cwd` (default `cwd`); yields (conn, session id)."""
    from acp import PROTOCOL_VERSION, spawn_agent_process
    from acp.schema import (ClientCapabilities, ElicitationCapabilities, ElicitationFormCapabilities,
                            FileSystemCapabilities, Implementation)

    (cwd / "home").mkdir(exist_ok=True)
    with open(cwd / "mm-stderr.txt", "w") as stderr:
        async with spawn_agent_process(client, *MM, "-acp", "-c", str(config), env=clean_env(cwd / "home", env_extra),
                                       cwd=str(cwd), transport_kwargs={"stderr": stderr},
                                       use_unstable_protocol=True) as (conn, _process):
            capabilities = ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=False, write_text_file=False), terminal=False,
                elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities()))
            await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities,
                                                   client_info=Implementation(name="test", version="1")), 30)
            session = await asyncio.wait_for(conn.new_session(cwd=str(session_cwd or cwd), mcp_servers=[]), 30)
            yield conn, session.session_id


async def prompt(conn: Any, session_id: str, text: str, timeout: float = 60) -> Any:
    from acp import text_block

    return await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=[text_block(text)]), timeout)


# -- 1. declaration, permission, configuration --------------------------------------------------------

def test_declaration_description_schema_and_permission(tmp_path, servers):
    """The description lists the agents sorted, each with its purpose; the schema; with `yolo:
    false` the call itself is asked, so `mm -p` rejects it and nothing is started."""
    from mm.tools.ask_agent import DESCRIPTION

    parent = servers()
    agent_file(tmp_path / "alpha.yaml", servers("am"), "am", acp={"title": "Alpha, the reviewer"})
    agent_file(tmp_path / "bob.yaml", servers("bm"), "bm", acp={"title": "Bob (bash-first agent)"})
    agent_file(tmp_path / "zeta.yaml", servers("zm"), "zm", acp={"title": "Zeta's own title"})
    agent_file(tmp_path / "plain.yaml", servers("pm"), "pm")
    agent_file(tmp_path / "parent.yaml", parent, yolo=False, mmConfigs={
        "zeta": {"config": "zeta.yaml", "description": "Writes the documentation"},
        "ext": {"command": ["sh", "-c", "touch ext-started"]},
        "bob": {"config": "bob.yaml"},
        "plain": "plain.yaml",
        "alpha": {"config": "alpha.yaml"},
    })
    parent.add_tool_calls([{"id": "c1", "name": "ask_agent", "arguments": {"agent": "ext", "prompt": "hello"}}])
    parent.add_reply("ok")

    proc = run_mm(["-p", "go", "-c", "parent.yaml"], tmp_path)

    assert proc.returncode == 0, proc.stderr
    tools = {t["function"]["name"]: t["function"] for t in parent.requests[0]["tools"]}
    declared = tools["ask_agent"]
    paragraph, agents = declared["description"].split("\nAgents:\n")
    assert paragraph == DESCRIPTION and paragraph.strip() and "\n" not in paragraph
    assert agents.splitlines() == ["  alpha — Alpha, the reviewer", "  bob — (no description)",
                                   "  ext — (no description)", "  plain — (no description)",
                                   "  zeta — Writes the documentation"]
    schema = declared["parameters"]
    assert schema["type"] == "object" and schema["required"] == ["agent", "prompt"]
    assert {k: v["type"] for k, v in schema["properties"].items()} == {
        "agent": "string", "prompt": "string", "with_context": "boolean"}
    assert tool_messages(parent.requests[1]) == ["[ask_agent rejected by the user]"]
    assert not (tmp_path / "ext-started").exists()


def test_not_declared_without_mm_configs(tmp_path, scripted_server):
    agent_file(tmp_path / "agent.yaml", scripted_server)
    scripted_server.add_reply("ok")
    proc = run_mm(["-p", "go", "-c", "agent.yaml"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    names = [t["function"]["name"] for t in scripted_server.requests[0]["tools"]]
    assert "bash" in names and "ask_agent" not in names


@pytest.mark.parametrize("name,entry,says", [
    ("x", "    description: nothing to start\n", "give either config (another mm's agent file) or command"
                                                  " (an ACP agent's command line), not neither"),
    ("x", "    config: child.yaml\n    command: some-agent --acp\n", "not both"),
    ("x", "    config: missing.yaml\n", "config: no such agent file "),
    ("bad name", "    config: child.yaml\n", "the name 'bad name' must be letters, digits, _ or -"),
])
def test_config_errors(tmp_path, name, entry, says):
    (tmp_path / "child.yaml").write_text("model: cm\n")
    text = f"model: m\nbaseUrl: http://127.0.0.1:9/v1\nmmConfigs:\n  ok:\n    config: child.yaml\n  {name}:\n{entry}"
    (tmp_path / "parent.yaml").write_text(text)
    proc = run_mm(["-p", "go", "-c", "parent.yaml"], tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"mm: parent.yaml:6: mmConfigs.{name}: "), lines[0]
    assert says in lines[0]
    if "missing" in entry:
        assert lines[0].endswith("missing.yaml")


# -- 2. mm asks mm through `mm -p` -------------------------------------------------------------------

def test_mm_asks_mm_through_oneshot(tmp_path, servers):
    """Two agent files, two servers: the child runs bash (MM_ASK_DEPTH=1) and answers; the answer is
    the tool message; the child is started once and reused, with a fresh session per call;
    `with_context` puts the history the turn started from before the task."""
    parent, child = servers(), servers("cm")
    child_yaml = agent_file(tmp_path / "child.yaml", child, "cm")
    agent_file(tmp_path / "parent.yaml", parent, mmConfigs={"helper": {"config": "child.yaml"}})
    command = "echo depth=$MM_ASK_DEPTH ppid=$PPID"
    parent.add_tool_calls([{"id": "p1", "name": "ask_agent",
                            "arguments": {"agent": "helper", "prompt": "Report your depth\nand nothing else"}}])
    child.add_tool_calls([{"name": "bash", "arguments": {"command": command}}])
    child.add_reply("My depth is 1.")
    parent.add_tool_calls([{"id": "p2", "name": "ask_agent", "arguments": {"agent": "helper", "prompt": "Again"}}])
    child.add_tool_calls([{"name": "bash", "arguments": {"command": command}}])
    child.add_reply("Still 1.")
    parent.add_tool_calls([{"id": "p3", "name": "ask_agent",
                            "arguments": {"agent": "helper", "prompt": "Use the context", "with_context": True}}])
    child.add_reply("Context read.")
    parent.add_reply("All asked.")

    proc = run_mm(["-p", "Ask the helper", "-c", "parent.yaml"], tmp_path)

    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "All asked.\n"
    err = proc.stderr.splitlines()
    assert "🗣 ask_agent: helper (openai/cm) — Report your depth" in err, proc.stderr
    assert "🗣 ask_agent: helper (openai/cm) — Again" in err
    assert f"🧰 helper · bash: {command}" in err
    # the answers are the tool messages the parent's model reads next
    assert last_tool_message(parent.requests[1]) == "My depth is 1."
    assert last_tool_message(parent.requests[2]) == "Still 1."
    assert last_tool_message(parent.requests[3]) == "Context read."
    # the child: its own model, depth 1, one process for both calls
    assert [r["model"] for r in child.requests] == ["cm"] * 5
    first, second = last_tool_message(child.requests[1]), last_tool_message(child.requests[3])
    assert first.startswith("depth=1 ppid=") and first == second, (first, second)
    # a fresh session per call: the second question comes without the first one's history
    assert [m["role"] for m in child.requests[0]["messages"]] == ["system", "user"]
    assert child.requests[0]["messages"][1]["content"] == "Report your depth\nand nothing else"
    assert [m["role"] for m in child.requests[2]["messages"]] == ["system", "user"]
    assert child.requests[2]["messages"][1]["content"] == "Again"
    # with_context: the history the turn started from (here the question alone), then the task
    assert [m["role"] for m in child.requests[4]["messages"]] == ["system", "user"]
    task = child.requests[4]["messages"][1]["content"]
    assert task.startswith("The conversation so far") and "\nuser: Ask the helper\n" in task, task
    assert task.endswith("\nUse the context") and "Report your depth" not in task
    assert_no_process(str(child_yaml))


# -- 3. an editor asks mm, which asks mm: questions and permissions relayed ---------------------------

async def test_questions_permissions_and_stream_relayed_to_the_editor(tmp_path, servers):
    parent, child = servers(), servers("cm")
    child_yaml = agent_file(tmp_path / "child.yaml", child, "cm")
    config = agent_file(tmp_path / "parent.yaml", parent, mmConfigs={"helper": {"config": "child.yaml",
                                                                                "yolo": False}})
    # turn 1: a question, then a command the user allows
    parent.add_tool_calls([{"name": "ask_agent", "arguments": {"agent": "helper", "prompt": "Pick a colour"}}])
    child.add_tool_calls([{"name": "ask_user", "arguments": {"question": "Which colour?", "options": ["red", "blue"]}}])
    child.add_tool_calls([{"name": "bash", "arguments": {"command": "echo blue > colour.txt"}}])
    child.add_reply("I wrote blue to colour.txt.")
    parent.add_reply("Done.")
    # turn 2: a command the user rejects
    parent.add_tool_calls([{"name": "ask_agent", "arguments": {"agent": "helper", "prompt": "Remove it"}}])
    child.add_tool_calls([{"name": "bash", "arguments": {"command": "rm colour.txt"}}])
    child.add_reply("I was not allowed to remove it.")
    parent.add_reply("Kept.")
    client = RecordingClient(permissions=["allow", "reject"], forms=[{"q1": "blue"}])

    async with mm_acp(client, tmp_path, config) as (conn, session_id):
        first = await prompt(conn, session_id, "Choose a colour")
        turn_two = len(client.updates)
        second = await prompt(conn, session_id, "Now remove it")

    assert first.stop_reason == "end_turn" and second.stop_reason == "end_turn"
    # the child's question came up as this mm's form, prefixed, scoped to the relayed ask_user call
    asked = client.call_titled("helper · ask_user: 1 question(s)")
    assert len(client.forms) == 1
    form = client.forms[0]
    assert form["message"] == "helper asks: Which colour?"
    assert form["mode"]["sessionId"] == session_id and form["mode"]["toolCallId"] == asked["toolCallId"]
    assert form["mode"]["requestedSchema"]["properties"]["q1"] == {
        "type": "string", "title": "helper asks: Which colour?", "enum": ["red", "blue"]}
    assert last_tool_message(child.requests[1]) == "The user answered:\n- Which colour? → blue"
    assert asked["status"] == "completed"
    # the child's permission requests came up titled `<agent> · <title>`: allowed, then rejected
    assert [p["toolCall"]["title"] for p in client.permissions] == ["helper · bash: echo blue > colour.txt",
                                                                    "helper · bash: rm colour.txt"]
    assert all(p["sessionId"] == session_id for p in client.permissions)
    assert (tmp_path / "colour.txt").read_text() == "blue\n"
    assert last_tool_message(child.requests[2]) == ""  # the allowed command ran (it prints nothing)
    assert last_tool_message(child.requests[4]) == "[command rejected by the user]"
    # the child's answers are what the parent's model read
    assert last_tool_message(parent.requests[1]) == "I wrote blue to colour.txt."
    assert last_tool_message(parent.requests[3]) == "I was not allowed to remove it."
    # the stream: the child's text and calls, then the ask_agent call's own output
    assert client.text(0, turn_two) == "I wrote blue to colour.txt.\n\nDone."  # this agent's text starts apart
    assert client.text(turn_two) == "I was not allowed to remove it.\n\nKept."
    ran = client.call_titled("helper · bash: echo blue > colour.txt")
    assert ran["kind"] == "execute" and ran["status"] == "completed"
    assert client.call_titled("helper · bash: rm colour.txt")["status"] == "failed"
    call = client.call_titled("ask_agent: helper (openai/cm) — Pick a colour")
    assert call["kind"] == "other" and call["status"] == "completed"
    assert call["rawInput"]["agent"] == "helper"
    answer = "I wrote blue to colour.txt."
    assert call["content"] == [{"type": "content", "content": {"type": "text",
                                                                "text": f"helper answered ({len(answer)} characters)"}}]
    assert call["rawOutput"]["output"] == answer
    assert client.announced(0, turn_two) == ["ask_agent: helper (openai/cm) — Pick a colour",
                                             "helper · ask_user: 1 question(s)",
                                             "helper · bash: echo blue > colour.txt"]
    assert client.announced(turn_two) == ["ask_agent: helper (openai/cm) — Remove it",
                                          "helper · bash: rm colour.txt"]
    assert_no_process(str(child_yaml))


# -- 4. the depth limit ---------------------------------------------------------------------------------

def test_depth_limit_from_the_environment(tmp_path, scripted_server):
    """MM_ASK_DEPTH=2: the call fails with the depth message and nothing is started."""
    agent_file(tmp_path / "parent.yaml", scripted_server,
               mmConfigs={"probe": {"command": [sys.executable, "-c", "open('probe-started', 'w')"]}})
    scripted_server.add_tool_calls([{"name": "ask_agent", "arguments": {"agent": "probe", "prompt": "hi"}}])
    scripted_server.add_reply("ok")
    proc = run_mm(["-p", "go", "-c", "parent.yaml"], tmp_path, {"MM_ASK_DEPTH": "2"})
    assert proc.returncode == 0, proc.stderr
    result = last_tool_message(scripted_server.requests[1])
    assert result.startswith("[ask_agent: probe cannot be asked: ") and "MM_ASK_DEPTH" in result, result
    assert not (tmp_path / "probe-started").exists()


def test_depth_limit_in_a_chain(tmp_path, servers):
    """A asks B asks C; C (depth 2) cannot ask in turn, and its model reads why."""
    a, b, c = servers(), servers("bm"), servers("cm")
    agent_file(tmp_path / "c.yaml", c, "cm",
               mmConfigs={"d": {"command": [sys.executable, "-c", "open('d-started', 'w')"]}})
    agent_file(tmp_path / "b.yaml", b, "bm", mmConfigs={"c": "c.yaml"})
    agent_file(tmp_path / "a.yaml", a, mmConfigs={"b": "b.yaml"})
    a.add_tool_calls([{"name": "ask_agent", "arguments": {"agent": "b", "prompt": "ask c"}}])
    b.add_tool_calls([{"name": "ask_agent", "arguments": {"agent": "c", "prompt": "ask d"}}])
    c.add_tool_calls([{"name": "ask_agent", "arguments": {"agent": "d", "prompt": "anything"}}])
    c.add_reply("C could not ask d.")
    b.add_reply("B heard: C could not ask d.")
    a.add_reply("Chain done.")

    proc = run_mm(["-p", "go", "-c", "a.yaml"], tmp_path)

    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Chain done.\n"
    too_deep = last_tool_message(c.requests[1])
    assert too_deep.startswith("[ask_agent: d cannot be asked: ") and "MM_ASK_DEPTH" in too_deep, too_deep
    assert last_tool_message(b.requests[1]) == "C could not ask d."
    assert not (tmp_path / "d-started").exists()
    assert_no_process(str(tmp_path / "b.yaml"))
    assert_no_process(str(tmp_path / "c.yaml"))
    # A's result is B's answer only: C's text streamed through B marked as relayed (`_meta`).
    assert last_tool_message(a.requests[1]) == "B heard: C could not ask d."


async def test_agent_file_relative_to_the_agent_file_in_acp(tmp_path, servers):
    """mm -acp started in one directory with `-c parent.yaml`, the session in another: the child's
    agent file is still found beside parent.yaml."""
    parent, child = servers(), servers("cm")
    launch, project = tmp_path / "launch", tmp_path / "project"
    launch.mkdir(), project.mkdir()
    agent_file(launch / "child.yaml", child, "cm")
    agent_file(launch / "parent.yaml", parent, mmConfigs={"helper": "child.yaml"})
    parent.add_tool_calls([{"name": "ask_agent", "arguments": {"agent": "helper", "prompt": "hi"}}])
    child.add_reply("Hello.")
    parent.add_reply("ok")
    async with mm_acp(RecordingClient(), launch, "parent.yaml", session_cwd=project) as (conn, session_id):
        await prompt(conn, session_id, "go")
    assert last_tool_message(parent.requests[1]) == "Hello."


# -- 5. the error texts -----------------------------------------------------------------------------------

def test_error_texts(tmp_path, servers):
    import socket

    parent, quiet = servers(), servers("qm")
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    agent_file(tmp_path / "quiet.yaml", quiet, "qm")
    (tmp_path / "down.yaml").write_text(f"baseUrl: http://127.0.0.1:{dead}/v1\nmodel: m\n")
    agent_file(tmp_path / "parent.yaml", parent, mmConfigs={
        "a": {"config": "quiet.yaml"}, "b": {"config": "down.yaml"},
        "ghost": {"command": "/nonexistent/mm-test-agent --acp"}})
    parent.add_tool_calls([
        {"id": "unknown", "name": "ask_agent", "arguments": {"agent": "x", "prompt": "hi"}},
        {"id": "empty", "name": "ask_agent", "arguments": {"agent": "a", "prompt": "  \n "}},
        {"id": "ghost", "name": "ask_agent", "arguments": {"agent": "ghost", "prompt": "hi"}},
        {"id": "down", "name": "ask_agent", "arguments": {"agent": "b", "prompt": "hi"}},
        {"id": "silent", "name": "ask_agent", "arguments": {"agent": "a", "prompt": "say nothing"}},
    ])
    quiet.add_reply("")
    parent.add_reply("ok")

    proc = run_mm(["-p", "go", "-c", "parent.yaml"], tmp_path)

    assert proc.returncode == 0, proc.stderr
    results = {m["tool_call_id"]: m["content"] for m in parent.requests[1]["messages"] if m["role"] == "tool"}
    assert results["unknown"] == '[ask_agent: unknown agent "x" — agents: a, b, ghost]'
    assert results["empty"] == "[ask_agent: the prompt is empty — say what a must do]"
    assert results["ghost"].startswith("[ask_agent: ghost failed: ") and results["ghost"].endswith("]")
    assert "/nonexistent/mm-test-agent" in results["ghost"] and "No such file" in results["ghost"]
    assert results["down"].startswith("[ask_agent: b failed: ") and results["down"].endswith("]")
    assert "connection refused" in results["down"], results["down"]
    assert results["silent"] == "[ask_agent: a gave no answer]"
    assert len(quiet.requests) == 1  # the empty prompt never reached the agent
    assert_no_process(str(tmp_path / "quiet.yaml"))
    assert_no_process(str(tmp_path / "down.yaml"))


def test_cancel_through_sigint_in_oneshot(tmp_path, servers):
    """SIGINT to `mm -p` while the child sleeps: the sleep is killed and no child is left."""
    parent, child = servers(), servers("cm")
    marker = sleep_marker()
    child_yaml = agent_file(tmp_path / "child.yaml", child, "cm")
    agent_file(tmp_path / "parent.yaml", parent, mmConfigs={"helper": "child.yaml"})
    parent.add_tool_calls([{"name": "ask_agent", "arguments": {"agent": "helper", "prompt": "wait"}}])
    child.add_tool_calls([{"name": "bash", "arguments": {"command": marker}}], content="Waiting now.")
    parent.add_reply("unused")
    proc = subprocess.Popen(MM + ["-p", "go", "-c", "parent.yaml"], cwd=tmp_path, env=clean_env(tmp_path),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for_pids(marker, present=True), "the child's command never started"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "[ask_agent: helper stopped before finishing: cancelled]" in err, err
    assert_no_process(marker)
    assert_no_process(str(child_yaml))


async def test_cancel_through_the_editor(tmp_path, servers):
    """session/cancel while the child sleeps: the result is what was answered, then the stop line."""
    parent, child = servers(), servers("cm")
    marker = sleep_marker()
    child_yaml = agent_file(tmp_path / "child.yaml", child, "cm")
    config = agent_file(tmp_path / "parent.yaml", parent, mmConfigs={"helper": "child.yaml"})
    parent.add_tool_calls([{"name": "ask_agent", "arguments": {"agent": "helper", "prompt": "wait"}}])
    child.add_tool_calls([{"name": "bash", "arguments": {"command": marker}}], content="Waiting now.")
    client = RecordingClient()

    async with mm_acp(client, tmp_path, config) as (conn, session_id):
        turn = asyncio.ensure_future(prompt(conn, session_id, "go"))
        deadline = time.monotonic() + 20
        while not pids_matching(marker) and time.monotonic() < deadline and not turn.done():
            await asyncio.sleep(0.05)
        assert pids_matching(marker), "the child's command never started"
        await conn.cancel(session_id=session_id)
        response = await turn
        assert response.stop_reason == "cancelled"
        assert_no_process(marker)  # killed while mm still runs

    call = client.call_titled("ask_agent: helper (openai/cm) — wait")
    assert call["status"] == "failed"
    assert call["rawOutput"]["output"] == ("Waiting now.\n"
                                           "[ask_agent: helper stopped before finishing: cancelled]")
    assert len(parent.requests) == 1
    assert_no_process(str(child_yaml))


# -- 6. mm --ask ---------------------------------------------------------------------------------------------

def test_mm_ask(tmp_path, servers):
    """The answer on stdout; nobody can be asked; the child's permission requests are rejected."""
    child = servers("cm")
    agent_file(tmp_path / "child.yaml", child, "cm")
    agent_file(tmp_path / "parent.yaml", servers(), mmConfigs={"helper": {"config": "child.yaml", "yolo": False}})
    child.add_tool_calls([{"name": "ask_user", "arguments": {"question": "Which file?"}}])
    child.add_tool_calls([{"name": "bash", "arguments": {"command": "touch asked-ran"}}])
    child.add_reply("Nothing was touched.")

    proc = run_mm(["--ask", "helper", "Touch a file", "-c", "parent.yaml"], tmp_path)

    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Nothing was touched.\n"
    assert child.requests[0]["messages"][-1] == {"role": "user", "content": "Touch a file"}
    assert last_tool_message(child.requests[1]) == CANNOT_ASK
    assert last_tool_message(child.requests[2]) == "[command rejected by the user]"
    assert not (tmp_path / "asked-ran").exists()

    unknown = run_mm(["--ask", "nobody", "hi", "-c", "parent.yaml"], tmp_path)
    assert unknown.returncode == 2
    assert unknown.stdout == ""
    assert '[ask_agent: unknown agent "nobody" — agents: helper]' in unknown.stderr
    assert len(child.requests) == 3


# -- 7. /ask in line mode, and with_context over several turns ------------------------------------------------

async def test_ask_command_in_line_mode_joins_the_history(tmp_path, servers, monkeypatch):
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput
    from rich.console import Console

    from mm.config.load import agent_config_adapter
    from mm.ui.line.app import run_line_mode

    for var in [v for v in os.environ if v.startswith("MM_")]:
        monkeypatch.delenv(var)
    monkeypatch.setenv("HOME", str(tmp_path))  # the child mm's own HOME
    parent, child = servers(), servers("cm")
    child_yaml = agent_file(tmp_path / "child.yaml", child, "cm")
    cfg = agent_config_adapter().validate_python({"baseUrl": parent.base_url, "model": "m",
                                                  "mmConfigs": {"helper": {"config": str(child_yaml)}}})
    # turn 1: a command whose output must never reach the asked agent
    parent.add_tool_calls([{"name": "bash", "arguments": {"command": "printf 'SECRET-%s' OUTPUT"}}])
    parent.add_reply("The probe ran.")
    # /ask: the child answers directly
    child.add_reply("Hi from the helper.")
    # turn 2: the model asks with the context
    parent.add_tool_calls([{"name": "ask_agent", "arguments": {"agent": "helper", "prompt": "Sum it up",
                                                               "with_context": True}}])
    child.add_reply("Summed up.")
    parent.add_reply("All done.")

    out = io.StringIO()
    console = Console(file=out, width=200, force_terminal=False, color_system=None)

    async def shows(text: str) -> None:
        deadline = time.monotonic() + 30
        while text not in out.getvalue():
            assert time.monotonic() < deadline and not task.done(), f"{text!r} never showed:\n{out.getvalue()}"
            await asyncio.sleep(0.05)

    with create_pipe_input() as pipe:
        task = asyncio.create_task(run_line_mode(cfg, tmp_path, input=pipe, output=DummyOutput(), console=console))
        pipe.send_text("run the probe\r")
        await shows("The probe ran.")
        pipe.send_text("/ask helper say hi\r")
        await shows("Hi from the helper.")
        pipe.send_text("now delegate\r")
        await shows("All done.")
        pipe.send_text("/quit\r")
        assert await asyncio.wait_for(task, 30) == 0, out.getvalue()

    shown = out.getvalue()
    assert "🗣 ask_agent: helper (openai/cm) — say hi" in shown
    assert shown.index("🗣 ask_agent: helper (openai/cm) — say hi") < shown.index("Hi from the helper.")
    # the exchange joined the history: the next turn's request carries it
    messages = parent.requests[2]["messages"]
    at = messages.index({"role": "user", "content": "/ask helper say hi"})
    assert messages[at + 1] == {"role": "assistant", "content": "Hi from the helper."}
    assert messages[-1] == {"role": "user", "content": "now delegate"}
    # /ask put the prompt alone; with_context put the conversation first, tool outputs left out
    assert child.requests[0]["messages"][1:] == [{"role": "user", "content": "say hi"}]
    assert [m["role"] for m in child.requests[1]["messages"]] == ["system", "user"]
    task_text = child.requests[1]["messages"][1]["content"]
    assert "SECRET-OUTPUT" not in task_text, task_text
    lines = task_text.splitlines()
    expected = ["user: run the probe", "tool call: bash: printf 'SECRET-%s' OUTPUT", "assistant: The probe ran.",
                "user: /ask helper say hi", "assistant: Hi from the helper.", "user: now delegate"]
    assert [line for line in lines if line in expected] == expected, task_text
    assert task_text.endswith("\nSum it up")
    assert last_tool_message(parent.requests[3]) == "Summed up."
    assert_no_process(str(child_yaml))


# -- 8. the watchdog ----------------------------------------------------------------------------------

def test_a_silent_agent_is_stopped_by_the_watchdog_and_the_turn_ends(tmp_path, servers):
    """Silence longer than watchdogTimeout (the child's model server stalls) stops the question:
    the result says so, and the asking agent's turn ends as its own watchdog would end it."""
    parent, child = servers(), servers("cm")
    agent_file(tmp_path / "child.yaml", child, "cm")
    agent_file(tmp_path / "parent.yaml", parent, watchdogTimeout=1, mmConfigs={"helper": "child.yaml"})
    parent.add_tool_calls([{"name": "ask_agent", "arguments": {"agent": "helper", "prompt": "think"}}])
    child.add_stall(30)

    proc = run_mm(["-p", "go", "-c", "parent.yaml"], tmp_path)

    stopped = "[ask_agent: helper stopped before finishing: no sign of life for 1s (watchdogTimeout)]"
    assert proc.returncode == 1, proc.stderr
    assert stopped in proc.stderr
    assert len(parent.requests) == 1  # the turn ended: the model was not asked again
    assert_no_process(str(tmp_path / "child.yaml"))


async def test_waiting_for_the_user_is_not_silence(tmp_path, servers):
    """A question relayed from the asked agent waits for the user longer than watchdogTimeout:
    the watchdog is beaten meanwhile, and the answer arrives (mm-tools.md §ask_user, Watchdog)."""
    parent, child = servers(), servers("cm")
    agent_file(tmp_path / "child.yaml", child, "cm")
    agent_file(tmp_path / "parent.yaml", parent, watchdogTimeout=1, mmConfigs={"helper": "child.yaml"})
    parent.add_tool_calls([{"name": "ask_agent", "arguments": {"agent": "helper", "prompt": "ask me"}}])
    child.add_tool_calls([{"name": "ask_user", "arguments": {"question": "Which colour?", "options": ["red", "blue"]}}])
    child.add_reply("You chose blue.")
    parent.add_reply("Done.")

    class SlowUser(RecordingClient):
        async def create_elicitation(self, message: str, mode: Any, **meta: Any) -> Any:
            await asyncio.sleep(3)  # three times watchdogTimeout
            return await super().create_elicitation(message, mode, **meta)

    client = SlowUser(forms=[{"q1": "blue"}])
    async with mm_acp(client, tmp_path, "parent.yaml") as (conn, session_id):
        response = await prompt(conn, session_id, "go")

    assert response.stop_reason == "end_turn"
    assert last_tool_message(child.requests[1]) == "The user answered:\n- Which colour? → blue"
    assert last_tool_message(parent.requests[1]) == "You chose blue."


@pytest.mark.parametrize("command,says", [
    (["sh", "-c", "echo not-json; sleep {sleep}"], "it is not an ACP agent: its output is not JSON-RPC ('not-json' …)"),
    (["yes"], "it is not an ACP agent: its output is not JSON-RPC ('y' …)"),
    (["cat"], "it is not an ACP agent: it sent mm's own initialize request back"),
], ids=["text-then-silence", "flood", "echo"])
def test_a_program_that_is_not_an_acp_agent_is_given_up_with_one_line(tmp_path, servers, command, says):
    sleep = f"59.{os.getpid()}{abs(hash(tmp_path)) % 1000}"  # unique: other runs on the machine may sleep too
    command = [part.replace("{sleep}", sleep) for part in command]
    agent_file(tmp_path / "parent.yaml", servers(), mmConfigs={"x": {"command": command}})
    proc = run_mm(["--ask", "x", "hello", "-c", "parent.yaml"], tmp_path)
    assert proc.returncode == 1 and proc.stderr.strip() == f"[ask_agent: x failed: {says}]"
    assert_no_process(f"sleep {sleep}")
