"""`mm -acp` driven by the Python SDK's own client (`acp.spawn_agent_process`, notes/acp.md §1.3), for
what tests/acp_cases.py and the acpx end-to-end test cannot reach: elicitation forms and their
permission-dialog fallback, usage reporting, the replay of a session saved by a live process,
`/new` with sessions and permission memory, cancellation of a running command and of a pending
permission, process-wide serialisation of turns, and a failing turn (mm-acp.md, mm-tools.md
§ask_user).

Real parts only: a real `python -m mm -acp` subprocess in a tmp dir (its stderr to a file, P-SDK-2),
the scripted OpenAI-compatible server (tests/scripted_server.py), and a client of our own that
records every `session/update` synchronously (P-SDK-7), answers permission requests and elicitations
from a script, and sees the raw wire through `observers=[...]`. Assertions are on the wire, the
model requests and the files, never on wall-clock time.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import uuid
from collections import deque
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.schema import (AcceptElicitationResponse, AllowedOutcome, CancelElicitationResponse, ClientCapabilities,
                        DeclineElicitationResponse, DeniedOutcome, ElicitationCapabilities,
                        ElicitationFormCapabilities, FileSystemCapabilities, Implementation,
                        RequestPermissionResponse)

STEP = 30.0  # seconds any single step may take before the test gives up (a hang, not a measure)
SUMMARY_WRAPPER = "[Summary of the earlier conversation — older turns were compacted to save context]"
SUMMARY_ACK = "Understood: I have the summary of our earlier conversation and will continue from it."
PROMPTS_HEADER = "[The user's requests in the compacted part, word for word, oldest first]"
DECLINED = "[the user declined to answer: do not ask the same thing again; go on without it or stop]"
CANCELLED = "[the question was cancelled before the user answered]"
NOBODY = "[the user cannot be asked in this mode: make a reasonable assumption, say which, and go on]"
REJECTED = "[command rejected by the user]"


# ---------------------------------------------------------------------------------------------
# The client and the process


class Hold:
    """A scripted answer that waits: the request stays pending until `release()`; then it is
    answered with `then` (a permission outcome or an elicitation answer)."""

    def __init__(self, then: Any):
        self.then, self.asked, self.released = then, asyncio.Event(), asyncio.Event()

    def release(self) -> None:
        self.released.set()


class ScriptedClient:
    """An ACP client (duck-typed, P-SDK-1): records every update before any await (P-SDK-7), answers
    `session/request_permission` with the next of `permission_answers` (an option id, "cancelled" or
    a Hold) and `elicitation/create` with the next of `elicitation_answers` (an SDK response, a
    RequestError to answer with an error, or a Hold). A request nobody scripted is a test failure."""

    def __init__(self, forms: bool = True):
        self.forms = forms
        self.updates: list[tuple[str, dict]] = []
        self.permission_answers: deque[Any] = deque()
        self.elicitation_answers: deque[Any] = deque()
        self.unexpected: list[str] = []

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append((session_id, update.model_dump(mode="json", by_alias=True, exclude_none=True)))

    async def request_permission(self, session_id: str, tool_call: Any, options: list, **_: Any):
        if not self.permission_answers:
            self.unexpected.append(f"permission request for {tool_call.title!r}")
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        answer = self.permission_answers.popleft()
        if isinstance(answer, Hold):
            answer.asked.set()
            await answer.released.wait()
            answer = answer.then
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=answer))

    async def create_elicitation(self, message: str, mode: Any, **_: Any):
        if not self.elicitation_answers:
            self.unexpected.append(f"elicitation {message!r}")
            return CancelElicitationResponse(action="cancel")
        answer = self.elicitation_answers.popleft()
        if isinstance(answer, Hold):
            answer.asked.set()
            await answer.released.wait()
            answer = answer.then
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def complete_elicitation(self, elicitation_id: str, **_: Any) -> None:
        self.unexpected.append(f"elicitation/complete {elicitation_id}")

    async def read_text_file(self, *_: Any, **__: Any):
        raise RequestError.method_not_found("fs/read_text_file")

    async def write_text_file(self, *_: Any, **__: Any):
        raise RequestError.method_not_found("fs/write_text_file")

    def capabilities(self) -> ClientCapabilities:
        elicitation = ElicitationCapabilities(form=ElicitationFormCapabilities()) if self.forms else None
        return ClientCapabilities(fs=FileSystemCapabilities(read_text_file=False, write_text_file=False),
                                  terminal=False, elicitation=elicitation)


class Mm:
    """One `mm -acp` process: the SDK connection, the raw wire (("in"|"out", message), in order)
    and the helpers the tests share."""

    def __init__(self, conn: Any, proc: Any, client: ScriptedClient, wire: list, cwd: Path, stderr: Path, srv: Any):
        self.conn, self.proc, self.client, self.wire = conn, proc, client, wire
        self.cwd, self.stderr_path, self.srv = cwd, stderr, srv
        self.init: dict = {}

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text("utf-8", "replace")

    async def new_session(self) -> str:
        n = len(self.client.updates)
        session = await step(self.conn.new_session(cwd=str(self.cwd), mcp_servers=[]))
        # the commands are announced once the response is out; wait for them so that they do not
        # fall in the middle of the first prompt's updates
        await until(lambda: any(s == session.session_id and u["sessionUpdate"] == "available_commands_update"
                                for s, u in self.client.updates[n:]), "available_commands_update")
        return session.session_id

    async def prompt(self, session_id: str, text: str) -> dict:
        """Send one `session/prompt` and return the raw JSON-RPC response (result or error)."""
        mark = len(self.wire)
        try:
            await step(self.conn.prompt(session_id=session_id, prompt=[text_block(text)]))
        except RequestError:
            pass
        return self.response_after(mark, "session/prompt", session_id)

    def response_after(self, mark: int, method: str, session_id: str) -> dict:
        sent = next(m for d, m in self.wire[mark:] if d == "out" and m.get("method") == method
                    and (m.get("params") or {}).get("sessionId") == session_id)
        return next(m for d, m in self.wire if d == "in" and m.get("id") == sent["id"] and "method" not in m)

    def updates_after(self, mark: int, session_id: str | None = None) -> list[dict]:
        """The `session/update` updates received on the wire since `mark`, in order."""
        return [m["params"]["update"] for d, m in self.wire[mark:]
                if d == "in" and m.get("method") == "session/update"
                and (session_id is None or m["params"]["sessionId"] == session_id)]


async def step(awaitable: Any, what: str = "a step") -> Any:
    try:
        return await asyncio.wait_for(awaitable, STEP)
    except asyncio.TimeoutError:
        raise AssertionError(f"{what} did not finish within {STEP:g} s") from None


async def until(predicate: Any, what: str) -> None:
    """Wait (bounded) until `predicate()` holds; the bound is against a hang, not a measure."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STEP
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"never saw {what}")
        await asyncio.sleep(0.02)


def write_agent_file(cwd: Path, base_url: str, **settings: Any) -> None:
    config = {"baseUrl": base_url, "model": "m", **settings}
    (cwd / ".mm").mkdir(parents=True, exist_ok=True)
    (cwd / ".mm" / "agent.yaml").write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), "utf-8")


def child_env(home: Path) -> dict[str, str]:
    """What an editor passes (the SDK trims the rest, P-SDK-3): PATH, a fresh HOME, the venv."""
    home.mkdir(parents=True, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
           "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share"),
           "XDG_STATE_HOME": str(home / ".local/state"), "XDG_CACHE_HOME": str(home / ".cache")}
    venv = os.environ.get("VIRTUAL_ENV") or (sys.prefix if sys.prefix != sys.base_prefix else "")
    if venv:
        env["VIRTUAL_ENV"] = venv
    return env


@asynccontextmanager
async def running_mm(cwd: Path, srv: Any, client: ScriptedClient, name: str = "mm", observers: tuple = ()):
    """`python -m mm -acp` in `cwd`, initialised with the client's capabilities. On the way out:
    every update on the wire reached the client (the SDK's schema took it, P-SDK-8), and the client
    was asked nothing it had no script for."""
    wire: list[tuple[str, dict]] = []
    stderr_path = cwd.parent / f"{cwd.name}-{name}.stderr"

    def tap(event: Any) -> None:
        wire.append(("in" if event.direction.value == "incoming" else "out", event.message))

    with open(stderr_path, "wb") as stderr:
        async with spawn_agent_process(
                client, sys.executable, "-m", "mm", "-acp", cwd=str(cwd), env=child_env(cwd.parent / "home"),
                transport_kwargs={"stderr": stderr}, use_unstable_protocol=True, observers=[tap, *observers],
        ) as (conn, proc):
            mm = Mm(conn, proc, client, wire, cwd, stderr_path, srv)
            await step(conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=client.capabilities(),
                                       client_info=Implementation(name="sdk-test", version="0.1")), "initialize")
            mm.init = next(m for d, m in wire if d == "in" and m.get("id") == 0)["result"]
            yield mm
            await until(lambda: len(client.updates) == len(mm.updates_after(0)), "every update reach the client")
    assert not client.unexpected, f"requests nobody scripted: {client.unexpected}\n{stderr_path.read_text()}"


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    work = tmp_path.resolve() / "work"
    work.mkdir()
    return work


# ---------------------------------------------------------------------------------------------
# Small readers


def turn_results(request: dict) -> list[str]:
    """The contents of the tool messages a model request carries after its last user message
    (the results of the turn in progress)."""
    messages = request["messages"]
    start = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    return [m["content"] for m in messages[start:] if m.get("role") == "tool"]


def last_user(request: dict) -> str:
    return next(m["content"] for m in reversed(request["messages"]) if m.get("role") == "user")


def calls_of(updates: list[dict]) -> list[dict]:
    return [u for u in updates if u["sessionUpdate"] in ("tool_call", "tool_call_update")]


def final_of(updates: list[dict], call_id: str) -> dict:
    return [u for u in calls_of(updates) if u["toolCallId"] == call_id][-1]


def texts(updates: list[dict], kind: str = "agent_message_chunk") -> str:
    return "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == kind)


def usage_updates(updates: list[dict]) -> list[dict]:
    return [u for u in updates if u["sessionUpdate"] == "usage_update"]


def ask(*questions: dict) -> dict:
    return {"name": "ask_user", "arguments": {"questions": list(questions)}}


def estimated_tokens(messages: list[dict], tools: list[dict]) -> int:
    """mm's own estimate of a history plus the tool schemas (mm.engine.tokens, read, not patched):
    what `usage_update.used` is when no measure applies."""
    from mm.engine.tokens import count_text, estimate

    return estimate(messages) + count_text(json.dumps(tools, ensure_ascii=False))


def usage_chunk(prompt: int, completion: int, reasoning: int | None = None, cached: int | None = None) -> dict:
    usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                             "total_tokens": prompt + completion}
    if reasoning is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": "m", "choices": [], "usage": usage}


def delta_chunk(delta: dict, finish: str | None = None) -> dict:
    return {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


# ---------------------------------------------------------------------------------------------
# 1. ask_user through elicitation/create forms


async def test_ask_user_through_elicitation_forms(cwd, scripted_server):
    srv = scripted_server
    write_agent_file(cwd, srv.base_url)
    client = ScriptedClient(forms=True)
    four = ask({"question": "Which colour?", "type": "choice", "options": ["red", "green", "blue"], "default": "green"},
               {"question": "Which sizes?", "type": "multi", "options": ["S", "M", "L"]},
               {"question": "Your name?", "type": "text", "default": "Bob"},
               {"question": "Proceed?", "type": "confirm", "default": "yes"})
    one = lambda q: ask({"question": q, "type": "confirm"})  # noqa: E731
    plan = [  # (prompt, ask_user call, the client's answer, the tool message the model gets, final status)
        ("four questions", four,
         AcceptElicitationResponse(action="accept",
                                   content={"q1": "blue", "q2": ["S", "L"], "q3": "Alice", "q4": True}),
         "The user answered:\n- Which colour? → blue\n- Which sizes? → S, L\n- Your name? → Alice\n"
         "- Proceed? → yes",
         "completed"),
        ("one question", one("Delete the branch?"), AcceptElicitationResponse(action="accept", content={"q1": False}),
         "The user answered:\n- Delete the branch? → no", "completed"),
        ("declined", one("Q declined?"), DeclineElicitationResponse(action="decline"), DECLINED, "failed"),
        ("cancelled", one("Q cancelled?"), CancelElicitationResponse(action="cancel"), CANCELLED, "failed"),
        ("error", one("Q error?"), RequestError.internal_error({"details": "no forms today"}), NOBODY, "failed"),
    ]
    async with running_mm(cwd, srv, client) as mm:
        assert "elicitation(form)=true" in mm.stderr
        sid = await mm.new_session()
        for prompt, call, answer, result, status in plan:
            srv.add_tool_calls([call])
            srv.add_reply(f"ok {prompt}")
            client.elicitation_answers.append(answer)
            mark, asked = len(mm.wire), len(srv.requests)
            response = await mm.prompt(sid, prompt)
            assert response["result"]["stopReason"] == "end_turn", (prompt, response)
            updates = mm.updates_after(mark, sid)
            started = [u for u in updates if u["sessionUpdate"] == "tool_call"]
            assert len(started) == 1 and started[0]["kind"] == "other", updates
            call_id = started[0]["toolCallId"]
            assert started[0]["title"] == f"ask_user: {len(call['arguments']['questions'])} question(s)"
            # the request: after the tool_call that announced it, params exactly as mm-acp.md says
            tail = mm.wire[mark:]
            at = next(i for i, (d, m) in enumerate(tail) if d == "in" and m.get("method") == "elicitation/create")
            assert any(m.get("method") == "session/update" and m["params"]["update"].get("toolCallId") == call_id
                       and m["params"]["update"]["sessionUpdate"] == "tool_call" for _, m in tail[:at])
            params = tail[at][1]["params"]
            questions = call["arguments"]["questions"]
            assert params == {
                "sessionId": sid, "toolCallId": call_id, "mode": "form",
                "message": questions[0]["question"] if len(questions) == 1 else "The agent has 4 questions for you.",
                "requestedSchema": expected_schema(questions),
                "_meta": {"mm.elicitationScope": {"sessionId": sid, "toolCallId": call_id}},
            }
            # what the model is told, and how the call ends
            follow_up = srv.requests[asked + 1]
            assert turn_results(follow_up) == [result], prompt
            final = final_of(updates, call_id)
            assert final["status"] == status and final["rawOutput"]["output"] == result, final
            assert final["content"] == [{"type": "content", "content": {"type": "text", "text": result}}]
            assert texts(updates) == f"ok {prompt}"


def expected_schema(questions: list[dict]) -> dict:
    """mm-acp.md §elicitation/create, `requestedSchema`, written out for the questions above."""
    props = {}
    for n, q in enumerate(questions, 1):
        if q["type"] == "choice":
            prop = {"type": "string", "title": q["question"], "enum": q["options"]}
        elif q["type"] == "multi":
            prop = {"type": "array", "title": q["question"], "items": {"type": "string", "enum": q["options"]}}
        elif q["type"] == "confirm":
            prop = {"type": "boolean", "title": q["question"]}
        else:
            prop = {"type": "string", "title": q["question"]}
        if "default" in q:
            prop["default"] = (q["default"] == "yes") if q["type"] == "confirm" else q["default"]
        props[f"q{n}"] = prop
    return {"type": "object", "properties": props, "required": list(props)}


def test_expected_schema_writes_defaults_as_the_reference_says():
    schema = expected_schema([{"question": "A?", "type": "confirm", "default": "yes"},
                              {"question": "B?", "type": "choice", "options": ["x", "y"], "default": "y"}])
    assert schema["properties"]["q1"] == {"type": "boolean", "title": "A?", "default": True}
    assert schema["properties"]["q2"]["default"] == "y" and schema["required"] == ["q1", "q2"]


# ---------------------------------------------------------------------------------------------
# 2. Without form support: one permission dialog per question


async def test_ask_user_without_forms_goes_through_permission_dialogs(cwd, scripted_server):
    srv = scripted_server
    write_agent_file(cwd, srv.base_url)  # yolo (the default): no dialog but ask_user's
    client = ScriptedClient(forms=False)
    colour = {"question": "Which colour?", "type": "choice", "options": ["red", "green", "blue"]}
    proceed = {"question": "Proceed?", "type": "confirm"}
    colour_options = [{"optionId": "0", "name": "red", "kind": "allow_once"},
                      {"optionId": "1", "name": "green", "kind": "allow_once"},
                      {"optionId": "2", "name": "blue", "kind": "allow_once"},
                      {"optionId": "decline", "name": "Decline", "kind": "reject_once"}]
    proceed_options = [{"optionId": "0", "name": "Yes", "kind": "allow_once"},
                       {"optionId": "1", "name": "No", "kind": "allow_once"},
                       {"optionId": "decline", "name": "Decline", "kind": "reject_once"}]
    plan = [  # (prompt, questions, the client's answers, the dialogs expected, the tool message, final status)
        ("answered", [colour, proceed], ["1", "0"], [("Which colour?", colour_options), ("Proceed?", proceed_options)],
         "The user answered:\n- Which colour? → green\n- Proceed? → yes", "completed"),
        ("no", [proceed], ["1"], [("Proceed?", proceed_options)], "The user answered:\n- Proceed? → no", "completed"),
        ("declined", [colour, proceed], ["decline"], [("Which colour?", colour_options)], DECLINED, "failed"),
        ("cancelled", [colour, proceed], ["0", "cancelled"],
         [("Which colour?", colour_options), ("Proceed?", proceed_options)], CANCELLED, "failed"),
        ("text", [colour, {"question": "Your name?", "type": "text"}], [], [], NOBODY, "failed"),
    ]
    async with running_mm(cwd, srv, client) as mm:
        assert "elicitation(form)=false" in mm.stderr
        sid = await mm.new_session()
        for prompt, questions, answers, dialogs, result, status in plan:
            srv.add_tool_calls([ask(*questions)])
            srv.add_reply(f"ok {prompt}")
            client.permission_answers.extend(answers)
            mark, asked = len(mm.wire), len(srv.requests)
            response = await mm.prompt(sid, prompt)
            assert response["result"]["stopReason"] == "end_turn", (prompt, response)
            assert not client.permission_answers, f"{prompt}: not every scripted answer was asked for"
            updates = mm.updates_after(mark, sid)
            call_id = next(u["toolCallId"] for u in updates if u["sessionUpdate"] == "tool_call")
            requests = [m for d, m in mm.wire[mark:] if d == "in" and m.get("method") == "session/request_permission"]
            assert not any(m.get("method") == "elicitation/create" for _, m in mm.wire[mark:])
            assert [r["params"] for r in requests] == [
                {"sessionId": sid, "toolCall": {"toolCallId": call_id, "title": f"? {q}", "kind": "other"},
                 "options": options} for q, options in dialogs], prompt
            assert turn_results(srv.requests[asked + 1]) == [result], prompt
            final = final_of(updates, call_id)
            assert final["status"] == status and final["rawOutput"]["output"] == result, final


# ---------------------------------------------------------------------------------------------
# 3. usage_update and the prompt response's usage


async def test_usage_with_a_known_context_window(cwd, scripted_server):
    srv = scripted_server
    write_agent_file(cwd, srv.base_url, contextWindow=1_000_000)
    client = ScriptedClient()
    # the first call reports reasoning and cached tokens (mm.llm.stream.parse_usage reads them)
    srv.add_sse([delta_chunk({"role": "assistant", "content": None}),
                 delta_chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                                              "function": {"name": "bash", "arguments": '{"command": "echo hi"}'}}]}),
                 delta_chunk({}, "tool_calls"), usage_chunk(100_000, 20, reasoning=5, cached=300), "data: [DONE]"])
    srv.add_reply("Done.", usage=(100_100, 9))
    async with running_mm(cwd, srv, client) as mm:
        sid = await mm.new_session()
        mark = len(mm.wire)
        response = await mm.prompt(sid, "run it")
        updates = mm.updates_after(mark, sid)
        kinds = [u["sessionUpdate"] for u in updates]
        # one after each model call (used = its input + output), one at the end of the turn
        usage = usage_updates(updates)
        assert usage == [{"sessionUpdate": "usage_update", "used": 100_020, "size": 1_000_000},
                         {"sessionUpdate": "usage_update", "used": 100_109, "size": 1_000_000},
                         {"sessionUpdate": "usage_update", "used": 100_109, "size": 1_000_000}], updates
        first_usage = kinds.index("usage_update")
        assert first_usage < kinds.index("tool_call"), "the first call's usage comes before its tool runs"
        assert kinds[-1] == "usage_update", "the turn's usage_update is the last update"
        totals = {"inputTokens": 200_100, "outputTokens": 29, "totalTokens": 200_129,
                  "thoughtTokens": 5, "cachedReadTokens": 300}
        assert response["result"] == {"stopReason": "end_turn", "usage": totals}

        # /compact with nothing to compact: the history is unchanged, so the measure stands
        mark = len(mm.wire)
        response = await mm.prompt(sid, "/compact")
        updates = mm.updates_after(mark, sid)
        assert updates == [
            {"sessionUpdate": "agent_message_chunk",
             "content": {"type": "text",
                         "text": "🗜️ nothing to compact: 4 message(s), no turn older than the last 2"}},
            {"sessionUpdate": "usage_update", "used": 100_109, "size": 1_000_000}]
        assert response["result"] == {"stopReason": "end_turn", "usage": totals}

        # /new: the measure is forgotten, `used` is the estimate of the system prompt and the tools
        mark = len(mm.wire)
        response = await mm.prompt(sid, "/new")
        updates = mm.updates_after(mark, sid)
        request = srv.requests[-1]
        used = estimated_tokens(request["messages"][:1], request["tools"])
        assert updates == [
            {"sessionUpdate": "agent_message_chunk",
             "content": {"type": "text", "text": "🆕 New session: 4 message(s) forgotten."}},
            {"sessionUpdate": "usage_update", "used": used, "size": 1_000_000}]
        assert 0 < used < 100_000
        assert response["result"] == {"stopReason": "end_turn", "usage": totals}, "the totals survive /new"
        assert len(srv.requests) == 2, "no slash command consults the model"


async def test_usage_absent_until_reported_and_size_zero_when_unknown(cwd, scripted_server):
    srv = scripted_server
    write_agent_file(cwd, srv.base_url)  # no contextWindow, and the scripted server has no /props
    client = ScriptedClient()
    srv.add_reply("No counts.", usage=None)
    srv.add_reply("Counts.", usage=(10, 5))
    async with running_mm(cwd, srv, client) as mm:
        sid = await mm.new_session()
        mark = len(mm.wire)
        response = await mm.prompt(sid, "first")
        assert response["result"] == {"stopReason": "end_turn"}, "no usage before the server reported any"
        updates = mm.updates_after(mark, sid)
        request = srv.requests[0]
        history = request["messages"] + [{"role": "assistant", "content": "No counts."}]
        assert usage_updates(updates) == [{"sessionUpdate": "usage_update",
                                           "used": estimated_tokens(history, request["tools"]), "size": 0}]

        mark = len(mm.wire)
        response = await mm.prompt(sid, "second")
        updates = mm.updates_after(mark, sid)
        assert usage_updates(updates)[0] == {"sessionUpdate": "usage_update", "used": 15, "size": 0}
        assert all(u["size"] == 0 for u in usage_updates(updates))
        # neither thoughtTokens nor cachedReadTokens: the server never reported them
        assert response["result"] == {"stopReason": "end_turn",
                                      "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}}


# ---------------------------------------------------------------------------------------------
# 4. The replay of a session saved by a live process


async def test_load_session_replays_what_a_live_session_did(cwd, scripted_server):
    srv = scripted_server
    (cwd / "notes.txt").write_text("alpha\n", "utf-8")
    settings = {"sessions": {"enabled": True}, "context": {"keepLastTurns": 1}}
    write_agent_file(cwd, srv.base_url, systemPrompt="You are the OLD prompt.", **settings)
    command = "echo replay-out | tee -a ran.log"
    srv.add_reply("First answer.")
    srv.add_tool_calls([{"name": "bash", "arguments": {"command": command}, "id": "ref_bash"}])
    srv.add_tool_calls([{"name": "edit_file", "id": "ref_edit",
                         "arguments": {"path": "notes.txt", "edits": [{"old": "alpha", "new": "beta"}]}}])
    srv.add_reply("All done.")
    srv.add_reply("The user asked a first question and got a first answer.")  # the /compact summary
    async with running_mm(cwd, srv, ScriptedClient(), "first") as mm:
        assert mm.init["agentCapabilities"] == {"loadSession": True}
        sid = await mm.new_session()
        assert (await mm.prompt(sid, "first"))["result"]["stopReason"] == "end_turn"
        mark = len(mm.wire)
        assert (await mm.prompt(sid, "second: run and edit"))["result"]["stopReason"] == "end_turn"
        live = mm.updates_after(mark, sid)
        live_outputs = {u["toolCallId"]: u["rawOutput"]["output"] for u in calls_of(live) if "rawOutput" in u}
        live_calls = [(u["title"], u["kind"], u.get("locations")) for u in live if u["sessionUpdate"] == "tool_call"]
        before_compact = srv.requests[-1]
        mark = len(mm.wire)
        assert (await mm.prompt(sid, "/compact"))["result"]["stopReason"] == "end_turn"
        line = texts(mm.updates_after(mark, sid))
        compressed = r"🗜️ compressed 2 messages → 1 summary \+ 6 kept \(\d+ tokens, \d+\.\ds\)"
        assert re.fullmatch(compressed, line), line
        summary_request = srv.requests[-1]
        assert [m["role"] for m in summary_request["messages"]] == ["system", "user"]
        assert summary_request["messages"][0]["content"].startswith("You write the running notes of a coding session")
        assert summary_request["messages"][1]["content"] == (
            "Write the notes (at most about 512 tokens) for this conversation:\n\n"
            "User: first\n\nAssistant: First answer.")
        assert not summary_request.get("tools") and summary_request["max_tokens"] == 512
        saved = json.loads((cwd / ".mm" / "sessions" / f"{sid}.json").read_text("utf-8"))["messages"]
        assert usage_updates(mm.updates_after(mark, sid))[-1]["used"] == \
            estimated_tokens(saved, before_compact["tools"]), "/compact forgets the measure: the estimate"
    assert (cwd / "ran.log").read_text() == "replay-out\n"
    assert (cwd / "notes.txt").read_text() == "beta\n"
    edit_output = live_outputs["call_2"]

    write_agent_file(cwd, srv.base_url, systemPrompt="You are the NEW prompt.", **settings)
    asked = len(srv.requests)
    async with running_mm(cwd, srv, ScriptedClient(), "second") as mm:
        mark = len(mm.wire)
        await step(mm.conn.load_session(cwd=str(cwd), session_id=sid, mcp_servers=[]), "session/load")
        tail = [m for d, m in mm.wire[mark:] if d == "in"]
        response = tail[-1]
        from mm.acp.modes import AVAILABLE  # the session modes (docs/plan-mode.md)

        loaded = {"modes": {"currentModeId": "default", "availableModes": AVAILABLE}}
        assert response.get("result") == loaded and "method" not in response, tail[-1]
        replay = [m["params"]["update"] for m in tail[:-1]]
        assert all(m.get("method") == "session/update" and m["params"]["sessionId"] == sid for m in tail[:-1])
        notes = str(cwd / "notes.txt")
        assert replay[:-1] == [
            {"sessionUpdate": "agent_message_chunk",
             "content": {"type": "text", "text": "🗜️ The user asked a first question and got a first answer."}},
            {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "second: run and edit"}},
            {"sessionUpdate": "tool_call", "toolCallId": "ref_bash", "title": f"bash: {command}", "kind": "execute",
             "rawInput": {"command": command}, "status": "completed", "rawOutput": {"output": "replay-out\n"},
             "content": [{"type": "content", "content": {"type": "text", "text": "replay-out\n"}}]},
            {"sessionUpdate": "tool_call", "toolCallId": "ref_edit", "title": "edit_file: notes.txt", "kind": "edit",
             "rawInput": {"path": "notes.txt", "edits": [{"old": "alpha", "new": "beta"}]},
             "locations": [{"path": notes}], "status": "completed", "rawOutput": {"output": edit_output},
             "content": [{"type": "content", "content": {"type": "text", "text": edit_output}}]},
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "All done."}},
        ]
        assert [(u["title"], u["kind"], u.get("locations")) for u in replay if u["sessionUpdate"] == "tool_call"] \
            == live_calls, "a replayed call looks as the live one did"
        assert replay[-1]["sessionUpdate"] == "available_commands_update"
        assert f"[acp] session {sid} loaded from {cwd / '.mm' / 'sessions'}: 5 message(s) replayed" in mm.stderr
        assert len(srv.requests) == asked, "a replay does not ask the model"
        assert (cwd / "ran.log").read_text() == "replay-out\n" and (cwd / "notes.txt").read_text() == "beta\n"

        srv.add_reply("Third answer.")
        assert (await mm.prompt(sid, "third"))["result"]["stopReason"] == "end_turn"
        sent = srv.requests[-1]["messages"]
        assert sent[0] == {"role": "system", "content": "You are the NEW prompt."}
        assert [(m["role"], m.get("content")) for m in sent[1:3]] == [
            ("user", f"{SUMMARY_WRAPPER}\nThe user asked a first question and got a first answer.\n\n"
                     f"{PROMPTS_HEADER}\nUser: first"),  # the requests summarised, word for word
            ("assistant", SUMMARY_ACK)]
        assert sent[3:-2] == before_compact["messages"][3:], "the kept turn goes back to the model as it was"
        assert [(m["role"], m["content"]) for m in sent[-2:]] == [("assistant", "All done."), ("user", "third")]


# ---------------------------------------------------------------------------------------------
# 5. /new with sessions, and permission memory across /new


async def test_new_keeps_the_old_conversation_and_the_permission_memory(cwd, scripted_server):
    srv = scripted_server
    write_agent_file(cwd, srv.base_url, yolo=False, sessions={"enabled": True})
    client = ScriptedClient()
    sessions = cwd / ".mm" / "sessions"
    async with running_mm(cwd, srv, client) as mm:
        always, never = await mm.new_session(), await mm.new_session()

        # allow_always, then /new, then bash runs without a dialog
        srv.add_tool_calls([{"name": "bash", "arguments": {"command": "echo one"}}])
        srv.add_reply("one done")
        client.permission_answers.append("allow_always")
        assert (await mm.prompt(always, "first"))["result"]["stopReason"] == "end_turn"
        old = json.loads((sessions / f"{always}.json").read_text("utf-8"))["messages"]
        assert [m["role"] for m in old] == ["system", "user", "assistant", "tool", "assistant"]

        mark = len(mm.wire)
        response = await mm.prompt(always, "/new")
        assert response["result"]["stopReason"] == "end_turn"
        assert texts(mm.updates_after(mark, always)) == "🆕 New session: 4 message(s) forgotten."
        kept = re.search(rf"\[acp\] session {always}: previous conversation kept as (\S+)", mm.stderr)
        assert kept, mm.stderr
        assert f"[acp] session {always}: new session, 4 message(s) forgotten" in mm.stderr
        kept_id = kept.group(1)
        assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{8}", kept_id) and kept_id != always
        assert json.loads((sessions / f"{kept_id}.json").read_text("utf-8"))["messages"] == old
        own = json.loads((sessions / f"{always}.json").read_text("utf-8"))
        assert own["id"] == always and own["messages"] == old[:1], "the session's file holds the system prompt only"

        srv.add_tool_calls([{"name": "bash", "arguments": {"command": "echo two"}}])
        srv.add_reply("two done")
        mark = len(mm.wire)
        assert (await mm.prompt(always, "again"))["result"]["stopReason"] == "end_turn"
        assert not any(m.get("method") == "session/request_permission" for _, m in mm.wire[mark:])
        updates = mm.updates_after(mark, always)
        call = next(u for u in updates if u["sessionUpdate"] == "tool_call")
        assert final_of(updates, call["toolCallId"])["status"] == "completed"
        assert turn_results(srv.requests[-1]) == ["two\n"]

        # never, then /new, then bash is rejected without a dialog
        srv.add_tool_calls([{"name": "bash", "arguments": {"command": "touch never-1"}}])
        srv.add_reply("rejected")
        client.permission_answers.append("never")
        mark = len(mm.wire)
        assert (await mm.prompt(never, "first"))["result"]["stopReason"] == "end_turn"
        dialog = [m for d, m in mm.wire[mark:] if d == "in" and m.get("method") == "session/request_permission"]
        assert len(dialog) == 1 and [o["optionId"] for o in dialog[0]["params"]["options"]] == \
            ["allow", "allow_always", "reject", "never"]
        assert turn_results(srv.requests[-1]) == [REJECTED]
        assert (await mm.prompt(never, "/new"))["result"]["stopReason"] == "end_turn"
        srv.add_tool_calls([{"name": "bash", "arguments": {"command": "touch never-2"}}])
        srv.add_reply("rejected again")
        mark = len(mm.wire)
        assert (await mm.prompt(never, "again"))["result"]["stopReason"] == "end_turn"
        assert not any(m.get("method") == "session/request_permission" for _, m in mm.wire[mark:])
        updates = mm.updates_after(mark, never)
        call = next(u for u in updates if u["sessionUpdate"] == "tool_call")
        final = final_of(updates, call["toolCallId"])
        assert final["status"] == "failed" and final["rawOutput"]["output"] == REJECTED
        assert turn_results(srv.requests[-1]) == [REJECTED]
    assert not (cwd / "never-1").exists() and not (cwd / "never-2").exists()


# ---------------------------------------------------------------------------------------------
# 6. Cancellation


def pids_matching(pattern: str) -> list[str]:
    out = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return out.stdout.split()


async def test_cancel_kills_the_running_command_and_the_session_goes_on(cwd, scripted_server):
    srv = scripted_server
    write_agent_file(cwd, srv.base_url)
    client = ScriptedClient()
    marker = f"mm-sdk-cancel-{uuid.uuid4().hex}"
    pause = f"29.{uuid.uuid4().int % 10**6:06d}"  # the sleep's own command line is unique too
    command = f"sleep {pause}; echo {marker}"
    srv.add_tool_calls([{"name": "bash", "arguments": {"command": command}}])
    srv.add_reply("after the cancel")
    async with running_mm(cwd, srv, client) as mm:
        sid = await mm.new_session()
        mark, n = len(mm.wire), len(client.updates)
        turn = asyncio.ensure_future(mm.prompt(sid, "sleep"))
        await until(lambda: any(u.get("status") == "in_progress" for _, u in client.updates[n:]), "in_progress")
        await until(lambda: pids_matching(marker) and pids_matching(f"^sleep {pause}$"), "the command running")
        await mm.conn.cancel(session_id=sid)
        response = await step(turn)
        assert response["result"] == {"stopReason": "cancelled",  # with the totals so far
                                      "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}}
        updates = mm.updates_after(mark, sid)
        call = next(u for u in updates if u["sessionUpdate"] == "tool_call")
        final = final_of(updates, call["toolCallId"])
        assert final["status"] == "failed" and final["rawOutput"]["output"].endswith("[error: cancelled]"), final
        assert len(srv.requests) == 1, "a cancelled turn asks the model nothing more"
        assert pids_matching(marker) == [], "the shell was killed (and reaped) before the call ended"
        await until(lambda: not pids_matching(f"^sleep {pause}$"), "the sleep killed with its process group")

        mark = len(mm.wire)
        response = await mm.prompt(sid, "are you there?")
        assert response["result"]["stopReason"] == "end_turn"
        assert texts(mm.updates_after(mark, sid)) == "after the cancel"
        assert last_user(srv.requests[-1]) == "are you there?"


async def test_cancel_while_the_client_is_being_asked(cwd, scripted_server):
    """A pending permission request, then a pending elicitation: `session/cancel` abandons each
    (the client's late answer changes nothing), the prompt answers `cancelled`, the session goes on."""
    srv = scripted_server
    write_agent_file(cwd, srv.base_url, yolo=False)
    client = ScriptedClient(forms=True)
    srv.add_tool_calls([{"name": "bash", "arguments": {"command": "touch ran.txt"}}])
    srv.add_tool_calls([ask({"question": "Go on?", "type": "confirm"})])
    srv.add_reply("next turn")
    permission = Hold("allow")  # answered only after the prompt came back, and then too late
    form = Hold(AcceptElicitationResponse(action="accept", content={"q1": True}))
    client.permission_answers.append(permission)
    client.elicitation_answers.append(form)
    async with running_mm(cwd, srv, client) as mm:
        sid = await mm.new_session()
        # (prompt, what the client holds, the call's result, its statuses: the command never runs,
        # ask_user runs while it asks)
        for prompt, pending, result, statuses in (("touch it", permission, REJECTED, ["pending", "failed"]),
                                                  ("ask me", form, CANCELLED, ["pending", "in_progress", "failed"])):
            mark, asked = len(mm.wire), len(srv.requests)
            turn = asyncio.ensure_future(mm.prompt(sid, prompt))
            await step(pending.asked.wait(), f"the client asked ({prompt})")
            await mm.conn.cancel(session_id=sid)
            response = await step(turn)
            assert response["result"]["stopReason"] == "cancelled", response
            assert not pending.released.is_set()
            updates = mm.updates_after(mark, sid)
            call = next(u for u in updates if u["sessionUpdate"] == "tool_call")
            assert [u.get("status") for u in calls_of(updates)] == statuses, prompt
            assert final_of(updates, call["toolCallId"])["rawOutput"]["output"] == result
            assert len(srv.requests) == asked + 1, "a cancelled turn asks the model nothing more"
            pending.release()  # the late answer changes nothing
        response = await mm.prompt(sid, "next")
        assert response["result"] == {"stopReason": "end_turn",
                                      "usage": {"inputTokens": 30, "outputTokens": 15, "totalTokens": 45}}
        assert len(srv.requests) == 3 and last_user(srv.requests[-1]) == "next"
        # the cancelled turns stay in the history, with what their calls returned
        assert [m["content"] for m in srv.requests[-1]["messages"] if m["role"] == "tool"] == [REJECTED, CANCELLED]
    assert not (cwd / "ran.txt").exists()


# ---------------------------------------------------------------------------------------------
# 7. Turns are serialised process-wide


async def test_turns_of_two_sessions_are_serialised(cwd, scripted_server):
    """Two prompts of two sessions sent at once: the first turn streams slowly, so a second turn
    running beside it would ask the model and stream its updates in the middle of the first one.

    Checked on the order of the wire and of the server, not on time. mm releases the turn lock
    before the SDK writes the first prompt's response, but that response is queued for stdout
    before the second turn can run at all; so on stdout it comes before anything the second
    turn's model request produced. (Whether the scripted server sees the second request before
    this test process has *read* the first response is a race of two readers, not mm's order.)"""
    srv = scripted_server
    write_agent_file(cwd, srv.base_url)
    client = ScriptedClient()
    srv.add_reply("the first turn streams slowly, in pieces", delay=0.05)
    srv.add_reply("the second turn")
    async with running_mm(cwd, srv, client) as mm:
        a, b = await mm.new_session(), await mm.new_session()
        mark = len(mm.wire)
        first, second = await step(asyncio.gather(mm.prompt(a, "prompt A"), mm.prompt(b, "prompt B")))
        assert first["result"]["stopReason"] == second["result"]["stopReason"] == "end_turn"
        assert len(srv.requests) == 2
        order = [last_user(r) for r in srv.requests]
        assert sorted(order) == ["prompt A", "prompt B"]
        (x, x_response), (y, y_response) = [(a, first), (b, second)][::1 if order[0] == "prompt A" else -1]
        incoming = [m for d, m in mm.wire[mark:] if d == "in"]

        def updates_of(session_id: str) -> list[int]:
            return [i for i, m in enumerate(incoming)
                    if m.get("method") == "session/update" and m["params"]["sessionId"] == session_id]

        def response(message: dict) -> int:
            return next(i for i, m in enumerate(incoming) if "method" not in m and m.get("id") == message["id"])

        x_updates, y_updates = updates_of(x), updates_of(y)
        x_done, y_done = response(x_response), response(y_response)
        assert texts(mm.updates_after(mark, x)) == "the first turn streams slowly, in pieces"
        assert texts(mm.updates_after(mark, y)) == "the second turn"
        assert max(x_updates) < x_done < min(y_updates), \
            "the second turn's model request was answered before the first turn's response"
        assert max(y_updates) < y_done


# ---------------------------------------------------------------------------------------------
# 8. A turn that fails


async def test_a_failed_turn_is_an_internal_error_and_the_session_goes_on(cwd, scripted_server):
    srv = scripted_server
    write_agent_file(cwd, srv.base_url)
    client = ScriptedClient()
    srv.add({"json": {"error": {"message": "boom"}}, "status": 500})
    srv.add_reply("recovered")
    async with running_mm(cwd, srv, client) as mm:
        sid = await mm.new_session()
        response = await mm.prompt(sid, "fail please")
        error = response["error"]
        assert error["code"] == -32603 and error["message"] == "Internal error", error
        assert error["data"] == {
            "error": f"the model server at {srv.base_url}/chat/completions answered HTTP 500: boom"}
        mark = len(mm.wire)
        response = await mm.prompt(sid, "try again")
        assert response["result"]["stopReason"] == "end_turn"
        assert texts(mm.updates_after(mark, sid)) == "recovered"
        # the failed question had no answer at all: it left the history (mm-acp.md §session/prompt, History)
        assert [(m["role"], m["content"]) for m in srv.requests[-1]["messages"][1:]] == [("user", "try again")]
