"""A memory search answered from the index (mm.sessions.index; docs/sessions.md §Index).

The first `limit` hits are found without scoring every unit that holds a word: files are read in
windows, newest first, until no pair left can rank before the `limit`-th hit; when that hit holds
fewer words than a pair left could, the pairs left holding more are found from the rarest words
(see _check). Rare words (fewer than PROBE units) are read once, whole; common ones window by
window. Files the index does not know, or whose mtime or size changed, are read and matched
(mm.sessions.hits.scan_file), then re-indexed.
"""

from __future__ import annotations

import bisect
import os
from pathlib import Path

from mm.sessions.hits import Hit, Matches, Session, Top, order_of, scan_file

PROBE = 2048  # ids read to tell a rare word (fewer: they are all of its units) from a common one
FIRST_WINDOW = 32  # files read first (then doubling)


def prepare(found: Matches, conn, directory: Path, words: list[str]) -> dict:
    """Sort the files of `directory` (one `os.scandir`): fresh ones (same mtime and size as
    indexed) get a session number; the others are read, matched and re-indexed, oldest first.
    Returns {session number: (file id, lowest unit id, highest unit id)} for the fresh ones."""
    from mm.sessions.index import known_files

    known = known_files(conn)
    fresh, stale, seen = {}, [], set()
    sessions = found.sessions
    prefix = os.path.join(directory, "")
    try:
        with os.scandir(directory) as entries:
            listed = [e for e in entries if e.name.endswith(".json") and not e.name.startswith(".")]
    except OSError:  # as load.session_paths: no directory, no sessions
        listed = []
    for entry in listed:
        name = entry.name
        seen.add(name)
        try:
            st = entry.stat()
        except OSError:
            continue
        row = known.get(name)
        if row is not None and row[0] == st.st_mtime_ns and row[1] == st.st_size:
            fresh[len(sessions)] = (row[3], row[7], row[8])
            sessions.append(Session(row[4], row[5], row[6], prefix + name))
        else:
            stale.append((st.st_mtime_ns, prefix + name))
    for _mtime, path in sorted(stale):  # the newest get the highest unit ids (see _windows)
        scanned = scan_file(found, path, words)
        if scanned is not None:
            session, record, st = scanned
            _reindex(conn, Path(path), st, record, session)
    _forget_vanished(conn, [row[3] for name, row in known.items() if name not in seen])
    return fresh


def from_index(found: Matches, conn, fresh: dict, words: list[str], skip: set[str],
                limit: int | None) -> list[Hit]:
    """The first `limit` hits: those of the files read (`found`), then the index's (see _windows).

    Each word is first asked for its PROBE highest ids (a word under three letters: see
    index.short_ids): fewer means a *rare* word, all of whose units are then known; for the others
    the ids' spread gives an estimate of how many units hold them."""
    from mm.sessions.index import short_ids, skipped_ids, word_ids

    top = Top(found, skip, order_of(found.sessions), limit)
    top.add(found.units)
    files = _Files(conn, fresh, skipped_ids(conn, skip))
    known, many = {}, {}  # word index -> all its unit ids (ascending) / about how many units hold it
    highest = max((span[1] for span in files.spans), default=0)
    if limit is not None:
        for i, word in enumerate(words):
            if len(word) >= 3:
                ids = word_ids(conn, word, at_most=PROBE)
                if len(ids) < PROBE:
                    known[i] = ids[::-1]
                else:
                    many[i] = PROBE * highest / max(1, ids[0] - ids[-1] + 1)
        short = [i for i, word in enumerate(words) if len(word) < 3]
        for n, ids in short_ids(conn, [words[i] for i in short], PROBE).items() if short else ():
            known[short[n]] = ids
    for i in range(len(words)):
        many[i] = len(known[i]) if i in known else many.get(i, highest)  # a common short word: all
    _windows(top, files, words, known, many)
    return top.hits()


class _Files:
    """The fresh files as the index knows them: which holds a unit id, their layouts (read when
    first needed), the units left out (`skipped`) and those scored already (`done`)."""

    def __init__(self, conn, fresh: dict, skipped: set[int]):
        self.conn, self.skipped, self.done = conn, skipped, set()
        self.spans = sorted((lo, hi, sno, fid) for sno, (fid, lo, hi) in fresh.items() if hi >= lo)
        self.los = [span[0] for span in self.spans]
        self.layouts: dict = {}

    def span(self, uid: int) -> tuple | None:
        """(lowest id, highest id, session number, file id) of the fresh file holding `uid`; None
        for a unit of a file read instead."""
        at = bisect.bisect_right(self.los, uid) - 1
        return self.spans[at] if at >= 0 and uid <= self.spans[at][1] else None

    def load(self, spans) -> None:
        """Read the layouts of the files `spans` that are not read yet."""
        from mm.sessions.index import read_layouts

        missing = {span[3] for span in spans} - self.layouts.keys()
        if missing:
            self.layouts.update(read_layouts(self.conn, missing))

    def partner(self, uid: int, span: tuple) -> int | None:
        """The other half of `uid`'s pair (None: no pair, or that half is left out)."""
        lay, at = self.layouts.get(span[3]), 4 * (uid - span[0]) + 3
        other = lay[at] if lay is not None and at < len(lay) else -1
        return None if other < 0 or span[0] + other in self.skipped else span[0] + other

    def postings(self, word: str, ids: tuple[int, int], known: list[int] | None) -> list[int]:
        """The units within `ids` (lowest, highest) holding `word`: a slice of `known` (all of
        them, ascending) when given, else from the index."""
        from mm.sessions.index import short_masks, word_ids

        if known is not None:
            return known[bisect.bisect_left(known, ids[0]):bisect.bisect_right(known, ids[1])]
        if len(word) < 3:
            return [uid for uid, _mask in short_masks(self.conn, [word], ids)]
        return word_ids(self.conn, word, ids)


def _pairs(top: Top, files: _Files, masks: dict) -> None:
    """Rank the units of `masks` (unit id → mask of the words held; every pair whole: a half
    missing holds no word), as _Top.add does, from the layouts: a question carries its final
    answer's words, a final answer whose question holds a word is no hit of its own. Units whose
    best key cannot beat the `limit`-th hit's are dropped at once."""
    from mm.sessions.index import ANSWER, FINAL, KINDS, SUMMARY

    last = top.last()
    bar = last[:3] if last is not None else None
    spans, skipped, layouts, sessions = files.spans, files.skipped, files.layouts, top.sessions
    keyed, at_span, count = [], 0, len(spans)
    for uid in sorted(masks):  # the spans in step: no search per unit
        mask = masks[uid]
        if not mask or uid in skipped:
            continue
        while at_span < count and spans[at_span][1] < uid:
            at_span += 1
        if at_span == count:
            break
        lo, _hi, sno, fid = spans[at_span]
        if uid < lo:
            continue  # a unit of a file read instead
        lay, at = layouts.get(fid), 4 * (uid - lo)
        if lay is None or len(lay) < at + 4:
            continue  # a file saved again since its stat was taken
        kind, other = lay[at], lay[at + 3]
        if other >= 0 and kind != ANSWER and kind != SUMMARY and lo + other not in skipped:
            held = masks.get(lo + other, 0)
            if held and kind == FINAL:
                continue  # its question carries it
            mask |= held
        score = mask.bit_count()
        if bar is not None and -score > bar[0]:
            continue
        head = (-score, *sessions[sno])
        if bar is not None and head > bar:
            continue
        turn, pos = lay[at + 1], lay[at + 2]
        keyed.append(((*head, -turn, pos, (0, uid)), (sno, KINDS[kind], turn, pos, kind == FINAL, None)))
    top.push(keyed)


def _windows(top: Top, files: _Files, words: list[str], known: dict, many: dict) -> None:
    """Score the units of the fresh files window by window of unit ids, highest first (the most
    recently saved sessions, usually the newest), leaving out those scored already, until nothing
    left can rank before the `limit`-th hit: it holds more words than any pair left can (`bound`:
    every word some unit holds; after _check, the `limit`-th hit's own count), or as many and is
    newer than every file left. When that hit holds fewer than `bound` words, _check finds the
    pairs left that hold more, once its cost (the units of the rarest words left) has fallen
    under twice the next window's."""
    spans = files.spans[::-1]  # highest ids first
    newest_left = [float("-inf")] * (len(spans) + 1)
    for i in range(len(spans) - 1, -1, -1):
        newest_left[i] = max(newest_left[i + 1], top.found.sessions[spans[i][2]].updated_at)
    present = [i for i in range(len(words)) if known.get(i, True)]
    bound, checked, highest = len(present), False, max(1, spans[0][1]) if spans else 1
    start, size = 0, len(spans) if top.limit is None else FIRST_WINDOW
    while start < len(spans):
        last = top.last()
        if last is not None and (-last[0] > bound or (-last[0] == bound and -last[1] > newest_left[start])):
            return
        end = min(len(spans), start + size)
        ids = (spans[end - 1][0], spans[start][1])
        if last is not None and not checked and -last[0] < bound:
            held = -last[0]
            left = (spans[-1][0], spans[start][1])
            rarest = sorted(many[i] for i in present)[:len(present) - held]
            share = (left[1] - left[0] + 1) / highest, (ids[1] - ids[0] + 1) / highest
            if sum(rarest) * share[0] <= 2 * sum(many[i] for i in present) * share[1]:
                _check(top, files, words, known, many, present, held, left)
                bound, checked = held, True
                continue
        masks = {}
        for i in present:
            bit = 1 << i
            for uid in files.postings(words[i], ids, known.get(i)):
                masks[uid] = masks.get(uid, 0) | bit
        for uid in files.done.intersection(masks):
            del masks[uid]
        if masks:
            files.load(spans[start:end])
            _pairs(top, files, masks)
        start, size = end, size * 2


def _check(top: Top, files: _Files, words: list[str], known: dict, many: dict, present: list[int],
           held: int, ids: tuple[int, int]) -> None:
    """Score every pair within `ids` that holds more than `held` of the words `present` (and is
    not scored already). Such a pair holds one of any len(present) - held of them: the rarest are
    read; the others are then looked up, rarest first, for the pairs that can still get there
    only — in the index, or in these pairs' texts once they have fewer units than a quarter of
    the word's ids."""
    from mm.sessions.index import texts_of

    order = sorted(present, key=lambda i: many[i])
    first, then = order[:len(order) - held], order[len(order) - held:]
    found: dict[int, int] = {}
    for i in first:
        bit = 1 << i
        for uid in files.postings(words[i], ids, known.get(i)):
            found[uid] = found.get(uid, 0) | bit
    files.load(span for span in files.spans if span[1] >= ids[0] and span[0] <= ids[1])
    pairs: dict[int, list] = {}  # the pair's first unit -> [mask of the words held, its units]
    for uid, mask in found.items():
        span = files.span(uid)
        if span is None or uid in files.skipped or uid in files.done:
            continue
        other = files.partner(uid, span)
        head = uid if other is None or other > uid else other
        pair = pairs.get(head)
        if pair is None:
            pairs[head] = [mask, (uid,) if other is None else (head, max(uid, other))]
        else:
            pair[0] |= mask
    texts = None
    share = (ids[1] - ids[0] + 1) / max(1, files.spans[-1][1])
    for n, i in enumerate(then):
        need = held + 1 - (len(then) - n)  # words a pair must hold already to get there
        if need > 0:
            pairs = {h: pair for h, pair in pairs.items() if pair[0].bit_count() >= need}
        if not pairs:
            return
        bit, word = 1 << i, words[i]
        if texts is None and i not in known and 4 * sum(len(p[1]) for p in pairs.values()) < many[i] * share:
            texts = texts_of(files.conn, [u for pair in pairs.values() for u in pair[1]])
        if texts is not None:
            for pair in pairs.values():
                if any(word in texts.get(u, "") for u in pair[1]):
                    pair[0] |= bit
        else:
            got = set(files.postings(word, ids, known.get(i)))
            for pair in pairs.values():
                if not got.isdisjoint(pair[1]):
                    pair[0] |= bit
    units = [u for mask, us in pairs.values() if mask.bit_count() > held for u in us]
    if units:  # which half holds which words: from the texts (few pairs)
        texts = texts_of(files.conn, units)
        masks = {u: sum(1 << i for i in present if words[i] in texts.get(u, "")) for u in units}
        files.done.update(masks)
        _pairs(top, files, masks)


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


def _forget_vanished(conn, gone: list[int]) -> None:
    """Remove the files `gone` (ids of the index) from the index (best effort)."""
    import sqlite3

    from mm.sessions.index import forget_file

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
