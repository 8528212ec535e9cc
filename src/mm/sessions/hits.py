"""The hits of a memory search and their order (mm-tools.md §search_memory, Order), shared by
the scan of every file and the search through the index (mm.sessions.indexed)."""

from __future__ import annotations

import heapq
import os
from dataclasses import dataclass, field
from pathlib import Path

from mm.sessions.load import SessionError, read_record, timestamp
from mm.sessions.units import normalize, units_of


@dataclass
class Candidate:
    """A unit of a hit: its kind (question|answer|summary), turn, message index and key."""

    kind: str
    turn: int
    pos: int
    final: bool
    key: str | None


@dataclass(slots=True)
class Session:
    """A session file as the search knows it; `where` is its path as text (a Path is made only
    for the files a hit is shown from)."""

    id: str
    updated: str
    updated_at: float
    where: str

    @property
    def path(self) -> Path:
        """The session file."""
        return Path(self.where)


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
    held (bit i: words[i])]. The units of a file are all there or none (a pair is never split)."""

    sessions: list[Session] = field(default_factory=list)
    units: dict = field(default_factory=dict)


def rank(found: Matches, skip: set[str], limit: int | None = None) -> list[Hit]:
    """The hits minus units whose key is in `skip`, ordered by distinct words held, then the
    session's last update (newest first), then turn (latest first). A matching question carries
    its turn's final answer: that answer is no hit of its own, its words count."""
    top = Top(found, skip, order_of(found.sessions), limit)
    top.add(found.units)
    return top.hits()


def order_of(sessions: list[Session]) -> dict[str, int]:
    """Session id → its rank among the ids (equal updates: the highest id first)."""
    return {sid: n for n, sid in enumerate(sorted({s.id for s in sessions}))}


class Top:
    """The `limit` best hits (all with None) of the batches of units added, by ranking key:
    (-score, -update, -id rank, -turn, pos, tie-break). A batch holds whole pairs (see Matches)."""

    def __init__(self, found: Matches, skip: set[str], order: dict[str, int], limit: int | None):
        self.found, self.skip, self.limit, self.items = found, skip, limit, []
        self.sessions = [(-s.updated_at, -order[s.id]) for s in found.sessions]

    def add(self, units: dict) -> None:
        """Rank the hits of `units` (found.units' format) among those kept."""
        skip = self.skip
        live = {u: e for u, e in units.items() if e[5] not in skip} if skip else units
        finals, asked = {}, set()
        for e in live.values():
            if e[1] == "answer" and e[4]:
                finals[(e[0], e[2])] = e[6]
            elif e[1] == "question" and e[6]:
                asked.add((e[0], e[2]))
        keyed = []
        for uid, e in live.items():
            sno, kind, turn, pos, final, key, mask = e
            if not mask:
                continue
            if kind == "question":
                mask |= finals.get((sno, turn), 0)
            elif final and kind == "answer" and (sno, turn) in asked:
                continue
            tie = (1, *uid) if isinstance(uid, tuple) else (0, uid)
            keyed.append(((-mask.bit_count(), *self.sessions[sno], -turn, pos, tie),
                          (sno, kind, turn, pos, final, key)))
        self.push(keyed)

    def push(self, keyed: list) -> None:
        """Keep the best of the hits kept and of `keyed`: (key, (session number, kind, turn, pos,
        final, unit key)) pairs."""
        items = self.items + keyed
        self.items = heapq.nsmallest(self.limit, items) if self.limit is not None else sorted(items)

    def last(self) -> tuple | None:
        """The key of the `limit`-th hit; None while fewer are kept (or without a limit)."""
        return self.items[-1][0] if self.limit is not None and len(self.items) == self.limit else None

    def hits(self) -> list[Hit]:
        return [Hit(self.found.sessions[e[0]], Candidate(e[1], e[2], e[3], bool(e[4]), e[5]), -key[0])
                for key, e in self.items]


def scan_file(found: Matches, path: str, words: list[str]) -> tuple[Session, dict, os.stat_result] | None:
    """Read one file and add its units that hold a word to `found`; returns (its Session, its
    record, its stat) for re-indexing, or None when it cannot be read as a session."""
    try:
        st = os.stat(path)
        record = read_record(Path(path))
    except (OSError, SessionError):
        return None
    updated = record.get("updated") if isinstance(record.get("updated"), str) else ""
    session = Session(str(record.get("id") or Path(path).stem), updated, timestamp(updated, Path(path)), path)
    sno = len(found.sessions)
    found.sessions.append(session)
    messages = record.get("messages")
    for u in units_of(messages if isinstance(messages, list) else []):
        norm = normalize(u.text)
        mask = sum(1 << bit for bit, w in enumerate(words) if w in norm)
        if mask or (u.kind == "answer" and u.final):
            found.units[(sno, u.pos)] = [sno, u.kind, u.turn, u.pos, u.final, u.key, mask]
    return session, record, st
