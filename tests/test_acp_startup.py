"""`mm -acp` answers `initialize` and `session/new` before it loads the ACP SDK (issue 11.9,
docs/acp.md §Start-up), and answers them exactly as the SDK would.

Real processes only: `python -X importtime -m mm -acp` over stdio, whose stderr says, in order,
each module as its import ends and mm's own `[acp] …` lines, so the order of the two shows what
was loaded before a request was answered. The SDK's own answers are had from the same mm by
sending `authenticate` first: a message the early answers leave to the SDK, after which the SDK
serves everything.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from acp_cases import child_env

SID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{8}")
STEP = 60  # seconds a process may take to answer (a hang, not a measure)
AUTHENTICATE = {"method": "authenticate", "params": {"methodId": "none"}}


def initialize(**params) -> dict:
    return {"method": "initialize", "params": params}


def new_session(cwd, **params) -> dict:
    return {"method": "session/new", "params": {"cwd": str(cwd), **params}}


# Accepted by the early answers, so answered before the SDK is loaded.
INITIALIZE_EARLY = [
    initialize(protocolVersion=1),
    initialize(protocolVersion=1, clientCapabilities={"fs": {"readTextFile": True, "writeTextFile": True},
                                                      "terminal": True, "elicitation": {"form": {}, "url": {}}},
               clientInfo={"name": "zed", "title": "Zed", "version": "0.200.1"}),
    initialize(protocolVersion=0, clientCapabilities={"elicitation": {"form": 5}},
               clientInfo={"name": 5, "version": "1"}),
    initialize(protocolVersion=65535, clientCapabilities={"elicitation": "yes"}, clientInfo={"name": "x"}),
    initialize(protocolVersion=1, clientCapabilities=[], clientInfo="editor", _meta={"trace": True}),
    initialize(protocolVersion=1, clientCapabilities={"fs": "all", "elicitation": {"form": {"_meta": 3}}}),
]
# Left to the SDK, which coerces or refuses them.
INITIALIZE_SDK = [
    initialize(protocolVersion="2024-11-05"),
    initialize(protocolVersion=70000),
    initialize(clientCapabilities={}),
    {"method": "initialize", "params": None},
    initialize(protocol_version=1),  # the field's Python name, which the SDK takes too
]


class Agent:
    """One `mm -acp` process in `cwd` (`-X importtime`): `request(message)` sends it with the next
    id and returns the answer; `finish()` closes stdin and returns (the messages, stderr lines)."""

    def __init__(self, cwd: Path, base_url: str, env: dict[str, str] | None = None):
        (cwd / "home").mkdir(exist_ok=True)
        argv = [sys.executable, "-X", "importtime", "-m", "mm", "-acp", "--base-url", base_url, "--model", "m"]
        self.proc = subprocess.Popen(argv, cwd=cwd, env={**child_env(cwd / "home"), **(env or {})},
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.next_id = 0
        self.messages: list[dict] = []

    def request(self, message: dict) -> dict:
        self.next_id += 1
        ident = self.next_id
        self.proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": ident, **message}) + "\n").encode())
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            assert line, f"mm -acp ended: {self.proc.stderr.read().decode()[-3000:]}"
            self.messages.append(json.loads(line))
            if self.messages[-1].get("id") == ident and "method" not in self.messages[-1]:
                return self.messages[-1]

    def finish(self) -> tuple[list[dict], list[str]]:
        try:
            out, err = self.proc.communicate(timeout=STEP)
        finally:
            self.proc.kill()
        assert self.proc.returncode == 0, err.decode()[-3000:]
        self.messages += [json.loads(line) for line in out.splitlines()]
        return self.messages, err.decode().splitlines()


def answers(agent: Agent, messages: list[dict]) -> list[dict]:
    """The answers to `messages`, without their ids, session ids made `SID`."""
    return [json.loads(SID.sub("SID", json.dumps({k: v for k, v in agent.request(m).items() if k != "id"})))
            for m in messages]


def said(err: list[str]) -> list[str]:
    """The `[acp] initialize`, `[acp] session … created` and failure lines, session ids made `SID`."""
    return [SID.sub("SID", line) for line in err if line.startswith(("[acp] initialize", "[acp] session",
                                                                     "[acp] Unhandled"))]


def imported_before(err: list[str], line_start: str) -> list[str]:
    """The modules of the SDK (`acp`, `acp.…`) whose import ended before the first stderr line
    starting with `line_start`."""
    seen = []
    for line in err:
        if line.startswith(line_start):
            return seen
        module = line.rsplit("|", 1)[-1].strip() if line.startswith("import time:") else ""
        if module == "acp" or module.startswith("acp."):
            seen.append(module)
    raise AssertionError(f"no line starting with {line_start!r}")


def test_initialize_and_session_new_are_answered_before_the_sdk_is_loaded(tmp_path, scripted_server):
    cwd = Path(os.path.realpath(tmp_path))
    scripted_server.add_reply("Hello.")
    agent = Agent(cwd, scripted_server.base_url)
    init = agent.request(initialize(protocolVersion=1, clientInfo={"name": "zed", "version": "1"}))
    assert init["result"]["protocolVersion"] == 1
    sid = agent.request(new_session(cwd, mcpServers=[]))["result"]["sessionId"]
    # the first prompt waits for the SDK, which then serves it
    answer = agent.request({"method": "session/prompt", "params": {"sessionId": sid,
                                                                    "prompt": [{"type": "text", "text": "hi"}]}})
    assert answer["result"]["stopReason"] == "end_turn"
    messages, err = agent.finish()
    assert imported_before(err, f"[acp] session {sid} created") == []
    assert "acp.schema" in [line.rsplit("|", 1)[-1].strip() for line in err if line.startswith("import time:")]
    # the commands went out right after the session/new answer, before the SDK was loaded
    at = [i for i, m in enumerate(messages) if m.get("result", {}).get("sessionId") == sid][0]
    assert messages[at + 1]["method"] == "session/update"
    assert messages[at + 1]["params"]["update"]["sessionUpdate"] == "available_commands_update"
    assert not [line for line in err if "does not match its schema" in line]


def test_the_early_answers_are_the_sdks(tmp_path, scripted_server):
    """Each request answered early gets the answer, and leaves the log line, the SDK gives it;
    those the early answers leave to the SDK get its answer in both cases."""
    cwd = Path(os.path.realpath(tmp_path))
    (cwd / "sub").mkdir()
    servers = [{"name": "one", "command": "/bin/one", "args": [], "env": []},
               {"type": "http", "name": "two", "url": "http://127.0.0.1:9/mcp", "headers": []}]
    refused = [new_session("relative/dir", mcpServers=[]), new_session(cwd / "missing", mcpServers=[]),
               new_session(cwd, mcpServers=[], _meta={"mcp_servers": 5})]  # `_meta` over an argument: a failure
    opened = [new_session(cwd, mcpServers=[]), new_session(cwd / "sub", mcpServers=servers),
              new_session(cwd, mcpServers=[], additionalDirectories=["/tmp", 5], _meta={"k": "v"})]
    left = INITIALIZE_SDK + [new_session(cwd), new_session(cwd, mcpServers="none"),
                             {"method": "session/new", "params": {"cwd": 5, "mcpServers": []}}]

    sdk = Agent(cwd, scripted_server.base_url)
    assert sdk.request(AUTHENTICATE)["result"] == {}
    by_sdk = answers(sdk, INITIALIZE_EARLY + refused + opened + left)
    _, sdk_err = sdk.finish()
    count = len(INITIALIZE_EARLY)

    early, early_lines = [], []
    runs = [INITIALIZE_EARLY + opened[:1], refused] + [[m] for m in opened[1:]] + [left]  # (a session opened
    for n, run in enumerate(runs):  # starts loading the SDK: each is the first of its process)
        agent = Agent(cwd, scripted_server.base_url)
        early += answers(agent, run)
        _, err = agent.finish()
        early_lines += said(err)
        if n == 0:
            assert imported_before(err, "[acp] session") == []
    early = early[:count] + early[count + 1:count + 4] + early[count:count + 1] + early[count + 4:]
    assert early == by_sdk
    assert sorted(early_lines) == sorted(said(sdk_err))

    # what the reference fixes, read on these answers
    assert [a["result"]["protocolVersion"] for a in early[:count]] == [1] * count
    assert [line.split("elicitation(form)=")[1] for line in said(sdk_err)[:count]] == \
        ["false", "true", "false", "false", "false", "true"]
    assert "client zed 0.200.1, protocol 1" in said(sdk_err)[1] and "client (unnamed), protocol 0" in said(sdk_err)[2]
    relative, missing, failed = early[count:count + 3]
    assert relative["error"]["code"] == missing["error"]["code"] == -32602
    assert failed["error"]["code"] == -32603 and "has no len()" in failed["error"]["data"]["details"]
    assert [line for line in said(sdk_err) if line.startswith("[acp] Unhandled")] == [
        "[acp] Unhandled error while handling request method=session/new: TypeError: object of type 'int' has no len()"]
    bad_cwd = "cwd must be the absolute path of an existing directory: 'relative/dir'"
    assert bad_cwd in relative["error"]["data"]["error"]
    created = [line for line in said(sdk_err) if " created in " in line]
    assert [line.split(" (")[-1] for line in created] == ["0 MCP server(s) ignored)", "2 MCP server(s) ignored)",
                                                          "0 MCP server(s) ignored)"]
    tail = early[count + len(refused) + len(opened):]
    assert tail[0]["result"]["protocolVersion"] == tail[4]["result"]["protocolVersion"] == 1  # a date: version 1
    assert [a.get("error", {}).get("code") for a in tail[1:4] + tail[5:]] == [-32602] * (len(tail) - 2)


def test_the_first_prompt_may_come_before_the_sdk_is_loaded(tmp_path, scripted_server):
    """A client that writes its prompt at once (a script) gets it answered by the SDK, in order."""
    cwd = Path(os.path.realpath(tmp_path))
    scripted_server.add_reply("Fast.")
    (cwd / "home").mkdir()
    argv = [sys.executable, "-m", "mm", "-acp", "--base-url", scripted_server.base_url, "--model", "m"]
    proc = subprocess.Popen(argv, cwd=cwd, env=child_env(cwd / "home"), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    new = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(cwd), "mcpServers": []}}
    proc.stdin.write((json.dumps(init) + "\n" + json.dumps(new) + "\n").encode())
    proc.stdin.flush()
    lines = [json.loads(proc.stdout.readline()) for _ in range(3)]
    sid = lines[1]["result"]["sessionId"]
    prompt = {"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
              "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "quick"}]}}
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "20990101-000000-deadbeef"}}
    proc.stdin.write((json.dumps(prompt) + "\n" + json.dumps(cancel) + "\n").encode())
    out, err = proc.communicate(timeout=STEP)
    messages = lines + [json.loads(line) for line in out.splitlines()]
    assert proc.returncode == 0, err.decode()
    assert [m.get("id") for m in messages if "method" not in m] == [1, 2, 3]
    assert messages[-1]["result"]["stopReason"] == "end_turn"
    chunks = [m["params"]["update"] for m in messages if m.get("method") == "session/update"]
    assert "".join(u["content"]["text"] for u in chunks if u["sessionUpdate"] == "agent_message_chunk") == "Fast."
    assert b"Traceback" not in err


def test_the_end_of_input_right_after_session_new_still_sends_the_commands(tmp_path, scripted_server):
    cwd = Path(os.path.realpath(tmp_path))
    (cwd / "home").mkdir()
    argv = [sys.executable, "-m", "mm", "-acp", "--base-url", scripted_server.base_url, "--model", "m"]
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    new = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(cwd), "mcpServers": []}}
    done = subprocess.run(argv, cwd=cwd, env=child_env(cwd / "home"), capture_output=True, timeout=STEP,
                          input=(json.dumps(init) + "\n" + json.dumps(new) + "\n").encode())
    assert done.returncode == 0, done.stderr.decode()
    messages = [json.loads(line) for line in done.stdout.splitlines()]
    assert [m.get("id") for m in messages] == [1, 2, None]
    assert messages[2]["params"]["update"]["sessionUpdate"] == "available_commands_update"


def test_an_asked_mm_loads_the_sdk_before_it_answers(tmp_path, scripted_server):
    """An asking mm prompts as soon as the session is open and counts the wait for the answer as
    silence (its watchdog): the mm it asks (MM_ASK_DEPTH set) loads the SDK first."""
    cwd = Path(os.path.realpath(tmp_path))
    agent = Agent(cwd, scripted_server.base_url, env={"MM_ASK_DEPTH": "1"})
    agent.request(initialize(protocolVersion=1))
    agent.request(new_session(cwd, mcpServers=[]))
    _, err = agent.finish()
    assert "acp.schema" in imported_before(err, "[acp] initialize")


def test_an_sdk_that_cannot_be_loaded_stops_mm_with_one_line(tmp_path, scripted_server):
    """The session is open before the SDK is needed; the prompt needs it: a broken installation
    (here an `acp` package that fails to import, first on the path) ends mm with its reason."""
    cwd = Path(os.path.realpath(tmp_path))
    (cwd / "broken" / "acp").mkdir(parents=True)
    (cwd / "broken" / "acp" / "__init__.py").write_text("raise ImportError('this acp is broken')\n")
    agent = Agent(cwd, scripted_server.base_url, env={"PYTHONPATH": str(cwd / "broken")})
    sid = agent.request(new_session(cwd, mcpServers=[]))["result"]["sessionId"]
    agent.proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": 9, "method": "session/prompt", "params": {
        "sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}}) + "\n").encode())
    agent.proc.stdin.flush()
    out, err = agent.proc.communicate(timeout=STEP)
    assert agent.proc.returncode == 1
    assert "[acp] mm stopped: ImportError: this acp is broken" in err.decode().splitlines()
    assert b"Traceback" not in err
    assert b'"id":9' not in out  # nothing could answer it


def test_an_answer_that_cannot_be_written_is_said_on_stderr(tmp_path, scripted_server):
    cwd = Path(os.path.realpath(tmp_path))
    (cwd / "home").mkdir()
    argv = [sys.executable, "-m", "mm", "-acp", "--base-url", scripted_server.base_url, "--model", "m"]
    proc = subprocess.Popen(argv, cwd=cwd, env=child_env(cwd / "home"), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the editor stopped reading
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    _, err = proc.communicate((json.dumps(init) + "\n").encode(), timeout=STEP)
    assert proc.returncode == 0, err.decode()
    assert "[acp] initialize: the answer was not sent: [Errno 32] Broken pipe" in err.decode().splitlines()


async def test_an_update_sent_before_the_sdk_is_checked_once_it_is_loaded():
    """EarlyAnswers over real pipes: an update that does not match the schema goes out as built
    and is reported once the SDK is loaded (a mistake of mm's: no input of a client makes one)."""
    from mm.acp.early import EarlyAnswers
    from mm.acp.wire import StdioTransport

    class Agent:  # what the SDK's connection needs of an agent
        def on_connect(self, conn):
            self.conn = conn

    lines: list[str] = []
    into, feed = os.pipe()
    out, written = os.pipe()
    transport = StdioTransport(into, written, lines.append)
    early = EarlyAnswers(transport, lines.append)
    bad = {"sessionUpdate": "usage_update", "used": "many"}
    await early.notify("s1", bad)
    os.write(feed, b'{"jsonrpc":"2.0","id":1,"method":"authenticate","params":{"methodId":"x"}}\n')
    os.close(feed)
    await early.serve(Agent())
    os.close(written)
    sent = [json.loads(line) for line in os.read(out, 1 << 16).splitlines()]
    os.close(out)
    os.close(into)  # (its reader saw the end of input: serve returned)
    assert sent[0] == {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": bad}}
    [line] = [line for line in lines if "does not match" in line]
    assert line == ("[acp] an update sent before the SDK was loaded (usage_update) does not match its schema: "
                    "update.usage_update.used: Input should be a valid integer, unable to parse string as an integer; "
                    "update.usage_update.size: Field required")
