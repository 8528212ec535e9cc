"""The `use_skill` tool: a skill of mm's catalogue, its body with `$ARGUMENTS` and `${SKILL_DIR}`
filled in (mnemo-tools.md §Conditional tools; notes/mnemoai.md §2.11, §4.5; docs/skills.md §use_skill)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mm.skills import Skill, find_skill, split_frontmatter
from mm.tools.base import Param, ToolContext, ToolKind, ToolResult
from mm.tools.read_skill import base_name, cut_to, skill_text, unreadable

DESCRIPTION_HEAD = (
    "Load a skill's full step-by-step instructions into context. Call it the moment the user's request matches "
    "one of the skills below, before you start working, then follow it. `arguments` fills the skill's "
    "$ARGUMENTS.")
LISTING = "<available_skills>\n{lines}\n</available_skills>"
LINE = "  - {name}: {description}"
PARAMS = (
    Param("name", "string", "The skill's name, exactly as shown in <available_skills>."),
    Param("arguments", "string", "Free text the skill works on (its $ARGUMENTS).", required=False, default=""),
)
# The reference's texts (skill_tool.py: notes §2.11).
UNKNOWN = "No skill named {name!r}. Available skills: {names}. Use the exact name shown in <available_skills>."
RESULT = "# Skill: {name}\n\n{body}\n\n---\n{resources}"
RESOURCES = "(Bundled resources for this skill, if any, live in: {folder} — read reference files and run scripts there.)"
ARGUMENTS_NOTE = "ARGUMENTS: {arguments}"  # a body without $ARGUMENTS gets them after it (as Claude Code does)
PREVIEW = "(skill {name}: {lines} line(s) loaded, not shown)"
# `$ARGUMENTS`, `${SKILL_DIR}`/`$SKILL_DIR`, `${CLAUDE_SKILL_DIR}`/`$CLAUDE_SKILL_DIR` (and `${ARGUMENTS}`):
# a bare name must end the word. One pass: what is put in is never read again.
VARIABLE = re.compile(r"\$(?:\{(ARGUMENTS|SKILL_DIR|CLAUDE_SKILL_DIR)\}|(ARGUMENTS|SKILL_DIR|CLAUDE_SKILL_DIR)(?!\w))")


def skill_folder(skill: Skill) -> Path:
    """The folder of the skill's bundled files: the directory of a `<name>/SKILL.md`, the folder
    holding a flat `<name>.md` (absolute)."""
    return Path(os.path.abspath(skill.path.parent))


def substitute(body: str, arguments: str, folder: str) -> str:
    """`body` with every VARIABLE replaced in one word-bounded pass: `$ARGUMENTS` by `arguments`,
    the skill-directory variables by `folder`; `arguments` holding `${SKILL_DIR}` stay as given."""
    def value(match: re.Match) -> str:
        return arguments if (match.group(1) or match.group(2)) == "ARGUMENTS" else folder

    return VARIABLE.sub(value, body)


def render(skill: Skill, text: str, arguments: str) -> str:
    """RESULT for the skill file's `text`: its body (the frontmatter left out, trimmed) with the
    variables substituted; ARGUMENTS_NOTE after a body that has no `$ARGUMENTS` when `arguments`
    is not blank."""
    _, body, _ = split_frontmatter(text)
    folder = str(skill_folder(skill))
    body = body.strip()
    uses = any((m.group(1) or m.group(2)) == "ARGUMENTS" for m in VARIABLE.finditer(body))
    body = substitute(body, arguments, folder)
    if arguments.strip() and not uses:
        body = f"{body}\n\n{ARGUMENTS_NOTE.format(arguments=arguments)}"
    return RESULT.format(name=skill.name, body=body, resources=RESOURCES.format(folder=folder))


@dataclass
class UseSkill:
    """use_skill: kind `read`, never a permission; declared only with a non-empty `catalogue`
    (mm.skills.load_catalogues over every folder of mm.skills.skill_directories)."""

    catalogue: list[Skill]
    name: str = "use_skill"
    kind: ToolKind = "read"
    description: str = ""
    params: list[Param] = field(default_factory=lambda: list(PARAMS))
    needs_permission: bool = False

    def __post_init__(self) -> None:
        self.catalogue = sorted(self.catalogue, key=lambda s: s.name)
        lines = "\n".join(LINE.format(name=s.name, description=s.description) for s in self.catalogue)
        self.description = f"{DESCRIPTION_HEAD}\n{LISTING.format(lines=lines)}"

    def title(self, args: dict[str, Any], ctx: ToolContext | None = None) -> str:
        """`use_skill: <name>` (as the call gives it)."""
        return f"{self.name}: {args.get('name', '')}"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """RESULT for the skill called `name` (exactly, after read_skill's base_name), cut to
        maxOutput; UNKNOWN (failed) for another name. Never raises."""
        given = str(args.get("name") or "")
        skill = find_skill(self.catalogue, base_name(given))
        if skill is None:
            names = ", ".join(s.name for s in self.catalogue) or "(none)"
            return ToolResult(UNKNOWN.format(name=given.strip(), names=names), failed=True)
        text = await skill_text(skill)
        if isinstance(text, OSError):
            return ToolResult(unreadable(self.name, skill, text), failed=True)
        out = render(skill, text, str(args.get("arguments") or ""))
        return ToolResult(cut_to(out, ctx.settings.max_output), locations=[Path(os.path.abspath(skill.path))],
                          preview=PREVIEW.format(name=skill.name, lines=out.count("\n") + 1))
