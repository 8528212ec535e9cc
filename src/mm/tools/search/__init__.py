"""The `search` tool group (`toolsets: [search]`): glob_search and grep_search (mnemo-tools.md
§Search; docs/tools-search.md). Imported only when the agent file names the group."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from mm.config.schema import AgentConfig
from mm.tools.base import Tool


def tools(config: AgentConfig, env: Mapping[str, str], cwd: Path | None) -> list[Tool]:
    """glob_search and grep_search, each stopped after `search.timeout` seconds; `env` holds MM_RG
    and PATH (which ripgrep grep_search runs: mm.tools.search.ripgrep.find_ripgrep). `cwd` is
    not needed: a call searches its context's working directory."""
    from mm.tools.search.glob_tool import GlobSearch
    from mm.tools.search.grep_tool import GrepSearch

    timeout = config.search.timeout
    return [GlobSearch(timeout), GrepSearch(env, timeout)]
