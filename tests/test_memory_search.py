"""search_memory, row by row (mm-tools.md §search_memory), and the index agreeing with a scan."""

from __future__ import annotations

import os
import random
from pathlib import Path

from mm.config.load import agent_config_adapter
from mm.sessions.excerpt import EMPTY_QUERY, NO_HIT, excerpt
from mm.sessions.index import INDEX_NAME
from mm.sessions.search import find_hits, search_memory
from mm.sessions.store import session_record, write_session
from mm.sessions.units import query_words
from mm.tools.base import Settings, ToolContext
from mm.tools.registry import build_registry
from mm.tools.search_memory import SearchMemory
from mm.ui.render import call_header
from test_sessions_cases import hits_of

SYSTEM = {"role": "system", "content": "S"}


def save(d: Path, sid: str, updated: str, messages: list[dict], index: bool = True, **kw) -> Path:
    path = d / f"{sid}.json"
    write_session(path, session_record(id=sid, messages=[SYSTEM] + messages, created=updated,
                                       updated=updated, **kw), index=index)
    return path


def qa(q: str, a: str) -> list[dict]:
    return [{"role": "user", "content": q}, {"role": "assistant", "content": a}]


def hits(d: Path, query: str, **kw) -> list[tuple]:
    return [(h["session"], h["turn"], h["kind"]) for h in hits_of(search_memory(d, query, **kw))]


def registry(sessions: dict):
    return build_registry(agent_config_adapter().validate_python({"sessions": sessions}), env={})


def test_declared_only_with_both_switches():
    assert "search_memory" not in registry({"enabled": True}).names
    assert "search_memory" not in registry({"autoSearchMemory": True}).names
    tool = registry({"enabled": True, "autoSearchMemory": True}).get("search_memory")
    assert tool.kind == "search" and tool.needs_permission is False
    assert agent_config_adapter().validate_python({}).sessions.searchMemory is True


def test_terminal_header():
    assert call_header("search_memory", {"query": "tabs"}) == '🔎 search_memory: "tabs"'


async def test_directory_resolved_against_the_working_directory(tmp_path):
    save(tmp_path / "s", "a", "2026-01-01T00:00:00Z", qa("lighthouse", "ok"))
    result = await SearchMemory("s").run({"query": "lighthouse"}, ToolContext(cwd=tmp_path))
    assert result.text.startswith(f'🔎 1 hit(s) for "lighthouse" in {tmp_path / "s"}')


def test_matching_case_accents_and_inside_words(tmp_path):
    save(tmp_path, "a", "2026-01-01T00:00:00Z", qa("Les PRÉFÉRENCES de Zoë", "ok"))
    assert hits(tmp_path, "preference") == [("a", 1, "question")]
    assert hits(tmp_path, "ZOE") == [("a", 1, "question")]
    assert hits(tmp_path, "ferenc") == [("a", 1, "question")]


def test_short_words_dropped_only_beside_longer_ones(tmp_path):
    assert query_words("la preference de a") == ["preference"]
    assert query_words("de a") == ["de", "a"]
    save(tmp_path, "a", "2026-01-01T00:00:00Z", qa("go de", "ok"))
    assert hits(tmp_path, "de") == [("a", 1, "question")]


def test_what_is_searched_and_not(tmp_path):
    call = {"id": "c", "type": "function", "function": {"name": "bash", "arguments": '{"command": "zebra"}'}}
    save(tmp_path, "a", "2026-01-01T00:00:00Z", [
        {"role": "user", "content": "first\n\n[context added by a hook]\nzebra from a hook"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c", "content": "zebra output"},
        {"role": "assistant", "content": "the answer names a giraffe"},
        {"role": "user", "content": "[mm: your answer holds a call of zebra]"},
        {"role": "user", "content": "Summary of the conversation so far:\nwe saw an okapi", "summary": True},
        {"role": "assistant", "content": "Understood, okapi noted."},
    ], errors=[{"where": "generation", "message": "zebra error"}])
    assert hits(tmp_path, "zebra") == []
    assert hits(tmp_path, "giraffe") == [("a", 1, "answer")]
    assert hits(tmp_path, "okapi") == [("a", 2, "summary")]
    assert hits(tmp_path, "summary conversation") == []  # the wrapper line is not searched
    assert hits(tmp_path, "understood") == []


def test_question_carries_its_answer_and_its_words(tmp_path):
    save(tmp_path, "old", "2026-01-01T00:00:00Z", qa("tabs?", "use golang"))
    save(tmp_path, "new", "2026-02-01T00:00:00Z", qa("tabs!", "no idea"))
    assert hits(tmp_path, "tabs golang") == [("old", 1, "question"), ("new", 1, "question")]
    text = search_memory(tmp_path, "tabs")
    assert "→ use golang" in text and "→ no idea" in text and " · answer" not in text


def test_conversation_in_progress_left_out(tmp_path):
    save(tmp_path, "a", "2026-01-01T00:00:00Z", qa("lighthouse lamp", "amber") + qa("lighthouse log", "ok"))
    current = [SYSTEM] + qa("lighthouse lamp", "amber")
    assert hits(tmp_path, "lighthouse", current=current) == [("a", 2, "question")]


def test_order_turn_latest_first_within_a_session(tmp_path):
    save(tmp_path, "a", "2026-01-01T00:00:00Z", qa("tabs 1", "x") + qa("tabs 2", "y") + qa("tabs 3", "z"))
    assert [t for _, t, _ in hits(tmp_path, "tabs")] == [3, 2, 1]


def test_excerpt_window():
    text = "a" * 300 + " needle " + "b" * 1000
    out = excerpt(text, ["needle"])
    assert out.startswith("…" + "a" * 79 + " needle") and out.endswith("…") and len(out) == 80 + 160 + 2
    far = "x " * 10 + "needle " + "c" * 300 + " thread " + "d" * 900
    out = excerpt(far, ["needle", "thread"])
    assert out.startswith("x x") and "thread" in out and out.endswith("d…")
    assert len(excerpt("needle " + "e" * 2000 + " thread", ["needle", "thread"])) == 601
    assert excerpt("short answer", ["zzz"]) == "short answer"
    assert excerpt("Préférence " + "f" * 400, ["preference"]).startswith("Préférence ")


def test_one_line_and_answer_beginning(tmp_path):
    save(tmp_path, "a", "2026-01-01T00:00:00Z", qa("where\nis the\tlighthouse?", "It is\n\nthere. " + "z" * 500))
    text = search_memory(tmp_path, "lighthouse")
    assert "\nwhere is the lighthouse?\n" in text
    assert "→ It is there. " + "z" * (160 - len("It is there. ")) + "…" in text


def test_no_hit_and_empty_query(tmp_path):
    save(tmp_path, "a", "2026-01-01T00:00:00Z", qa("tabs", "ok"))
    assert search_memory(tmp_path, "kubernetes") == NO_HIT.format(query="kubernetes", dir=tmp_path)
    assert search_memory(tmp_path, "  ") == EMPTY_QUERY == "⚠️ nothing to search: give one or more words"
    assert search_memory(tmp_path, "?!") == EMPTY_QUERY


def test_limit_and_max_output(tmp_path):
    for i in range(60):
        save(tmp_path, f"s{i:02d}", f"2026-01-01T00:{i:02d}:00Z", qa(f"tabs {i}", "ok"))
    assert len(hits(tmp_path, "tabs")) == 10
    assert len(hits(tmp_path, "tabs", limit=0)) == 10
    assert len(hits(tmp_path, "tabs", limit=3)) == 3
    assert len(hits(tmp_path, "tabs", limit=99)) == 50
    text = search_memory(tmp_path, "tabs", limit=50, max_output=500)
    assert len(text) <= 500 and "more hit(s) not shown: the output is limited to maxOutput (500 characters)" in text


def corpus(d: Path, seed: int, index: bool) -> None:
    rng = random.Random(seed)
    words = "tabs spaces golang préférence lighthouse keeper amber lamp de go config".split()
    for i in range(40):
        messages = []
        for _ in range(rng.randint(1, 4)):
            messages += qa(" ".join(rng.sample(words, 3)), " ".join(rng.sample(words, 2)))
        save(d, f"s{i:02d}", f"2026-01-{1 + i % 9:02d}T00:00:00Z", messages, index=index)


def test_index_and_scan_give_the_same_hits(tmp_path):
    corpus(tmp_path, 5, index=True)
    assert (tmp_path / INDEX_NAME).exists()
    for query in ["tabs", "preference lamp", "go", "keeper config golang", "ee"]:
        words = query_words(query)
        by_index = [(h.session.id, h.unit.pos, h.score) for h in find_hits(tmp_path, words)]
        by_scan = [(h.session.id, h.unit.pos, h.score) for h in find_hits(tmp_path, words, use_index=False)]
        assert by_index == by_scan and by_index


def test_stale_or_missing_index_falls_back_to_the_files(tmp_path):
    save(tmp_path, "a", "2026-01-01T00:00:00Z", qa("tabs", "ok"))
    save(tmp_path, "a", "2026-01-02T00:00:00Z", qa("walrus", "ok"), index=False)  # behind the index's back
    assert hits(tmp_path, "walrus") == [("a", 1, "question")] and hits(tmp_path, "tabs") == []
    save(tmp_path, "b", "2026-01-03T00:00:00Z", qa("walrus too", "ok"), index=False)
    (tmp_path / "a.json").unlink()
    assert hits(tmp_path, "walrus") == [("b", 1, "question")]
    (tmp_path / INDEX_NAME).write_bytes(b"not a database" * 100)
    assert hits(tmp_path, "walrus") == [("b", 1, "question")]
    for p in tmp_path.glob(INDEX_NAME + "*"):
        p.unlink()
    assert hits(tmp_path, "walrus") == [("b", 1, "question")] and (tmp_path / INDEX_NAME).exists()


def test_index_damaged_inside_falls_back_to_the_files(tmp_path):
    """An index that opens but whose FTS data is damaged: the files are read instead."""
    import sqlite3

    save(tmp_path, "a", "2026-01-01T00:00:00Z", qa("walrus", "ok"))
    conn = sqlite3.connect(tmp_path / INDEX_NAME)
    conn.execute("UPDATE texts_data SET block = x'ffffffff' WHERE id > 10")  # the terms' segments
    conn.commit()
    conn.close()
    assert hits(tmp_path, "walrus") == [("a", 1, "question")]


def test_unreadable_session_is_skipped(tmp_path):
    save(tmp_path, "a", "2026-01-01T00:00:00Z", qa("tabs", "ok"))
    (tmp_path / "broken.json").write_text("{")
    assert hits(tmp_path, "tabs") == [("a", 1, "question")]


def test_memory_settings_in_defaults():
    cfg = agent_config_adapter().validate_python({"sessions": {"enabled": True, "autoSearchMemory": True}})
    assert cfg.sessions.autoSearchMemory and cfg.sessions.searchMemory
    assert Settings().max_output > 0


def test_fresh_files_are_answered_from_the_index(tmp_path):
    """Same size and mtime: the index is trusted, the file is not read (only the hit shown is)."""
    path = save(tmp_path, "a", "2026-01-01T00:00:00Z", qa("walrus", "ok"))
    st = path.stat()
    path.write_text(path.read_text().replace("walrus", "narwhl"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert [(h.session.id, h.unit.pos) for h in find_hits(tmp_path, ["walrus"])] == [("a", 1)]
    assert find_hits(tmp_path, ["walrus"], use_index=False) == []


def test_windowed_index_search_equals_a_full_scan(tmp_path):
    """Over 64 files, the index is read in windows and may stop early: same first hits as a scan,
    whether update times follow the saving order or not."""
    rng = random.Random(11)
    words = "tabs spaces golang lighthouse keeper amber".split()
    for i in range(200):
        minute = i if i % 3 else rng.randint(0, 199)  # mostly in saving order, some not
        messages = []
        for _ in range(rng.randint(1, 3)):
            messages += qa(" ".join(rng.sample(words, 2)), " ".join(rng.sample(words, 1)))
        save(tmp_path, f"s{i:03d}", f"2026-01-01T{minute // 60:02d}:{minute % 60:02d}:00Z", messages)
    for query in ["tabs", "tabs golang", "keeper amber spaces", "lighthouse", "golang zzzqq", "go ta"]:
        for limit in (1, 10, 50):
            w = query_words(query)
            by_index = [(h.session.id, h.unit.pos, h.score) for h in find_hits(tmp_path, w, limit=limit)]
            by_scan = [(h.session.id, h.unit.pos, h.score) for h in find_hits(tmp_path, w, use_index=False,
                                                                             limit=limit)]
            assert by_index == by_scan and len(by_index) == limit


WIDE = {"tabs": 0.5, "spaces": 0.4, "golang": 0.3,  # common: more than PROBE units each
        "amber": 0.21, "lamp": 0.21, "keeper": 0.21, "okapi": 0.21, "zebra": 0.21,  # rare, if not by much
        "lighthouse": 0.005, "préférence": 0.01, "de": 0.3}


def wide_corpus(d: Path, files: int = 200) -> list[list[dict]]:
    """About 8,000 units: words common enough to be read window by window, rare ones read whole,
    pairs, several answers a turn, summaries; update times mostly in saving order. Returns each
    file's messages."""
    rng = random.Random(3)

    def text() -> str:  # some end with a rare short word: a text's last characters count too
        end = rng.choice(("q", " qz", "")) if rng.random() < 0.02 else ""
        return " ".join([w for w, p in WIDE.items() if rng.random() < p] + ["x"]) + "." + end

    histories = []
    for i in range(files):
        messages = []
        for _ in range(rng.randint(12, 28)):
            if rng.random() < 0.05:
                messages += [{"role": "user", "content": "Summary:\n" + text(), "summary": True},
                             {"role": "assistant", "content": "Understood."}]
            messages.append({"role": "user", "content": text()})
            messages += [{"role": "assistant", "content": text()} for _ in range(rng.choice((0, 1, 1, 2)))]
        minute = i if i % 4 else rng.randint(0, files)
        save(d, f"w{i:03d}", f"2026-02-{1 + minute // 1440:02d}T{minute // 60 % 24:02d}:{minute % 60:02d}:00Z",
             messages, index=False)
        histories.append(messages)
    return histories


def test_wide_index_search_equals_a_full_scan(tmp_path):
    """Common words, rare ones, many rare ones together, short words (rare ones found through the
    trigrams, at a text's end too; common; absent), pairs holding more words than the first
    windows' hits, and the conversation in progress left out: the first hits are the scan's."""
    from mm.sessions.index import open_index
    from mm.sessions.indexed import PROBE
    from mm.sessions.search import build_index

    histories = wide_corpus(tmp_path)
    assert build_index(tmp_path) == 200
    conn = open_index(tmp_path)
    counts = {w: conn.execute("SELECT count(*) FROM texts WHERE texts MATCH ?", (f'"{w}"',)).fetchone()[0]
              for w in query_words(" ".join(WIDE)) if len(w) >= 3}
    conn.close()
    assert min(counts["tabs"], counts["spaces"], counts["golang"]) > PROBE
    mid = [counts[w] for w in ("amber", "lamp", "keeper", "okapi", "zebra")]
    assert max(mid) < PROBE < sum(mid)
    queries = ["tabs", "tabs spaces golang", "tabs lighthouse", "lighthouse preference", "golang zzzqq",
               "amber lamp keeper okapi zebra", "amber lamp keeper okapi zebra tabs spaces", "okapi lighthouse",
               "de", "de x", "xq", "qz", "q", "qz de", "q qz xq", " ".join(WIDE)]
    skipping = [SYSTEM] + histories[-1] + histories[7][:9]
    for query, current in [(q, None) for q in queries] + [(q, skipping) for q in queries[1:12:2]]:
        w = query_words(query)
        by_scan = [(h.session.id, h.unit.pos, h.score) for h in find_hits(tmp_path, w, current, use_index=False)]
        for limit in (1, 10, 50):
            by_index = [(h.session.id, h.unit.pos, h.score) for h in find_hits(tmp_path, w, current, limit=limit)]
            assert by_index == by_scan[:limit], (query, limit, current is None)
    for query in ("tabs lighthouse", "qz de"):
        assert search_memory(tmp_path, query, current=skipping, limit=50) == \
            search_memory(tmp_path, query, current=skipping, limit=50, use_index=False)


def test_wide_index_with_stale_and_vanished_files_equals_a_full_scan(tmp_path):
    """Files changed behind the index's back (one of the newest, one of the oldest, one made
    newest of all) are read instead, a removed one is forgotten: same hits as the scan."""
    from mm.sessions.search import build_index

    wide_corpus(tmp_path)
    build_index(tmp_path)
    save(tmp_path, "w199", "2026-02-01T03:00:00Z", qa("tabs lighthouse okapi", "spaces de"), index=False)
    save(tmp_path, "w003", "2026-01-01T00:00:00Z", qa("lighthouse préférence qz", "tabs"), index=False)
    save(tmp_path, "w100", "2026-03-01T00:00:00Z", qa("golang amber", "lighthouse keeper"), index=False)
    (tmp_path / "w150.json").unlink()
    for query in ("tabs", "lighthouse", "tabs lighthouse okapi", "qz", "amber lamp keeper okapi zebra tabs spaces"):
        w = query_words(query)
        by_scan = [(h.session.id, h.unit.pos, h.score) for h in find_hits(tmp_path, w, use_index=False)]
        for limit in (1, 10, 50):
            by_index = [(h.session.id, h.unit.pos, h.score) for h in find_hits(tmp_path, w, limit=limit)]
            assert by_index == by_scan[:limit], (query, limit)
        assert "w150" not in {s for s, _pos, _score in by_scan}


def test_the_notes_mm_appends_to_a_question_are_not_searched(tmp_path):
    """A `$skill` prompt carries mm's note on a line of its own: the note is mm's, not the
    user's (mm-tools.md §search_memory, Not searched: mm's own notes `[mm: …`)."""
    from mm.skills import SKILL_NOTE

    asked = "$greetings the team\n" + SKILL_NOTE.format(name="greetings")
    for index in (True, False):
        d = tmp_path / str(index)
        d.mkdir()
        save(d, "20260901-090000-aaaaaaaa", "2026-09-01T09:00:00+00:00", qa(asked, "Hello, team!"), index=index)
        assert hits(d, "follow read_skill", use_index=index) == []
        assert hits(d, "greetings team", use_index=index) == [("20260901-090000-aaaaaaaa", 1, "question")]
