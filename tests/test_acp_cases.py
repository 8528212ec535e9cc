"""Every case of tests/cases/acp/ against a real `mm -acp` (cases/README.md §acp/; runner:
tests/acp_cases.py), and the runner's own tests: the pattern matcher, the expect checks on made-up
runs, and the step interpreter driving a tiny fake agent, so that the runner is known to be strict."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import acp_cases
from acp_cases import (MISSING, Line, PatternError, Run, check_expect, falsy_path_problems, is_falsy,
                       jsonrpc_problem, load_acp_cases, match, run_case, substitute)

CASES = load_acp_cases()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_acp_case(case, tmp_path, scripted_server):
    run_case(case, tmp_path, scripted_server)


def test_every_acp_case_is_collected():
    ids = [c["id"] for c in CASES]
    assert len(ids) >= 10 and len(set(ids)) == len(ids)
    for case in CASES:
        assert case["area"] == "acp" and case.get("steps") and case.get("expect")


# ---------------------------------------------------------------------------------------------
# The matcher


def ok(pattern, actual, bindings=None):
    result = match(pattern, actual, bindings)
    assert result.ok, result.reason
    return result.bindings


def bad(pattern, actual, bindings=None, reason=None):
    result = match(pattern, actual, bindings)
    assert not result.ok, f"{pattern!r} should not match {actual!r}"
    assert result.bindings == dict(bindings or {})
    if reason:
        assert reason in result.reason, result.reason
    return result.reason


def test_objects_match_partially_but_every_listed_key_must_be_there():
    ok({"a": 1}, {"a": 1, "b": 2})
    ok({}, {"x": 1})
    ok({"a": {"b": "c"}}, {"a": {"b": "c", "d": 0}})
    bad({"a": 1, "c": 3}, {"a": 1, "b": 2}, reason="c: absent")
    bad({"a": {"b": "c"}}, {"a": {"b": "x"}}, reason="a.b: expected")
    bad({"a": 1}, [1], reason="expected an object")
    bad({"a": 1}, "a")


def test_scalars_are_json_equality():
    ok(1, 1)
    ok(1, 1.0)
    ok(None, None)
    ok("x", "x")
    bad(1, True)
    bad(True, 1)
    bad(0, False)
    bad(None, False)
    bad("1", 1)
    bad({"id": None}, {"id": 0})
    bad({"id": None}, {}, reason="absent")  # null is not the same as absent


def test_arrays_match_element_wise_with_the_same_length():
    ok([1, {"a": 2}], [1, {"a": 2, "b": 3}])
    ok([], [])
    bad([1, 2], [1, 2, 3], reason="expected 2 element(s), got 3")
    bad([1, 2], [2, 1])
    bad([], [1])
    bad([1], {"0": 1})


def test_unordered():
    ok({"$unordered": [1, 2, 3]}, [3, 1, 2])
    ok({"$unordered": [{"n": "a"}, {"n": "b"}]}, [{"n": "b", "x": 1}, {"n": "a"}])
    # backtracking: the first pattern could take either element
    ok({"$unordered": [{"k": 1}, {"k": 1, "v": 2}]}, [{"k": 1, "v": 2}, {"k": 1, "v": 3}])
    bad({"$unordered": [1, 2]}, [1, 2, 3], reason="2 element(s) in any order")
    bad({"$unordered": [1, 2]}, [1, 1])
    bad({"$unordered": [{"n": "a"}, {"n": "c"}]}, [{"n": "a"}, {"n": "b"}], reason="pattern #1")
    bad({"$unordered": [1]}, 1, reason="expected a list")
    bad({"x": {"$unordered": []}}, {}, reason="absent")


def test_regex():
    ok({"$regex": r"^\d{8}-\d{6}-[0-9a-f]{8}$"}, "20260916-101530-4f2a9c1e")
    ok({"$regex": "b"}, "abc")  # re.search
    bad({"$regex": "^b"}, "abc", reason="does not match")
    bad({"$regex": r"^\d{8}$"}, "2026091", reason="does not match")
    bad({"$regex": "1"}, 1, reason="expected a string")
    bad({"v": {"$regex": "."}}, {}, reason="absent")


def test_capture_binds_any_json_type_and_only_on_success():
    assert ok({"id": {"$capture": "perm"}}, {"id": 0}) == {"perm": 0}
    assert ok({"id": {"$capture": "x"}}, {"id": {"a": [1]}}) == {"x": {"a": [1]}}
    assert ok({"sid": {"$regex": "^s", "$capture": "sid"}}, {"sid": "s1"}, {"cwd": "/c"}) == {"cwd": "/c", "sid": "s1"}
    bad({"sid": {"$regex": "^s", "$capture": "sid"}}, {"sid": "t1"})  # the regex fails: nothing bound
    bad({"a": {"$capture": "a"}, "b": 1}, {"a": 1, "b": 2}, {"z": 0})  # a later key fails: nothing bound
    bad({"a": {"$capture": "a"}}, {}, reason="absent")
    # the same name twice in one match must bind the same value; a later match may rebind it
    ok({"a": {"$capture": "v"}, "b": {"$capture": "v"}}, {"a": 1, "b": 1})
    bad({"a": {"$capture": "v"}, "b": {"$capture": "v"}}, {"a": 1, "b": 2}, reason="captured twice")
    assert ok({"a": {"$capture": "v"}}, {"a": 2}, {"v": 1}) == {"v": 2}
    with pytest.raises(PatternError):
        match({"$capture": 3}, 1)


def test_capture_inside_unordered_keeps_the_chosen_assignment():
    binds = ok({"$unordered": [{"k": 1, "id": {"$capture": "one"}}, {"k": 2, "id": {"$capture": "two"}}]},
               [{"k": 2, "id": "b"}, {"k": 1, "id": "a"}])
    assert binds == {"one": "a", "two": "b"}


def test_placeholders_are_replaced_by_captured_values():
    binds = {"sid": "20260916-101530-4f2a9c1e", "perm": 0, "cwd": "/tmp/x"}
    ok({"sessionId": "{sid}"}, {"sessionId": "20260916-101530-4f2a9c1e"}, binds)
    bad({"sessionId": "{sid}"}, {"sessionId": "other"}, binds)
    ok({"id": "{perm}"}, {"id": 0}, binds)  # a whole-string placeholder keeps the JSON type
    bad({"id": "{perm}"}, {"id": "0"}, binds)
    ok("file://{cwd}/a", "file:///tmp/x/a", binds)
    ok({"$regex": "^{cwd}/"}, "/tmp/x/a", {"cwd": "/tmp/x"})
    bad({"$regex": "^{cwd}$"}, "/tmp/xy", {"cwd": "/tmp/x."})  # escaped in a regex
    ok({"$contains": ["{sid}"]}, "session 20260916-101530-4f2a9c1e", binds)
    ok({"$exact": {"id": "{perm}"}}, {"id": 0}, binds)
    ok("{unbound}", "{unbound}")  # an unbound name is left as written
    assert substitute({"id": "{perm}", "t": "id {perm}!", "l": ["{sid}"], "k{perm}": 1}, binds) == \
        {"id": 0, "t": "id 0!", "l": ["20260916-101530-4f2a9c1e"], "k{perm}": 1}
    assert substitute("{x}", {"x": {"a": 1}}) == {"a": 1}
    assert substitute("v={x}", {"x": {"a": 1}}) == 'v={"a": 1}'
    assert substitute(r"^\d{8}$", {"8": "no"}) == r"^\d{8}$"


def test_exact_is_deep_equality():
    ok({"$exact": {}}, {})
    bad({"$exact": {}}, {"a": 1}, reason="expected exactly")
    ok({"$exact": {"a": [1, {"b": None}]}}, {"a": [1, {"b": None}]})
    bad({"$exact": {"a": [1, {"b": None}]}}, {"a": [1, {"b": None, "c": 1}]})
    bad({"$exact": [1]}, [True])
    bad({"$exact": None}, MISSING)
    bad({"r": {"$exact": None}}, {}, reason="absent")


def test_falsy():
    for value in (None, False, "", [], {}):
        ok({"v": {"$falsy": True}}, {"v": value})
    ok({"v": {"$falsy": True}}, {})
    for value in (0, "x", [0], {"a": None}, True, 1):
        bad({"v": {"$falsy": True}}, {"v": value})
    ok({"v": {"$falsy": False}}, {"v": "x"})
    bad({"v": {"$falsy": False}}, {})
    assert is_falsy(MISSING) and not is_falsy(0)
    with pytest.raises(PatternError):
        match({"$falsy": "yes"}, None)


def test_string_operators():
    ok({"$contains": ["greetings", "the team"]}, "$greetings the team")
    ok({"$contains": "ab"}, "cabd")
    bad({"$contains": ["greetings", "crew"]}, "$greetings the team", reason="'crew' missing")
    ok({"$not_contains": ["SKILL-BODY"]}, "$greetings the team")
    bad({"$not_contains": ["SKILL", "x"]}, "a SKILL-BODY", reason="must not be in")
    ok({"$starts_with": "🗜️ "}, "🗜️ notes")
    bad({"$starts_with": "🗜️ "}, "notes 🗜️ ", reason="does not start with")
    ok({"$not_starts_with": "/greetings"}, "$greetings the team")
    bad({"$not_starts_with": "/greetings"}, "/greetings the team", reason="must not start with")
    for op in ("$contains", "$not_contains", "$starts_with", "$not_starts_with"):
        bad({op: "a"}, ["a"], reason="needs a string")
        bad({"t": {op: "a"}}, {}, reason="absent")
    with pytest.raises(PatternError):
        match({"$contains": 3}, "3")


def test_several_operators_in_one_object_all_hold():
    pattern = {"$starts_with": "🗜️ ", "$contains": ["the build uses make"], "$not_contains": ["secret"]}
    ok(pattern, "🗜️ Notes so far: the build uses make.")
    bad(pattern, "Notes so far: the build uses make.")
    bad(pattern, "🗜️ Notes so far: the build uses cmake? no: ninja")
    bad(pattern, "🗜️ the build uses make, secret")
    # plain keys and an operator on the same object
    ok({"code": -32602, "$json_contains": "deadbeef"}, {"code": -32602, "message": "unknown", "data": "x-deadbeef"})
    bad({"code": -32602, "$json_contains": "deadbeef"}, {"code": -32602, "message": "unknown session"})
    bad({"code": -32602, "$json_contains": "deadbeef"}, {"code": -32600, "message": "deadbeef"})


def test_json_contains():
    update = {"status": "failed", "content": [{"type": "content", "content": {"type": "text",
                                                                               "text": "[command rejected by the user]"}}]}
    ok({"$json_contains": "[command rejected by the user]"}, update)
    ok({"$json_contains": '"status": "failed"'}, update)  # the JSON text itself
    ok({"$json_contains": "a\nb"}, {"t": "xa\nby"})  # a string leaf, not escaped
    ok({"$json_contains": "é"}, {"t": "é"})
    bad({"$json_contains": "[command rejected by the user]"}, {"status": "failed"}, reason="does not contain")
    bad({"r": {"$json_contains": "x"}}, {}, reason="absent")


def test_unknown_operator_is_an_error_not_a_pass():
    with pytest.raises(PatternError, match=r"\$ends_with"):
        match({"$ends_with": "x"}, "x")
    with pytest.raises(PatternError):
        match({"a": {"$nope": 1}}, {"a": 1})


def test_falsy_paths():
    msg = {"result": {"agentCapabilities": {"loadSession": False, "promptCapabilities": {"image": None}},
                      "list": [0, {"x": ""}], "flag": True, "word": "s"}}
    assert falsy_path_problems(msg, ["result.agentCapabilities.loadSession",
                                     "result.agentCapabilities.promptCapabilities.image",
                                     "result.agentCapabilities.promptCapabilities.audio",
                                     "result.agentCapabilities.mcpCapabilities.http", "result.list.1.x",
                                     "result.list.5", "nothing.at.all"]) == []
    assert falsy_path_problems(msg, ["result.flag"]) != []
    assert falsy_path_problems(msg, ["result.list.0"]) != []  # 0 is a value: not falsy
    assert falsy_path_problems(msg, ["result.word.x"]) != []  # through a truthy scalar
    assert falsy_path_problems({"result": {"agentCapabilities": {"loadSession": True}}},
                               ["result.agentCapabilities.loadSession"]) != []


def test_jsonrpc_messages():
    assert jsonrpc_problem({"jsonrpc": "2.0", "id": 1, "result": {}}) is None
    assert jsonrpc_problem({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}) is None
    assert jsonrpc_problem({"jsonrpc": "2.0", "method": "session/update", "params": {}}) is None
    assert jsonrpc_problem({"jsonrpc": "2.0", "id": "a", "method": "session/request_permission", "params": {}}) is None
    for wrong in ([], "x", {"id": 1, "result": {}}, {"jsonrpc": "2.0"}, {"jsonrpc": "1.0", "id": 1, "result": 1},
                  {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": ""}},
                  {"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": ""}},
                  {"jsonrpc": "2.0", "id": 1, "error": {"code": 1}},
                  {"jsonrpc": "2.0", "result": {}}, {"jsonrpc": "2.0", "id": True, "result": {}},
                  {"jsonrpc": "2.0", "method": 3}, {"jsonrpc": "2.0", "method": "m", "params": 1},
                  {"jsonrpc": "2.0", "method": "m", "id": 1, "result": {}}):
        assert jsonrpc_problem(wrong), wrong


# ---------------------------------------------------------------------------------------------
# The expect checks on made-up runs


def made_run(tmp_path: Path, expect: dict, messages=(), requests=(), sent=(), **kw) -> Run:
    lines = [Line(i, (json.dumps(m) + "\n").encode(), m) for i, m in enumerate(messages)]
    run = Run(case={"id": "t", "expect": expect}, cwd=tmp_path, home=tmp_path / "home", sessions_dir=None,
              bindings={"cwd": str(tmp_path)}, sent=list(sent), lines=lines, requests=list(requests), **kw)
    return run


def test_unknown_expect_key_fails(tmp_path):
    problems = check_expect(made_run(tmp_path, {"steps_pass": True, "no_such_check": True}))
    assert problems == ["expect.no_such_check: unknown expectation: the runner cannot check it"]
    assert check_expect(made_run(tmp_path, {"steps_pass": False})) != []
    assert check_expect(made_run(tmp_path, {})) != []
    assert check_expect(made_run(tmp_path, {"steps_pass": True}, step_problem="boom")) == ["steps: boom"]


REQ = {"messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "make the file"},
                    {"role": "assistant", "content": "", "tool_calls": [
                        {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "[command rejected by the user]"}],
       "tools": [{"type": "function", "function": {"name": "bash"}}, {"type": "function", "function": {"name": "read_skill"}}]}


def model_problems(tmp_path, checks, requests):
    return check_expect(made_run(tmp_path, {"model_requests": checks}, requests=requests))


def test_model_requests_checks(tmp_path):
    assert model_problems(tmp_path, {"count": 1}, [REQ]) == []
    assert model_problems(tmp_path, {"count": 2}, [REQ]) != []
    assert model_problems(tmp_path, {"count": 0}, []) == []
    assert model_problems(tmp_path, {"request_1_last_user_message": "make the file"}, [REQ]) == []
    assert model_problems(tmp_path, {"request_1_last_user_message": "make the file\n"}, [REQ]) != []
    assert model_problems(tmp_path, {"request_1_last_user_message": {"$contains": ["make"], "$not_starts_with": "/"}},
                          [REQ]) == []
    assert model_problems(tmp_path, {"request_1_last_user_message": {"$not_contains": ["file"]}}, [REQ]) != []
    assert model_problems(tmp_path, {"request_1_last_user_message": "{cwd}/x"},
                          [{"messages": [{"role": "user", "content": [{"type": "text", "text": f"{tmp_path}/x"}]}]}]) == []
    assert model_problems(tmp_path, {"request_2_last_user_message": "x"}, [REQ]) != []
    assert model_problems(tmp_path, {"request_1_roles": ["system", "user", "assistant", "tool"]}, [REQ]) == []
    assert model_problems(tmp_path, {"request_1_roles": ["system", "user"]}, [REQ]) != []
    assert model_problems(tmp_path, {"request_1_tools_include": ["read_skill", "bash"]}, [REQ]) == []
    assert model_problems(tmp_path, {"request_1_tools_include": ["read_file"]}, [REQ]) != []
    assert model_problems(tmp_path, {"request_1_tool_message": {"tool_call_id_matches_call": True,
                                                               "content": "[command rejected by the user]"}}, [REQ]) == []
    assert model_problems(tmp_path, {"request_1_tool_message": {"content": "[bash rejected by the user]"}}, [REQ]) != []
    assert model_problems(tmp_path, {"request_1_unknown": 1}, [REQ]) != []
    assert model_problems(tmp_path, {"request_1_tool_message": {"whatever": 1}}, [REQ]) != []


def test_tool_call_id_must_be_the_calls_id(tmp_path):
    other = json.loads(json.dumps(REQ))
    other["messages"][3]["tool_call_id"] = "call_9"
    assert model_problems(tmp_path, {"request_1_tool_message": {"tool_call_id_matches_call": True}}, [other]) != []
    twice = json.loads(json.dumps(REQ))
    twice["messages"].append(dict(twice["messages"][3]))
    assert model_problems(tmp_path, {"request_1_tool_message": {"content": "[command rejected by the user]"}},
                          [twice]) != []  # exactly one tool message


def test_response_before_notification_check(tmp_path):
    sent = [("json", {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {}})]
    response = {"jsonrpc": "2.0", "id": 2, "result": {"sessionId": "s1"}}
    note = {"jsonrpc": "2.0", "method": "session/update",
            "params": {"sessionId": "s1", "update": {"sessionUpdate": "available_commands_update", "availableCommands": []}}}
    flag = {"response_before_notification": True}
    assert check_expect(made_run(tmp_path, flag, [response, note], sent=sent)) == []
    assert check_expect(made_run(tmp_path, flag, [note, response], sent=sent)) != []
    assert check_expect(made_run(tmp_path, flag, [response], sent=sent)) != []
    assert check_expect(made_run(tmp_path, flag, [response, note])) != []  # no session/new sent


def test_no_tool_ran_check(tmp_path):
    flag = {"no_tool_ran": True}
    replayed = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {
        "sessionUpdate": "tool_call", "toolCallId": "call_7", "status": "completed"}}}
    live = json.loads(json.dumps(replayed))
    live["params"]["update"]["status"] = "pending"
    update = json.loads(json.dumps(replayed))
    update["params"]["update"]["sessionUpdate"] = "tool_call_update"
    no_status = json.loads(json.dumps(replayed))
    del no_status["params"]["update"]["status"]
    ask = {"jsonrpc": "2.0", "id": 0, "method": "session/request_permission", "params": {}}
    assert check_expect(made_run(tmp_path, flag, [replayed])) == []
    for wrong in (live, update, no_status, ask):
        assert check_expect(made_run(tmp_path, flag, [replayed, wrong])) != [], wrong
    assert check_expect(made_run(tmp_path, flag, [], before={"a": b"1"}, after={"a": b"2"})) != []
    assert check_expect(made_run(tmp_path, flag, [], before={}, after={"ran.txt": b""})) != []


def test_simple_checks(tmp_path):
    (tmp_path / "there.txt").write_text("")
    assert check_expect(made_run(tmp_path, {"files_absent": ["gone.txt"]})) == []
    assert check_expect(made_run(tmp_path, {"files_absent": ["there.txt"]})) != []
    assert check_expect(made_run(tmp_path, {"stderr_contains": ["a", "{cwd}"]}, stderr=f"a at {tmp_path}")) == []
    assert check_expect(made_run(tmp_path, {"stderr_contains": ["b"]}, stderr="a")) != []
    assert check_expect(made_run(tmp_path, {"process_alive_after": True}, alive_after=True)) == []
    assert check_expect(made_run(tmp_path, {"process_alive_after": True}, alive_after=False)) != []
    good = {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert check_expect(made_run(tmp_path, {"stdout_only_jsonrpc": True}, [good])) == []
    assert check_expect(made_run(tmp_path, {"stdout_only_jsonrpc": True}, [good, {"id": 1}])) != []
    run = made_run(tmp_path, {"stdout_only_jsonrpc": True}, [good])
    run.lines.append(Line(1, b"mm v0.1.0 ready\n", acp_cases._parse(b"mm v0.1.0 ready\n")))
    assert check_expect(run) != []
    run = made_run(tmp_path, {"stdout_only_jsonrpc": True})
    run.lines.append(Line(0, b'{"jsonrpc":"2.0","id":1,"result":{}}', acp_cases._parse(b'{"jsonrpc":"2.0","id":1,"result":{}}')))
    assert check_expect(run) != []  # no newline at the end


# ---------------------------------------------------------------------------------------------
# The step interpreter, against a fake agent

FAKE_AGENT = r"""
import json, sys, time
script = json.loads(sys.argv[1])
sys.stderr.write(script.get("stderr", "")); sys.stderr.flush()
def out(lines, received=None):
    for line in lines:
        if line == "$echo":
            line = json.dumps({"jsonrpc": "2.0", "method": "echo", "params": {"line": received}})
        sys.stdout.write(line + "\n"); sys.stdout.flush()
out(script.get("at_start", []))
for i, raw in enumerate(sys.stdin):
    try:
        received = json.loads(raw)
    except ValueError:
        received = raw
    out(script["replies"][i] if i < len(script["replies"]) else [], received)
    if script.get("exit_after") == i + 1:
        sys.exit(3)
out(script.get("at_eof", []))
"""

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
INIT_OK = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1, "agentInfo": {"version": "v0.1.0"}}})
PROMPT = {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": "s1", "prompt": []}}


def note(kind: str, session: str = "s1", **fields) -> str:
    return json.dumps({"jsonrpc": "2.0", "method": "session/update",
                       "params": {"sessionId": session, "update": {"sessionUpdate": kind, **fields}}})


def chunk(text: str, session: str = "s1") -> str:
    return note("agent_message_chunk", session, content={"type": "text", "text": text})


USAGE = note("usage_update", used=10, size=0)
DONE = json.dumps({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}})
BASE_STEPS = [{"send": INIT}, {"receive": {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1}}},
              {"send": PROMPT}, {"receive_text": "Hello there."},
              {"receive": {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}}]


def fake(tmp_path, scripted_server, script: dict, steps=None, expect=None, **case_keys):
    case = {"id": "fake", "area": "acp", "agent_config": {}, "steps": steps or BASE_STEPS,
            "expect": expect or {"steps_pass": True}, **case_keys}
    return run_case(case, tmp_path, scripted_server, command=[sys.executable, "-c", FAKE_AGENT, json.dumps(script)])


def fails(tmp_path, scripted_server, script, *needles, **kw) -> str:
    with pytest.raises(AssertionError) as info:
        fake(tmp_path, scripted_server, script, **kw)
    text = str(info.value)
    for needle in needles:
        assert needle in text, text
    return text


GOOD = {"stderr": "[acp] client case-client elicitation(form)=false\n",
        "replies": [[INIT_OK], [USAGE, chunk("Hel"), USAGE, chunk("lo there."), USAGE, DONE, USAGE]]}


def test_fake_agent_passes(tmp_path, scripted_server):
    run = fake(tmp_path, scripted_server, GOOD, expect={
        "steps_pass": True, "stdout_only_jsonrpc": True, "stderr_contains": ["case-client"],
        "model_requests": {"count": 0}, "agentInfo_version_equals_mm_version_output": True,
        "process_alive_after": True, "no_tool_ran": True})
    assert run.alive_after is True and len(run.lines) == 8


def test_a_message_not_listed_fails(tmp_path, scripted_server):
    script = {"replies": [[INIT_OK], [chunk("Hello there."), note("plan", entries=[]), DONE]]}
    fails(tmp_path, scripted_server, script, "step 5", "does not match", '"plan"')


def test_strict_order_skips_nothing(tmp_path, scripted_server):
    fake(tmp_path, scripted_server, {"replies": [[INIT_OK], [chunk("Hello there."), DONE]]},
         expect={"steps_pass": True, "strict_order": True})
    fails(tmp_path, scripted_server, GOOD, "usage_update", expect={"steps_pass": True, "strict_order": True})


def test_skippable_updates_can_be_changed(tmp_path, scripted_server):
    script = {"replies": [[INIT_OK], [note("plan", entries=[]), chunk("Hello there."), DONE]]}
    fake(tmp_path, scripted_server, script, skippable_updates=["plan"])
    fails(tmp_path, scripted_server, GOOD, "usage_update", skippable_updates=["plan"])


def test_receive_text_must_be_exactly_the_chunks(tmp_path, scripted_server):
    fails(tmp_path, scripted_server, {"replies": [[INIT_OK], [chunk("Hello"), chunk(" world."), DONE]]},
          "step 4", "'Hello world.'")
    # more text after the expected text: the next step sees the extra chunk
    fails(tmp_path, scripted_server, {"replies": [[INIT_OK], [chunk("Hello there."), chunk("!"), DONE]]}, "step 5")
    # a chunk of another session
    fails(tmp_path, scripted_server, {"replies": [[INIT_OK], [chunk("Hello there.", "s2"), DONE]]},
          "step 4", "expected \"s1\"")
    # a thought chunk is not an agent message
    fails(tmp_path, scripted_server, {"replies": [[INIT_OK], [note("agent_thought_chunk", content={
        "type": "text", "text": "Hello there."}), DONE]]}, "step 4")


def test_messages_after_the_last_step_must_be_skippable(tmp_path, scripted_server):
    script = {"replies": [[INIT_OK], [chunk("Hello there."), DONE, chunk("late")]]}
    fails(tmp_path, scripted_server, script, "after the last step", "late")
    fails(tmp_path, scripted_server, {**GOOD, "at_eof": [chunk("bye")]}, "after the last step", "bye")


def test_a_banner_on_stdout_fails(tmp_path, scripted_server):
    fails(tmp_path, scripted_server, {**GOOD, "at_start": ["mm v0.1.0 ready"]}, "step 2", "not JSON")
    fails(tmp_path, scripted_server, {**GOOD, "at_eof": ["bye"]}, "stdout_only_jsonrpc",
          expect={"steps_pass": True, "stdout_only_jsonrpc": True})


def test_exit_is_reported_with_stderr(tmp_path, scripted_server):
    text = fails(tmp_path, scripted_server, {"stderr": "usage: mm [-p PROMPT]\nmm: error: unrecognized\n",
                                             "replies": [], "exit_after": 1},
                 "step 2", "mm closed stdout", "exited with code 3", "mm: error: unrecognized")
    assert "--- stderr" in text


def test_a_step_timeout_fails(tmp_path, scripted_server, monkeypatch):
    monkeypatch.setattr(acp_cases, "STEP_TIMEOUT", 0.5)
    fails(tmp_path, scripted_server, {"replies": [[]]}, "step 2", "no message within 0.5 s", "still running")


def test_process_alive_after_fails_when_it_exited(tmp_path, scripted_server):
    script = {"replies": [[INIT_OK]], "exit_after": 1}
    fails(tmp_path, scripted_server, script, "process_alive_after", steps=BASE_STEPS[:2],
          expect={"steps_pass": True, "process_alive_after": True})


def test_capture_then_send_the_value_back(tmp_path, scripted_server):
    ask = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "session/request_permission", "params": {"sessionId": "s1"}})
    steps = [{"send": PROMPT},
             {"receive": {"jsonrpc": "2.0", "id": {"$capture": "perm"}, "method": "session/request_permission"}},
             {"send": {"jsonrpc": "2.0", "id": "{perm}", "result": {"outcome": {"outcome": "selected", "optionId": "reject"}}}},
             {"receive": {"method": "echo", "params": {"line": {"$exact": {
                 "jsonrpc": "2.0", "id": 0, "result": {"outcome": {"outcome": "selected", "optionId": "reject"}}}}}}}]
    fake(tmp_path, scripted_server, {"replies": [[ask], ["$echo"]]}, steps=steps)
    # a string id "0" is not the integer 0
    steps[3]["receive"]["params"]["line"]["$exact"]["id"] = "0"
    fails(tmp_path, scripted_server, {"replies": [[ask], ["$echo"]]}, "step 4", steps=steps)


def test_send_raw_and_cwd_placeholder(tmp_path, scripted_server):
    steps = [{"send_raw": '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{'},
             {"receive": {"method": "echo", "params": {"line": '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{\n'}}},
             {"send": {"jsonrpc": "2.0", "id": 2, "method": "x", "params": {"cwd": "{cwd}"}}},
             {"receive": {"method": "echo", "params": {"line": {"params": {"cwd": "{cwd}"}}}}, "falsy_paths": ["params.line.result"]}]
    run = fake(tmp_path, scripted_server, {"replies": [["$echo"], ["$echo"]]}, steps=steps)
    assert run.sent[1][1]["params"]["cwd"] == str(tmp_path.resolve())


def test_falsy_paths_on_a_receive_step(tmp_path, scripted_server):
    loaded = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"agentCapabilities": {"loadSession": True}}})
    steps = [{"send": INIT}, {"receive": {"id": 1}, "falsy_paths": ["result.agentCapabilities.loadSession"]}]
    fails(tmp_path, scripted_server, {"replies": [[loaded]]}, "falsy_paths", steps=steps)


def test_case_setup_writes_the_agent_file_and_sessions(tmp_path, scripted_server):
    import yaml

    from mm.sessions.load import load_session

    session = {"id": "20260916-101530-4f2a9c1e", "updated": "2026-09-16T10:20:00Z", "cwd": "{cwd}",
               "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "n", "summary": True}]}
    fake(tmp_path, scripted_server, {"replies": []}, steps=[{"send": INIT}],
         files={"skills/a.md": "x\n"}, sessions=[session],
         agent_config={"yolo": False, "sessions": {"enabled": True, "dir": "store"}})
    config = yaml.safe_load((tmp_path / ".mm" / "agent.yaml").read_text())
    assert config == {"yolo": False, "sessions": {"enabled": True, "dir": "store"},
                      "baseUrl": scripted_server.base_url, "model": "m"}
    assert (tmp_path / "skills" / "a.md").read_text() == "x\n"
    meta, history = load_session(tmp_path / "store" / "20260916-101530-4f2a9c1e.json")
    assert history[1] == {"role": "user", "content": "n", "summary": True}
    record = json.loads((tmp_path / "store" / "20260916-101530-4f2a9c1e.json").read_text())
    assert record["cwd"] == str(tmp_path.resolve()) and record["updated"] == "2026-09-16T10:20:00Z"


def test_unknown_case_or_step_keys_fail(tmp_path, scripted_server):
    with pytest.raises(AssertionError, match="unknown case key"):
        fake(tmp_path, scripted_server, GOOD, mystery=1)
    fails(tmp_path, scripted_server, GOOD, "unsupported shape", steps=[{"send": INIT, "receive": {}}])
    fails(tmp_path, scripted_server, GOOD, "unsupported shape", steps=[{"expect_text": "x"}])
    fails(tmp_path, scripted_server, GOOD, "malformed pattern", steps=[{"send": INIT}, {"receive": {"$ends_with": "}"}}])
