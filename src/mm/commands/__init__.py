"""The slash commands both front ends offer, and `/help` (issue 11 point 6; mm-acp.md §Available
commands; docs/line-mode.md §Slash commands, docs/acp.md §Commands).

This package is shared by the front ends (ui/line, acp): the command table here, the server's
models (`mm.commands.model`), the saved conversations (`mm.commands.sessions`), `/init`
(`mm.commands.init`), the MCP servers (`mm.commands.mcp`) MEMORY.md (`mm.commands.memory_file`) and the documents index (`mm.commands.docs`). Nothing heavy is imported at module level.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable


@dataclass(frozen=True)
class Command:
    """One slash command: its `name` without the slash, a one-line `description`, `takes`, what
    may follow it as shown by /help (`[NAME]` optional, `WORDS` required; "" for nothing), and
    `hint`, the same for an ACP client (`AvailableCommand.input.hint`)."""

    name: str
    description: str
    takes: str = ""
    hint: str = ""


HELP = Command("help", "List the commands, then the skills")
NEW = Command("new", "Clear the history and start a new session")  # mm-acp.md §Available commands
CLEAR = Command("clear", "Clear the history and start a new session (as /new)")
COMPACT = Command("compact", "Compress the history now, keeping the last turns")  # mm-acp.md
MODEL = Command("model", "List the server's models; /model NAME switches to one for the rest of the conversation",
                "[NAME]", "a model name, or nothing to list them")
RESUME = Command("resume", "List the saved conversations; /resume ID goes on with one", "[ID]",
                 "a session id, or nothing to list them")
COST = Command("cost", "The session's token totals and the context window's fill")
INIT = Command("init", "Ask the model to write an AGENTS.md for this project (build, test, run)")
MCP = Command("mcp", "List the MCP servers, their state and their tools")  # docs/mcp.md
USAGE = Command("usage", "The session's token totals and the context window's fill (also /cost)")
SESSIONS = Command("sessions", "List the saved conversations; /sessions ID goes on with one (also /resume)", "[ID]")
MEMORY = Command("memory", "Search past conversations for words", "WORDS")
MEMORY_FILE = Command("memory-file", "Show MEMORY.md, the notes the memory tool keeps (docs/memory.md)")
EDIT = Command("edit", "Write the prompt in $EDITOR (also Ctrl-X Ctrl-E)", "[TEXT]")
ASK = Command("ask", "Hand a prompt to an agent of mmConfigs and show its answer", "AGENT PROMPT")
DOCS = Command("docs", "List the indexed documents; /docs add PATH… indexes files, /docs clear empties the index",
               "[add PATH…]", "add PATH… to index files, clear to empty the index, nothing to list it")
PLAN = Command("plan", "Plan mode: read and plan, change nothing until a plan is approved; /plan again leaves it")
QUIT = Command("quit", "Leave mm (also /exit, Ctrl-D)")
EXIT = Command("exit", "Leave mm (as /quit)")

# What `mm -acp` intercepts and advertises, in this order (mm-acp.md lists new and compact first).
ACP_COMMANDS = (NEW, COMPACT, HELP, CLEAR, MODEL, RESUME, COST, INIT, MCP, MEMORY_FILE, DOCS, PLAN)
# What line mode handles.
LINE_COMMANDS = (HELP, NEW, CLEAR, COMPACT, USAGE, COST, MODEL, SESSIONS, RESUME, MEMORY, MEMORY_FILE, DOCS, INIT, MCP,
                 EDIT, ASK, PLAN, QUIT, EXIT)
ALIASES = {"clear": "new", "cost": "usage", "resume": "sessions", "exit": "quit"}  # the name → what it does

SKILLS_HEAD = "skills (/name or $name, then what it needs):"
NO_SKILLS = ("skills: none found (in skillsDir, .agents/skills, .claude/skills and ~/.config/mm/skills: "
             "docs/skills.md)")
ROW = "{usage:<{width}}  {description}"


def help_text(commands: Iterable[Command], skills: Iterable[Any], footer: str = "") -> str:
    """`/help`: one ROW per command (`/name TAKES`, description), then SKILLS_HEAD and one row
    per skill (mm.skills.Skill: its name and description), or NO_SKILLS; then `footer` when
    given. Columns are as wide as the longest command or skill."""
    rows = [("/" + c.name + (" " + c.takes if c.takes else ""), c.description) for c in commands]
    skill_rows = [("/" + s.name, s.description) for s in skills]
    width = max(len(usage) for usage, _ in rows + skill_rows)
    lines = [ROW.format(usage=u, width=width, description=d).rstrip() for u, d in rows]
    if skill_rows:
        lines += [SKILLS_HEAD] + [ROW.format(usage=u, width=width, description=d).rstrip() for u, d in skill_rows]
    else:
        lines.append(NO_SKILLS)
    return "\n".join(lines + ([footer] if footer else []))
