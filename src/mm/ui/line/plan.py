"""exit_plan_mode's question in line mode: the plan in a box, the commands it pre-approves, then
`y` approve, `e` edit in $EDITOR (VISUAL first) then approve, `n` keep planning; Esc, Ctrl-C or
end of input keep planning (docs/plan-mode.md §Leaving plan mode; notes/mnemoai.md §4.3).
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import tempfile
from typing import Any, Awaitable, Callable

PLAN_TITLE = "📋 the plan"
PLAN_COMMANDS = "run without asking once approved: {commands}"
PLAN_QUESTION = "Approve the plan? y approve · e edit in $EDITOR, then approve · n keep planning › "
PLAN_AGAIN = "answer y (approve), e (edit, then approve) or n (keep planning)"
NO_EDITOR = "neither $VISUAL nor $EDITOR is set: y approves the plan as it is, n keeps planning"
EDITOR_FAILED = "the editor did not give the plan back ({error}): the plan is unchanged"
KEPT_PLANNING = "📋 kept planning: plan mode stays on"
APPROVED_LINE = "📋 plan approved: plan mode is off"


async def ask_plan_approval(plan: str, allowed_bash: list[str], ask: Callable[[str], Awaitable[str]],
                            say: Callable[..., None]) -> tuple[str, str]:
    """Show `plan` (Markdown) and ask until y, e or n: ("approve", plan), ("edited", the text the
    editor left) or ("keep", ""). `ask(prompt)` reads one line (mm.ui.line.keys.ask_line)."""
    from rich.markdown import Markdown
    from rich.panel import Panel

    from mm.ui.line.keys import EscapePressed

    say(Panel(Markdown(plan), title=PLAN_TITLE, title_align="left"))
    if allowed_bash:
        say(PLAN_COMMANDS.format(commands=", ".join(allowed_bash)), style="dim")
    while True:
        try:
            answer = (await ask(PLAN_QUESTION)).strip().lower()
        except (EscapePressed, KeyboardInterrupt, EOFError):
            answer = "n"
        if answer in ("y", "yes"):
            say(APPROVED_LINE, style="green")
            return "approve", plan
        if answer in ("n", "no"):
            say(KEPT_PLANNING, style="yellow")
            return "keep", ""
        if answer in ("e", "edit"):
            edited = await _edited(plan, say)
            if edited is not None and not edited.strip():
                say(KEPT_PLANNING, style="yellow")
                return "keep", ""
            if edited is not None:
                say(APPROVED_LINE, style="green")
                return "edited", edited
            continue
        say(PLAN_AGAIN)


async def _edited(plan: str, say: Callable[..., None]) -> str | None:
    """The plan as the user left it in $VISUAL or $EDITOR, or None (said why) when there is no
    editor or it failed."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        say(NO_EDITOR)
        return None
    handle, path = tempfile.mkstemp(prefix="mm-plan-", suffix=".md")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(plan)
        done: Any = await asyncio.to_thread(subprocess.run, [*shlex.split(editor), path])
        if done.returncode != 0:
            raise OSError(f"{editor} exited with {done.returncode}")
        with open(path, encoding="utf-8", errors="replace") as back:
            return back.read()
    except (OSError, ValueError) as err:
        say(EDITOR_FAILED.format(error=err))
        return None
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
