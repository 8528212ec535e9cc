"""Memory search over 10,000 session files (~600 MB): the index against `grep -rli`.

Run: .venv/bin/python bench/memory_search.py [files] [kb_per_file] [--dir DIR]   (default 10000 50)

Generates the sessions (questions and answers from a small vocabulary, tool outputs making up
most of the bytes, as in coding sessions), builds the index (mm.sessions.search.build_index),
then times `search_memory` (the tool's whole work, excerpts included: 10 hits, run twice, then 50
hits) for each query shape of QUERIES, and `grep -rli` of the same words in the same run; last,
one search without the index (every file read).
Without `--dir` the sessions are generated in a temporary directory, removed at the end; with
it, in DIR when it holds none, else DIR's are reused with their index (delete DIR when done:
~600 MB). Target (the brief): under a second for every indexed search.
"""

from __future__ import annotations

import os
import random
import shutil
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
# three words that rarely meet (one common, two rare), absent, short; then: three rare words that
# never meet, accents in capitals, three common words, twelve common words, exactly three letters
# (rare, then common), short words beside a long one (left out), one letter (every unit holds
# it), short words alone (common and rare), a rare and a common trigram, ten absent short words
QUERIES = ["lighthouse", "préférence", "deploy", "cache kernel", "deploy lighthouse", "cache kernel thread zzyzx",
           "deploy lighthouse préférence", "zzyzx", "ab",
           "lighthouse préférence zzyzx", "MA PRÉFÉRENCE", "python test config",
           "python test config file error module import function class return value list",
           "the", "ess", "a de lighthouse", "e", "is ma", "the ess", "ab xq zj qk vb wx jj kq zx qz"]


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
    args = sys.argv[1:]
    where = None
    if "--dir" in args:
        at = args.index("--dir")
        where = Path(args[at + 1])
        del args[at:at + 2]
    if args[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return
    files = int(args[0]) if args else 10_000
    kb = int(args[1]) if len(args) > 1 else 50
    if where is None:
        with tempfile.TemporaryDirectory() as tmp:
            run(Path(tmp), files, kb)
    else:
        where.mkdir(parents=True, exist_ok=True)
        run(where, files, kb)


def run(d: Path, files: int, kb: int) -> None:
    rng = random.Random(7)
    if not any(d.glob("*.json")):
        took, _ = timed(lambda: [write_session(d / f"{i}.json", make_session(rng, i, kb * 1000), index=False)
                                 for i in range(files)])
        total = sum(p.stat().st_size for p in d.glob("*.json"))
        print(f"generated {files} files, {total / 1e6:.0f} MB in {took:.1f} s")
    else:
        total = sum(p.stat().st_size for p in d.glob("*.json"))
        print(f"reusing {len(list(d.glob('*.json')))} files, {total / 1e6:.0f} MB in {d}")
    took, n = timed(lambda: build_index(d))
    size = sum(p.stat().st_size for p in d.glob(".index.sqlite*"))
    print(f"index built or checked: {n} files in {took:.1f} s, {size / 1e6:.0f} MB")
    grep = shutil.which("grep") or "grep"
    worst = 0.0
    for query in QUERIES:
        words = query_words(query)
        t_index, _ = timed(lambda: search_memory(d, query))  # the tool's whole work: 10 hits shown
        t_again, _ = timed(lambda: search_memory(d, query))
        t_50, _ = timed(lambda: search_memory(d, query, limit=50))
        matching = len(find_hits(d, words))  # not kept: no garbage left for the next search's collector
        t_grep, _ = timed(lambda: subprocess.run([grep, "-rli", *sum((["-e", w] for w in words), []), str(d)],
                                                 capture_output=True))
        worst = max(worst, t_index, t_again, t_50)
        print(f"{query[:32]!r:34} {matching:6} unit(s)  search {t_index * 1000:5.0f} ms (again {t_again * 1000:5.0f}, "
              f"50 hits {t_50 * 1000:5.0f})  grep -rli {t_grep * 1000:5.0f} ms  ratio {t_index / t_grep:5.2f}")
    print(f"worst indexed search: {worst * 1000:.0f} ms (target: under 1000 ms)")
    scan, hits = timed(lambda: find_hits(d, query_words("lighthouse"), use_index=False))
    print(f"without the index (every file read): 'lighthouse' {len(hits)} hit(s) in {scan:.1f} s")
    os.sync()


if __name__ == "__main__":
    main()
