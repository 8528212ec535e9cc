"""Line mode's `🔐` prompt: the call's planned change, and the four answers (mm-tools.md,
Permissions note and Terminal display; docs/line-mode.md §Permission prompt). The call itself is
named once, by its header (`🛠️  bash: <command>`, `📝 write_file: <path>`) shown just before.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from mm.events import PermissionAnswer
from mm.ui.line.keys import EscapePressed, ask_line
from mm.ui.render import visible

PERMISSION_CHOICES = "🔐 {name}: allow? [a] once · [s] for this session · [r] reject · [n] never: "
MORE_ROWS = "… ({n} more line(s))"
ROWS_SHOWN = 40  # lines of the planned change shown above the 🔐 line, at most
INDENT = "   "
ANSWERS: dict[str, PermissionAnswer] = {
    "a": "allow_once", "allow": "allow_once", "once": "allow_once", "y": "allow_once", "yes": "allow_once",
    "s": "allow_always", "session": "allow_always", "always": "allow_always",
    "r": "reject_once", "reject": "reject_once", "no": "reject_once",
    "n": "reject_always", "never": "reject_always",
}
# A diff row of write_file / edit_file (mm.tools.diff): `+12 │ text`, `-12 │ text`, ` 12 │ text`, `@@ … @@`.
_ROW = re.compile(r"([+-]) *\d+ │")
ROW_STYLES = {"+": "green", "-": "red"}


def permission_text(name: str, preview: str, rows: int = ROWS_SHOWN) -> Any:
    """What is shown between the call's header and the answers' line, as a rich Text, or None
    when the header says it all.

    `preview` is the engine's: the command (bash: the header shows it whole), `<path>\\n<diff rows>`
    (write_file, edit_file: the header names the path), the arguments as JSON (one line, the
    header's), or an asked agent's `<title>\\n<diff rows>`. Its lines after the first are shown
    indented, at most `rows` of them then `… (N more line(s))`; in a diff (the lines open with
    `@@`), added rows green and deleted rows red (plain text on a console without colour).
    Control characters are shown in caret notation.
    """
    from rich.text import Text

    rest = [] if name == "bash" else visible(preview).split("\n")[1:]
    if not rest:
        return None
    text = Text()
    diff = rest[0].startswith("@@")  # a diff opens with its hunk's header
    for n, row in enumerate(rest[:rows]):
        text.append(("\n" if n else "") + INDENT)
        text.append(row, style=_row_style(row) if diff else "")
    if len(rest) > rows:
        text.append("\n" + INDENT + MORE_ROWS.format(n=len(rest) - rows), style="dim")
    return text


def _row_style(row: str) -> str:
    match = _ROW.match(row)
    if match:
        return ROW_STYLES[match.group(1)]
    return "dim" if row.startswith("@@") else ""


async def ask_permission(session: Any, name: str, preview: str, say: Callable[[Any], None],
                         stop_turn: Callable[[], None] | None) -> PermissionAnswer:
    """Show the planned change (`say` prints a rich renderable), then read the answer at
    `session`'s prompt, `🔐 <name>: allow? …` (PERMISSION_CHOICES).

    A letter or its word answers (ANSWERS); anything else asks again, so a stray word never
    allows a command. Esc, Ctrl-C or end of input return "reject_once" after `stop_turn()`:
    these keys cancel the turn in flight (mm-tools.md §bash, Cancellation). Raises nothing.
    """
    shown = permission_text(name, preview)
    if shown is not None:
        say(shown)
    while True:
        try:
            answer = (await ask_line(session, PERMISSION_CHOICES.format(name=name))).strip().lower()
        except (EscapePressed, EOFError, KeyboardInterrupt):
            if stop_turn is not None:
                stop_turn()
            return "reject_once"
        if answer in ANSWERS:
            return ANSWERS[answer]
