"""The `commands` tool group (`toolsets: [commands]`): execute_bash (mnemo-tools.md §Run commands;
docs/tools.md, docs/tools-bash.md §execute_bash)."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from mm.config.schema import AgentConfig
from mm.tools.base import Tool


def tools(config: AgentConfig, env: Mapping[str, str], cwd: Path | None) -> list[Tool]:
    """The group's tools: execute_bash (its working directory is its own, per conversation). When
    `core` declares `bash` too, its description says which to use (issue 13.1)."""
    from mm.tools.commands.execute_bash import BESIDE_BASH, DESCRIPTION, ExecuteBash

    beside_bash = "core" in config.toolsets and config.bashTool
    return [ExecuteBash(description=DESCRIPTION + BESIDE_BASH if beside_bash else DESCRIPTION)]
