"""git_status_safe: the repository's state with what to be careful about (notes/mnemoai.md §2.9;
docs/tools-git.md)."""

from __future__ import annotations

from typing import Any

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult
from mm.tools.git.rules import PROTECTED_BRANCHES
from mm.tools.git.safe import NO_GIT, NO_GIT_HINT, NOT_A_REPOSITORY
from mm.tools.json_reply import refusal, reply

FILES_SHOWN = 10
ON_PROTECTED = "On protected branch '{branch}' - be careful with commits"
BEHIND = "Branch is {n} commits behind remote - consider pulling"
DIRTY_AND_AHEAD = "You have both uncommitted changes and unpushed commits"
DETACHED = "HEAD is detached: commits made here belong to no branch"
LAST_COMMIT_FORMAT = "--format=%h %s (%an, %ar)"


class GitStatusSafe:
    """git_status_safe: the repository's state and warnings; kind `read`, never asks."""
    name = "git_status_safe"
    kind: ToolKind = "read"
    needs_permission = False
    description = ("The git repository's state: branch (and whether it is protected), uncommitted changes, commits "
                   "ahead of and behind the remote, the last commit, and warnings.")
    params: list[Param] = []

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from mm.tools.git.runner import git_found, query, read_status

        if not git_found():
            return refusal(NO_GIT, suggestion=NO_GIT_HINT)
        status = await read_status(ctx.cwd, ctx.cancelled)
        if status is None:
            return refusal(NOT_A_REPOSITORY.format(cwd=ctx.cwd))
        info: dict[str, Any] = {"branch": status.branch, "is_protected": status.branch in PROTECTED_BRANCHES,
                                "uncommitted_changes": len(status.changes), "has_changes": bool(status.changes)}
        if status.changes:
            info["changed_files"] = status.changes[:FILES_SHOWN]
            if len(status.changes) > FILES_SHOWN:
                info["more_files"] = len(status.changes) - FILES_SHOWN
        info |= {"commits_ahead": status.ahead, "commits_behind": status.behind,
                 "has_remote": status.upstream is not None, "upstream": status.upstream}
        if not status.initial:
            last = await query(["log", "-1", LAST_COMMIT_FORMAT], ctx.cwd, ctx.cancelled)
            if last is not None:
                info["last_commit"] = last.strip()
        info["warnings"] = warnings_of(info, status.branch is None)
        return reply(info | {"success": True})


def warnings_of(info: dict[str, Any], detached: bool) -> list[str]:
    """The reference's warnings (a protected branch, behind the remote, dirty and ahead), and a detached HEAD."""
    found = []
    if info["is_protected"]:
        found.append(ON_PROTECTED.format(branch=info["branch"]))
    if detached:
        found.append(DETACHED)
    if info["commits_behind"] > 0:
        found.append(BEHIND.format(n=info["commits_behind"]))
    if info["has_changes"] and info["commits_ahead"] > 0:
        found.append(DIRTY_AND_AHEAD)
    return found
