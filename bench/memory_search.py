"""Memory search over 10,000 session files (~500 MB): the index against `grep -rli`.

Run: .venv/bin/python bench/memory_search.py [files] [kb_per_file]   (default 10000 50)

Generates the sessions in a temporary directory (questions and answers from a small vocabulary,
tool outputs making up most of the bytes, as in coding sessions), builds the index
(mm.sessions.search.build_index), then times `search_memory` (the tool's whole work: 10 hits,
excerpts included) for rare, common and short words, one search without the index (every file
read), and `grep -rli` of the same words in the same run.
Target (the brief): under a second per indexed search.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from mm.sessions.search import build_index, find_hits, search_memory
from mm.sessions.store import session_record, write_session
from mm.sessions.units import query_words

VOCAB = ("python test config file error module import function class return value list string "
         "server client request response session index search memory token model window build "
         "deploy docker kernel thread async await queue cache lock commit branch merge review").split()
# rare, accented, common, common pairs, a common and a rare word, an absent word among common ones,
# three words that rarely meet (the index is read to the end), absent, short
QUERIES = ["lighthouse", "préférence", "deploy", "cache kernel", "deploy lighthouse", "cache kernel thread zzyzx",
           "deploy lighthouse préférence", "zzyzx", "ab"]


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(n)).capitalize() + "."


def make_session(rng: random.Random, i: int, size: int) -> dict:
    """A session of about `size` bytes: turns of question, tool call, tool output, answer; the
    i-th session is updated i minutes after the first (sessions are saved in time order)."""
    messages = [{"role": "system", "content": "You are mm."}]
    while sum(len(m.get("content") or "") for m in messages) < size:
        q = sentence(rng, 12) + (" Where is the lighthouse keeper?" if rng.random() < 0.001 else "")
        messages += [
            {"role": "user", "content": q + (" Ma préférence." if rng.random() < 0.01 else "")},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {
                "name": "read_file", "arguments": '{"path": "src/app.py"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "\n".join(sentence(rng, 10) for _ in range(40))},
            {"role": "assistant", "content": " ".join(sentence(rng, 15) for _ in range(3))},
        ]
    stamp = (datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(minutes=i)).isoformat()
    return session_record(id=f"20260101-{i:06d}-00000000", messages=messages, created=stamp, updated=stamp)


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def main() -> None:
    files = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    kb = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        took, _ = timed(lambda: [write_session(d / f"{i}.json", make_session(rng, i, kb * 1000), index=False)
                                 for i in range(files)])
        total = sum(p.stat().st_size for p in d.glob("*.json"))
        print(f"generated {files} files, {total / 1e6:.0f} MB in {took:.1f} s")
        took, n = timed(lambda: build_index(d))
        size = sum(p.stat().st_size for p in d.glob(".index.sqlite*"))
        print(f"index built: {n} files in {took:.1f} s, {size / 1e6:.0f} MB")
        for query in QUERIES:
            words = query_words(query)
            t_index, _ = timed(lambda: search_memory(d, query))  # the tool's whole work: 10 hits shown
            hits = find_hits(d, words)
            t_grep, _ = timed(lambda: subprocess.run(["grep", "-rli", *sum((["-e", w] for w in words), []), tmp],
                                                     capture_output=True))
            print(f"{query!r:14} {len(hits):6} matching unit(s)  search {t_index * 1000:7.0f} ms   grep -rli "
                  f"{t_grep * 1000:7.0f} ms   ratio {t_index / t_grep:5.2f}")
        scan, hits = timed(lambda: find_hits(d, query_words("lighthouse"), use_index=False))
        print(f"without the index (every file read): 'lighthouse' {len(hits)} hit(s) in {scan:.1f} s")
        os.sync()


if __name__ == "__main__":
    main()
