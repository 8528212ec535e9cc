"""The `read_skill` tool: a skill's markdown, for the model to follow (mm-tools.md §read_skill)."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from mm.skills import SKILL_BYTES, Skill, find_skill
from mm.tools.base import Param, ToolContext, ToolKind, ToolResult

DESCRIPTION_HEAD = (
    "Read a skill: a written procedure for a kind of task. Call it with the skill's name before doing "
    "a task a skill covers, or when the user names one as $name, then follow what it says. The skills:"
)
CATALOGUE_LINE = "  {name} — {description}"  # mm-tools.md §read_skill, Description
PARAMS = [Param("name", "string", "Skill name, exactly as listed in the tool description.")]
UNKNOWN = 'No skill named "{name}". Available skills: {names}'  # mm-tools.md §read_skill
UNREADABLE = "[{tool}: the skill {name} ({path}) cannot be read: {reason}]"
TRUNCATED = ("[... truncated to maxOutput ({limit} characters): {shown} of the skill's {total} characters "
             "shown ...]")
PREVIEW = "(skill {name}: {lines} line(s) read, not shown)"  # the terminal never echoes the skill


def catalogue_description(catalogue: list[Skill]) -> str:
    """DESCRIPTION_HEAD, then one CATALOGUE_LINE per skill, sorted by name, each on its own line."""
    lines = [CATALOGUE_LINE.format(name=s.name, description=s.description)
             for s in sorted(catalogue, key=lambda s: s.name)]
    return "\n".join([DESCRIPTION_HEAD] + lines)


def base_name(name: str) -> str:
    """The skill name a call asks for: the base name of `name` (`../etc/passwd` → `passwd`, `\\`
    counted as a separator), without a leading `$` (the notation) or a final `.md`."""
    base = PurePosixPath(name.strip().replace("\\", "/")).name
    return base.removeprefix("$").removesuffix(".md")


def cut_to(text: str, limit: int) -> str:
    """`text` within `limit` characters (mm.tools.truncate.cut_to), with the TRUNCATED marker."""
    from mm.tools.truncate import cut_to as cut

    return cut(text, limit, lambda shown: TRUNCATED.format(limit=limit, shown=shown, total=len(text)))


async def skill_text(skill: Skill) -> str | OSError:
    """The skill file's text (UTF-8, bad bytes as U+FFFD, a leading BOM dropped), read in a
    thread without blocking, at most SKILL_BYTES (mm.fs.read_bytes); the error when it cannot be
    (FileRefused: a named pipe or a device put there since, too large)."""
    from mm.fs import read_bytes

    try:
        raw = await asyncio.to_thread(read_bytes, skill.path, SKILL_BYTES)
    except OSError as err:
        return err
    return raw.decode("utf-8", errors="replace").removeprefix("\ufeff")


def unreadable(tool: str, skill: Skill, err: OSError) -> str:
    """UNREADABLE for `tool` (read_skill, use_skill) and the error skill_text returned."""
    reason = getattr(err, "reason", None) or (err.strerror or str(err)).lower()
    return UNREADABLE.format(tool=tool, name=skill.name, path=skill.path, reason=reason)


@dataclass
class ReadSkill:
    """read_skill: kind `read`, never a permission; declared only with a non-empty `catalogue`
    (the skills found in `directories`, first wins, when the tool was built: mm.skills.load_catalogues)."""

    directories: list[Path]
    catalogue: list[Skill]
    name: str = "read_skill"
    kind: ToolKind = "read"
    description: str = ""
    params: list[Param] = field(default_factory=lambda: list(PARAMS))
    needs_permission: bool = False

    def __post_init__(self) -> None:
        self.catalogue = sorted(self.catalogue, key=lambda s: s.name)
        self.description = catalogue_description(self.catalogue)

    def title(self, args: dict[str, Any], ctx: ToolContext | None = None) -> str:
        """`read_skill: <name>` (as the call gives it), for ACP and the terminal."""
        return f"{self.name}: {args.get('name', '')}"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Return the whole markdown file of the skill called `base_name(name)`, frontmatter
        included, cut to `ctx.settings.max_output` characters; the preview says how many lines
        were read instead of showing them. Unknown name: UNKNOWN, failed. Never raises."""
        wanted = base_name(str(args.get("name") or ""))
        skill = find_skill(self.catalogue, wanted)
        if skill is None:
            names = ", ".join(s.name for s in self.catalogue)
            return ToolResult(UNKNOWN.format(name=wanted, names=names), failed=True)
        text = await skill_text(skill)
        if isinstance(text, OSError):
            return ToolResult(unreadable(self.name, skill, text), failed=True)
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        return ToolResult(cut_to(text, ctx.settings.max_output), locations=[Path(os.path.abspath(skill.path))],
                          preview=PREVIEW.format(name=skill.name, lines=lines))
