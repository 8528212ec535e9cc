"""The safety floor: what mm never runs or writes, in any mode, `yolo` included (docs/safety.md;
issue 13 point 5; notes/mnemoai.md §3).

- `check_command(command, cwd)`: a shell command (bash, execute_bash, background tasks) read with
  a real parser (tree-sitter-bash), every word expanded as bash would before it runs, relative
  paths resolved against the command's own working directory as it moves.
- `check_argv(argv, cwd)`: a program run without a shell (a declared tool's argv).
- The path policy for writes (mm.protected_paths) is applied by mm.fs to every file mm
  writes, and here to redirections and the operands of writing commands.

Each returns None when allowed, else the one-line refusal naming the rule (REFUSAL).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

REFUSAL = "[safety floor: {rule}] {what} — refused in every mode, nothing was run (docs/safety.md)"


def check_command(command: str, cwd: Path | str, env: Mapping[str, str] | None = None,
                  workdirs: tuple[Path | str, ...] = ()) -> str | None:
    """The refusal of the shell command `command` (str) run by bash in `cwd`, or None.

    `env`: the environment the command gets (default mm's, os.environ), for `$HOME` and other
    variables; `workdirs`: more folders whose recursive delete is refused as the working
    directory's (the conversation's, when `cwd` is where execute_bash moved to). Touches
    nothing; reads symlinks, and the scripts the command runs (`bash x.sh`, `source x`).
    Never raises (an internal failure is reported as the `unreadable` rule).
    """
    from mm.tools.floor.state import start_state

    return _checked(lambda reader: reader.script(command, start_state(str(cwd), env)), cwd, workdirs)


def check_argv(argv: list[str], cwd: Path | str, env: Mapping[str, str] | None = None,
               workdirs: tuple[Path | str, ...] = ()) -> str | None:
    """The refusal of the program `argv` (list of str, no shell: no expansion) run in `cwd`, or
    None; as check_command."""
    from mm.tools.floor.rules import check_simple
    from mm.tools.floor.state import start_state
    from mm.tools.floor.values import Simple, exact

    def read(reader):
        from mm.tools.floor.words import Expander

        reader.expander = Expander(b"", lambda node, st: None, lambda node, st: None)
        check_simple(reader, Simple([exact(a) for a in argv]), start_state(str(cwd), env))

    return _checked(read, cwd, workdirs)


def _checked(read, cwd: Path | str, workdirs: tuple[Path | str, ...]) -> str | None:
    from mm.tools.floor.values import Refused
    from mm.tools.floor.walk import Reader

    folders = tuple(dict.fromkeys(os.path.abspath(str(w)) for w in (cwd, *workdirs)))
    try:
        read(Reader(folders))
    except Refused as refused:
        return REFUSAL.format(rule=refused.rule, what=refused.what)
    except RecursionError:
        return REFUSAL.format(rule="unreadable", what="the command is nested too deep for the floor to read")
    return None
