"""Memory search over past sessions: the `search_memory` tool and `/memory <words>`
(mm-tools.md §search_memory; decisions in docs/sessions.md).

`search_memory(directory, query, …)` returns the text the model or the user reads. Fresh files
are searched through the index (mm.sessions.index); files the index does not know, or whose
mtime or size changed, are read and matched here, then re-indexed.
"""

from __future__ import annotations

import heapq
import os
from dataclasses import dataclass, field
from pathlib import Path

from mm.sessions.excerpt import format_result
from mm.sessions.load import SessionError, read_record, session_paths, timestamp
from mm.sessions.units import normalize, query_words, units_of

DEFAULT_LIMIT, MAX_LIMIT = 10, 50  # mm-tools.md §search_memory, limit


@dataclass
class Candidate:
    """A unit of a hit: its kind (question|answer|summary), turn, message index and key."""

    kind: str
    turn: int
    pos: int
    final: bool
    key: str


@dataclass
class Session:
    """A session file as the search knows it."""

    id: str
    updated: str
    updated_at: float
    path: Path


@dataclass
class Hit:
    """One hit: the session, the unit and its score (distinct words held)."""

    session: Session
    unit: Candidate
    score: int


@dataclass
class Matches:
    """What a search found: `sessions` by number, and `units` by id, each a list
    [session number, kind, turn, pos, final, key (None when already checked), mask of the words
    held (bit i: words[i])]."""

    sessions: list[Session] = field(default_factory=list)
    units: dict = field(default_factory=dict)


def search_memory(directory: Path, query: str, limit: int | None = None, current: list | None = None,
                  max_output: int = 12000, use_index: bool = True) -> str:
    """The result of a memory search, as mm-tools.md §search_memory gives it.

    `directory`: sessions.dir resolved against the working directory; `query`: the words;
    `limit`: hits at most (0 or None: 10, capped at 50); `current`: the messages of the
    conversation in progress, left out; `max_output` (characters) caps the text; `use_index`
    False reads every file (the scan the index must agree with).
    """
    limit = min(limit if limit and limit > 0 else DEFAULT_LIMIT, MAX_LIMIT)
    words = query_words(query)
    hits = find_hits(Path(directory), words, current, use_index, limit) if words else None
    return format_result(str(directory), query.strip(), words, hits, max_output)


def find_hits(directory: Path, words: list[str], current: list | None = None,
              use_index: bool = True, limit: int | None = None) -> list[Hit]:
    """The first `limit` hits (all with None) for the normalized `words`, in the reference's
    order (see rank). With the index, files are taken most recently indexed first, in growing
    windows, until no file left can beat the `limit`-th hit (see _windowed)."""
    skip = {u.key for u in units_of(current or [])}
    conn = None
    if use_index:
        from mm.sessions.index import open_index

        conn = open_index(directory)
    found = Matches()
    if conn is None:
        for path in session_paths(directory):
            _scan(found, path, words)
        return rank(found, skip, limit)
    try:
        fresh = _prepare(found, conn, directory, words)
        return _windowed(found, conn, fresh, words, skip, limit)
    finally:
        conn.close()


def rank(found: Matches, skip: set[str], limit: int | None = None) -> list[Hit]:
    """The hits minus units whose key is in `skip`, ordered by distinct words held, then the
    session's last update (newest first), then turn (latest first). A matching question carries
    its turn's final answer: that answer is no hit of its own, its words count."""
    live = {u: e for u, e in found.units.items() if e[5] not in skip} if skip else found.units
    finals, asked = {}, set()
    for e in live.values():
        if e[1] == "answer" and e[4]:
            finals[(e[0], e[2])] = e[6]
        elif e[1] == "question" and e[6]:
            asked.add((e[0], e[2]))
    # equal updates: the highest session id first
    order = {sid: n for n, sid in enumerate(sorted({s.id for s in found.sessions}))}
    sessions = [(-s.updated_at, -order[s.id]) for s in found.sessions]
    keys = []
    for uid, (sno, kind, turn, pos, final, _key, mask) in live.items():
        if not mask:
            continue
        if kind == "question":
            mask |= finals.get((sno, turn), 0)
        elif final and kind == "answer" and (sno, turn) in asked:
            continue
        keys.append((-mask.bit_count(), sessions[sno], -turn, pos, uid))
    top = heapq.nsmallest(limit, keys) if limit is not None else sorted(keys)
    hits = []
    for score, *_rest, uid in top:
        sno, kind, turn, pos, final, key, _mask = live[uid]
        hits.append(Hit(found.sessions[sno], Candidate(kind, turn, pos, bool(final), key), -score))
    return hits


def _prepare(found: Matches, conn, directory: Path, words: list[str]) -> dict:
    """Sort the files of `directory`: fresh ones (same mtime and size as indexed) get a session
    number; the others are read, matched and re-indexed, oldest first. Returns {session number:
    IndexedFile} for the fresh ones."""
    from mm.sessions.index import known_files

    known = known_files(conn)
    fresh = {}
    stale = []
    for path in session_paths(directory):
        try:
            st = os.stat(path)
        except OSError:
            continue
        mark = known.get(path.name)
        if mark is not None and (mark[0], mark[1]) == (st.st_mtime_ns, st.st_size):
            f = mark[2]
            fresh[len(found.sessions)] = f
            found.sessions.append(Session(f.session, f.updated, f.updated_at, path))
        else:
            stale.append((st.st_mtime_ns, path))
    for _mtime, path in sorted(stale):  # the newest get the highest unit ids (see _windowed)
        _scan(found, path, words, conn)
    _forget_vanished(conn, known, directory)
    return fresh


def _windowed(found: Matches, conn, fresh: dict, words: list[str], skip: set[str],
              limit: int | None) -> list[Hit]:
    """Rank the fresh files' matches window by window of unit ids, highest first (the most
    recently saved sessions, usually the newest). Stops once the `limit`-th hit holds every word
    the index holds and is newer than every file left: nothing left can rank before it."""
    from mm.sessions.index import matching_units, words_present

    spans = sorted(((f.hi, f.lo, sno) for sno, f in fresh.items() if f.hi >= f.lo), reverse=True)
    newest_left = [0.0] * (len(spans) + 1)
    newest_left[-1] = float("-inf")
    for i in range(len(spans) - 1, -1, -1):
        newest_left[i] = max(newest_left[i + 1], found.sessions[spans[i][2]].updated_at)
    start, size = 0, len(spans) if limit is None or not words else max(64, len(spans) // 32)
    best = None  # the highest score a unit of the index can reach, asked when first needed
    while True:
        end = min(len(spans), start + size)
        if start < end:
            window = {fresh[sno].id: sno for _hi, _lo, sno in spans[start:end]}
            ids = (spans[end - 1][1], spans[start][0])
            for uid, fid, kind, turn, pos, final, mask in matching_units(conn, words, skip, ids):
                if fid in window:  # key None: `skip` applied already
                    found.units[uid] = [window[fid], kind, turn, pos, final, None, mask]
        hits = rank(found, skip, limit)
        if end >= len(spans):
            return hits
        last = hits[-1] if limit is not None and len(hits) == limit else None
        if last is not None and last.session.updated_at > newest_left[end]:
            best = best if best is not None else words_present(conn, words)
            if last.score >= best:
                return hits
        start, size = end, size * 2


def _scan(found: Matches, path: Path, words: list[str], conn=None) -> None:
    """Read one file and match its units; with `conn`, re-index it (best effort)."""
    try:
        st = os.stat(path)
        record = read_record(path)
    except (OSError, SessionError):
        return
    updated = record.get("updated") if isinstance(record.get("updated"), str) else ""
    session = Session(str(record.get("id") or path.stem), updated, timestamp(updated, path), path)
    sno = len(found.sessions)
    found.sessions.append(session)
    messages = record.get("messages")
    for u in units_of(messages if isinstance(messages, list) else []):
        norm = normalize(u.text)
        mask = sum(1 << bit for bit, w in enumerate(words) if w in norm)
        if mask or (u.kind == "answer" and u.final):
            found.units[("scan", sno, u.pos)] = [sno, u.kind, u.turn, u.pos, u.final, u.key, mask]
    if conn is not None:
        _reindex(conn, path, st, record, session)


def _reindex(conn, path: Path, st: os.stat_result, record: dict, session: Session) -> None:
    import sqlite3

    from mm.sessions.index import store_file

    try:
        conn.execute("BEGIN IMMEDIATE")
        store_file(conn, path, st, record, session.id, session.updated, session.updated_at)
        conn.execute("COMMIT")
    except sqlite3.Error:
        if conn.in_transaction:
            conn.execute("ROLLBACK")


def _forget_vanished(conn, known: dict, directory: Path) -> None:
    import sqlite3

    from mm.sessions.index import forget_file

    gone = [m[2].id for name, m in known.items() if not (directory / name).exists()]
    if not gone:
        return
    try:
        conn.execute("BEGIN IMMEDIATE")
        for fid in gone:
            forget_file(conn, fid)
        conn.execute("COMMIT")
    except sqlite3.Error:
        if conn.in_transaction:
            conn.execute("ROLLBACK")


def build_index(directory: Path) -> int:
    """Index every stale file of `directory` now; returns how many files the index holds."""
    from mm.sessions.index import open_index

    conn = open_index(directory)
    if conn is None:
        return 0
    try:
        _prepare(Matches(), conn, Path(directory), [])
        return conn.execute("SELECT count(*) FROM files").fetchone()[0]
    finally:
        conn.close()
