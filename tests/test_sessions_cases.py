"""Every case of tests/cases/sessions/ (cases/README.md §sessions): fixtures written in mm's own
session-file format, then a real search_memory call, a live conversation, or a load."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness import RecordingUI, load_cases, make_conversation, write_files
from mm.sessions.load import UNRECORDED_RESULT, load_session
from mm.sessions.store import session_record, write_session
from mm.tools.base import Settings, ToolContext
from mm.tools.search_memory import SearchMemory

CASES = load_cases("sessions")
HIT = re.compile(r"(?m)^(\S+) · [^·]+ · turn (\d+) · (question|answer|summary)$")


def fill(value, cwd: Path):
    """The case's `{cwd}` placeholder replaced, in strings at any depth."""
    if isinstance(value, str):
        return value.replace("{cwd}", str(cwd))
    if isinstance(value, list):
        return [fill(v, cwd) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, cwd) for k, v in value.items()}
    return value


def write_fixtures(case: dict, cwd: Path) -> Path:
    """Each fixture session at `{cwd}/<sessions.dir>/<id>.json`; returns the directory."""
    directory = cwd / case["config"]["sessions"]["dir"]
    extra = case.get("extra_fields", {})
    for s in fill(case["sessions"], cwd):
        messages = [{**m, **extra.get("each_message", {})} for m in s["messages"]]
        record = session_record(id=s["id"], messages=messages, created=s["updated"], updated=s["updated"],
                                cwd=s["cwd"], errors=s.get("errors"), extra=extra.get("file"))
        write_session(directory / f"{s['id']}.json", record)
    write_files(cwd, case.get("files", {}))
    return directory


def hits_of(output: str) -> list[dict]:
    return [{"session": s, "turn": int(t), "kind": k} for s, t, k in HIT.findall(output)]


def check(expect: dict, output: str) -> None:
    assert hits_of(output) == expect["hits_in_order"], output
    for text in expect.get("output_contains", []):
        assert text in output, output
    for text in expect.get("output_not_contains", []):
        assert text not in output, output


async def call(case_call: dict, cwd: Path, directory: str) -> str:
    assert case_call["tool"] == "search_memory"
    result = await SearchMemory(directory).run(case_call["arguments"], ToolContext(cwd=cwd, settings=Settings()))
    assert not result.failed
    return result.text


@pytest.mark.parametrize("case", [c for c in CASES if "call" in c], ids=lambda c: c["id"])
async def test_search_case(case, tmp_path):
    write_fixtures(case, tmp_path)
    check(case["expect"], await call(case["call"], tmp_path, case["config"]["sessions"]["dir"]))


@pytest.mark.parametrize("case", [c for c in CASES if "conversation" in c], ids=lambda c: c["id"])
async def test_live_conversation_case(case, tmp_path, scripted_server):
    write_fixtures(case, tmp_path)
    for step in case["conversation"]:
        for answer in step["model_script"]:
            if "content" in answer:
                scripted_server.add_reply(answer["content"])
            else:
                scripted_server.add_tool_calls(answer["tool_calls"])
    conv = make_conversation(scripted_server.base_url, tmp_path, case["config"])
    outputs = []
    for step in case["conversation"]:
        ui = RecordingUI()
        await conv.run_turn(step["user"], ui)
        outputs += [e.result.text for e in ui.done_calls() if e.name == "search_memory"]
    assert len(outputs) == 1
    check(case["expect"]["search_result"], outputs[0])


@pytest.mark.parametrize("case", [c for c in CASES if "steps" in c], ids=lambda c: c["id"])
async def test_loading_case(case, tmp_path):
    """The file loads into a history holding the fixture's messages (the ACP replay is elsewhere);
    searching it finds what the case expects."""
    directory = write_fixtures(case, tmp_path)
    (fixture,) = case["sessions"]
    meta, history = load_session(directory / f"{fixture['id']}.json")
    assert meta.id == fixture["id"]
    for got, want in zip(history, fixture["messages"]):
        assert got == want  # unknown keys dropped, the message itself intact
    for step in case["steps"]:
        if "call" in step:
            check(case["expect"]["search"] | {"output_contains": []},
                  await call(step["call"], tmp_path, case["config"]["sessions"]["dir"]))
    calls = [c["id"] for m in fixture["messages"] for c in m.get("tool_calls", [])]
    answered = [m for m in history if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answered] == calls  # every call answered (H3)
    assert meta.unanswered == [m["tool_call_id"] for m in answered if m["content"] == UNRECORDED_RESULT]
    updates = case["expect"]["load"]["updates_in_order"]
    failed = [u["toolCallId"] for u in updates if u.get("status") == "failed"]
    assert meta.unanswered == failed
    json.dumps(history)
