"""Hooks in the engine, with real commands written here (docs/hooks.md; mm-tools.md §ask_agent
Hooks row, §Declared tools Hooks row, §search_memory; mm-acp.md `— denied by a hook`).

Every hook is a small script in the test's own folder, run as a real subprocess by a real
Conversation talking to the scripted model server. The front ends (`mm -p`, line mode, ACP) and
the ask events are in tests/test_hooks_frontends.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from harness import RecordingUI, make_conversation, pids_matching
from mm.events import HookLine, ToolCallStarted

RECORD = """\
import json, sys
data = json.load(sys.stdin)
with open(sys.argv[1], "a", encoding="utf-8") as f:
    f.write(json.dumps(data, ensure_ascii=False) + "\\n")
if len(sys.argv) > 2:
    print(sys.argv[2])
"""


def script(cwd: Path, name: str, body: str) -> str:
    """A bash script `name` in `cwd`, executable; returns its absolute path."""
    path = cwd / name
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(0o755)
    return str(path)


def recorder(cwd: Path, answer: dict | str | None = None, log: str = "hooks.log") -> list[str]:
    """The argv of a hook that appends its input to `log` (one JSON line) and prints `answer`."""
    path = cwd / "record.py"
    path.write_text(RECORD)
    argv = [sys.executable, str(path), str(cwd / log)]
    if answer is not None:
        argv.append(answer if isinstance(answer, str) else json.dumps(answer))
    return argv


def inputs(cwd: Path, log: str = "hooks.log") -> list[dict]:
    path = cwd / log
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def hook_lines(ui: RecordingUI) -> list[str]:
    return [e.line for e in ui.events if isinstance(e, HookLine)]


def tool_messages(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


async def gone(marker: str) -> bool:
    """Whether no process matches `marker` within 5 s; any left is killed, by pid."""
    for _ in range(100):
        if not pids_matching(marker):
            return True
        await asyncio.sleep(0.05)
    for pid in pids_matching(marker):
        os.kill(pid, 9)
    return False


def bash_call(command: str, call_id: str = "c1") -> dict:
    return {"id": call_id, "name": "bash", "arguments": {"command": command}}


async def turn(srv, cwd: Path, hooks: dict, calls: list[dict] | None = None, answers: list[str] | None = None,
               prompt: str = "go", **config):
    """One turn: the model makes `calls` (one request), then answers "done"; returns (ui, conv)."""
    if calls:
        srv.add_tool_calls(calls)
    srv.add_reply("done")
    conv = make_conversation(srv.base_url, cwd, {"hooks": hooks, **config})
    ui = RecordingUI(answers)
    await conv.run_turn(prompt, ui)
    return ui, conv


# -- preToolCall: deny ---------------------------------------------------------------------------

async def test_exit_status_2_denies_with_stderr_asks_nothing_and_runs_nothing(scripted_server, tmp_path):
    deny = script(tmp_path, "deny.sh", "cat > seen.json\necho 'no writes to the repo' >&2\necho ignored\nexit 2\n")
    ui, conv = await turn(scripted_server, tmp_path, {"preToolCall": [{"matcher": "bash", "command": deny}]},
                          [bash_call("touch made")], answers=["allow_once"], yolo=False)
    assert not (tmp_path / "made").exists()
    assert ui.asked == []  # no permission was asked
    assert tool_messages(scripted_server.requests[1]) == ["[denied by a hook: no writes to the repo]"]
    done = ui.done_calls()[0]
    assert done.result.failed and done.title == "bash — denied by a hook"
    assert [e.call_id for e in ui.events if isinstance(e, ToolCallStarted)] == ["c1"]  # shown as a call
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen == {"event": "preToolCall", "hook_event_name": "PreToolUse", "session_id": conv.id_for_hooks,
                    "cwd": str(tmp_path), "tool_name": "bash", "tool_input": {"command": "touch made"},
                    "tool_use_id": "c1"}
    assert seen["session_id"]


async def test_json_deny_and_no_reason(scripted_server, tmp_path):
    hooks = {"preToolCall": [{"command": recorder(tmp_path, {"decision": "deny", "reason": "read-only day"})}]}
    await turn(scripted_server, tmp_path, hooks, [bash_call("touch made")])
    assert tool_messages(scripted_server.requests[1]) == ["[denied by a hook: read-only day]"]
    assert not (tmp_path / "made").exists()
    silent = script(tmp_path, "silent.sh", "exit 2\n")
    await turn(scripted_server, tmp_path, {"preToolCall": [{"command": silent}]}, [bash_call("touch made")])
    assert tool_messages(scripted_server.requests[3]) == ["[denied by a hook: no reason given]"]


@pytest.mark.parametrize("answer, reason", [
    ({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                             "permissionDecisionReason": "Use the Makefile"}}, "Use the Makefile"),
    ({"decision": "block", "reason": "blocked the old way"}, "blocked the old way"),
    ({"continue": False, "stopReason": "stop everything"}, "stop everything"),
])
async def test_claude_code_denials(scripted_server, tmp_path, answer, reason):
    await turn(scripted_server, tmp_path, {"preToolCall": [{"command": recorder(tmp_path, answer)}]},
               [bash_call("touch made")])
    assert tool_messages(scripted_server.requests[1]) == [f"[denied by a hook: {reason}]"]
    assert not (tmp_path / "made").exists()


# -- preToolCall: input, replace, allow, ask ------------------------------------------------------

async def test_rewritten_input_is_what_runs_and_is_asked_about(scripted_server, tmp_path):
    rewrite = recorder(tmp_path, {"input": {"command": "touch safe"}})
    ui, _ = await turn(scripted_server, tmp_path, {"preToolCall": [{"matcher": "bash", "command": rewrite}]},
                       [bash_call("touch risky")], answers=["allow_once"], yolo=False)
    assert (tmp_path / "safe").exists() and not (tmp_path / "risky").exists()
    assert ui.asked == [("bash", {"command": "touch safe"})]
    assert ui.done_calls()[0].arguments == {"command": "touch safe"}


async def test_claude_code_updated_input_and_allow_skip_the_permission(scripted_server, tmp_path):
    answer = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                     "updatedInput": {"command": "touch allowed"}}}
    ui, _ = await turn(scripted_server, tmp_path, {"preToolCall": [{"command": recorder(tmp_path, answer)}]},
                       [bash_call("touch asked")], yolo=False)
    assert ui.asked == []
    assert (tmp_path / "allowed").exists() and not (tmp_path / "asked").exists()


async def test_ask_asks_even_with_yolo(scripted_server, tmp_path):
    answer = {"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "check it"}}
    ui, _ = await turn(scripted_server, tmp_path, {"preToolCall": [{"command": recorder(tmp_path, answer)}]},
                       [bash_call("touch made")], answers=["reject_once"], yolo=True)
    assert ui.asked == [("bash", {"command": "touch made"})]
    assert not (tmp_path / "made").exists()
    assert tool_messages(scripted_server.requests[1]) == ["[command rejected by the user]"]


async def test_an_input_the_tool_cannot_take_is_a_failure_and_the_call_goes_on(scripted_server, tmp_path):
    bad = recorder(tmp_path, {"input": {"cmd": "touch other"}})
    ui, _ = await turn(scripted_server, tmp_path, {"preToolCall": [{"command": bad}]}, [bash_call("touch made")])
    assert (tmp_path / "made").exists() and not (tmp_path / "other").exists()
    [line] = hook_lines(ui)
    assert line.startswith(f"🪝 preToolCall hook {' '.join(bad)[:79]}")
    assert "answered an input bash cannot take: [bash: invalid call, nothing was run — command is missing;" in line
    assert line.endswith(" — ignored")


async def test_pre_replace_answers_in_the_tools_place(scripted_server, tmp_path):
    hooks = {"preToolCall": [{"command": recorder(tmp_path, {"replace": "cached: 42"})}]}
    await turn(scripted_server, tmp_path, hooks, [bash_call("touch made")])
    assert tool_messages(scripted_server.requests[1]) == ["cached: 42"]
    assert not (tmp_path / "made").exists()


# -- postToolCall ---------------------------------------------------------------------------------

async def test_post_replace_and_its_input(scripted_server, tmp_path):
    hooks = {"postToolCall": [{"matcher": "bash", "command": recorder(tmp_path, {"replace": "[secret removed]"})}]}
    await turn(scripted_server, tmp_path, hooks, [bash_call("echo token=s3cr3t")])
    assert tool_messages(scripted_server.requests[1]) == ["[secret removed]"]
    [seen] = inputs(tmp_path)
    assert seen["event"] == "postToolCall" and seen["hook_event_name"] == "PostToolUse"
    assert seen["tool_output"] == seen["tool_response"] == "token=s3cr3t\n"
    assert seen["tool_input"] == {"command": "echo token=s3cr3t"} and seen["failed"] is False


async def test_post_deny_withholds_the_output(scripted_server, tmp_path):
    deny = script(tmp_path, "post.sh", "echo 'the output holds a key' >&2; exit 2\n")
    ui, _ = await turn(scripted_server, tmp_path, {"postToolCall": [{"command": deny}]}, [bash_call("echo key=1")])
    assert tool_messages(scripted_server.requests[1]) == ["[denied by a hook: the output holds a key]"]
    assert ui.done_calls()[0].title is None  # it ran: the title stays


async def test_context_from_both_hooks_follows_the_output(scripted_server, tmp_path):
    hooks = {"preToolCall": [{"command": recorder(tmp_path, {"context": "before: the tree is clean"})}],
             "postToolCall": [{"command": recorder(tmp_path, {"hookSpecificOutput": {
                 "hookEventName": "PostToolUse", "additionalContext": "after: 2 files changed"}})}]}
    await turn(scripted_server, tmp_path, hooks, [bash_call("echo hi")])
    assert tool_messages(scripted_server.requests[1]) == [
        "hi\n\n[context added by a hook]\nbefore: the tree is clean\nafter: 2 files changed"]


async def test_context_kept_within_max_output(scripted_server, tmp_path):
    hooks = {"postToolCall": [{"command": recorder(tmp_path, {"context": "REMEMBER THIS"})}]}
    await turn(scripted_server, tmp_path, hooks, [bash_call("seq 1 5000")], maxOutput=1000)
    [text] = tool_messages(scripted_server.requests[1])
    assert len(text) <= 1000 and text.endswith("\n\n[context added by a hook]\nREMEMBER THIS")
    assert text.startswith("1\n2\n3\n") and "truncated to maxOutput (1000 characters)" in text


async def test_hooks_do_not_run_for_a_call_that_cannot_run(scripted_server, tmp_path):
    hooks = {"preToolCall": [{"command": recorder(tmp_path)}], "postToolCall": [{"command": recorder(tmp_path)}]}
    calls = [{"id": "u", "name": "nope", "arguments": {}}, {"id": "v", "name": "bash", "arguments": {"cmd": "x"}}]
    await turn(scripted_server, tmp_path, hooks, calls)
    assert inputs(tmp_path) == []
    ui, _ = await turn(scripted_server, tmp_path, hooks, [bash_call("touch made")], yolo=False)
    assert [i["event"] for i in inputs(tmp_path)] == ["preToolCall"]  # refused by the user: nothing ran


# -- failures: reported once, the call goes on -------------------------------------------------------

async def test_a_hook_that_times_out_is_killed_with_its_group_and_the_call_goes_on(scripted_server, tmp_path):
    marker = f"sleep 97.{os.getpid()}"
    slow = script(tmp_path, "slow.sh", f"{marker} &\n{marker}\n")
    ui, _ = await turn(scripted_server, tmp_path, {"preToolCall": [{"command": slow, "timeout": 0.5}]},
                       [bash_call("touch made")])
    assert hook_lines(ui) == [f"🪝 preToolCall hook {slow} timed out after 0.5s — ignored"]
    assert (tmp_path / "made").exists()
    assert tool_messages(scripted_server.requests[1]) == [""]
    assert await gone(marker), "the hook's process group was not killed"


@pytest.mark.parametrize("body, what", [
    ("echo starting\necho 'boom: no config' >&2\nexit 1\n", "failed (exit status 1): boom: no config"),
    ("kill -9 $$\n", "failed (signal: killed)"),
    ("echo '{\"decision\": \"deny\"'\n", "printed something that is not a JSON object (Expecting ',' delimiter: "
                                         "line 1 column 20 (char 19))"),
    ("echo '{\"decision\": \"maybe\"}'\n", 'answered "decision": "maybe" (expected "allow" or "deny")'),
    ("echo '{\"input\": [1]}'\n", 'answered an "input" that is not a JSON object ([1])'),
    ("head -c 1100000 /dev/zero | tr '\\0' x\n", "wrote more than 1 MiB"),
])
async def test_a_hook_that_fails_is_reported_once_and_changes_nothing(scripted_server, tmp_path, body, what):
    script(tmp_path, "crash.sh", body)
    ui, _ = await turn(scripted_server, tmp_path, {"preToolCall": [{"command": "./crash.sh  --strict"}]},
                       [bash_call("echo ran")])
    assert hook_lines(ui) == [f"🪝 preToolCall hook ./crash.sh --strict {what} — ignored"]
    assert tool_messages(scripted_server.requests[1]) == ["ran\n"]


async def test_a_hook_that_cannot_start(scripted_server, tmp_path):
    ui, _ = await turn(scripted_server, tmp_path, {"postToolCall": [{"command": ["./no-such-hook", "x y"]}]},
                       [bash_call("echo ran")])
    assert hook_lines(ui) == ["🪝 postToolCall hook ./no-such-hook 'x y' cannot be started: No such file or directory "
                              "— ignored"]
    assert tool_messages(scripted_server.requests[1]) == ["ran\n"]


async def test_plain_text_is_ignored_outside_pre_generation(scripted_server, tmp_path):
    ui, _ = await turn(scripted_server, tmp_path, {"preToolCall": [{"command": "echo 'looks fine to me'"}],
                                                   "postToolCall": [{"command": "echo 'still fine'"}]},
                       [bash_call("echo ran")])
    assert hook_lines(ui) == [] and tool_messages(scripted_server.requests[1]) == ["ran\n"]


async def test_system_message_is_shown_to_the_user_not_the_model(scripted_server, tmp_path):
    hook = recorder(tmp_path, {"systemMessage": "deploys are frozen\ntoday"})
    ui, _ = await turn(scripted_server, tmp_path, {"preToolCall": [{"command": hook}]}, [bash_call("echo ran")])
    assert hook_lines(ui)[0].endswith(": deploys are frozen today")
    assert tool_messages(scripted_server.requests[1]) == ["ran\n"]


# -- matchers and order --------------------------------------------------------------------------------

async def test_matchers_and_order(scripted_server, tmp_path):
    hooks = {"preToolCall": [
        {"matcher": "read_file", "command": recorder(tmp_path, log="a.log")},
        {"matcher": "ba", "command": recorder(tmp_path, log="b.log")},  # a name matches itself only
        {"matcher": "ba.*|write_file", "command": recorder(tmp_path, {"input": {"command": "echo second"}}, "c.log")},
        {"matcher": "*", "command": recorder(tmp_path, {"context": "third saw it"}, "d.log")},
        {"command": recorder(tmp_path, {"decision": "deny", "reason": "fourth"}, "e.log")},
        {"command": recorder(tmp_path, log="f.log")},  # after a denial: not run
    ]}
    await turn(scripted_server, tmp_path, hooks, [bash_call("echo first")])
    assert [len(inputs(tmp_path, f"{n}.log")) for n in "abcdef"] == [0, 0, 1, 1, 1, 0]
    assert inputs(tmp_path, "d.log")[0]["tool_input"] == {"command": "echo second"}  # the one before rewrote it
    assert tool_messages(scripted_server.requests[1]) == [
        "[denied by a hook: fourth]\n\n[context added by a hook]\nthird saw it"]


async def test_declared_tools_pass_the_hooks(scripted_server, tmp_path):
    tools = [{"name": "deploy", "description": "Deploy.", "command": ["touch", "deployed"]}]
    hooks = {"preToolCall": [{"matcher": "deploy", "command": script(tmp_path, "d.sh", "echo frozen >&2; exit 2\n")}]}
    ui, _ = await turn(scripted_server, tmp_path, hooks, [{"id": "d1", "name": "deploy", "arguments": {}}], tools=tools)
    assert not (tmp_path / "deployed").exists()
    assert tool_messages(scripted_server.requests[1]) == ["[denied by a hook: frozen]"]
    assert ui.done_calls()[0].title == "deploy — denied by a hook"


async def test_cancelling_the_turn_kills_a_running_hook(scripted_server, tmp_path):
    marker = f"sleep 93.{os.getpid()}"
    slow = script(tmp_path, "slow.sh", f"{marker}\n")
    scripted_server.add_tool_calls([bash_call("touch made")])
    conv = make_conversation(scripted_server.base_url, tmp_path, {"hooks": {"preToolCall": [{"command": slow}]}})
    ui = RecordingUI()
    task = asyncio.ensure_future(conv.run_turn("go", ui))
    for _ in range(200):
        if pids_matching(marker):
            break
        await asyncio.sleep(0.05)
    conv.cancel()
    done = await asyncio.wait_for(task, 30)
    assert done.stop_reason == "cancelled" and hook_lines(ui) == []
    assert not (tmp_path / "made").exists()
    assert await gone(marker)


# -- preGeneration ------------------------------------------------------------------------------------------

async def test_pre_generation_context_plain_and_json(scripted_server, tmp_path):
    hooks = {"preGeneration": [{"command": "echo 'branch: main'"},
                               {"command": recorder(tmp_path, {"context": "tests: green"})}]}
    await turn(scripted_server, tmp_path, hooks, prompt="what next?")
    user = scripted_server.requests[0]["messages"][1]
    assert user == {"role": "user", "content": "what next?\n\n[context added by a hook]\nbranch: main\ntests: green"}
    [seen] = inputs(tmp_path)
    assert (seen["event"], seen["hook_event_name"], seen["prompt"]) == ("preGeneration", "UserPromptSubmit",
                                                                         "what next?")


async def test_pre_generation_replace(scripted_server, tmp_path):
    hooks = {"preGeneration": [{"command": recorder(tmp_path, {"replace": "what next? (answer in French)"})}]}
    await turn(scripted_server, tmp_path, hooks, prompt="what next?")
    assert scripted_server.requests[0]["messages"][1]["content"] == "what next? (answer in French)"


async def test_pre_generation_deny_sends_nothing_and_keeps_the_history(scripted_server, tmp_path):
    hooks = {"preGeneration": [{"command": script(tmp_path, "p.sh", "echo 'the prompt holds a key' >&2; exit 2\n")}]}
    conv = make_conversation(scripted_server.base_url, tmp_path, {"hooks": hooks})
    ui = RecordingUI()
    done = await conv.run_turn("my key is AKIA123", ui)
    assert done.stop_reason == "error" and done.error == "[prompt blocked by a hook: the prompt holds a key]"
    assert ui.turn_done() is done
    assert scripted_server.requests == [] and [m["role"] for m in conv.history] == ["system"]


async def test_hook_context_is_not_searched_by_memory(scripted_server, tmp_path):
    """mm-tools.md §search_memory, Searched: questions without the context a preGeneration hook appended."""
    from mm.sessions.search import search_memory

    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "deploy.md").write_text("---\nname: deploy\ndescription: Deploy.\n---\nSteps.\n")
    hooks = {"preGeneration": [{"command": "echo 'zanzibar quartermaster'"}]}
    await turn(scripted_server, tmp_path, hooks, prompt="please $deploy the lighthouse",
               sessions={"enabled": True}, skillsDir="skills")
    sent = scripted_server.requests[0]["messages"][1]["content"]
    assert sent.startswith("please $deploy the lighthouse\n[mm: ")
    assert sent.endswith("\n\n[context added by a hook]\nzanzibar quartermaster")
    directory = tmp_path / ".mm" / "sessions"
    assert "no hit" in search_memory(directory, "zanzibar")
    found = search_memory(directory, "lighthouse")
    assert "question" in found and "zanzibar" not in found and "[mm:" not in found


# -- preAsk (the asked agent never starts here; postAsk on a real answer: test_hooks_frontends) ----------

AGENTS = {"helper": {"command": ["sh", "-c", "touch started"], "description": "Helps."}}


async def test_pre_ask_denial_and_its_input(scripted_server, tmp_path):
    deny = script(tmp_path, "ask.sh", "cat > seen.json; echo 'helper is off today' >&2; exit 2\n")
    hooks = {"preAsk": [{"matcher": "helper", "command": deny}]}
    call = {"id": "a1", "name": "ask_agent", "arguments": {"agent": "helper", "prompt": "Review it"}}
    _, conv = await turn(scripted_server, tmp_path, hooks, [call], mmConfigs=AGENTS)
    assert tool_messages(scripted_server.requests[1]) == ["[ask denied by a hook: helper is off today]"]
    assert not (tmp_path / "started").exists()
    assert json.loads((tmp_path / "seen.json").read_text()) == {
        "event": "preAsk", "hook_event_name": "preAsk", "session_id": conv.id_for_hooks, "cwd": str(tmp_path),
        "agent": "helper", "prompt": "Review it"}


async def test_pre_ask_replace_answers_in_the_agents_place_with_context(scripted_server, tmp_path):
    hooks = {"preAsk": [{"matcher": "help.*", "command": recorder(tmp_path, {"replace": "Looks fine.",
                                                                             "context": "from the cache"})}],
             "postAsk": [{"command": recorder(tmp_path, log="post.log")}]}
    call = {"id": "a1", "name": "ask_agent", "arguments": {"agent": "helper", "prompt": "Review it"}}
    ui, _ = await turn(scripted_server, tmp_path, hooks, [call], mmConfigs=AGENTS)
    assert tool_messages(scripted_server.requests[1]) == ["Looks fine.\n\n[context added by a hook]\nfrom the cache"]
    assert ui.done_calls()[0].result.summary == "helper answered; a hook replaced the answer (11 characters)"
    assert not (tmp_path / "started").exists() and inputs(tmp_path, "post.log") == []


async def test_an_ask_hook_matcher_names_the_agent(scripted_server, tmp_path):
    hooks = {"preAsk": [{"matcher": "other", "command": script(tmp_path, "no.sh", "exit 2\n")}]}
    call = {"id": "a1", "name": "ask_agent", "arguments": {"agent": "helper", "prompt": "Review it"}}
    await turn(scripted_server, tmp_path, hooks, [call], mmConfigs=AGENTS)
    assert (tmp_path / "started").exists()  # not picked: the hand-off went on


# -- configuration ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("hooks, says", [
    ('{preToolCall: [{matcher: "bash|(", command: [x]}]}',
     "hooks.preToolCall[0].matcher: 'bash|(' is not a regular expression: missing ), unterminated subpattern"),
    ("{postAsk: [{command: 3}]}", "hooks.postAsk[0].command: a hook's command is a list of strings (the program "
                                  "and its arguments) or one string (run with bash -c), not 3"),
    ("{postAsk: [{command: [x, 1]}]}", "hooks.postAsk[0].command: a hook's command is a list of strings"),
    ('{preAsk: [{command: "  "}]}', "hooks.preAsk[0].command: the command line is empty — give the command to run"),
    ('{preAsk: [{command: [""]}]}', "hooks.preAsk[0].command: the program (its first item) is empty"),
    ("{preGeneration: [{command: x, matcher: a}]}",
     "hooks.preGeneration[0].matcher: a preGeneration hook has no matcher: it runs for every prompt"),
    ("{preToolcall: [{command: x}]}", "hooks.preToolcall: unknown key (did you mean preToolCall?)"),
    ("{preToolCall: [{command: x, timeout: 0}]}", "hooks.preToolCall[0].timeout: input should be greater than 0"),
])
def test_configuration_errors(tmp_path, hooks, says):
    from mm.config.load import ConfigError, load_config

    (tmp_path / "agent.yaml").write_text(f"model: m\nbaseUrl: http://127.0.0.1:9/v1\nhooks: {hooks}\n")
    with pytest.raises(ConfigError) as err:
        load_config(str(tmp_path / "agent.yaml"), tmp_path, env={})
    assert str(err.value).startswith(f"{tmp_path / 'agent.yaml'}:3: {says}"), str(err.value)
