"""Line mode's slash commands: which words are commands, and what each one answers (mm-acp.md
§/new, §/compact; mm-tools.md §search_memory for /memory; issue 11 point 6 for /help, /clear,
/model, /resume, /cost, /init, /edit; docs/line-mode.md §Slash commands).

The command word is matched without regard to case (`/QUIT` quits); the REPL intercepts these
words before a skill's `/name` is rewritten, so a skill never takes one over (mm.skills). The
table of commands and their descriptions is mm.commands' (shared with ACP).
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from typing import Any, Iterable

from mm.commands import ALIASES, LINE_COMMANDS as TABLE
from mm.commands.sessions import NO_SESSIONS

HELP = "/help lists the commands · Tab completes · Esc Enter for a new line · Esc or Ctrl-C cancels the turn"
KEYS = ("keys: Enter sends · Esc Enter (Alt-Enter) adds a line · Tab completes commands, skills and @files · "
        "Ctrl-X Ctrl-E opens $EDITOR · Esc or Ctrl-C cancels the turn · Ctrl-D leaves")
UNKNOWN_COMMAND = "unknown command {command} (to send it to the model, start the line with a space) — {help}"
NO_MEMORY = "/memory is off: set `sessions: {searchMemory: true}` in the agent file to search past conversations"
NO_WORDS = "{command} takes nothing after it: type {command} alone"
NOT_DURING_TURN = "{command} waits for the end of the turn: answer the question (or /skip, /abort) first"
COMMAND_CANCELLED = "{command} cancelled"
NO_EDITOR_HERE = "/edit needs a terminal: mm reads its prompts from a pipe here"
# Every command the REPL handles, without the slash: a skill of one of these names is not offered.
LINE_COMMANDS = tuple(c.name for c in TABLE)
QUITS = ("/quit", "/exit")
ALONE = ("/quit", "/exit", "/new", "/clear", "/compact", "/usage", "/cost", "/help", "/init", "/mcp", "/memory-file", "/plan")  # take no words
# The spinner's word while a command runs (one that answers at once shows none for long).
STATUS = {"/compact": "Compacting the history", "/memory": "Searching past conversations",
          "/model": "Asking the model server", "/docs": "Indexing documents"}
WORKING = "Working"
# Read-only commands that answer at an ask_user question (then the question is asked again); with
# words after them, /sessions, /resume and /model would change the conversation under the turn.
AT_A_QUESTION = ("/usage", "/cost", "/memory", "/sessions", "/resume", "/help", "/model", "/mcp", "/memory-file")
CHANGES_WITH_WORDS = ("/sessions", "/resume", "/model")


@dataclass
class Services:
    """What the commands that reach past the conversation call, each awaitable (None: off):
    `memory(words, history)` searches past sessions (or answers why it cannot); `sessions(choice,
    conv)` lists or resumes them; `models(choice, conv)` lists the server's models or switches.
    And `notes()` (not awaited; None: nothing to say), the lines said since it was last called
    that the REPL prints between turns (an MCP server that did not start or stopped)."""

    memory: Any = None
    sessions: Any = None
    models: Any = None
    notes: Any = None


def command_of(text: str) -> str | None:
    """The line-mode command `text` (trimmed) starts with, in lower case (`/quit`), or None when its
    first word is not one (a skill's `/name`, an unknown `/word`, a prompt)."""
    words = text.strip().split(None, 1)
    if not words or not words[0].startswith("/"):
        return None
    word = words[0].lower()
    return word if word[1:] in LINE_COMMANDS else None


def is_a_prompt(typed: str) -> bool:
    """Whether a line whose first word starts with `/` but is neither a command nor a skill's
    `/name` goes to the model as typed (docs/line-mode.md §Slash commands): when `typed` (the line
    as typed, untrimmed) starts with white space, or its first word is a path — it holds another
    `/` (`/etc/hosts`, `/tmp/x.log:`), or names an existing file or folder (`/etc`, `/tmp:`).
    Otherwise it is an unknown command (UNKNOWN_COMMAND)."""
    if typed[:1].isspace():
        return True
    word = typed.split(None, 1)[0] if typed.strip() else ""
    if "/" in word[1:]:
        return True
    try:
        return os.path.exists(word.rstrip(".,;:!?"))
    except (OSError, ValueError):  # a NUL byte, a name too long
        return False


def words_after(text: str) -> str:
    """What follows the command word of `text`, trimmed."""
    words = text.strip().split(None, 1)
    return words[1].strip() if len(words) > 1 else ""


def shadowing_names(catalogue: Iterable[Any]) -> list[str]:
    """The names a skill must not have to be offered as `/name` in line mode: LINE_COMMANDS, and
    the catalogue's names that are one of them but for case (`QUIT.md`: `/QUIT` quits). For
    mm.skills.shadowed_skills and rewrite_skill_command."""
    return list(LINE_COMMANDS) + [s.name for s in catalogue if s.name.lower() in LINE_COMMANDS]


def help_of(conv: Any) -> str:
    """`/help`: every line-mode command, then the skills offered as `/name`, then KEYS."""
    from mm.commands import help_text
    from mm.skills import advertised_skills, catalogue_of

    catalogue = catalogue_of(conv.registry)
    return help_text(TABLE, advertised_skills(catalogue, shadowing_names(catalogue)), KEYS)


async def slash_command(conv: Any, text: str, services: Services | None = None) -> str:
    """Run a slash command typed at the prompt and return the text to show (mm-acp.md: /new,
    /compact; mm-tools.md §search_memory: /memory; docs/line-mode.md for the others). An alias
    (mm.commands.ALIASES: /clear, /cost, /resume, /exit) does what its command does. Words after a
    command that takes none answer NO_WORDS, and nothing runs; a word that is no command answers
    UNKNOWN_COMMAND. /quit, /ask, /init and /edit are the REPL's own. Raises nothing of its own."""
    services = services or Services()
    command = command_of(text)
    if command is None:
        return UNKNOWN_COMMAND.format(command=text.split()[0], help=HELP)
    rest = words_after(text)
    if command in ALONE and rest:
        return NO_WORDS.format(command=command)
    does = "/" + ALIASES.get(command[1:], command[1:])
    if does == "/help":
        return help_of(conv)
    if does == "/new":
        return conv.new()
    if does == "/compact":
        return await conv.compact()
    if does == "/usage":
        return conv.usage_text()
    if does == "/sessions":
        return await services.sessions(rest, conv) if services.sessions is not None else NO_SESSIONS
    if does == "/memory":
        return await services.memory(rest, conv.history) if services.memory is not None else NO_SESSIONS
    if does == "/model" and services.models is not None:
        return await services.models(rest, conv)
    if does == "/mcp":
        from mm.commands.mcp import servers_text

        return servers_text(conv.registry)
    if does == "/memory-file":
        from mm.commands.memory_file import memory_file_text

        return memory_file_text(conv.registry)
    if does == "/docs":
        from mm.commands.docs import docs_command

        return await docs_command(conv, rest)
    if does == "/plan":  # docs/plan-mode.md
        return conv.set_plan_mode(not conv.plan_mode.active)
    return UNKNOWN_COMMAND.format(command=command, help=HELP)


async def run_waiting(conv: Any, text: str, services: Services | None, cancelled: asyncio.Event) -> str:
    """`slash_command`, stopped when `cancelled` is set: `/compact` itself honours the
    conversation's cancel() (and answers `[compact: failed, history kept: cancelled]`), any other
    command stops waiting and answers COMMAND_CANCELLED (a /memory search's thread is left to end
    on its own; it changes nothing; a /model switch cancelled while the server is asked changes
    nothing either: the switch is made once the server has answered)."""
    from mm.tools.waiting import Cancelled, unless_cancelled

    command = command_of(text)
    work = slash_command(conv, text, services)
    if command == "/compact":
        return await work
    try:
        return await unless_cancelled(work, cancelled)
    except Cancelled:
        return COMMAND_CANCELLED.format(command=command)


async def question_command(conv: Any, line: str, services: Services | None) -> str | None:
    """A line typed at an ask_user question that is a line-mode command: its text to show (then
    the question is asked again), or None when the line is no command and so an answer.

    /help, /usage (/cost), /memory, and /sessions (/resume) and /model without words answer as at
    the prompt; a command that would change the conversation under the turn (/new, /clear,
    /compact, /ask, /init, /edit, /sessions <id>, /model <name>) answers NOT_DURING_TURN.
    /skip, /abort, /quit and /exit are the question's own (mm.ui.line.ask)."""
    command = command_of(line)
    if command is None or command in QUITS:
        return None
    if command in AT_A_QUESTION and not (command in CHANGES_WITH_WORDS and words_after(line)):
        return await slash_command(conv, line, services)
    return NOT_DURING_TURN.format(command=command)
