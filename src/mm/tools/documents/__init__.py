"""The `documents` tool group: list_documents, search_in_documents and clear_documents over the
project's documents index (mnemo-tools.md, Conditional tools; notes/mnemoai.md §2.11, §5;
docs/documents.md). Declared when `toolsets:` names `documents`; the same index takes what
`/docs add` adds, and the PDF, DOCX and web pages fs_read and web_crawler find too large."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from mm.config.schema import AgentConfig
from mm.tools.base import Tool


def index_for(config: AgentConfig, env: Mapping[str, str], cwd: Path | None) -> Any:
    """The documents index (mm.tools.documents.index.DocumentIndex) of the project of `cwd`
    (None: the working directory) under `env`'s XDG_STATE_HOME when `config` declares the
    documents group — then fs_read and web_crawler offer it their large documents; else None."""
    if "documents" not in config.toolsets:
        return None
    from mm.tools.documents.index import DocumentIndex

    return DocumentIndex.of(config, cwd or Path.cwd(), env)


def tools(config: AgentConfig, env: Mapping[str, str], cwd: Path | None) -> list[Tool]:
    """The group's tools on the index of the project of `cwd` (None: the process's working
    directory), under `env`'s XDG_STATE_HOME (documents.chunkTokens, embeddings, embeddingModel)."""
    from mm.tools.documents.doc_tools import SearchInDocuments, clear_documents, list_documents

    index = index_for(config, env, cwd)
    return [list_documents(index), SearchInDocuments(index), clear_documents(index)]
