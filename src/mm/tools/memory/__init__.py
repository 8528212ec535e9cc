"""The `memory` tool group: memory (MEMORY.md) and use_skill (mnemo-tools.md §Conditional tools;
notes/mnemoai.md §2.11, §4.5, §4.6; docs/memory.md, docs/skills.md §use_skill)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping


def tools(config: Any, env: Mapping[str, str], cwd: Path | None) -> list:
    """memory, on the MEMORY.md `memory.scope` names (for `cwd`, default the process's); then
    use_skill when the skill folders hold at least one skill (none without `cwd`, as read_skill)."""
    from mm.tools.memory.store import MemoryFile, memory_path
    from mm.tools.memory.tool import Memory

    path = memory_path(config.memory.scope, cwd or Path.cwd(), env)
    project = path.parent.parent if config.memory.scope == "project" else None  # <project>/.mm/MEMORY.md
    found: list = [Memory(MemoryFile(path, config.memory.maxChars, project))]
    if cwd is not None:
        from mm.tools.registry import skill_catalogue

        _, catalogue = skill_catalogue(config, cwd, env)
        if catalogue:
            from mm.tools.memory.use_skill import UseSkill

            found.append(UseSkill(catalogue))
    return found
