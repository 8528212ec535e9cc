"""Memory search over past sessions: the `search_memory` tool and `/memory <words>`
(mm-tools.md §search_memory; decisions in docs/sessions.md §Index).

`search_memory(directory, query, …)` returns the text the model or the user reads. The hits come
from the index (mm.sessions.indexed) or, when it is missing or damaged, from reading every file
(mm.sessions.hits); both give the same hits in the same order.
"""

from __future__ import annotations

from pathlib import Path

from mm.sessions.excerpt import format_result
from mm.sessions.hits import Hit, Matches, rank, scan_file
from mm.sessions.indexed import from_index, prepare
from mm.sessions.load import session_paths
from mm.sessions.units import query_words, units_of

DEFAULT_LIMIT, MAX_LIMIT = 10, 50  # mm-tools.md §search_memory, limit


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
    order (see rank): the same whether the index is used or every file is read."""
    skip = {u.key for u in units_of(current or [])}
    conn = None
    if use_index:
        from mm.sessions.index import open_index

        conn = open_index(directory)
    if conn is not None:
        import sqlite3

        try:
            found = Matches()
            fresh = prepare(found, conn, directory, words)
            conn.execute("BEGIN")  # one snapshot for all reads (WAL: other processes still save)
            return from_index(found, conn, fresh, words, skip, limit)  # (close() ends it)
        except sqlite3.DatabaseError:  # damaged in a way opening it did not show: read the files
            pass
        finally:
            conn.close()
    found = Matches()
    for path in session_paths(directory):
        scan_file(found, str(path), words)
    return rank(found, skip, limit)


def build_index(directory: Path) -> int:
    """Index every stale file of `directory` now; returns how many files the index holds."""
    from mm.sessions.index import open_index

    conn = open_index(directory)
    if conn is None:
        return 0
    try:
        prepare(Matches(), conn, Path(directory), [])
        return conn.execute("SELECT count(*) FROM files").fetchone()[0]
    finally:
        conn.close()
