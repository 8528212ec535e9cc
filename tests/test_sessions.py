"""Session files: the format written, tolerant loading, listing, atomic writes and kills
(docs/sessions.md; mm-acp.md §session/new)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from harness import RecordingUI, make_conversation
from mm.sessions.load import (UNRECORDED_RESULT, SessionError, latest_session, list_sessions,
                              load_session, session_paths)
from mm.sessions.store import SessionFile, new_session_id, session_record, write_session

BENCH = Path(__file__).resolve().parents[1] / "bench"


def record(id: str, updated: str, messages: list[dict], **kw) -> dict:
    return session_record(id=id, messages=messages, created=updated, updated=updated, **kw)


def test_id_is_time_sortable():
    assert new_session_id(0).count("-") == 2
    a, b = new_session_id(1_000_000_000), new_session_id(2_000_000_000)
    assert a < b and len(a) == len("20260916-101530-4f2a9c1e")


def test_saved_file_has_the_documented_fields(tmp_path):
    s = SessionFile(tmp_path, meta={"cwd": "/w", "model": "qwen"})
    history = [{"role": "system", "content": "S"}, {"role": "user", "content": "hi"},
               {"role": "user", "content": "notes", "summary": True}]
    s.save(history, [{"where": "generation", "message": "boom"}], {"input_tokens": 3})
    data = json.loads(s.path.read_text())
    assert {"version", "id", "created", "updated", "cwd", "model", "messages", "errors", "usage"} <= set(data)
    assert data["id"] == s.id and data["cwd"] == "/w" and data["model"] == "qwen"
    assert data["messages"][2]["summary"] is True
    assert data["errors"] == [{"where": "generation", "message": "boom"}]
    meta, messages = load_session(s.path)
    assert messages == history and meta.usage == {"input_tokens": 3} and meta.updated_at > 0


def test_unknown_fields_are_ignored(tmp_path):
    path = tmp_path / "a.json"
    msgs = [{"role": "user", "content": "q", "x_tokens": 3}, {"role": "assistant", "content": "a", "x": {}}]
    write_session(path, record("a", "2026-01-01T00:00:00Z", msgs, extra={"x_client": {"n": 1}}))
    meta, messages = load_session(path)
    assert meta.id == "a" and messages == [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]


def test_dangling_call_is_answered_as_failed(tmp_path):
    path = tmp_path / "b.json"
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    call2 = {**call, "id": "c2"}
    msgs = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [call, call2]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"}, {"role": "user", "content": "again"},
            {"role": "tool", "tool_call_id": "zz", "content": "orphan"}]
    write_session(path, record("b", "2026-01-01T00:00:00Z", msgs))
    meta, messages = load_session(path)
    assert meta.unanswered == ["c2"]
    assert [m.get("tool_call_id") for m in messages] == [None, None, "c1", "c2", None]
    assert messages[3]["content"] == UNRECORDED_RESULT


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", ""])
def test_unreadable_file_raises_a_clear_error(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(SessionError, match="bad.json: not a session file"):
        load_session(path)


def test_listing_newest_first_skips_temp_and_broken_files(tmp_path):
    first = [{"role": "user", "content": "first\nq"}]
    write_session(tmp_path / "old.json", record("old", "2026-01-01T10:00:00Z", first))
    write_session(tmp_path / "new.json", record("new", "2026-01-02T10:00:00+02:00", [
        {"role": "user", "content": "[mm: a note]"}, {"role": "user", "content": "real question"}]))
    (tmp_path / ".new.json.abc.tmp").write_text("{")
    (tmp_path / "broken.json").write_text("{")
    listed = list_sessions(tmp_path)
    assert [(s.id, s.first_question) for s in listed] == [("new", "real question"), ("old", "first q")]
    assert latest_session(tmp_path).id == "new"
    assert latest_session(tmp_path / "missing") is None
    assert sorted(p.name for p in session_paths(tmp_path)) == ["broken.json", "new.json", "old.json"]


def test_write_is_atomic_and_leaves_no_temp_file(tmp_path):
    s = SessionFile(tmp_path)
    for n in range(5):
        s.save([{"role": "user", "content": str(n)}], [], {})
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".index")) == [s.path.name]


async def test_conversation_is_saved_after_each_turn(tmp_path, scripted_server):
    scripted_server.add_reply("Hello.")
    conv = make_conversation(scripted_server.base_url, tmp_path, {"sessions": {"enabled": True}})
    await conv.run_turn("hi", RecordingUI())
    (info,) = list_sessions(tmp_path / ".mm/sessions")
    meta, messages = load_session(info.path)
    assert info.first_question == "hi" and meta.cwd == str(tmp_path) and meta.model == "m"
    assert [m["role"] for m in messages] == ["system", "user", "assistant"]


def test_kills_never_leave_an_unreadable_session(tmp_path):
    """bench/session_kill.py with 30 trials: a real writer SIGKILLed at random instants."""
    spec = importlib.util.spec_from_file_location("session_kill", BENCH / "session_kill.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    report = bench.run_trials(30, tmp_path, seed=3, max_delay=0.2)
    assert report["unreadable"] == [] and report["temp_files_listed"] == []
    assert report["sessions"] >= 1 and report["search_ok"]
