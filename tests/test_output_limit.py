"""An answer the model server cut at its output limit (`finish_reason: "length"`: docs/engine.md
§Output limit, docs/scripting.md §The output limit): never reported as a success, a cut tool call
never run, a long repetition named — through the real engine, `mm -p`, line mode and `mm -acp`,
against the scripted model server."""

from __future__ import annotations

import json

from harness import RecordingUI, make_conversation
from mm_runs import agent_file, line_mode
from test_acp_sdk import ScriptedClient, cwd, running_mm, write_agent_file  # noqa: F401 - cwd: a fixture
from test_scripting import lines_of, mm, one_object

from mm.engine.outputlimit import (ANSWER_CUT, ANSWER_REPEATED, CALL_CUT, LIMIT_COUNTED, LIMIT_SENT,
                                   LIMIT_UNKNOWN)
from mm.engine.runaway import PATTERN_MAX, PATTERN_MIN, RUNAWAY_MARKER, WINDOW, long_repeat

SESSIONS = {"sessions": {"enabled": True}}
SENTENCE = "The function returns the sum of the two numbers, and the test checks it with 2 and 3. "  # 87 chars
REPEATING = "Here is why.\n" + SENTENCE * 14 + SENTENCE[:40]  # cut mid-word, as the embedded model did
HALF = "The first half of a long answer, cut in the middle of a sent"


def session_errors(tmp_path) -> list[dict]:
    (path,) = (tmp_path / ".mm" / "sessions").glob("*.json")
    return json.loads(path.read_text())["errors"]


# -- the rule for long repetitions (where the reference is silent)

def test_the_runaway_rule_keeps_the_references_numbers():
    assert (WINDOW, PATTERN_MIN, PATTERN_MAX) == (256, 4, 64)  # mm-tools.md §Loop detection, last row


def test_long_repeat_finds_a_passage_longer_than_the_runaway_rule_takes():
    assert long_repeat(REPEATING) == (len(SENTENCE), 14)
    assert long_repeat("x" * 10 + ("y" * 500 + "z") * 3) == (501, 3)
    assert long_repeat(SENTENCE * 2 + SENTENCE[:10]) == (0, 0), "twice is not a runaway"
    assert long_repeat(("w" * 600 + "!") * 4) == (0, 0), "a passage over 512 characters is not looked for"
    assert long_repeat(HALF * 3) == (0, 0), "60 characters: the runaway rule's range, not this one's"
    assert long_repeat("") == (0, 0)


# -- the engine

async def test_a_text_answer_cut_at_the_limit_ends_the_turn_with_max_tokens(scripted_server, tmp_path):
    scripted_server.add_reply(HALF, finish="length")
    conv = make_conversation(scripted_server.base_url, tmp_path, {"maxTokens": 50, **SESSIONS})
    ui = RecordingUI()
    done = await conv.run_turn("explain", ui)
    line = ANSWER_CUT.format(limit=LIMIT_SENT.format(n=50))
    assert done.stop_reason == "max_tokens" and done.error == line
    assert scripted_server.requests[0]["max_tokens"] == 50
    assert conv.history[-1] == {"role": "assistant", "content": HALF}, "kept as it was shown"
    assert session_errors(tmp_path) == [{"where": "generation", "message": line}]


async def test_a_repeating_answer_cut_at_the_limit_is_named_and_kept_without_the_repetition(scripted_server,
                                                                                             tmp_path):
    scripted_server.add_reply(REPEATING, finish="length", usage=(10, 1024))
    conv = make_conversation(scripted_server.base_url, tmp_path)
    done = await conv.run_turn("explain", RecordingUI())
    limit = LIMIT_COUNTED.format(n=1024)  # mm sent no max_tokens: the server's own limit
    assert "max_tokens" not in scripted_server.requests[0]
    assert done.stop_reason == "max_tokens"
    assert done.error == ANSWER_REPEATED.format(period=len(SENTENCE), count=14, limit=limit)
    marker = RUNAWAY_MARKER.format(what="text", period=len(SENTENCE))
    assert conv.history[-1]["content"] == "Here is why.\n" + SENTENCE.rstrip() + "\n" + marker


async def test_without_usage_the_limit_is_the_servers(scripted_server, tmp_path):
    scripted_server.add_reply(HALF, finish="length", usage=None)
    conv = make_conversation(scripted_server.base_url, tmp_path)
    done = await conv.run_turn("explain", RecordingUI())
    assert done.error == ANSWER_CUT.format(limit=LIMIT_UNKNOWN)


async def test_a_cut_tool_call_is_never_run_and_the_calls_before_it_are(scripted_server, tmp_path):
    whole = json.dumps({"path": "first.txt", "content": "one\n"})
    cut = json.dumps({"path": "second.txt", "content": "two lines\nand more"})[:-12]
    scripted_server.add_tool_calls([{"id": "call_a", "name": "write_file", "arguments": whole},
                                    {"id": "call_b", "name": "write_file", "arguments": cut}], finish="length")
    scripted_server.add_reply("never asked")
    conv = make_conversation(scripted_server.base_url, tmp_path, {"maxTokens": 64})
    ui = RecordingUI()
    done = await conv.run_turn("write both", ui)
    assert done.stop_reason == "max_tokens"
    assert done.error == CALL_CUT.format(name="write_file", limit=LIMIT_SENT.format(n=64))
    assert (tmp_path / "first.txt").read_text() == "one\n"
    assert not (tmp_path / "second.txt").exists(), "a cut call must never run"
    results = {m["tool_call_id"]: m["content"] for m in conv.history if m["role"] == "tool"}
    assert set(results) == {"call_a", "call_b"}, "the history stays well-formed"
    assert "as if the call was cut off" in results["call_b"]
    assert len(scripted_server.requests) == 1 and scripted_server.pending == 1


async def test_whole_tool_calls_cut_after_their_end_run_and_the_turn_goes_on(scripted_server, tmp_path):
    scripted_server.add_tool_calls([{"name": "write_file", "arguments": {"path": "a.txt", "content": "a\n"}}],
                                   finish="length")
    scripted_server.add_reply("Written.")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    done = await conv.run_turn("write it", RecordingUI())
    assert done.stop_reason == "end_turn" and done.error is None
    assert (tmp_path / "a.txt").read_text() == "a\n"


# -- the front ends

def test_p_text_prints_the_answer_then_the_line_and_fails(scripted_server, tmp_path):
    scripted_server.add_reply(HALF, finish="length")
    proc = mm(scripted_server, tmp_path, "-p", "explain", config="maxTokens: 50\n")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.decode() == HALF + "\n"
    line = ANSWER_CUT.format(limit=LIMIT_SENT.format(n=50))
    assert line in proc.stderr.decode().splitlines()


def test_p_text_names_a_repetition(scripted_server, tmp_path):
    scripted_server.add_reply(REPEATING, finish="length", usage=(10, 1024))
    proc = mm(scripted_server, tmp_path, "-p", "explain")
    assert proc.returncode == 1
    assert proc.stdout.decode() == REPEATING + "\n", "the answer as it was streamed"
    line = ANSWER_REPEATED.format(period=len(SENTENCE), count=14, limit=LIMIT_COUNTED.format(n=1024))
    assert line in proc.stderr.decode().splitlines()


def test_json_says_max_tokens(scripted_server, tmp_path):
    scripted_server.add_reply(HALF, finish="length")
    proc = mm(scripted_server, tmp_path, "-p", "explain", "--output-format", "json", config="maxTokens: 50\n")
    assert proc.returncode == 1
    result = one_object(proc.stdout)
    line = ANSWER_CUT.format(limit=LIMIT_SENT.format(n=50))
    assert (result["subtype"], result["is_error"], result["stop_reason"]) == ("error_during_execution", True,
                                                                              "max_tokens")
    assert result["result"] == HALF and result["error"] == line


def test_stream_json_ends_with_max_tokens_after_a_cut_call(scripted_server, tmp_path):
    cut = json.dumps({"path": "b.txt", "content": "never written"})[:-5]
    scripted_server.add_tool_calls([{"id": "call_c", "name": "write_file", "arguments": cut}], finish="length")
    proc = mm(scripted_server, tmp_path, "-p", "write", "--output-format", "stream-json", config="maxTokens: 64\n")
    assert proc.returncode == 1
    records = lines_of(proc.stdout)
    (result,) = [r for r in records if r["type"] == "tool_result"]
    assert result["tool_id"] == "call_c" and result["status"] == "error"
    assert records[-1]["stop_reason"] == "max_tokens" and records[-1]["is_error"] is True
    assert records[-1]["error"] == CALL_CUT.format(name="write_file", limit=LIMIT_SENT.format(n=64))
    assert not (tmp_path / "b.txt").exists()


def test_line_mode_shows_a_dim_line_and_goes_on(scripted_server, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    agent_file(work, "maxTokens: 50\n")
    scripted_server.add_reply(HALF, finish="length")
    scripted_server.add_reply("Second answer.")
    line = ANSWER_CUT.format(limit=LIMIT_SENT.format(n=50))
    with line_mode(scripted_server, work) as (proc, term):
        term.write("explain\r")
        term.expect(HALF)
        term.expect(line)
        assert b"\x1b[2m" + line[:30].encode() in term.raw, "dim, not an error's red"
        term.expect("›")
        term.write("go on\r")
        term.expect("Second answer.")
        term.expect("›")
        term.write("/quit\r")
        assert proc.wait(30) == 0


async def test_acp_answers_stop_reason_max_tokens(cwd, scripted_server):
    write_agent_file(cwd, scripted_server.base_url, maxTokens=50)
    scripted_server.add_reply(HALF, finish="length")
    async with running_mm(cwd, scripted_server, ScriptedClient()) as acp:
        sid = await acp.new_session()
        response = await acp.prompt(sid, "explain")
        assert response["result"]["stopReason"] == "max_tokens", response
        line = ANSWER_CUT.format(limit=LIMIT_SENT.format(n=50))
        assert f"[acp] session {sid}: stopReason max_tokens: {line}" in acp.stderr


async def test_a_structured_answer_cut_at_the_limit_is_not_asked_again(scripted_server, tmp_path):
    scripted_server.add_reply('{"failing": 3, "tests": ["test_a", "te', finish="length")
    scripted_server.add_reply("never asked")
    schema = {"type": "object", "properties": {"failing": {"type": "integer"}}, "required": ["failing"]}
    conv = make_conversation(scripted_server.base_url, tmp_path, {"structuredOutput": schema, "maxTokens": 20})
    done = await conv.run_turn("which tests fail?", RecordingUI())
    assert done.stop_reason == "max_tokens" and done.structured is None
    assert done.error == ANSWER_CUT.format(limit=LIMIT_SENT.format(n=20))
    assert scripted_server.pending == 1
