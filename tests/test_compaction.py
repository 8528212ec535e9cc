"""Compaction, /compact, /new and /usage through a real conversation and the scripted server
(mm-acp.md §session/prompt, mm-tools.md §search_memory, docs/engine.md §Context)."""

import re

from harness import RecordingUI, make_conversation
from mm.config.schema import ContextConfig
from mm.engine import compaction
from mm.engine.compaction import (CUT_MARKER, PINNED_ACK, PROMPTS_HEADER, SUMMARY_ACK, SUMMARY_SYSTEM,
                                  SUMMARY_WRAPPER)
from mm.events import Compacted
from mm.engine.tokens import count_text, estimate

COMPRESSED = re.compile(r"^🗜️ compressed (\d+) messages → 1 summary \+ (\d+) kept \((\d+) tokens, \d+\.\ds\)$")


def turn(n: int, size: int = 1) -> list[dict]:
    """One finished turn with a tool call: 4 messages; `size` repeats the tool output."""
    return [{"role": "user", "content": f"question {n}"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": f"c{n}", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": f"output {n} " * size},
            {"role": "assistant", "content": f"answer {n}"}]


def tools_tokens(conv) -> int:
    return count_text(conv.tools_text())


def conversation(server, tmp_path, turns: int, size: int = 1, **context):
    conv = make_conversation(server.base_url, tmp_path)
    conv.context = ContextConfig(**context)
    for n in range(1, turns + 1):
        conv.history += turn(n, size)
    return conv


async def test_compact_summarises_the_older_turns(scripted_server, tmp_path):
    conv = conversation(scripted_server, tmp_path, 4)
    system = dict(conv.history[0])
    scripted_server.add_reply("The user asked questions 1 and 2; ls was run.")
    line = await conv.compact()
    n, kept, _ = COMPRESSED.match(line).groups()
    assert (int(n), int(kept)) == (8, 8)
    assert conv.history[0] == system
    assert conv.history[1] == {"role": "user", "summary": True, "prompts": ["question 1", "question 2"],
                               "content": f"{SUMMARY_WRAPPER}\nThe user asked questions 1 and 2; ls was run.\n\n"
                                          f"{PROMPTS_HEADER}\nUser: question 1\n\nUser: question 2"}
    assert conv.history[2] == {"role": "assistant", "content": SUMMARY_ACK}
    assert conv.history[3:] == turn(3) + turn(4)
    assert compaction.summary_text(conv.history[1]) == "The user asked questions 1 and 2; ls was run."
    assert compaction.summary_body(conv.history[1]) == (
        f"The user asked questions 1 and 2; ls was run.\n\n{PROMPTS_HEADER}\nUser: question 1\n\nUser: question 2")
    (request,) = scripted_server.requests
    assert request["messages"][0] == {"role": "system", "content": SUMMARY_SYSTEM}
    assert "question 1" in request["messages"][1]["content"] and "answer 2" in request["messages"][1]["content"]
    assert "question 3" not in request["messages"][1]["content"]
    assert "tools" not in request and request["max_tokens"] == 512


async def test_nothing_to_compact(scripted_server, tmp_path):
    conv = conversation(scripted_server, tmp_path, 2, keepLastTurns=2)
    before = list(conv.history)
    assert await conv.compact() == "🗜️ nothing to compact: 8 message(s), no turn older than the last 2"
    assert conv.history == before and scripted_server.requests == []


async def test_a_failed_summary_keeps_the_history(scripted_server, tmp_path):
    conv = conversation(scripted_server, tmp_path, 3, keepLastTurns=1)
    before = [dict(m) for m in conv.history]
    scripted_server.add_json({"error": {"message": "boom"}}, status=500)
    line = await conv.compact()
    assert line.startswith("[compact: failed, history kept: the model server at ") and "boom" in line
    assert line.endswith("]") and conv.history == before
    scripted_server.add_reply("   ")
    assert await conv.compact() == "[compact: failed, history kept: the model's summary was empty]"
    assert conv.history == before


async def test_keep_zero_turns_summarises_everything_and_a_summary_is_folded_in(scripted_server, tmp_path):
    conv = conversation(scripted_server, tmp_path, 2, keepLastTurns=0)
    scripted_server.add_reply("first notes")
    assert COMPRESSED.match(await conv.compact()).group(1, 2) == ("8", "0")
    assert len(conv.history) == 3
    assert await conv.compact() == "🗜️ nothing to compact: 2 message(s), no turn older than the last 0"
    conv.history += turn(3)
    scripted_server.add_reply("second notes")
    assert COMPRESSED.match(await conv.compact()).group(1, 2) == ("6", "0")
    assert "Notes of the conversation before:\nfirst notes" in scripted_server.requests[-1]["messages"][1]["content"]
    assert SUMMARY_ACK not in scripted_server.requests[-1]["messages"][1]["content"]
    assert conv.history[1] == compaction.summary_messages("second notes", ["question 1", "question 2", "question 3"])[0]


async def test_standing_instructions_are_never_summarised(scripted_server, tmp_path):
    conv = conversation(scripted_server, tmp_path, 0, keepLastTurns=1)
    rule = {"role": "user", "content": "Always answer in French.", "pinned": True}
    conv.history += [rule, {"role": "assistant", "content": "D'accord."}] + turn(2) + turn(3)
    scripted_server.add_reply("notes")
    assert COMPRESSED.match(await conv.compact()).group(1, 2) == ("5", "5")
    assert conv.history[1:5] == [rule, {"role": "assistant", "content": PINNED_ACK},
                                 *compaction.summary_messages("notes", ["question 2"])]
    assert "Always answer in French" not in scripted_server.requests[0]["messages"][1]["content"]


async def test_summary_and_pinned_keys_are_never_sent(scripted_server, tmp_path):
    conv = conversation(scripted_server, tmp_path, 3, keepLastTurns=1)
    scripted_server.add_reply("notes")
    await conv.compact()
    scripted_server.add_reply("Bien.")
    await conv.run_turn("Réponds en français.", RecordingUI(), pinned=True)
    assert conv.history[-2]["pinned"] is True
    sent = scripted_server.requests[-1]["messages"]
    assert all(set(m) <= {"role", "content", "tool_calls", "tool_call_id", "name"} for m in sent)
    assert sent[1] == {"role": "user", "content": compaction.summary_messages("notes", ["question 1", "question 2"])[0]["content"]}


async def test_automatic_compaction_before_a_request(scripted_server, tmp_path):
    conv = conversation(scripted_server, tmp_path, 3, size=150, keepLastTurns=1)
    conv.context_window = 3000
    assert estimate(conv.history) + tools_tokens(conv) > 2400
    system = dict(conv.history[0])
    scripted_server.add_reply("notes of turns 1-3")
    scripted_server.add_reply("Done.")
    ui = RecordingUI()
    done = await conv.run_turn("next", ui)
    assert done.stop_reason == "end_turn"
    (event,) = [e for e in ui.events if isinstance(e, Compacted)]
    assert COMPRESSED.match(event.line).group(1, 2) == ("12", "1")
    summary_request, turn_request = scripted_server.requests
    assert summary_request["messages"][0]["content"] == SUMMARY_SYSTEM
    summary = compaction.summary_messages("notes of turns 1-3", ["question 1", "question 2", "question 3"])[0]
    assert turn_request["messages"] == [system, {"role": "user", "content": summary["content"]},
                                        {"role": "assistant", "content": SUMMARY_ACK},
                                        {"role": "user", "content": "next"}]
    assert conv.history[-1] == {"role": "assistant", "content": "Done."}


async def test_no_compaction_under_the_threshold_or_without_a_window(scripted_server, tmp_path):
    conv = conversation(scripted_server, tmp_path, 3, size=150, keepLastTurns=1)
    scripted_server.add_reply("Done.")
    await conv.run_turn("next", RecordingUI())  # window unknown
    conv.context_window = 100_000
    scripted_server.add_reply("Done again.")
    await conv.run_turn("next", RecordingUI())
    assert len(scripted_server.requests) == 2
    assert all(r["messages"][0]["content"] != SUMMARY_SYSTEM for r in scripted_server.requests)


async def test_an_oversized_message_is_cut_not_compacted_forever(scripted_server, tmp_path):
    conv = make_conversation(scripted_server.base_url, tmp_path, {"maxOutput": 100000})
    conv.context_window = 3000
    (tmp_path / "big.log").write_text("".join(f"line {i} of the log\n" for i in range(800)))
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": "cat big.log"}}])
    scripted_server.add_reply("Seen.")
    ui = RecordingUI()
    await conv.run_turn("read the log", ui)
    _, request = scripted_server.requests  # no summary request: nothing older to compact
    (event,) = [e for e in ui.events if isinstance(e, Compacted)]
    assert event.line.startswith("✂️ cut 1 message(s) to fit the context window (")
    result = request["messages"][-1]["content"]  # the command's output, cut in the middle
    assert result.startswith("line 0 of the log") and result.endswith("line 799 of the log\n")
    marker = re.search(r"\n\[… (\d+) characters cut here to fit the context window …\]\n", result)
    assert marker and CUT_MARKER.format(n=marker.group(1)) in result
    assert estimate(request["messages"]) + tools_tokens(conv) <= 2400


async def test_a_prompt_that_could_only_be_cut_to_fit_is_refused(scripted_server, tmp_path):
    conv = make_conversation(scripted_server.base_url, tmp_path)
    conv.context_window = 3000
    history = list(conv.history)
    huge = "".join(f"line {i} of the log\n" for i in range(800))
    ui = RecordingUI()
    done = await conv.run_turn(huge, ui)
    assert scripted_server.requests == [] and conv.history == history  # not sent, nothing kept
    needed = estimate([history[0], {"role": "user", "content": huge}]) + tools_tokens(conv)
    assert done.stop_reason == "error" and done.error == compaction.PROMPT_TOO_LARGE.format(
        tokens=count_text(huge), needed=needed, limit=2400, percent=80, window=3000)
    assert ui.turn_done() is done
    # the same prompt fits a larger window: sent whole
    conv.context_window = 32768
    scripted_server.add_reply("Seen.")
    assert (await conv.run_turn(huge, RecordingUI())).stop_reason == "end_turn"
    assert scripted_server.requests[0]["messages"][-1]["content"] == huge


async def test_new_forgets_the_history_and_the_measure(scripted_server, tmp_path):
    conv = make_conversation(scripted_server.base_url, tmp_path)
    conv.permissions.always_allow.add("bash")
    conv.loops.record("bash", {"command": "ls"}, "a")
    conv.loops.record("bash", {"command": "ls"}, "a")
    scripted_server.add_reply("Hello.")
    await conv.run_turn("hi", RecordingUI())
    assert conv.meter.measure == 15
    assert conv.new() == "🆕 New session: 2 message(s) forgotten."
    assert conv.history == [{"role": "system", "content": conv.system_prompt}]
    assert conv.meter.measure is None and conv.permissions.always_allow == {"bash"}
    assert conv.loops.record("bash", {"command": "ls"}, "a") == conv.loops.record("bash", {"command": "x"}, "b")
    assert conv.new() == "🆕 New session: 0 message(s) forgotten."


async def test_usage_text(scripted_server, tmp_path):
    conv = make_conversation(scripted_server.base_url, tmp_path)
    scripted_server.add_reply("Hello.", usage=(3000, 20))
    await conv.run_turn("hi", RecordingUI())
    assert conv.usage_text() == ("📊 session: 3000 input · 20 output · 0 thought · 0 cached tokens\n"
                                 "📊 context: 3020 tokens (window size unknown)")
    conv.context_window = 8192
    assert conv.usage_text().splitlines()[1] == "📊 context: 3020 / 8192 tokens (37%)"
    conv.new()
    assert conv.usage_text().splitlines()[0].startswith("📊 session: 3000 input")  # totals are the session's
    assert conv.used_tokens() == estimate(conv.history) + tools_tokens(conv)  # measure forgotten


async def test_a_transcript_too_big_for_the_window_is_cut(scripted_server, tmp_path):
    conv = conversation(scripted_server, tmp_path, 3, keepLastTurns=1)
    conv.history[1]["content"] = "".join(f"requirement {i}\n" for i in range(2000))
    conv.context_window = 2000
    scripted_server.add_reply("notes")
    assert COMPRESSED.match(await conv.compact())
    request = scripted_server.requests[0]
    marker = r"\n\[… \d+ characters cut here to fit the context window …\]\n"
    assert re.search(marker, request["messages"][1]["content"])
    assert estimate(request["messages"]) + 512 <= 2000
    assert "requirement 0\n" in request["messages"][1]["content"] and "answer 2" in request["messages"][1]["content"]


async def test_cancel_during_an_automatic_compaction_cancels_the_turn(scripted_server, tmp_path):
    import asyncio

    conv = conversation(scripted_server, tmp_path, 3, size=150, keepLastTurns=1)
    conv.context_window = 3000
    before = len(conv.history)
    scripted_server.add_stall(30)
    task = asyncio.create_task(conv.run_turn("next", RecordingUI()))
    await asyncio.sleep(0.5)
    conv.cancel()
    done = await task
    assert done.stop_reason == "cancelled" and len(conv.history) == before  # the unanswered question left
    assert not any(m.get("summary") for m in conv.history)


async def test_a_failed_automatic_compaction_is_shown_and_the_history_cut(scripted_server, tmp_path):
    conv = conversation(scripted_server, tmp_path, 3, size=300, keepLastTurns=1)
    conv.context_window = 3000
    scripted_server.add_reply("")  # an empty summary
    scripted_server.add_reply("Done.")
    ui = RecordingUI()
    assert (await conv.run_turn("next", ui)).stop_reason == "end_turn"
    failed, cut = [e.line for e in ui.events if isinstance(e, Compacted)]
    assert failed == "[compact: failed, history kept: the model's summary was empty]"
    assert cut.startswith("✂️ cut ")
    sent = scripted_server.requests[1]["messages"]
    assert sent[1]["content"] == "question 1" and CUT_MARKER.split("{")[0] in sent[3]["content"]
    assert estimate(sent) + tools_tokens(conv) <= 2400
