"""`mm -acp` driven end to end by a real, independent ACP client: acpx 0.19.1 (npm; built on the
TypeScript SDK, not on the Python SDK mm uses). Research notes: notes/acp.md §3.1, §5.

acpx is found at `$ACPX`, else in the checkout's `.npm/` (the README's test command installs it
there: `npm install --prefix .npm acpx@0.19.1`); when it is missing the tests fail and say how to
install it. Every test runs acpx in its own `HOME` (acpx keeps its state in ~/.acpx) with a `cwd`
in tmp_path whose `.mm/agent.yaml` points at the scripted model server.

What acpx's `--format json` shows is the traffic *after* acpx parsed it: a non-JSON line from the
agent is dropped (a message on stderr), a JSON value that is not a message silently, and the
`session/update`s of a `session/load` replay are never printed (acpx loads with
`suppressReplayUpdates: true`). So the agent command is `python -m mm -acp` started through a tap
(TAP below): the tap `exec`s mm — acpx's child *is* mm, same pid, same signals, stdin untouched —
after forking a copier that puts mm's stdout, byte for byte, both on acpx's pipe and in a file.
Every test checks that file: each line mm wrote is one JSON-RPC 2.0 message.

Processes: acpx prompts outside `exec` go through a detached `acpx __queue-owner` that keeps mm
alive `--ttl` seconds after the turn. Whatever a test started (queue owner, mm, the tap's copier,
the commands mm ran) is found by its environment (`HOME` = the test's own) and killed by pid at
the end, so that nobody else's processes are touched.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from acp_cases import child_env, jsonrpc_problem
from harness import pids_matching

ROOT = Path(__file__).resolve().parents[1]
INSTALL = "npm install --no-audit --no-fund --loglevel=error --prefix .npm acpx@0.19.1"
RUN_LIMIT = 90  # seconds an acpx command may take before it is called hung (a guard, not a measure)
WAIT_LIMIT = 30  # seconds a process is waited for (to appear, or to exit)
OPTIONS = [("allow", "allow_once"), ("allow_always", "allow_always"), ("reject", "reject_once"),
           ("never", "reject_always")]
REJECTED = "[command rejected by the user]"

# The tap: `python tap.py DIR CMD...` forks a copier of CMD's stdout (to our stdout and to
# DIR/<ns>-<pid>.ndjson, the file first), then becomes CMD.
TAP = r'''
import os, sys, time
directory, argv = sys.argv[1], sys.argv[2:]
log = os.path.join(directory, "%d-%d.ndjson" % (time.time_ns(), os.getpid()))
r, w = os.pipe()
if os.fork() == 0:
    os.close(w)
    os.close(0)
    with open(log, "ab", buffering=0) as f:
        while True:
            data = os.read(r, 65536)
            if not data:
                break
            f.write(data)
            view = memoryview(data)
            while view:
                view = view[os.write(1, view):]
    os._exit(0)
os.close(r)
os.dup2(w, 1)
os.close(w)
os.execv(argv[0], argv)
'''


def acpx_binary() -> str:
    """acpx from `$ACPX`, else `<checkout>/.npm/node_modules/.bin/acpx`; fails when absent."""
    path = os.environ.get("ACPX") or str(ROOT / ".npm" / "node_modules" / ".bin" / "acpx")
    if not os.access(path, os.X_OK):
        pytest.fail(f"acpx not found at {path}: install it from the checkout's root with `{INSTALL}` "
                    "(the README's test command does), or set ACPX=/path/to/acpx", pytrace=False)
    return path


@dataclass
class Result:
    """One acpx command: its exit status, stdout parsed line by line, stderr."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    messages: list[dict] = field(default_factory=list)

    def explain(self) -> str:
        return (f"acpx {' '.join(self.args)} → exit {self.returncode}\n--- stdout\n{self.stdout[-6000:]}"
                f"\n--- stderr\n{self.stderr[-3000:]}")


class World:
    """One test's acpx world: HOME, cwd, the agent file, the tapped agent command, the wire logs."""

    def __init__(self, tmp_path: Path, server: Any, **config: Any):
        self.acpx = acpx_binary()
        self.home, self.cwd, self.wires = tmp_path / "home", tmp_path / "work", tmp_path / "wire"
        for d in (self.home, self.cwd / ".mm", self.wires):
            d.mkdir(parents=True)
        self.server = server
        settings = {"baseUrl": server.base_url, "model": "m", "yolo": False, "sessions": {"enabled": True}}
        settings.update(config)
        (self.cwd / ".mm" / "agent.yaml").write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")
        tap = tmp_path / "tap.py"
        tap.write_text(TAP, encoding="utf-8")
        self.mm = [sys.executable, "-m", "mm", "-acp"]
        self.agent = shlex.join([sys.executable, str(tap), str(self.wires), *self.mm])
        self.env = child_env(self.home)
        self.env.pop("ACPX", None)
        self.seen: set[Path] = set()

    # -- running acpx
    def argv(self, *args: str) -> list[str]:
        return [self.acpx, "--agent", self.agent, *args]

    def run(self, *args: str, expect: int | None = 0) -> Result:
        """Run acpx to its end; `expect`: the exit status it must have (None: any)."""
        try:
            done = subprocess.run(self.argv(*args), cwd=self.cwd, env=self.env, capture_output=True, text=True,
                                  timeout=RUN_LIMIT, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as err:
            raise AssertionError(f"acpx {' '.join(args)} hung; stdout so far:\n{err.stdout}") from None
        result = Result(list(args), done.returncode, done.stdout, done.stderr)
        if expect is not None:
            assert result.returncode == expect, result.explain()
        return result

    def start(self, *args: str, out: Path) -> subprocess.Popen:
        """Start acpx in the background, its stdout in `out`."""
        with open(out, "wb") as f:
            return subprocess.Popen(self.argv(*args), cwd=self.cwd, env=self.env, stdout=f,
                                    stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)

    def json_run(self, *args: str, expect: int | None = 0) -> Result:
        """`--format json --json-strict …`: stdout is NDJSON of the JSON-RPC traffic, every line checked."""
        result = self.run("--format", "json", "--json-strict", *args, expect=expect)
        result.messages = ndjson(result.stdout, result.explain())
        assert result.stderr == "", f"--json-strict, yet acpx wrote on stderr:\n{result.explain()}"
        return result

    def acpx_json(self, *args: str) -> list[dict]:
        """A command whose `--format json` output is acpx's own JSON objects (`sessions new`, `cancel`)."""
        result = self.run("--format", "json", *args)
        try:
            return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
        except ValueError:
            raise AssertionError(result.explain()) from None

    # -- mm's side of the wire
    def new_wires(self) -> list[list[dict]]:
        """The messages mm wrote, one list per mm process started since the last call, in the
        order they started; every line is checked to be one JSON-RPC 2.0 message."""
        fresh = sorted((p for p in self.wires.iterdir() if p not in self.seen), key=lambda p: int(p.name.split("-")[0]))
        self.seen.update(fresh)
        return [ndjson(p.read_bytes().decode("utf-8"), f"mm's stdout ({p.name})") for p in fresh]

    def one_wire(self) -> list[dict]:
        wires = self.new_wires()
        assert len(wires) == 1, f"expected one mm process, got {len(wires)}"
        return wires[0]

    # -- processes
    def processes(self) -> list[int]:
        """Live processes started for this test: their HOME is this test's (pytest itself excluded)."""
        needle = f"HOME={self.home}".encode()
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                environ = Path(f"/proc/{entry}/environ").read_bytes()
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if needle in environ.split(b"\0") and state != "Z":
                found.append(int(entry))
        return found

    def mm_processes(self) -> list[int]:
        """This test's live `python -m mm -acp` processes."""
        return [p for p in self.processes() if _cmdline(p)[-3:] == ["-m", "mm", "-acp"]]

    def wait_no_mm(self) -> None:
        """Poll until no mm process of this test is left (the queue owner's ttl runs out)."""
        left = wait_for(lambda: not self.mm_processes(), WAIT_LIMIT)
        assert left, f"mm still running after the ttl: {[_cmdline(p) for p in self.mm_processes()]}"

    def cleanup(self) -> None:
        for pid in self.processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        # acpx keeps its queue sockets in /tmp/acpx-<sha256 of HOME, 10 hex digits> whatever TMPDIR says
        import hashlib
        import shutil

        shutil.rmtree(f"/tmp/acpx-{hashlib.sha256(str(self.home).encode()).hexdigest()[:10]}", ignore_errors=True)


@pytest.fixture
def world(tmp_path, scripted_server):
    made: list[World] = []

    def make(**config: Any) -> World:
        w = World(tmp_path, scripted_server, **config)
        made.append(w)
        return w

    yield make
    for w in made:
        w.cleanup()
        w.new_wires()  # what mm wrote and no test looked at is checked too


# ---------------------------------------------------------------------------------------------
# Helpers


def ndjson(text: str, what: str) -> list[dict]:
    """`text` as NDJSON of JSON-RPC 2.0 messages: every line one message, the last one ended."""
    assert text.endswith("\n") or not text, f"{what}: the last line is not ended: {text[-300:]!r}"
    messages = []
    for n, line in enumerate(text.splitlines(), 1):
        try:
            obj = json.loads(line)
        except ValueError:
            raise AssertionError(f"{what}: line {n} is not JSON: {line[:300]!r}") from None
        problem = jsonrpc_problem(obj)
        assert problem is None, f"{what}: line {n}: {problem}"
        messages.append(obj)
    return messages


def wait_for(condition, limit: float) -> bool:
    """Poll `condition` every 50 ms for up to `limit` seconds; its last value."""
    end = time.monotonic() + limit
    while not condition():
        if time.monotonic() > end:
            return bool(condition())
        time.sleep(0.05)
    return True


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return []


def updates(wire: list[dict], kind: str | None = None) -> list[dict]:
    """The `update` of every session/update on `wire` (of one `sessionUpdate` kind)."""
    found = [m["params"]["update"] for m in wire if m.get("method") == "session/update"]
    return [u for u in found if kind is None or u.get("sessionUpdate") == kind]


def request(messages: list[dict], method: str) -> dict:
    found = [m for m in messages if m.get("method") == method and "id" in m]
    assert len(found) == 1, f"expected one {method} request, got {len(found)}: {found}"
    return found[0]


def response_index(wire: list[dict], rid: Any) -> int:
    """The position on mm's wire of its response to the client's request `rid`."""
    found = [i for i, m in enumerate(wire) if "method" not in m and m.get("id") == rid]
    assert len(found) == 1, f"expected one response to request {rid}, got {len(found)}"
    return found[0]


def text_of(chunks: list[dict]) -> str:
    return "".join(c["content"]["text"] for c in chunks if c.get("content", {}).get("type") == "text")


def check_turn(result: Result, wire: list[dict], stop_reason: str = "end_turn") -> dict:
    """acpx's prompt got mm's answer: the same response on both sides, with `stop_reason`."""
    prompt = request(result.messages, "session/prompt")
    answer = wire[response_index(wire, prompt["id"])]
    assert answer.get("result", {}).get("stopReason") == stop_reason, answer
    assert answer in result.messages, "acpx did not show mm's answer to the prompt"
    return answer


def tool_message(body: dict) -> str:
    """The content of the last `tool` message of a request the model server received."""
    tools = [m for m in body["messages"] if m.get("role") == "tool"]
    assert tools, body["messages"]
    return tools[-1]["content"]


# ---------------------------------------------------------------------------------------------
# The tests


def test_permission_approved_with_the_four_options_and_the_command_runs(world):
    w = world()
    w.server.add_tool_calls([{"name": "bash", "arguments": {"command": "echo approved > ran.txt"}}])
    w.server.add_reply("It ran.")
    result = w.json_run("--approve-all", "exec", "run the command")
    wire = w.one_wire()

    check_turn(result, wire)
    started = [i for i, m in enumerate(wire) if m.get("method") == "session/update"
               and m["params"]["update"].get("sessionUpdate") == "tool_call"]
    asked = [i for i, m in enumerate(wire) if m.get("method") == "session/request_permission"]
    assert len(started) == 1 and len(asked) == 1, wire
    call = wire[started[0]]["params"]["update"]
    ask = wire[asked[0]]
    assert started[0] < asked[0], "the permission was asked before the tool call was announced"
    assert call["status"] == "pending" and call["kind"] == "execute" and call["title"].startswith("bash: ")
    assert ask["params"]["toolCall"]["toolCallId"] == call["toolCallId"]
    assert [(o["optionId"], o["kind"]) for o in ask["params"]["options"]] == OPTIONS
    assert all(isinstance(o.get("name"), str) and o["name"] for o in ask["params"]["options"])
    # acpx's answer (--approve-all picks the allow_once option) and what followed
    answers = [m for m in result.messages if "method" not in m and m.get("id") == ask["id"]
               and "outcome" in m.get("result", {})]
    assert answers and answers[0]["result"]["outcome"] == {"outcome": "selected", "optionId": "allow"}, result.messages
    progress = [u for u in updates(wire, "tool_call_update") if u["toolCallId"] == call["toolCallId"]]
    assert [u["status"] for u in progress] == ["in_progress", "completed"], progress
    # the command really ran, and the model saw its (empty) output
    assert (w.cwd / "ran.txt").read_text() == "approved\n"
    assert len(w.server.requests) == 2 and tool_message(w.server.requests[1]) != REJECTED
    w.wait_no_mm()  # `exec` keeps no queue owner: mm ends with acpx


def test_deny_all_rejects_the_command_and_exits_5(world):
    w = world()
    w.server.add_tool_calls([{"name": "bash", "arguments": {"command": "echo denied > ran.txt"}}])
    w.server.add_reply("It was rejected.")
    result = w.json_run("--deny-all", "exec", "run the command", expect=5)
    wire = w.one_wire()

    check_turn(result, wire)  # the turn itself ends normally; acpx's exit status says "denied"
    ask = request(wire, "session/request_permission")
    answers = [m for m in result.messages if "method" not in m and m.get("id") == ask["id"]
               and "outcome" in m.get("result", {})]
    assert answers and answers[0]["result"]["outcome"] == {"outcome": "selected", "optionId": "reject"}
    call_id = ask["params"]["toolCall"]["toolCallId"]
    done = [u for u in updates(wire, "tool_call_update") if u["toolCallId"] == call_id]
    assert [u["status"] for u in done] == ["failed"], done
    assert done[0]["rawOutput"]["output"] == REJECTED
    assert not (w.cwd / "ran.txt").exists(), "the denied command ran"
    assert len(w.server.requests) == 2 and tool_message(w.server.requests[1]) == REJECTED
    w.wait_no_mm()


def test_edit_update_carries_a_diff_with_absolute_paths(world):
    w = world()
    target = w.cwd / "notes.txt"
    target.write_text("alpha\nbeta\ngamma\n")
    w.server.add_tool_calls([{"name": "edit_file", "arguments": {
        "path": "notes.txt", "edits": [{"old": "beta", "new": "BETA"}]}}])
    w.server.add_reply("Edited.")
    result = w.json_run("--approve-all", "exec", "edit the notes")
    wire = w.one_wire()

    check_turn(result, wire)
    [call] = updates(wire, "tool_call")
    assert call["kind"] == "edit" and call["locations"] == [{"path": str(target)}], call
    ask = request(wire, "session/request_permission")
    assert ask["params"]["toolCall"]["toolCallId"] == call["toolCallId"]
    completed = [u for u in updates(wire, "tool_call_update")
                 if u["toolCallId"] == call["toolCallId"] and u["status"] == "completed"]
    assert len(completed) == 1, updates(wire, "tool_call_update")
    diff = {"type": "diff", "path": str(target), "oldText": "alpha\nbeta\ngamma\n", "newText": "alpha\nBETA\ngamma\n"}
    assert completed[0]["content"] == [diff], completed[0]
    # the same single diff before the change: announced, and shown with the question (notes/acp.md §4.2 3)
    assert call["content"] == [diff] and ask["params"]["toolCall"]["content"] == [diff], (call, ask)
    for update in [call, *updates(wire, "tool_call_update")]:
        for location in update.get("locations", []):
            assert os.path.isabs(location["path"]), update
    assert target.read_text() == "alpha\nBETA\ngamma\n"
    w.wait_no_mm()


def test_cancel_from_another_process_stops_the_turn_and_its_command(world, tmp_path):
    w = world(yolo=True, bashTimeout=120)
    marker = f"sleep 60.{uuid.uuid4().int % 10**9:09d}"  # the command's own argv: `pgrep -f` finds it
    w.server.add_tool_calls([{"name": "bash", "arguments": {"command": f"{marker}; echo slept"}}])
    w.server.add_reply("Should not be asked for.")
    w.acpx_json("sessions", "new")
    w.new_wires()

    out = tmp_path / "prompt.jsonl"
    prompt = w.start("--ttl", "1", "--approve-all", "--format", "json", "--json-strict", "sleep a while", out=out)
    try:
        running = wait_for(lambda: pids_matching(marker) or prompt.poll() is not None, WAIT_LIMIT)
        assert running and pids_matching(marker), f"the command never started; acpx: {out.read_text()}"
        [cancelled] = w.acpx_json("cancel")
        assert cancelled.get("action") == "cancel_result" and cancelled.get("cancelled") is True, cancelled
        try:
            prompt.wait(WAIT_LIMIT)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the prompt did not end after the cancel; acpx: {out.read_text()}") from None
    finally:
        if prompt.poll() is None:
            prompt.kill()
            prompt.wait()
    err = prompt.stderr.read().decode(errors="replace")
    prompt.stderr.close()
    result = Result(["prompt"], prompt.returncode, out.read_text(), err)
    assert result.returncode == 0, result.explain()  # acpx: a cancelled turn is a success
    result.messages = ndjson(result.stdout, "acpx's output")

    assert not pids_matching(marker), "the cancelled command outlived the prompt's answer"
    wire = w.one_wire()
    check_turn(result, wire, "cancelled")
    prompt_id = request(result.messages, "session/prompt")["id"]
    cancels = [i for i, m in enumerate(result.messages) if m.get("method") == "session/cancel"]
    answered = [i for i, m in enumerate(result.messages) if "method" not in m and m.get("id") == prompt_id]
    assert cancels and cancels[0] < answered[-1], "acpx's session/cancel is not on the wire before the answer"
    [call] = updates(wire, "tool_call")
    assert [u["status"] for u in updates(wire, "tool_call_update") if u["toolCallId"] == call["toolCallId"]] \
        == ["in_progress", "failed"]
    assert len(w.server.requests) == 1, "the model was asked again after the cancel"
    w.wait_no_mm()  # the queue owner lets mm go once the ttl has run out


def test_session_load_in_a_second_process_replays_the_first_exchange(world):
    w = world(yolo=True)
    tag = uuid.uuid4().hex[:8]
    first, answer, second = f"first question {tag}", f"First answer {tag}.", f"second question {tag}"
    w.server.add_reply(answer)
    w.server.add_reply("Second answer.")

    # `sessions new`: a process of its own, session/new, then the commands (after the response)
    [ensured] = w.acpx_json("sessions", "new")
    assert ensured.get("action") == "session_ensured" and ensured.get("created") is True, ensured
    session_id = ensured["acpxSessionId"]
    created = w.one_wire()
    new_at = [i for i, m in enumerate(created) if m.get("result", {}).get("sessionId") == session_id]
    commands_at = [i for i, m in enumerate(created) if m.get("method") == "session/update"
                   and m["params"]["update"]["sessionUpdate"] == "available_commands_update"]
    assert new_at and commands_at and new_at[0] < commands_at[0], created
    w.wait_no_mm()

    # the first prompt: a new mm loads the (empty) session, answers; its ttl runs out
    one = w.json_run("--ttl", "1", first)
    check_turn(one, w.one_wire())
    assert request(one.messages, "session/load")["params"]["sessionId"] == session_id
    w.wait_no_mm()

    # the second prompt: another mm, session/load replays the first exchange before answering
    two = w.json_run("--ttl", "1", second)
    wire = w.one_wire()
    load = request(two.messages, "session/load")
    assert load["params"] == {"sessionId": session_id, "cwd": str(w.cwd), "mcpServers": []}, load
    loaded_at = response_index(wire, load["id"])
    from mm.acp.modes import AVAILABLE  # the session modes (docs/plan-mode.md)

    loaded = {"modes": {"currentModeId": "default", "availableModes": AVAILABLE}}
    assert wire[loaded_at] == {"jsonrpc": "2.0", "id": load["id"], "result": loaded}
    replay = updates(wire[:loaded_at])
    kinds = [u["sessionUpdate"] for u in replay]
    assert kinds and kinds[0] == "user_message_chunk" and kinds[-1] == "available_commands_update", kinds
    assert text_of([u for u in replay if u["sessionUpdate"] == "user_message_chunk"]) == first
    assert text_of([u for u in replay if u["sessionUpdate"] == "agent_message_chunk"]) == answer
    assert set(kinds) == {"user_message_chunk", "agent_message_chunk", "available_commands_update"}, kinds
    assert kinds.index("user_message_chunk") < kinds.index("agent_message_chunk")
    check_turn(two, wire)
    assert request(two.messages, "session/prompt")["id"] > load["id"]

    # the model saw the earlier messages
    assert len(w.server.requests) == 2
    history = [(m["role"], m["content"]) for m in w.server.requests[1]["messages"]]
    assert history[0][0] == "system" and history[1:] == [("user", first), ("assistant", answer), ("user", second)]
    w.wait_no_mm()
