"""The memory-search index: SQLite FTS5 with the trigram tokenizer at `<dir>/.index.sqlite`
(docs/sessions.md §Index).

One row per searchable unit (mm.sessions.units), holding its normalized text followed by PAD; a
phrase MATCH uses the trigram index for words of three letters or more (a word matches inside a
longer word); a shorter word is found through the trigrams that begin with it when it is rare,
by `instr` over the texts when it is common. A file's units have consecutive ids (`lo`..`hi`, in
message order), and the file's *layout* gives each one's kind, turn, message index and the other
half of its pair (a question and its turn's final answer) without a row per unit. Each indexed
file is remembered with its mtime and size: a file whose stat differs is *stale* and is read
instead (mm.sessions.search), then re-indexed.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from array import array
from pathlib import Path

from mm.sessions.units import Unit, normalize, units_of

INDEX_NAME = ".index.sqlite"
SCHEMA_VERSION = "4"  # 4: texts end with PAD, layouts replace the units' kind, turn and position
PAD = "\n\n"  # after each text: its last characters begin trigrams too (not word characters)
BUSY_TIMEOUT = 2.0  # seconds another mm process may hold the index before we give up on it
SCHEMA = """
CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY, name TEXT UNIQUE, session TEXT,
  updated TEXT, updated_at REAL, mtime_ns INTEGER, size INTEGER, lo INTEGER, hi INTEGER, layout BLOB);
CREATE TABLE IF NOT EXISTS units(id INTEGER PRIMARY KEY, file INTEGER, key TEXT);
CREATE INDEX IF NOT EXISTS units_file ON units(file);
CREATE INDEX IF NOT EXISTS units_key ON units(key);
CREATE VIRTUAL TABLE IF NOT EXISTS texts USING fts5(norm, tokenize='trigram case_sensitive 1');
"""
QUESTION, ANSWER, FINAL, SUMMARY = range(4)  # a unit's kind in a layout; FINAL: its turn's last answer
KINDS = ("question", "answer", "answer", "summary")


def open_index(directory: Path) -> sqlite3.Connection | None:
    """The index of `directory`, created when missing; None when it cannot be opened or written
    (its path, or that of its journal, is not a regular file: mm.fs.write_target). A
    corrupt index, or one of another schema version, is deleted and started again."""
    from mm.fs import write_target

    path = Path(directory) / INDEX_NAME
    try:  # a named pipe or a device there is never opened by SQLite (mm.fs)
        for suffix in ("", "-wal", "-shm"):
            write_target(f"{path}{suffix}")
    except OSError:
        return None
    for _attempt in range(2):
        conn = None
        try:
            conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # an index can be rebuilt: no fsync per commit
            conn.execute("PRAGMA temp_store=MEMORY")  # temp.ids: 50,000 ids in 80 ms, not a second
            conn.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)")
            row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is not None and row[0] != SCHEMA_VERSION:
                raise sqlite3.DatabaseError("schema version")  # before touching its tables
            conn.executescript(SCHEMA)
            if row is None:
                conn.execute("INSERT OR REPLACE INTO meta VALUES('schema', ?)", (SCHEMA_VERSION,))
            return conn
        except sqlite3.OperationalError:  # locked, read-only, no space: keep it, read the files
            _close(conn)
            return None
        except sqlite3.DatabaseError:  # not a database, or another schema: start again
            _close(conn)
            _drop(path)
        except (sqlite3.Error, OSError):
            _close(conn)
            return None
    return None


def _close(conn: sqlite3.Connection | None) -> None:
    if conn is not None:
        conn.close()


def _drop(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(f"{path}{suffix}")
        except OSError:
            pass


def known_files(conn: sqlite3.Connection) -> dict[str, tuple]:
    """name → (mtime_ns, size, name, file id, session id, `updated` (ISO text), `updated` (epoch
    seconds), lowest unit id, highest unit id (lowest - 1 without units)) for every indexed file:
    the rows as SQLite gives them (10,000 files: no object made per file)."""
    rows = conn.execute("SELECT mtime_ns, size, name, id, session, updated, updated_at, coalesce(lo, 0), "
                        "coalesce(hi, coalesce(lo, 0) - 1) FROM files")
    return {row[2]: row for row in rows}


def word_ids(conn: sqlite3.Connection, word: str, ids: tuple[int, int] | None = None,
             at_most: int | None = None) -> list[int]:
    """The ids of the indexed units whose text holds `word` (normalized, made of word characters,
    three or more: shorter ones go through short_masks), highest first; `ids` (lowest, highest)
    limits them, `at_most` caps how many. A phrase MATCH of the word's trigrams, answered from
    the index's positions: the word anywhere in the text, also inside a longer word."""
    sql = "SELECT rowid FROM texts WHERE texts MATCH ?" + (" AND rowid BETWEEN ? AND ?" if ids else "")
    sql += " ORDER BY rowid DESC" + (f" LIMIT {int(at_most)}" if at_most is not None else "")
    return [uid for (uid,) in conn.execute(sql, (f'"{word}"', *(ids or ())))]


def short_masks(conn: sqlite3.Connection, words: list[str], ids: tuple[int, int] | None = None) -> list[tuple]:
    """(unit id, mask) of every indexed unit (within `ids`) whose text holds one of `words` (of
    one or two letters), read in one pass over the texts; bit i: words[i] held. The texts are
    read from the FTS5 content table (`texts_content`: id, c0), several times faster than
    through the virtual table."""
    if not words:
        return []
    tests = [f"instr(c0, ?{n + 1})" for n in range(len(words))]
    within = f" AND id BETWEEN ?{len(words) + 1} AND ?{len(words) + 2}" if ids else ""
    rows = conn.execute(f"SELECT id, {', '.join(tests)} FROM texts_content WHERE ({' OR '.join(tests)}){within}",
                        (*words, *(ids or ())))
    return [(row[0], sum(1 << n for n, at in enumerate(row[1:]) if at)) for row in rows]


def short_ids(conn: sqlite3.Connection, words: list[str], at_most: int) -> dict[int, list[int]]:
    """{i: the ids of every unit holding words[i], ascending} for each of `words` (one or two
    letters) held by fewer than `at_most` units, without reading the texts: every character of a
    text begins one of its trigrams (the text ends with PAD), so the units holding the word are
    those of the trigrams that begin with it, which the index's vocabulary lists with their counts
    (a common word is told at once)."""
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.terms USING fts5vocab(main, 'texts', 'row')")
    found = {}
    for i, word in enumerate(words):
        terms, total = [], 0
        for term, docs in conn.execute("SELECT term, doc FROM temp.terms WHERE term >= ? AND term <= ?",
                                       (word, word + "\U0010ffff" * (3 - len(word)))):
            total += docs
            if total >= at_most:
                break
            terms.append('"' + term.replace('"', '""') + '"')
        if total < at_most:
            found[i] = sorted({uid for (uid,) in conn.execute(
                "SELECT rowid FROM texts WHERE texts MATCH ?", (" OR ".join(terms),))}) if terms else []
    return found


def layout_of(units: list[Unit]) -> bytes:
    """The layout of a file's `units` (in order, as their ids): four int32 a unit, little-endian —
    kind (QUESTION, ANSWER, FINAL, SUMMARY), turn, message index, and the index among `units` of
    the other half of its pair (a question's final answer, a final answer's question; -1: none)."""
    asked, ended = {}, {}
    for n, u in enumerate(units):
        if u.kind == "question":
            asked[u.turn] = n
        elif u.kind == "answer" and u.final:
            ended[u.turn] = n
    values = array("i")
    for u in units:
        kind = {"question": QUESTION, "summary": SUMMARY}.get(u.kind, FINAL if u.final else ANSWER)
        other = ended.get(u.turn, -1) if kind == QUESTION else asked.get(u.turn, -1) if kind == FINAL else -1
        values.extend((kind, u.turn, u.pos, other))
    if sys.byteorder == "big":
        values.byteswap()
    return values.tobytes()


def read_layouts(conn: sqlite3.Connection, file_ids) -> dict[int, array]:
    """file id → its layout (see layout_of) as an array('i'), for the files `file_ids`."""
    _fill_ids(conn, file_ids)
    found = {}
    for fid, blob in conn.execute("SELECT f.id, f.layout FROM temp.ids i JOIN files f ON f.id = i.id"):
        values = array("i")
        values.frombytes(blob or b"")
        if sys.byteorder == "big":
            values.byteswap()
        found[fid] = values
    return found


def texts_of(conn: sqlite3.Connection, uids) -> dict[int, str]:
    """unit id → its normalized text (with PAD), for the units `uids`, read from the FTS5 content
    table (`texts_content`: id, c0; a lookup through the virtual table costs ~50 µs)."""
    _fill_ids(conn, uids)
    return dict(conn.execute("SELECT t.id, t.c0 FROM temp.ids i JOIN texts_content t ON t.id = i.id"))


def skipped_ids(conn: sqlite3.Connection, keys: set[str]) -> set[int]:
    """The ids of the indexed units whose key is in `keys` (index units_key)."""
    if not keys:
        return set()
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS skip(key TEXT PRIMARY KEY)")
    conn.execute("DELETE FROM temp.skip")
    conn.executemany("INSERT OR IGNORE INTO temp.skip VALUES (?)", ((k,) for k in keys))
    return {uid for (uid,) in conn.execute("SELECT id FROM units WHERE key IN (SELECT key FROM temp.skip)")}


def _fill_ids(conn: sqlite3.Connection, ids) -> None:
    """temp.ids holds `ids` (any number: host parameters are limited)."""
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS ids(id INTEGER PRIMARY KEY)")
    conn.execute("DELETE FROM temp.ids")
    conn.executemany("INSERT OR IGNORE INTO temp.ids VALUES (?)", ((i,) for i in ids))


def store_file(conn: sqlite3.Connection, path: Path, st: os.stat_result, record: dict,
               session: str, updated: str, updated_at: float) -> None:
    """Replace what the index holds for `path` by the units of `record` (inside the caller's
    transaction); `st` is the stat the file had when `record` was read."""
    row = conn.execute("SELECT id FROM files WHERE name=?", (path.name,)).fetchone()
    if row is not None:
        forget_file(conn, row[0])
    fid = conn.execute("INSERT INTO files(name, session, updated, updated_at, mtime_ns, size) VALUES "
                       "(?,?,?,?,?,?)", (path.name, session, updated, updated_at, st.st_mtime_ns,
                                         st.st_size)).lastrowid
    messages = record.get("messages")
    units = units_of(messages if isinstance(messages, list) else [])
    if units:  # consecutive ids, in message order
        lo = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM units").fetchone()[0]
        conn.executemany("INSERT INTO units(id, file, key) VALUES (?,?,?)",
                         [(lo + n, fid, u.key) for n, u in enumerate(units)])
        conn.executemany("INSERT INTO texts(rowid, norm) VALUES (?,?)",
                         [(lo + n, normalize(u.text) + PAD) for n, u in enumerate(units)])
        conn.execute("UPDATE files SET lo=?, hi=?, layout=? WHERE id=?", (lo, lo + len(units) - 1,
                                                                           layout_of(units), fid))


def forget_file(conn: sqlite3.Connection, file_id: int) -> None:
    """Remove a file and its units from the index."""
    conn.execute("DELETE FROM texts WHERE rowid IN (SELECT id FROM units WHERE file=?)", (file_id,))
    conn.execute("DELETE FROM units WHERE file=?", (file_id,))
    conn.execute("DELETE FROM files WHERE id=?", (file_id,))


def index_saved(path: Path, record: dict) -> None:
    """Refresh the index of `path`'s directory for the session just written (`record`); best
    effort: any failure leaves the file stale, and searches read it instead."""
    from mm.sessions.load import timestamp

    conn = open_index(path.parent)
    if conn is None:
        return
    try:
        st = os.stat(path)
        updated = record.get("updated") if isinstance(record.get("updated"), str) else ""
        conn.execute("BEGIN IMMEDIATE")
        store_file(conn, path, st, record, str(record.get("id") or path.stem), updated,
                   timestamp(updated, path))
        conn.execute("COMMIT")
    except (sqlite3.Error, OSError):
        pass
    finally:
        conn.close()
