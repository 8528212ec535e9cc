"""The `agents` tool group: spawn_agent, resume_agent and ask_user_question (mnemo-tools.md,
Ask, plan, and delegate; mnemoai.md §2.10, §4.4; docs/subagents.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping


def tools(config: Any, env: Mapping[str, str], cwd: Path | None) -> list[Any]:
    """spawn_agent and resume_agent over one SubAgents (its runner attached by mm.run), and
    ask_user_question. The sub-agents' records are kept in `<sessions.dir>/agents/` (not when
    it is a symbolic link: LINKED_FOLDER is said once). Custom agents are read from `cwd` and the user's folder now; a bad file
    is said on stderr once."""
    from mm.tools.agents.custom import load_catalogue
    from mm.tools.agents.question import AskUserQuestion
    from mm.tools.agents.runs import FOLDER, LINKED_FOLDER, SubAgents
    from mm.tools.agents.spawn import ResumeAgent, SpawnAgent
    from mm.tools.registry import _say_once

    cwd = cwd or Path.cwd()
    folder = cwd / config.sessions.dir / FOLDER  # kept even with sessions off: resume_agent needs it (docs/subagents.md)
    if folder.is_symlink():  # never kept, read or pruned through a link (docs/subagents.md §Records)
        _say_once(LINKED_FOLDER.format(folder=folder))
        folder = None
    runs = SubAgents(folder, config.subagentMaxConcurrency, {"cwd": str(cwd)})
    catalogue = load_catalogue(cwd, env, _say_once)
    return [SpawnAgent(runs, catalogue), ResumeAgent(runs, catalogue), AskUserQuestion()]
