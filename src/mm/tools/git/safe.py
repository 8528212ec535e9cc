"""git_safe, git_status_safe and git_commit_safe (mnemo-tools.md §Work with git; notes/mnemoai.md
§2.9 and §3; docs/tools-git.md)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult
from mm.tools.git import argv as gitargv
from mm.tools.git.confirm import (CONFIRMATION, NEEDS_REASON, NEEDS_REASON_EXAMPLE, NEXT_STEP, RISKY,
                                  user_refusal)
from mm.tools.git.rules import BLOCKED_HINT, PROTECTED_BRANCHES
from mm.tools.json_reply import refusal, reply

NO_GIT = "Git is not installed or not in PATH"
NO_GIT_HINT = "Install git and ensure it's available in your system PATH"
TIMED_OUT = "Command timed out after {seconds} seconds: git {command}"
TIMED_OUT_HINT = "The command may be waiting for input or running a long operation"
CANCELLED = "[error: cancelled]"
SHELL_ALIAS = ("The alias {name} runs a shell command ({value}): git_safe does not run it. Use a shell command if you "
               "genuinely need it.")
ALIAS_LOOP = "The alias {name} expands into itself, or too deeply: nothing was run."
NOT_A_REPOSITORY = "Not a git repository (or any of its parents): {cwd}"
OUTPUT_CUT = "[... {omitted} more characters not shown ...]"
ALIAS_DEPTH = 10
ROOM_FOR_FIELDS = 1000  # characters of maxOutput kept for the answer's other fields

COMMAND = "The git command without the leading `git`, e.g. \"status\", \"commit -m 'Add feature'\", \"log -5\"."
ALLOW_DANGEROUS = ("Run a command the safety check flags as risky: needs a reason, and the user is asked to confirm. "
                   "Never set it unasked.")
REASON = "Why the risky command is intended (shown to the user with allow_dangerous)."


@dataclass
class GitTool:
    """What the three git tools share."""

    kind: ToolKind = "execute"
    needs_permission: bool = True

    @staticmethod
    def cut(text: str, budget: int) -> str:
        """`text` within `budget` characters, its start kept (OUTPUT_CUT after it)."""
        from mm.tools.truncate import cut_to

        return cut_to(text.strip(), max(budget, 0), lambda shown: OUTPUT_CUT.format(omitted=len(text.strip()) - shown))


class GitSafe(GitTool):
    """git_safe: a git command, after the classifier (and, when risky, the user) let it run."""
    name = "git_safe"
    description = ("Run a git command through a safety check: operations that cannot be undone are blocked, risky "
                   "ones (force push, reset --hard, clean -f, branch -D, --amend…) are refused until called again "
                   "with allow_dangerous=True and a reason, and the user agrees.")
    params = [Param("command", "string", COMMAND),
              Param("allow_dangerous", "boolean", ALLOW_DANGEROUS, required=False, default=False),
              Param("reason", "string", REASON, required=False, default="")]

    def title(self, args: dict[str, Any], ctx: Any = None) -> str:
        """`git_safe: <command>` (the call's header and ACP title)."""
        return f"{self.name}: {args.get('command', '')}"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Parse, check, confirm when needed, then run the command in the working directory."""
        from mm.tools.git.runner import GIT_TIMEOUT, git_found, run_git

        checked = await check(args.get("command") or "", ctx)
        if isinstance(checked, ToolResult):
            return checked
        tokens, verdict, shown = checked
        allow, reason = args.get("allow_dangerous", False), (args.get("reason") or "").strip()
        if verdict.warnings and not allow:
            return refusal(RISKY, requires_confirmation=True, warnings=verdict.warnings, command=shown,
                           next_step=NEXT_STEP.format(tool=self.name), confirmation=CONFIRMATION)
        if verdict.warnings:
            if not reason:
                example = NEEDS_REASON_EXAMPLE.format(tool=self.name, command=args.get("command", ""))
                return refusal(NEEDS_REASON, command=shown, example=example)
            declined = await user_refusal(self.name, args, shown, verdict.warnings, reason, ctx)
            if declined is not None:
                return declined
        if not git_found():
            return refusal(NO_GIT, suggestion=NO_GIT_HINT)
        done = await run_git(tokens, ctx.cwd, ctx.cancelled)
        if done.cancelled:
            return ToolResult(CANCELLED, failed=True)
        if done.timed_out:
            return refusal(TIMED_OUT.format(seconds=int(GIT_TIMEOUT), command=shlex.join(tokens)),
                           suggestion=TIMED_OUT_HINT)
        budget = (ctx.settings.max_output - ROOM_FOR_FIELDS) // 2
        answer: dict[str, Any] = {"success": done.ok, "command": shown, "stdout": self.cut(done.stdout, budget),
                                  "stderr": self.cut(done.stderr, budget), "return_code": done.code}
        if verdict.warnings:
            answer |= {"warning_acknowledged": True, "reason_provided": reason}
        result = reply(answer)
        result.failed = not done.ok
        return result


async def check(command: str, ctx: ToolContext) -> tuple[list[str], Any, str] | ToolResult:
    """The command's tokens, its verdict and its text (`git …`), or the refusal: unparsable, an
    option or setting that runs a program, a shell alias, a write into a protected folder, or
    an operation blocked outright. Aliases are expanded first (`git config alias.x` is read)."""
    from mm.tools.git.rules import BUILTINS, PROTECTED_TARGET, classify, program_refusal, write_targets
    from mm.tools.git.runner import query, read_status
    from mm.tools.protected import write_refusal

    tokens, shown = gitargv.split(command), as_written(command)
    for _ in range(ALIAS_DEPTH):
        if isinstance(tokens, str):
            return refusal(tokens, blocked=True, command=shown)
        sub = gitargv.subcommand(tokens)
        if isinstance(sub, str):
            return refusal(sub, blocked=True, command=shown)
        name, rest = sub
        if not name or name in BUILTINS:
            break
        alias = await query(["config", "--get", f"alias.{name}"], ctx.cwd, ctx.cancelled)
        if alias is None:  # a program `git-<name>` of the PATH, or nothing: git says
            break
        alias = alias.strip()
        if alias.startswith("!"):
            return refusal(SHELL_ALIAS.format(name=name, value=alias), blocked=True, command=shown)
        expanded = gitargv.split(alias)
        tokens = expanded if isinstance(expanded, str) else tokens[:tokens.index(name)] + expanded + rest
        shown = shown if isinstance(tokens, str) else "git " + shlex.join(tokens)
    else:
        return refusal(ALIAS_LOOP.format(name=name), blocked=True, command=shown)
    scan = gitargv.scan(name, rest)
    problem = gitargv.runner_refusal(name, rest) or program_refusal(name, scan)
    for target in write_targets(name, scan):
        reason = write_refusal(str(ctx.resolve(target)))
        if reason is not None:
            problem = problem or PROTECTED_TARGET.format(what=name, path=target, reason=reason)
    if problem is not None:
        return refusal(problem, blocked=True, command=shown)
    branch = None
    if name == "push":
        status = await read_status(ctx.cwd, ctx.cancelled)
        branch = status.branch if status is not None else None
    verdict = classify(name, scan, branch)
    if verdict.blocked:
        return refusal(verdict.blocked, blocked=True, command=shown, suggestion=BLOCKED_HINT)
    if any(w["type"] == "amend" for w in verdict.warnings):
        verdict.warnings += [{"type": "amend_context", "message": m} for m in await amend_issues(ctx)]
    return tokens, verdict, shown


def as_written(command: str) -> str:
    """`command` as a git command line: `git` put before it unless it starts so."""
    text = command.strip()
    return text if text.split(" ", 1)[0].lower() == "git" else f"git {text}".rstrip()


async def amend_issues(ctx: ToolContext) -> list[str]:
    """Why amending the last commit is unsafe: a protected branch, or a commit already pushed
    (notes §2.9: checked before anything is staged)."""
    from mm.tools.git.runner import head_is_pushed, read_status

    issues = []
    status = await read_status(ctx.cwd, ctx.cancelled)
    if status is not None and status.branch in PROTECTED_BRANCHES:
        issues.append(AMEND_PROTECTED.format(branch=status.branch))
    if await head_is_pushed(ctx.cwd, ctx.cancelled):
        issues.append(AMEND_PUSHED)
    return issues


AMEND_PROTECTED = "You're on protected branch '{branch}'. Amending here is risky."
AMEND_PUSHED = "The last commit appears to have been pushed. Amending will require force push."
