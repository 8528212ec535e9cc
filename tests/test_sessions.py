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
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".index")) == sorted([
        f".{s.id}.lock", s.path.name, ".gitignore"])  # the file, the lock this process holds on it, the .gitignore
    s.release()
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".index")) == sorted([
        s.path.name, ".gitignore"])


def test_a_conversation_is_held_by_one_process_at_a_time(tmp_path):
    """Two mm going on with the same conversation would overwrite each other's turns: the second
    claim is refused until the first lets go (or its process ends)."""
    import subprocess
    import sys

    from mm.sessions.store import BUSY, SessionBusy

    first = SessionFile(tmp_path)
    first.save([{"role": "user", "content": "mine"}], [], {})
    second = SessionFile(tmp_path)
    with pytest.raises(SessionBusy) as busy:
        second.claim(first.id)
    assert str(busy.value) == BUSY.format(id=first.id)
    holder = ("import sys, time; from pathlib import Path; from mm.sessions.store import SessionFile; "
              "s = SessionFile(Path(sys.argv[1])); s.claim(sys.argv[2]); print('held', flush=True); time.sleep(60)")
    first.release()
    proc = subprocess.Popen([sys.executable, "-c", holder, str(tmp_path), first.id], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "held\n"
        with pytest.raises(SessionBusy):
            second.claim(first.id)
    finally:
        proc.kill()
        proc.wait()
    second.claim(first.id)  # a killed holder's lock is gone with it
    assert second.id == first.id


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


def test_the_latest_conversation_passes_over_a_file_left_empty_by_new(tmp_path):
    """`mm --resume` after `/new`: the conversation kept under a new id, not the empty live file."""
    kept = session_record(id="20260916-101530-aaaaaaaa", created="2026-09-16T10:15:30+00:00",
                          updated="2026-09-16T10:20:00+00:00",
                          messages=[{"role": "system", "content": "S"}, {"role": "user", "content": "kept"}])
    empty = session_record(id="20260916-101530-bbbbbbbb", created="2026-09-16T10:15:30+00:00",
                           updated="2026-09-16T10:20:01+00:00", messages=[{"role": "system", "content": "S"}])
    for record in (kept, empty):
        write_session(tmp_path / f"{record['id']}.json", record, index=False)
    assert [s.id for s in list_sessions(tmp_path)] == [empty["id"], kept["id"]]
    assert latest_session(tmp_path).id == kept["id"]


def test_a_hand_edited_file_loads_in_shapes_every_server_takes(tmp_path):
    record = session_record(id="20260916-101530-cccccccc", created="2026-09-16T10:15:30+00:00",
                            updated="2026-09-16T10:20:00+00:00", messages=[
                                {"role": "system", "content": "S"},
                                {"role": "user", "content": {"x": 1}, "pinned": True},
                                {"role": "assistant", "content": "", "tool_calls": "zzz"},
                                {"role": "assistant", "content": "", "tool_calls": [
                                    "junk", {"id": 7, "function": {"name": "bash", "arguments": {"command": "ls"}}}]},
                                {"role": "tool", "tool_call_id": "7", "content": "a.txt"}])
    path = tmp_path / f"{record['id']}.json"
    write_session(path, record, index=False)
    _meta, messages = load_session(path)
    assert messages[1] == {"role": "user", "content": '{"x": 1}', "pinned": True}  # pinned kept (docs/engine.md)
    assert messages[2] == {"role": "assistant", "content": ""}
    assert messages[3]["tool_calls"] == [{"id": "7", "type": "function",
                                          "function": {"name": "bash", "arguments": '{"command": "ls"}'}}]
    assert messages[4] == {"role": "tool", "tool_call_id": "7", "content": "a.txt"}
