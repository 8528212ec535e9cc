"""The `files` tool group: fs_read, fs_write and file_edit (mnemo-tools.md, Read files and Write
and edit files; docs/tools-files.md). Declared when `toolsets:` names `files`."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from mm.config.schema import AgentConfig
from mm.tools.base import Tool


def tools(config: AgentConfig, env: Mapping[str, str], cwd: Path | None) -> list[Tool]:
    """The group's tools for `config` (files.docMaxTokens; whether describe_image is declared
    beside them, for fs_read's refusal of an image); with the `documents` group declared too,
    fs_read offers large PDF and DOCX files to the index of the project of `cwd` (None: the
    working directory), under `env`'s XDG_STATE_HOME."""
    from mm.tools.documents import index_for
    from mm.tools.files.edit import FileEdit
    from mm.tools.files.read import FsRead
    from mm.tools.files.write import FsWrite
    from mm.tools.vision import declared

    return [FsRead(doc_max_tokens=config.files.docMaxTokens, describer=declared(config),
                   documents=index_for(config, env, cwd)), FsWrite(), FileEdit()]
