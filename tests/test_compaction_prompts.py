"""Compaction never loses what the user asked (docs/engine.md §Context, What the user asked):
through a real conversation and the scripted server."""

import re

from harness import RecordingUI, make_conversation
from mm.config.schema import ContextConfig
from mm.engine import compaction
from mm.engine.compaction import PROMPTS_HEADER, PROMPTS_LEFT_OUT, SUMMARY_SYSTEM, SUMMARY_WRAPPER
from mm.engine.tokens import count_text

FIRST = "Build a CLI called zap.\nNever use global variables; keep every file under 200 lines."


def test_the_texts():
    assert SUMMARY_SYSTEM == (
        "You write the running notes of a coding session between a user and an AI assistant that uses tools. "
        "The notes replace the older part of the conversation, so keep everything needed to continue: the "
        "user's goals and requests, decisions made, files read or changed (with paths), commands run and their "
        "outcomes, errors met, and what remains to do. Quote every constraint and instruction the user gave "
        "word for word. Be factual and dense; plain text or short bullet points; no preamble.")
    assert PROMPTS_HEADER == "[The user's requests in the compacted part, word for word, oldest first]"
    assert PROMPTS_LEFT_OUT.format(n=2) == "[2 longer request(s) left out: only the notes above keep them]"


async def ask(conv, server, prompt: str) -> None:
    server.add_reply(f"done: {prompt.splitlines()[0]}")
    assert (await conv.run_turn(prompt, RecordingUI())).stop_reason == "end_turn"


async def test_the_first_prompt_survives_three_compactions(scripted_server, tmp_path):
    conv = make_conversation(scripted_server.base_url, tmp_path, {"sessions": {"enabled": True}})
    conv.context = ContextConfig(keepLastTurns=1)
    await ask(conv, scripted_server, FIRST)
    asked = [FIRST]
    for round_ in range(1, 4):
        for n in range(2):
            asked.append(f"Step {round_}.{n}: add the --opt{round_}{n} flag.")
            await ask(conv, scripted_server, asked[-1])
        scripted_server.add_reply(f"notes of round {round_}")
        assert (await conv.compact()).startswith("🗜️ compressed ")
        summary = conv.history[1]
        assert summary["summary"] and summary["prompts"] == asked[:-1]  # every request summarised, word for word
        assert summary["content"] == (f"{SUMMARY_WRAPPER}\nnotes of round {round_}\n\n{PROMPTS_HEADER}\n"
                                      + "\n\n".join(f"User: {p}" for p in asked[:-1]))
        request = scripted_server.requests[-1]
        assert request["messages"][0]["content"] == SUMMARY_SYSTEM
    await ask(conv, scripted_server, "What were my constraints?")
    sent = scripted_server.requests[-1]["messages"]
    assert f"User: {FIRST}\n\n" in sent[1]["content"] and "prompts" not in sent[1]
    from mm.sessions.load import load_session

    (path,) = (tmp_path / ".mm" / "sessions").glob("*.json")
    _, messages = load_session(path)
    assert messages[1]["prompts"][0] == FIRST  # a resumed conversation carries them on


def history_with(conv, prompts: list[str]) -> None:
    for n, prompt in enumerate(prompts):
        conv.history += [{"role": "user", "content": prompt}, {"role": "assistant", "content": f"answer {n}"}]


async def test_newest_first_within_the_budget(scripted_server, tmp_path):
    conv = make_conversation(scripted_server.base_url, tmp_path)
    conv.context = ContextConfig(keepLastTurns=1, summaryTokens=64)
    big = "Paste of the log: " + " ".join(f"line{i}" for i in range(150))
    prompts = [FIRST, "Use click for parsing.", big, "Rename it to zip.", "Add tests.", "current"]
    history_with(conv, prompts)
    conv.history.insert(3, {"role": "user", "content": "[mm: a note is not a request]"})
    scripted_server.add_reply("notes")
    await conv.compact()
    summary = conv.history[1]
    assert summary["prompts"] == [FIRST, "Use click for parsing.", "Rename it to zip.", "Add tests."]
    assert summary["content"].endswith(
        f"{PROMPTS_HEADER}\nUser: {FIRST}\n\n{PROMPTS_LEFT_OUT.format(n=1)}\n\nUser: Use click for parsing.\n\n"
        "User: Rename it to zip.\n\nUser: Add tests.")
    assert sum(count_text(p) for p in summary["prompts"]) <= 64


async def test_a_first_prompt_larger_than_the_budget_is_cut_in_the_middle(scripted_server, tmp_path):
    conv = make_conversation(scripted_server.base_url, tmp_path)
    conv.context = ContextConfig(keepLastTurns=1, summaryTokens=64)
    first = "Requirements: " + " ".join(f"rule{i}" for i in range(300)) + " THE END"
    history_with(conv, [first, "Go on.", "current"])
    scripted_server.add_reply("notes")
    await conv.compact()
    kept = conv.history[1]["prompts"]
    assert kept[0].startswith("Requirements: rule0 rule1") and kept[0].endswith("THE END")
    assert re.search(r"\n\[… \d+ characters cut here to fit the context window …\]\n", kept[0])
    assert kept == [kept[0]] + (["Go on."] if count_text(kept[0]) + count_text("Go on.") <= 64 else [])


async def test_standing_instructions_and_notes_are_not_listed_twice(scripted_server, tmp_path):
    conv = make_conversation(scripted_server.base_url, tmp_path)
    conv.context = ContextConfig(keepLastTurns=1)
    conv.history += [{"role": "user", "content": "Always answer in French.", "pinned": True},
                     {"role": "assistant", "content": "D'accord."}]
    history_with(conv, [FIRST, "current"])
    scripted_server.add_reply("notes")
    await conv.compact()
    assert conv.history[1]["content"] == "Always answer in French."
    assert conv.history[3] == compaction.summary_messages("notes", [FIRST])[0]
