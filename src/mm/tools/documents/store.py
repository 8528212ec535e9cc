"""The documents index: one SQLite file per project, its chunks searched by keywords with FTS5
(BM25) and by meaning with the vectors kept beside them as float32 blobs (docs/documents.md;
notes/mnemoai.md §5, where the reference keeps a per-session FAISS or Chroma store instead).

Every change is one SQLite transaction: a document added, replaced or dropped is never half
written, and two mm processes of one project share the file (WAL, a busy timeout).
"""

from __future__ import annotations

import functools
import hashlib
import re
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

INDEX_FOLDER = ("mm", "documents")  # under $XDG_STATE_HOME (default ~/.local/state)
BUSY_TIMEOUT = 30.0  # seconds a write waits for another mm process's
WORD = re.compile(r"\w+")  # the reference's BM25 tokens (`\w+`, lower case)
SCHEMA = """
CREATE TABLE IF NOT EXISTS documents(id TEXT PRIMARY KEY, source TEXT NOT NULL, added REAL NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks USING fts5(text, doc_id UNINDEXED, n UNINDEXED,
    tokenize = 'porter unicode61 remove_diacritics 2');
CREATE TABLE IF NOT EXISTS vectors(chunk INTEGER NOT NULL, model TEXT NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (chunk, model));
"""


@dataclass(frozen=True)
class Chunk:
    """One indexed chunk: its row id, document id, number in the document (from 0), text."""

    rowid: int
    doc_id: str
    n: int
    text: str


def index_path(cwd: Path, env: Mapping[str, str] | None = None) -> Path:
    """The index file of the project `cwd` belongs to (its repository root, else `cwd` itself):
    `$XDG_STATE_HOME/mm/documents/<folder name>-<12 hex digits of its path's sha256>.sqlite3`."""
    import os

    from mm.config.places import repository_root, state_home

    project = repository_root(cwd) or Path(os.path.abspath(cwd))
    digest = hashlib.sha256(str(project).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = re.sub(r"[^\w.-]", "_", project.name) or "root"
    return state_home(env).joinpath(*INDEX_FOLDER, f"{name}-{digest}.sqlite3")


def keyword_query(text: str) -> str:
    """An FTS5 query matching any word of `text` (each quoted: no operator syntax gets through),
    or "" when it has none."""
    words = dict.fromkeys(w.lower() for w in WORD.findall(text))
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


def _locked(method: Any) -> Any:
    """Run `method` holding the store's lock: one connection, used from worker threads one at a time."""

    @functools.wraps(method)
    def run(self: "DocumentStore", *args: Any) -> Any:
        with self._lock:
            return method(self, *args)

    return run


class DocumentStore:
    """The index at `path` (created with its folder on first use). Methods raise sqlite3.Error
    (and OSError for the folder) — the tools turn them into their reference's error texts.
    Tool calls run at once call them from several threads: each holds the lock."""

    def __init__(self, path: Path):
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._lock = threading.RLock()

    def _open(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT, check_same_thread=False,
                                 isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(SCHEMA)
            self._db = db
        return self._db

    @_locked
    def close(self) -> None:
        """Close the connection (opened again on the next call)."""
        if self._db is not None:
            self._db.close()
            self._db = None

    @_locked
    def add(self, doc_id: str, source: str, texts: list[str]) -> list[int]:
        """Index `texts` as the chunks of `doc_id` (what it was indexed from: `source`), replacing
        a document of that id; returns the chunks' row ids."""
        db = self._open()
        with _transaction(db):
            self._drop(db, doc_id)
            db.execute("INSERT INTO documents VALUES (?, ?, ?)", (doc_id, source, time.time()))
            return [db.execute("INSERT INTO chunks(text, doc_id, n) VALUES (?, ?, ?)", (text, doc_id, n)).lastrowid
                    for n, text in enumerate(texts)]

    @staticmethod
    def _drop(db: sqlite3.Connection, doc_id: str) -> None:
        db.execute("DELETE FROM vectors WHERE chunk IN (SELECT rowid FROM chunks WHERE doc_id = ?)", (doc_id,))
        db.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
        db.execute("DELETE FROM documents WHERE id = ?", (doc_id,))

    @_locked
    def documents(self) -> list[tuple[str, int]]:
        """Every document's id and number of chunks, in the order they were added."""
        rows = self._open().execute(
            "SELECT d.id, (SELECT count(*) FROM chunks c WHERE c.doc_id = d.id) FROM documents d "
            "ORDER BY d.added, d.id")
        return [(doc_id, int(count)) for doc_id, count in rows]

    @_locked
    def clear(self) -> int:
        """Drop every document, chunk and vector; returns how many documents there were."""
        db = self._open()
        with _transaction(db):
            count = db.execute("SELECT count(*) FROM documents").fetchone()[0]
            for table in ("vectors", "chunks", "documents"):
                db.execute(f"DELETE FROM {table}")
        db.execute("VACUUM")  # the texts leave the file too
        return int(count)

    @_locked
    def by_keywords(self, query: str, limit: int) -> list[tuple[int, float]]:
        """The best `limit` chunks for the words of `query` by BM25: (row id, score), best first,
        the score positive (FTS5's bm25() negated)."""
        match = keyword_query(query)
        if not match or limit <= 0:
            return []
        rows = self._open().execute(
            "SELECT rowid, -bm25(chunks) AS score FROM chunks WHERE chunks MATCH ? ORDER BY bm25(chunks) LIMIT ?",
            (match, limit))
        return [(int(rowid), float(score)) for rowid, score in rows]

    @_locked
    def chunks(self, rowids: Iterable[int]) -> dict[int, Chunk]:
        """The chunks of `rowids`, by row id (those that exist)."""
        ids = list(rowids)
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self._open().execute(f"SELECT rowid, doc_id, n, text FROM chunks WHERE rowid IN ({marks})", ids)
        return {int(r): Chunk(int(r), d, int(n), t) for r, d, n, t in rows}

    @_locked
    def missing_vectors(self, model: str, limit: int) -> list[tuple[int, str]]:
        """At most `limit` chunks that have no vector of `model` yet: (row id, text)."""
        rows = self._open().execute(
            "SELECT rowid, text FROM chunks WHERE rowid NOT IN (SELECT chunk FROM vectors WHERE model = ?) "
            "ORDER BY rowid LIMIT ?", (model, limit))
        return [(int(r), t) for r, t in rows]

    @_locked
    def put_vectors(self, model: str, pairs: list[tuple[int, bytes]]) -> None:
        """Keep each chunk's vector of `model` (float32 bytes), for chunks that still exist."""
        db = self._open()
        with _transaction(db):
            for rowid, blob in pairs:
                db.execute("INSERT OR REPLACE INTO vectors SELECT ?, ?, ? WHERE EXISTS "
                           "(SELECT 1 FROM chunks WHERE rowid = ?)", (rowid, model, blob, rowid))

    @_locked
    def vectors(self, model: str) -> list[tuple[int, bytes]]:
        """Every chunk's vector of `model`: (row id, float32 bytes)."""
        return [(int(r), v) for r, v in self._open().execute(
            "SELECT chunk, vector FROM vectors WHERE model = ?", (model,))]


class _transaction:
    """BEGIN IMMEDIATE … COMMIT, or ROLLBACK when the block raises."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, kind: Any, *_: Any) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")
