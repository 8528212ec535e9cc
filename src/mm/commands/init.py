"""`/init`: a turn that asks the model to write an `AGENTS.md` for the project (issue 11 points 1
and 6; docs/line-mode.md §Slash commands, docs/acp.md §Commands).

The file is written by the model through `write_file`, so its permission (`yolo: false`) and
every rule of the tool hold. An `AGENTS.md` already there is left alone: /init never calls the
model then (Codex does the same; a hand-written file is not the model's to replace).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

AGENTS_FILE = "AGENTS.md"
INIT_EXISTS = ("{path} already exists: /init leaves it as it is — edit it yourself, or ask the model to improve "
               "it (or delete it and run /init again)")
INIT_NO_WRITE = "/init needs the write_file tool: set `editTools: true` in the agent file"
INIT_STARTED = "📝 /init: the model looks at the project, then writes AGENTS.md"
INIT_PROMPT = (
    "Write the file AGENTS.md for this project: the instructions a coding agent reads before working here.\n"
    "First look at the project — list its files, read its README, its build and test configuration, and any "
    "instructions for agents already there (CLAUDE.md, .cursorrules, .github/copilot-instructions.md). "
    "Write only what you found in the files; do not guess.\n"
    "Then call write_file once, with path \"AGENTS.md\" and short Markdown sections:\n"
    "- what the project is, and how it is laid out (its main folders);\n"
    "- how to build it, run its tests (the whole suite, and one test) and run it: the exact commands;\n"
    "- the conventions a change must follow (code style, linting, commits), when the project states them.\n"
    "Keep it under 100 lines."
)


def init_request(cwd: Path, tool_names: list[str]) -> tuple[str, str]:
    """What `/init` does in `cwd` with the declared tools `tool_names`: (INIT_PROMPT, "") for the
    turn to run, or ("", INIT_EXISTS / INIT_NO_WRITE) when it must not run. An AGENTS.md of any
    kind counts as existing (a folder, a link, even a dangling one)."""
    path = Path(cwd) / AGENTS_FILE
    if os.path.lexists(path):
        return "", INIT_EXISTS.format(path=path)
    if "write_file" not in tool_names:
        return "", INIT_NO_WRITE
    return INIT_PROMPT, ""


def init_of(conv: Any) -> tuple[str, str]:
    """init_request for a conversation (mm.engine.conversation.Conversation): its cwd and tools."""
    return init_request(conv.cwd, list(conv.registry.names))
