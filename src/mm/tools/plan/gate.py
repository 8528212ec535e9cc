"""Plan mode's rule, applied where every tool call passes (mm.engine.toolrun.run_call), before
the hooks and any permission question: while plan mode is on, a call that may change something
is refused and nothing runs (docs/plan-mode.md §What is refused; notes/mnemoai.md §4.3).

A tool passes only when it is known to read (READS), or when this call of it reads: a read-only
command (mm.tools.floor.readonly), a write to the plan file, lsp without `rename`,
fetch_content without `output`, git_safe with a read-only git command. Every other tool —
MCP tools, the agent file's `tools:`, ask_agent (another agent, out of mm's reach), and any
tool added later — is refused until it is listed here.
"""

from __future__ import annotations

import os
import shlex
from typing import Any

from mm.tools.base import PATH_ARGUMENT, ToolContext

REFUSED_TOOL = ("[plan mode: {tool} may change things, so it is refused while plan mode is on — nothing was run. "
                "Read and search to plan, then {next}]")
REFUSED_COMMAND = ("[plan mode: only read-only commands run while plan mode is on, and this one is not: {why} — "
                   "nothing was run. Read with ls, cat, grep, find, git status/log/diff… without redirections "
                   "to files; then {next}]")
REFUSED_WRITE = ("[plan mode: {tool} may write only the plan file {plan_file} while plan mode is on — "
                 "{path} was not written]")
NEXT_EXIT = "write the plan in {plan_file} and call exit_plan_mode with it"
NEXT_USER = "write the plan in {plan_file} and give it as your answer (the user leaves plan mode with /plan)"

# Tools that only read, ask, or keep mm's own notes (todo lists, memory): they always pass.
READS = frozenset({
    "read_file", "fs_read", "glob_search", "grep_search", "read_skill", "search_memory", "git_status_safe",
    "get_task_status", "get_task_output", "list_background_tasks", "wait_for_task", "todo_read", "todo_write",
    "todo_clear", "ask_user", "ask_user_question", "exit_plan_mode", "web_search", "web_crawler", "unload_model",
    "memory", "use_skill", "list_documents", "search_in_documents", "describe_image",
    "spawn_agent", "resume_agent",  # a sub-agent carries this plan mode (docs/plan-mode.md §Sub-agents)
})
COMMANDS = ("bash", "execute_bash")  # their `command` runs only when it is read-only
WRITES = ("write_file", "edit_file", "fs_write", "file_edit", "save_answer")  # only the plan file


def refusal(tool: Any, args: dict[str, Any], ctx: ToolContext) -> str | None:
    """The text refusing `tool`'s call with the coerced `args`, or None when it may run (plan
    mode off, or a call that only reads). Never raises."""
    plan = ctx.plan_mode
    if plan is None or not plan.active:
        return None
    name = tool.name
    nxt = (NEXT_EXIT if plan.can_exit else NEXT_USER).format(plan_file=plan.plan_file)
    if name in READS:
        return None
    if name in COMMANDS:
        from mm.tools.floor.readonly import read_only_problem

        why = read_only_problem(str(args.get("command", "")), ctx.cwd)
        return None if why is None else REFUSED_COMMAND.format(why=why, next=nxt)
    if name == "git_safe":
        why = _git_problem(str(args.get("command", "")), ctx)
        return None if why is None else REFUSED_COMMAND.format(why=why, next=nxt)
    if name in WRITES:
        path = str(args.get(PATH_ARGUMENT.get(name, "path"), ""))
        if _is_plan_file(path, plan.plan_file, ctx):
            return None
        return REFUSED_WRITE.format(tool=name, plan_file=plan.plan_file, path=path or "(no path)")
    if name == "lsp" and args.get("action") != "rename":
        return None
    if name == "fetch_content" and not args.get("output"):
        return None
    return REFUSED_TOOL.format(tool=name, next=nxt)


def _git_problem(command: str, ctx: ToolContext) -> str | None:
    """Why git_safe's `command` (git's words without `git`, split as git_safe splits them) is not
    read-only, or None."""
    from mm.tools.floor.readonly import read_only_problem

    try:
        words = shlex.split(command)
    except ValueError as err:
        return f"the command cannot be split ({err})"
    return read_only_problem(shlex.join(["git", *words]), ctx.cwd)


def _is_plan_file(path: str, plan_file: Any, ctx: ToolContext) -> bool:
    """Whether `path` (as the model sent it) is the plan file, symlinks followed."""
    if not path or plan_file is None:
        return False
    from mm.tools.failures import ArgumentError

    try:
        return os.path.realpath(ctx.resolve(path)) == os.path.realpath(plan_file)
    except (ArgumentError, OSError, ValueError):  # a path no file can have
        return False
