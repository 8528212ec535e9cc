"""Vectors from the model server's OpenAI `/v1/embeddings` endpoint, for the documents index's
search by meaning (docs/documents.md §By meaning). A server that does not answer it (404, an
error, no `data`) is remembered for the process and the search stays by keywords — never an
error of the tool, and never the reference's made-up sha256 "fallback vector".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

BATCH = 16  # texts per request (the reference's batches of 16)
TIMEOUT = 120.0  # seconds one request may take (a local server embeds a batch slowly)
MAX_CHUNKS_PER_SEARCH = 4096  # chunks still without a vector embedded by one search at most

_unavailable: set[tuple[str, str]] = set()  # (base URL, model) that did not answer, this process


class EmbeddingsUnavailable(Exception):
    """The server gives no embeddings; `str(err)` says why (for the log)."""


@dataclass(frozen=True)
class Embedder:
    """The server at `base_url` (the OpenAI base, `…/v1`) asked for vectors of `model`."""

    base_url: str
    model: str
    api_key: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.base_url.rstrip("/"), self.model

    @property
    def available(self) -> bool:
        """False once the server failed to answer, for the rest of the process."""
        return self.key not in _unavailable

    async def embed(self, texts: list[str]) -> list[bytes]:
        """One float32 vector (bytes, unit length) per text of `texts`, asked BATCH at a time.
        Raises EmbeddingsUnavailable (and remembers it) when the server cannot give them."""
        out: list[bytes] = []
        try:
            for at in range(0, len(texts), BATCH):
                out += await self._batch(texts[at:at + BATCH])
        except EmbeddingsUnavailable:
            _unavailable.add(self.key)
            raise
        return out

    async def _batch(self, texts: list[str]) -> list[bytes]:
        import httpx
        import numpy as np

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            async with httpx.AsyncClient(timeout=TIMEOUT, trust_env=False) as http:
                response = await http.post(self.key[0] + "/embeddings", headers=headers,
                                           json={"model": self.model, "input": texts})
        except httpx.HTTPError as err:
            raise EmbeddingsUnavailable(f"{type(err).__name__}: {err}") from None
        if response.status_code != 200:
            raise EmbeddingsUnavailable(f"HTTP {response.status_code}")
        rows = _rows(response)
        if len(rows) != len(texts):
            raise EmbeddingsUnavailable("no list of vectors in the answer")
        vectors = []
        for row in rows:
            vector = np.asarray(row, dtype=np.float32)
            norm = float(np.linalg.norm(vector))
            if vector.ndim != 1 or not vector.size or not np.isfinite(norm) or norm == 0:
                raise EmbeddingsUnavailable("a vector that is empty, zero or not numbers")
            vectors.append((vector / norm).astype(np.float32).tobytes())
        return vectors


def _rows(response: Any) -> list[Any]:
    """The answer's vectors in input order (`data[i].embedding`, sorted by `index`), or []."""
    try:
        data = response.json().get("data")
        items = sorted(data, key=lambda d: d.get("index", 0))
        return [item["embedding"] for item in items if isinstance(item.get("embedding"), list)]
    except (ValueError, AttributeError, TypeError, KeyError):
        return []
