"""The `git` tool group: git_safe, git_status_safe and git_commit_safe (mnemo-tools.md §Work with
git; docs/tools-git.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping


def tools(config: Any, env: Mapping[str, str], cwd: Path | None) -> list:
    """The three tools (they run git in the conversation's working directory)."""
    from mm.tools.git.commit import GitCommitSafe
    from mm.tools.git.status import GitStatusSafe
    from mm.tools.git.safe import GitSafe

    return [GitSafe(), GitStatusSafe(), GitCommitSafe()]
