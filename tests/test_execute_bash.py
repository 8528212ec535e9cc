"""execute_bash (mnemo-tools.md §Run commands; notes/mnemoai.md §2.6; docs/tools-bash.md
§execute_bash): its rows and bad inputs through the real engine and the scripted model server,
on real processes; and each weakness notes §2.6 lists for the reference, proved absent."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from harness import RecordingUI, assert_none_left, make_conversation
from mm.tools.base import Settings, ToolContext
from mm.tools.commands.execute_bash import (BAD_TIMEOUT, BESIDE_BASH, CANCELLED, CWD_GONE, DESCRIPTION, NO_COMMAND,
                                             TIMED_OUT, ExecuteBash)
from mm.tools.commands.output import CUT_MARKER, STREAM_LIMIT
from mm.tools.floor import check_command
from mm.tools.registry import build_registry

CONFIG = {"toolsets": ["core", "commands"]}


async def turn(server, ws: Path, calls: list[dict], config: dict | None = None, answers=None, conv=None):
    """One turn whose model calls execute_bash with each of `calls` (arguments); returns the
    results' texts (parsed as JSON when they are), the UI and the conversation."""
    server.add_tool_calls([{"id": f"c{i}", "name": "execute_bash", "arguments": args} for i, args in enumerate(calls)])
    server.add_reply("done")
    conv = conv or make_conversation(server.base_url, ws, {**CONFIG, **(config or {})})
    ui = RecordingUI(answers)
    await conv.run_turn("go", ui)
    return [_parsed(call.result.text) for call in ui.done_calls()], ui, conv


def _parsed(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return text


def test_declaration_and_group():
    tool = ExecuteBash()
    assert (tool.name, tool.kind, tool.needs_permission) == ("execute_bash", "execute", True)
    assert [(p.name, p.type, p.required, p.default) for p in tool.params] == [
        ("command", "string", True, None), ("timeout", "number", False, 30)]
    assert "ONLY" not in tool.description and "read-only" not in tool.description  # the reference's stale docstring
    assert "carries over" in tool.description
    from mm.config.load import agent_config_adapter

    alone = build_registry(agent_config_adapter().validate_python({"toolsets": ["commands"]}), {}, None)
    assert alone.names == ["execute_bash"] and alone.get("execute_bash").description == DESCRIPTION
    both = build_registry(agent_config_adapter().validate_python({"toolsets": ["core", "commands"]}), {}, None)
    assert both.names[0] == "bash" and both.get("execute_bash").description == DESCRIPTION + BESIDE_BASH
    assert "Prefer execute_bash to `bash`" in BESIDE_BASH


async def test_stdout_stderr_exit_status_and_cwd(scripted_server, tmp_path):
    (ok, failed), _, _ = await turn(scripted_server, tmp_path, [
        {"command": "echo out; echo err >&2"}, {"command": "printf x; exit 3"}])
    assert ok == {"stdout": "out\n", "stderr": "err\n", "exit_status": 0, "cwd": str(tmp_path)}
    assert failed == {"stdout": "x", "stderr": "", "exit_status": 3, "cwd": str(tmp_path)}  # not flagged "error"


async def test_a_cd_carries_over_to_the_next_call_and_the_next_turn(scripted_server, tmp_path):
    results, _, conv = await turn(scripted_server, tmp_path, [{"command": "mkdir -p sub/deeper && cd sub"},
                                                              {"command": "pwd"}, {"command": "cd deeper"}])
    sub = tmp_path / "sub"
    assert [r["cwd"] for r in results] == [str(sub), str(sub), str(sub / "deeper")]
    assert results[1]["stdout"] == f"{sub}\n"
    scripted_server.add_tool_calls([{"name": "execute_bash", "arguments": {"command": "pwd"}},
                                    {"name": "bash", "arguments": {"command": "pwd"}}])
    scripted_server.add_reply("done")
    ui = RecordingUI()
    await conv.run_turn("again", ui)
    moved, plain = ui.done_calls()
    assert json.loads(moved.result.text)["stdout"] == f"{sub / 'deeper'}\n"
    assert plain.result.text == f"{tmp_path}\n"  # the bash tool keeps the conversation's directory


async def test_where_the_shell_ends_counts_however_it_ends(scripted_server, tmp_path):
    """The reference appends its probe after the command: `exit`, `set -e` and a trailing `\\`
    skip it and the `cd` is lost. mm's probe is an EXIT trap set before the command."""
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
    results, _, _ = await turn(scripted_server, tmp_path, [
        {"command": "cd a && exit 3"}, {"command": f"cd {tmp_path}/b; set -e; false; echo never"},
        {"command": f"cd {tmp_path}/c && echo end \\"}, {"command": "pwd"}])
    assert [r["cwd"] for r in results] == [str(tmp_path / n) for n in ("a", "b", "c", "c")]
    assert results[0]["exit_status"] == 3 and results[1]["exit_status"] == 1 and results[1]["stdout"] == ""


async def test_a_killed_command_does_not_move_and_a_deleted_folder_resets(scripted_server, tmp_path):
    (tmp_path / "sub").mkdir()
    results, _, conv = await turn(scripted_server, tmp_path, [
        {"command": "cd sub && echo partial && sleep 7321", "timeout": 1}, {"command": "mkdir gone && cd gone"}])
    assert results[0] == {"error": True, "message": TIMED_OUT.format(seconds=1), "stdout": "partial\n", "stderr": "",
                          "cwd": str(tmp_path)}
    assert results[1]["cwd"] == str(tmp_path / "gone")
    await assert_none_left("sleep 7321")
    shutil.rmtree(tmp_path / "gone")
    (after,), _, _ = await turn(scripted_server, tmp_path, [{"command": "pwd"}], conv=conv)
    note = CWD_GONE.format(old=tmp_path / "gone", cwd=tmp_path)
    assert after == {"stdout": f"{tmp_path}\n", "stderr": "", "exit_status": 0, "cwd": str(tmp_path), "note": note}


async def test_a_timeout_kills_the_whole_process_group(scripted_server, tmp_path):
    (result,), _, _ = await turn(scripted_server, tmp_path, [
        {"command": "sleep 7322 & (sleep 7323 &); setsid sleep 7324 & sleep 7325", "timeout": 0.5}])
    assert result["error"] is True and result["message"] == "Command timed out after 0.5 seconds"
    await assert_none_left("sleep 732[2345]")


async def test_each_stream_is_cut_in_the_middle_to_30000_characters(scripted_server, tmp_path):
    command = "printf 'a%.0s' $(seq 35000); printf 'b%.0s' $(seq 35000); printf 'e%.0s' $(seq 40000) >&2"
    (result,), _, _ = await turn(scripted_server, tmp_path, [{"command": command}], {"maxOutput": 100_000})
    width = len(CUT_MARKER.format(dropped=70000, total=70000, lines=1))
    keep = (STREAM_LIMIT - width) // 2
    marker = CUT_MARKER.format(dropped=70000 - 2 * keep, total=70000, lines=1)
    assert result["stdout"] == "a" * keep + marker + "b" * keep
    assert len(result["stdout"]) <= STREAM_LIMIT and len(result["stderr"]) <= STREAM_LIMIT
    assert result["stderr"].startswith("e" * 100) and "of 40000 chars omitted from the middle" in result["stderr"]


async def test_the_whole_result_holds_in_max_output(scripted_server, tmp_path):
    command = "seq 1 20000; seq 1 20000 >&2"
    (result,), ui, _ = await turn(scripted_server, tmp_path, [{"command": command}], {"maxOutput": 8000})
    text = ui.done_calls()[0].result.text
    assert len(text) <= 8000 and isinstance(result, dict)  # valid JSON: not cut by the engine
    assert result["stdout"].startswith("1\n2\n3\n") and result["stdout"].endswith("19999\n20000\n")
    assert result["stderr"].startswith("1\n2\n") and "~20000 total lines" in result["stderr"]
    assert result["exit_status"] == 0


async def test_bad_inputs(scripted_server, tmp_path):
    results, ui, _ = await turn(scripted_server, tmp_path, [
        {"command": ""}, {"command": "echo hi", "timeout": 0}, {"command": "echo hi", "timeout": -5},
        {"command": "echo hi", "timeout": 4000}, {"command": "echo hi", "timeout": "soon"}, {},
        {"command": "echo a\u0000b"}, {"command": "echo hi", "timeout": "2"}])
    assert results[0] == {"error": True, "message": NO_COMMAND}
    for result, value in zip(results[1:4], ("0", "-5", "4000")):
        assert result == {"error": True, "message": BAD_TIMEOUT.format(value=value, limit=3600)}
    assert results[4].startswith('[execute_bash: invalid call, nothing was run — timeout: "soon" is not a number.')
    assert results[5].startswith("[execute_bash: invalid call, nothing was run — command is missing. You sent: {}.")
    assert results[6]["error"] is True and results[6]["message"].startswith("bash cannot be started: ")
    assert results[7]["stdout"] == "hi\n"  # "2" is read as 2 seconds
    assert not list(tmp_path.iterdir())


async def test_relative_targets_resolve_where_the_command_is(scripted_server, tmp_path):
    """The reference resolves a relative write against its server's directory: `cd /etc` in one
    call, `echo x > hosts` in the next got through. Nothing here runs: each row exits first."""
    sentinel = tmp_path / "ran"
    second = f"touch {sentinel}; exit 0; echo x > hosts"
    results, _, _ = await turn(scripted_server, tmp_path, [{"command": "cd /etc"}, {"command": second},
                                                           {"command": "cd /"}, {"command": f"touch {sentinel}; exit 0; rm -rf *"}])
    assert results[1] == {"error": True, "blocked": True, "message": check_command(second, "/etc"), "command": second}
    assert "[safety floor: system_write] a redirection would write /etc/hosts" in results[1]["message"]
    assert results[3]["message"].startswith("[safety floor: delete_root] rm would delete every entry of /")
    assert not sentinel.exists()


async def test_permission_is_asked_and_a_refusal_is_not_run(scripted_server, tmp_path):
    results, ui, _ = await turn(scripted_server, tmp_path, [{"command": "touch made"}, {"command": "touch not"}],
                                {"yolo": False}, answers=["allow_once", "reject_once"])
    assert [name for name, _ in ui.asked] == ["execute_bash", "execute_bash"]
    assert results[1] == "[execute_bash rejected by the user]"
    assert (tmp_path / "made").exists() and not (tmp_path / "not").exists()
    started = [e for e in ui.events if type(e).__name__ == "ToolCallStarted"]
    assert started[0].title == "execute_bash: touch made"


async def test_cancellation_kills_and_says_so(tmp_path):
    tool = ExecuteBash()
    ctx = ToolContext(cwd=tmp_path, settings=Settings())
    task = asyncio.ensure_future(tool.run({"command": "touch started; cd /tmp; sleep 7326"}, ctx))
    while not (tmp_path / "started").exists():
        await asyncio.sleep(0.02)
    ctx.cancelled.set()
    result = json.loads((await task).text)
    assert result == {"error": True, "message": CANCELLED, "stdout": "", "stderr": "", "cwd": str(tmp_path)}
    await assert_none_left("sleep 7326")


async def test_a_background_job_does_not_keep_the_call_waiting(tmp_path, mark):
    tool = ExecuteBash()
    ctx = ToolContext(cwd=tmp_path, settings=Settings())
    result = await tool.run({"command": f"(sleep 7327; echo late; echo late >&2) & echo now # {mark}",
                             "timeout": 60}, ctx)
    assert json.loads(result.text)["stdout"] == "now\n"


@pytest.mark.parametrize("seconds,shown", [(1, "1"), (2.5, "2.5"), (30.0, "30")])
def test_timeout_message_numbers(seconds, shown):
    assert TIMED_OUT.format(seconds=shown) == f"Command timed out after {shown} seconds"
