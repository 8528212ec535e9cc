"""The documents index as the tools, fs_read, web_crawler and `/docs` use it: documents added
(chunked, then embedded when the server can), listed, cleared, and searched by keywords (BM25)
and by meaning, the two fused by reciprocal rank (docs/documents.md; notes/mnemoai.md §5).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from mm.config.schema import DocumentsConfig
from mm.tools.documents.store import Chunk, DocumentStore, index_path

CANDIDATES = 3  # each search branch pulls 3 × top_k candidates (the reference's)
RRF_K = 60  # reciprocal rank fusion: a chunk scores Σ 1 / (RRF_K + its rank in each branch)


@dataclass
class DocumentIndex:
    """The index of one project, with the `documents:` settings."""

    store: DocumentStore
    settings: DocumentsConfig
    _embedding: asyncio.Lock = field(default_factory=asyncio.Lock)  # one embedding pass at a time

    @classmethod
    def of(cls, config: Any, cwd: Path, env: Mapping[str, str] | None = None) -> "DocumentIndex":
        """The index of the project `cwd` belongs to (store.index_path), for the agent file `config`."""
        return cls(DocumentStore(index_path(cwd, env)), config.documents)

    def embedder(self, client: Any) -> Any:
        """The Embedder of the conversation's model client `client` (base_url, model, api_key),
        or None: embeddings switched off, no client, or its server gave none this process."""
        if not self.settings.embeddings or client is None or not getattr(client, "base_url", ""):
            return None
        from mm.tools.documents.embeddings import Embedder

        embedder = Embedder(client.base_url, self.settings.embeddingModel or client.model,
                            getattr(client, "api_key", None))
        return embedder if embedder.available else None

    async def add(self, doc_id: str, source: str, text: str, client: Any = None) -> int:
        """Index `text` as the document `doc_id` (replacing one of that id), cut into chunks of
        chunkTokens tokens, embedded when the server can; returns the number of chunks.
        Raises sqlite3.Error and OSError."""
        from mm.tools.documents.chunking import split_into_chunks

        chunks = await asyncio.to_thread(split_into_chunks, text, self.settings.chunkTokens)
        await asyncio.to_thread(self.store.add, doc_id, source, chunks)
        await self.embed_missing(self.embedder(client))
        return len(chunks)

    async def embed_missing(self, embedder: Any) -> None:
        """Embed the chunks that have no vector of `embedder`'s model yet (None: nothing to do);
        a server that gives none leaves them so (EmbeddingsUnavailable is not raised)."""
        from mm.tools.documents.embeddings import MAX_CHUNKS_PER_SEARCH, EmbeddingsUnavailable

        if embedder is None:
            return
        async with self._embedding:
            missing = await asyncio.to_thread(self.store.missing_vectors, embedder.model, MAX_CHUNKS_PER_SEARCH)
            if not missing:
                return
            try:
                vectors = await embedder.embed([text for _, text in missing])
            except EmbeddingsUnavailable:
                return
            await asyncio.to_thread(self.store.put_vectors, embedder.model,
                                    [(rowid, blob) for (rowid, _), blob in zip(missing, vectors)])

    async def search(self, query: str, top_k: int, client: Any = None) -> list[tuple[float, Chunk]]:
        """The `top_k` best chunks for `query`: (score, chunk), best first. The score is the
        reciprocal-rank fusion of the keyword and meaning branches that ran, scaled so that a
        chunk first in every branch scores 1.0."""
        want = max(0, top_k) * CANDIDATES
        branches = [[rowid for rowid, _ in await asyncio.to_thread(self.store.by_keywords, query, want)]]
        embedder = self.embedder(client)
        if embedder is not None:
            await self.embed_missing(embedder)
            by_meaning = await self._by_meaning(embedder, query, want)
            if by_meaning is not None:
                branches.append(by_meaning)
        scores: dict[int, float] = {}
        for branch in branches:
            for rank, rowid in enumerate(branch, 1):
                scores[rowid] = scores.get(rowid, 0.0) + 1.0 / (RRF_K + rank)
        best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:max(0, top_k)]
        chunks = await asyncio.to_thread(self.store.chunks, [rowid for rowid, _ in best])
        top = len(branches) / (RRF_K + 1)
        return [(score / top, chunks[rowid]) for rowid, score in best if rowid in chunks]

    async def _by_meaning(self, embedder: Any, query: str, want: int) -> list[int] | None:
        """The `want` chunks nearest `query` by cosine similarity, best first; None when the
        server gives no vector for the query or none is stored."""
        import numpy as np

        from mm.tools.documents.embeddings import EmbeddingsUnavailable

        try:
            wanted = np.frombuffer((await embedder.embed([query]))[0], dtype=np.float32)
        except EmbeddingsUnavailable:
            return None
        stored = await asyncio.to_thread(self.store.vectors, embedder.model)
        stored = [(rowid, blob) for rowid, blob in stored if len(blob) == wanted.nbytes]  # another dimension: skipped
        if not stored or want <= 0:
            return None
        matrix = np.frombuffer(b"".join(blob for _, blob in stored), dtype=np.float32).reshape(len(stored), -1)
        similarity = matrix @ wanted
        order = np.argsort(-similarity, kind="stable")[:want]
        return [stored[i][0] for i in order]
