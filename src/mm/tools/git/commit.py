"""git_commit_safe: stage and commit, the amend checked before anything is staged
(mnemo-tools.md §Work with git; notes/mnemoai.md §2.9; docs/tools-git.md)."""

from __future__ import annotations

import shlex
from typing import Any

from mm.tools.base import Param, ToolContext, ToolResult
from mm.tools.git.confirm import CONFIRMATION, NEEDS_REASON, NEXT_STEP, user_refusal
from mm.tools.git.safe import (ALLOW_DANGEROUS, AMEND_PUSHED, CANCELLED, NO_GIT, NO_GIT_HINT, NOT_A_REPOSITORY, REASON,
                                GitTool, amend_issues)
from mm.tools.json_reply import refusal, reply

NO_MESSAGE = "Commit message is required"
UNPARSABLE_FILES = "Could not parse add_files ({error}). Check the quoting."
AMEND_UNSAFE = "Amending this commit may cause issues"
AMEND_HINT = ("If the commit has been pushed, you'll need to force push after amending. Consider creating a new commit "
              "instead.")
STAGED_ALL = "All changes staged"
STAGED_FILES = "Files staged"
STAGING_FAILED = "Staging failed: nothing was committed"
COMMITTED = "Commit created successfully"
COMMIT_FAILED = "Commit failed"
COMMIT_TIMED_OUT = "Commit command timed out"
NOTHING_STAGED = "No changes are staged. Use add_all=True or add_files='...' to stage changes first."
NO_IDENTITY = ("Git user not configured. Run: git config --global user.name 'Your Name' && git config --global "
               "user.email 'your@email.com'")


class GitCommitSafe(GitTool):
    """git_commit_safe: stage (add_all / add_files) and commit, an unsafe amend confirmed first."""
    name = "git_commit_safe"
    description = ("Stage and commit: add_all stages every change (git add -A), add_files the files named. Amending "
                   "a commit that is pushed or on a protected branch needs allow_dangerous, a reason and the user's "
                   "agreement.")
    params = [Param("message", "string", "The commit message."),
              Param("add_all", "boolean", "Stage every change first (git add -A).", required=False, default=False),
              Param("add_files", "string", "Files to stage first, separated by spaces (quote a name with spaces).",
                    required=False, default=""),
              Param("amend", "boolean", "Amend the last commit instead of making a new one.", required=False,
                    default=False),
              Param("allow_empty", "boolean", "Allow a commit that changes nothing.", required=False, default=False),
              Param("allow_dangerous", "boolean", ALLOW_DANGEROUS, required=False, default=False),
              Param("reason", "string", REASON, required=False, default="")]

    def title(self, args: dict[str, Any], ctx: Any = None) -> str:
        """`git_commit_safe: <message's first line>`."""
        lines = str(args.get("message") or "").strip().splitlines()
        return f"{self.name}: {lines[0] if lines else ''}"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from mm.tools.git.runner import git_found, read_status

        message = args.get("message") or ""
        if not message.strip():
            return refusal(NO_MESSAGE)
        try:
            files = shlex.split(args.get("add_files") or "")
        except ValueError as err:
            return refusal(UNPARSABLE_FILES.format(error=err))
        if not git_found():
            return refusal(NO_GIT, suggestion=NO_GIT_HINT)
        status = await read_status(ctx.cwd, ctx.cancelled)
        if status is None:
            return refusal(NOT_A_REPOSITORY.format(cwd=ctx.cwd))
        if args.get("amend"):
            unsafe = await self.amend_refusal(args, status.branch, ctx)
            if unsafe is not None:
                return unsafe
        steps: list[dict[str, Any]] = []
        staged = await self.stage(args.get("add_all", False), files, steps, ctx)
        if staged is not None:
            return staged
        return await self.commit(message, args, steps, ctx)

    async def amend_refusal(self, args: dict[str, Any], branch: str | None, ctx: ToolContext) -> ToolResult | None:
        """None when the amend may go on: safe, or unsafe and agreed to by the user."""
        issues = await amend_issues(ctx)
        if not issues:
            return None
        if not args.get("allow_dangerous"):
            return refusal(AMEND_UNSAFE, requires_confirmation=True, issues=issues, branch=branch,
                           is_pushed=AMEND_PUSHED in issues, suggestion=AMEND_HINT,
                           next_step=NEXT_STEP.format(tool=self.name), confirmation=CONFIRMATION)
        reason = (args.get("reason") or "").strip()
        if not reason:
            return refusal(NEEDS_REASON)
        shown = "git commit --amend -m " + shlex.quote(args["message"])
        warnings = [{"type": "amend_context", "message": issue} for issue in issues]
        return await user_refusal(self.name, args, shown, warnings, reason, ctx)

    async def stage(self, add_all: bool, files: list[str], steps: list[dict[str, Any]],
                    ctx: ToolContext) -> ToolResult | None:
        """`git add -A`, or `git add -- <files>` (a name starting with `-` is a file, not an
        option); None when it worked (or there was nothing to stage), else the refusal: a failed
        staging stops before the commit."""
        from mm.tools.git.runner import run_git

        if not add_all and not files:
            return None
        args = ["add", "-A"] if add_all else ["add", "--", *files]
        done = await run_git(args, ctx.cwd, ctx.cancelled)
        if done.cancelled:
            return ToolResult(CANCELLED, failed=True)
        step: dict[str, Any] = {"step": "add_all" if add_all else "add_files", "success": done.ok}
        if not add_all:
            step["files"] = files
        step["output"] = done.stderr.strip() or (STAGED_ALL if add_all else STAGED_FILES)
        steps.append(step)
        return None if done.ok else refusal(STAGING_FAILED, steps=steps)

    async def commit(self, message: str, args: dict[str, Any], steps: list[dict[str, Any]],
                     ctx: ToolContext) -> ToolResult:
        from mm.tools.git.runner import query, run_git

        argv = ["commit", "-m", message] + ["--amend"] * bool(args.get("amend")) + \
            ["--allow-empty"] * bool(args.get("allow_empty"))
        done = await run_git(argv, ctx.cwd, ctx.cancelled)
        if done.cancelled:
            return ToolResult(CANCELLED, failed=True)
        if done.timed_out:
            return refusal(COMMIT_TIMED_OUT, steps=steps)
        if not done.ok:
            said = done.stderr.strip() or done.stdout.strip()
            suggestions = [NOTHING_STAGED] * ("nothing to commit" in said.lower() or "no changes added" in said.lower())
            suggestions += [NO_IDENTITY] * ("please tell me who you are" in said.lower())
            return refusal(COMMIT_FAILED, error_output=said, suggestions=suggestions, steps=steps)
        short = await query(["rev-parse", "--short", "HEAD"], ctx.cwd, ctx.cancelled)
        return reply({"success": True, "message": COMMITTED, "commit_hash": (short or "unknown").strip(),
                      "commit_message": message, "amended": bool(args.get("amend")), "steps": steps,
                      "output": done.stdout.strip()})
