"""The memory-search index: SQLite FTS5 with the trigram tokenizer at `<dir>/.index.sqlite`
(docs/sessions.md §Index).

One row per searchable unit (mm.sessions.units), holding its normalized text; a phrase MATCH
uses the trigram index for words of three letters or more (a word matches inside a longer word),
a `GLOB '*w*'` reads every row for shorter ones. Each indexed file is remembered with its mtime and size:
a file whose stat differs is *stale* and is read instead (mm.sessions.search), then re-indexed.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from mm.sessions.units import normalize, units_of

INDEX_NAME = ".index.sqlite"
SCHEMA_VERSION = "3"
BUSY_TIMEOUT = 2.0  # seconds another mm process may hold the index before we give up on it
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY, name TEXT UNIQUE, session TEXT,
  updated TEXT, updated_at REAL, mtime_ns INTEGER, size INTEGER, lo INTEGER, hi INTEGER);
CREATE TABLE IF NOT EXISTS units(id INTEGER PRIMARY KEY, file INTEGER, kind TEXT, turn INTEGER,
  pos INTEGER, final INTEGER, key TEXT);
CREATE INDEX IF NOT EXISTS units_file ON units(file);
CREATE VIRTUAL TABLE IF NOT EXISTS texts USING fts5(norm, tokenize='trigram case_sensitive 1');
"""


@dataclass
class IndexedFile:
    """A file as the index knows it: row id, session id, `updated` (ISO text and epoch seconds)."""

    id: int
    session: str
    updated: str
    updated_at: float
    lo: int = 0
    hi: int = -1


def open_index(directory: Path) -> sqlite3.Connection | None:
    """The index of `directory`, created when missing; None when it cannot be opened or written.
    A corrupt index, or one of another schema version, is deleted and started again."""
    path = Path(directory) / INDEX_NAME
    for _attempt in range(2):
        conn = None
        try:
            conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # an index can be rebuilt: no fsync per commit
            conn.executescript(SCHEMA)
            row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                conn.execute("INSERT OR REPLACE INTO meta VALUES('schema', ?)", (SCHEMA_VERSION,))
            elif row[0] != SCHEMA_VERSION:
                raise sqlite3.DatabaseError("schema version")
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


def known_files(conn: sqlite3.Connection) -> dict[str, tuple[int, int, IndexedFile]]:
    """name → (mtime_ns, size, IndexedFile) for every file in the index."""
    rows = conn.execute("SELECT id, name, session, updated, updated_at, mtime_ns, size, lo, hi FROM files")
    return {name: (mt, size, IndexedFile(fid, sess, upd, at, lo or 0, -1 if hi is None else hi))
            for fid, name, sess, upd, at, mt, size, lo, hi in rows}


def matching_units(conn: sqlite3.Connection, words: list[str], skip: set[str] = frozenset(),
                   ids: tuple[int, int] | None = None) -> list[tuple]:
    """(unit id, file id, kind, turn, pos, final, mask) of every indexed unit whose text holds one
    of `words` (normalized, made of word characters) and whose key is not in `skip`; bit i of
    mask: words[i] held; `ids` (lowest, highest) limits the unit ids. Words of three letters or
    more use the trigram index (a phrase MATCH), shorter ones a GLOB that reads every row."""
    if not words:
        return []
    parts, args = [], []
    within = " AND rowid BETWEEN ? AND ?" if ids else ""
    for i, word in enumerate(words):
        test = "texts MATCH ?" if len(word) >= 3 else "norm GLOB ?"
        parts.append(f"SELECT rowid AS id, {1 << i} AS bit FROM texts WHERE {test}{within}")
        args += [f'"{word}"' if len(word) >= 3 else f"*{word}*", *(ids or ())]
    unless = ""
    if skip:  # a temporary table: any number of keys (host parameters are limited)
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS skip(key TEXT PRIMARY KEY)")
        conn.executemany("INSERT OR IGNORE INTO temp.skip VALUES (?)", [(k,) for k in skip])
        unless = " WHERE u.key NOT IN (SELECT key FROM temp.skip)"
    return conn.execute(f"SELECT u.id, u.file, u.kind, u.turn, u.pos, u.final, m.mask FROM "
                        f"(SELECT id, sum(bit) AS mask FROM ({' UNION ALL '.join(parts)}) GROUP BY id) m "
                        f"JOIN units u ON u.id = m.id{unless}", args).fetchall()


def words_present(conn: sqlite3.Connection, words: list[str]) -> int:
    """How many of `words` some indexed unit holds (words under three letters are counted without
    looking): the highest score any indexed unit can reach."""
    return sum(1 for w in words if len(w) < 3 or conn.execute(
        "SELECT 1 FROM texts WHERE texts MATCH ? LIMIT 1", (f'"{w}"',)).fetchone())


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
    uids = []
    for unit in units_of(messages if isinstance(messages, list) else []):
        uid = conn.execute("INSERT INTO units(file, kind, turn, pos, final, key) VALUES (?,?,?,?,?,?)",
                           (fid, unit.kind, unit.turn, unit.pos, int(unit.final), unit.key)).lastrowid
        conn.execute("INSERT INTO texts(rowid, norm) VALUES (?,?)", (uid, normalize(unit.text)))
        uids.append(uid)
    if uids:
        conn.execute("UPDATE files SET lo=?, hi=? WHERE id=?", (uids[0], uids[-1], fid))


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
