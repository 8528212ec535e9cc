"""Skills: written procedures the model loads with `read_skill` (mm-tools.md §read_skill; docs/skills.md).

A skill is `<folder>/<name>.md`, or `<folder>/<name>/SKILL.md` when there is no flat file; its
name and description come from the YAML frontmatter when it has them. The folders are
`skillsDir`, then where other agents keep skills (issue 11 point 7: `.agents/skills`,
`.claude/skills`, the user's `~/.config/mm/skills`); a name found twice is the first folder's. The front ends use this module to list the
skills (the tool's description, ACP's commands) and to resolve the `$name` notation in a
prompt (mm-acp.md §Skills as commands). Nothing here is imported by `mm --version`, and PyYAML
is imported only when a skill file has frontmatter (start-up time).
"""

from __future__ import annotations

import codecs
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from mm.text import one_line

# mm's own slash commands in every front end (mm.commands.ACP_COMMANDS): they win over a skill of that name
COMMAND_NAMES = ("new", "compact", "help", "clear", "model", "resume", "cost", "init", "mcp", "memory-file", "docs", "plan")
SKILL_FILE = "SKILL.md"  # the skill of a directory skill
SUFFIX = ".md"
HEAD_BYTES = 64 * 1024  # the part of a skill file read for the catalogue (frontmatter, first line)
SKILL_BYTES = 1 << 20  # the largest skill file read_skill returns (a longer one is refused)
DESCRIPTION_CHARS = 200  # a longer description is cut, with an ellipsis
NAME_CHARS = 64
NAME_PATTERN = re.compile(r"\w[\w.-]*")  # letters, digits, _, then also . and -
NO_DESCRIPTION = "(no description)"
SKIPPED = "[warning: skill file {path} skipped: {reason}]"
UNREADABLE = "it cannot be read: {reason}"
NOT_UTF8 = "it is not UTF-8 text"
BAD_YAML = "its frontmatter is not valid YAML: {problem}"
UNCLOSED = "its frontmatter has no closing --- line"
NOT_A_MAPPING = "its frontmatter is not a mapping of keys (key: value)"
BAD_DESCRIPTION = "its description is not text"
BAD_NAME = "the name {name!r} is not letters, digits, _, - or . ({n} at most, not starting with . or -)"
SKILL_NOTE = ('[mm: "${name}" names the skill {name} — call read_skill with {{"name": "{name}"}} first, '
              "then follow it; the rest of the message is its input]")
SYSTEM_PROMPT_NOTE = ("Skills are written procedures, listed in the description of the read_skill tool. "
                      "When a task matches one, or a message names one as $name, call read_skill with its "
                      "name first, then follow it.")
SHADOWED = 'the skill "{name}" ({path}) is not offered as /{name}: mm\'s own /{name} command wins'
SHADOWED_BY = '[warning: the skill "{name}" ({path}) is not used: {winner} has the same name and comes first]'
NAME_NOT_TEXT = "its name is not text"
OTHER_AGENTS = (".agents/skills", ".claude/skills")  # after skillsDir, relative to the working directory
USER_SKILLS = "mm/skills"  # under $XDG_CONFIG_HOME (default ~/.config), last

Warn = Callable[[str], None]


@dataclass(frozen=True)
class Skill:
    """One skill of the catalogue: `name` (the file stem or the directory name), its one-line
    `description`, and `path`, the markdown file read_skill returns."""

    name: str
    description: str
    path: Path


def skills_directory(skills_dir: str | None, cwd: Path) -> Path | None:
    """The directory the agent-file key `skillsDir` names, resolved against `cwd` (the process
    directory in the terminal, the session cwd in ACP) after `~` expansion; None when the key
    is "" or null (skills off). Touches no file."""
    if not skills_dir or not skills_dir.strip():
        return None
    path = Path(skills_dir).expanduser()
    return path if path.is_absolute() else cwd / path


def skill_directories(skills_dir: str | None, cwd: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """The folders skills are looked for in, first wins: `skillsDir` (skills_directory), then
    OTHER_AGENTS under `cwd`, then USER_SKILLS under `$XDG_CONFIG_HOME` (when absolute, else
    `$HOME/.config`); a folder named twice counts once. [] when `skillsDir` is "" or null: that
    turns every skill off. `env`: the environment (default os.environ). Touches no file."""
    first = skills_directory(skills_dir, cwd)
    if first is None:
        return []
    env = os.environ if env is None else env
    config_home, home = env.get("XDG_CONFIG_HOME") or "", env.get("HOME") or ""
    if not os.path.isabs(config_home):  # the XDG rule: a relative value is ignored
        config_home = os.path.join(home if os.path.isabs(home) else str(Path.home()), ".config")
    base = Path(config_home)
    found: list[Path] = []
    for folder in [first] + [cwd / rel for rel in OTHER_AGENTS] + [base / USER_SKILLS]:
        if os.path.abspath(folder) not in [os.path.abspath(f) for f in found]:
            found.append(folder)
    return found


def load_catalogues(directories: Iterable[Path], warn: Warn | None = None) -> list[Skill]:
    """The skills of every folder of `directories` (load_catalogue), sorted by name; a name
    already found in an earlier folder is left out, and `warn` receives one SHADOWED_BY line
    for it. Never raises."""
    return _first_wins([s for directory in directories for s in load_catalogue(directory, warn)], warn)


def _first_wins(skills: list[Skill], warn: Warn | None) -> list[Skill]:
    """`skills` sorted by name, each name once: the first of it; SHADOWED_BY said for the others."""
    found: dict[str, Skill] = {}
    for skill in skills:
        if skill.name not in found:
            found[skill.name] = skill
        elif warn is not None:
            warn(SHADOWED_BY.format(name=skill.name, path=skill.path, winner=found[skill.name].path))
    return sorted(found.values(), key=lambda s: s.name)


def load_catalogue(directory: Path, warn: Warn | None = None) -> list[Skill]:
    """The skills of `directory`, sorted by name; [] when it does not exist or holds none.

    Every `<name>.md` file and every `<name>/SKILL.md` is a skill; the flat file wins when both
    exist. Entries whose name starts with `.` are ignored. The skill's name is the frontmatter's
    `name` when it has one, else the file's stem or the folder's name; two files of the folder
    giving the same name: the first in file order is the skill, `warn` receives SHADOWED_BY for
    the other. A file that cannot be read, is not UTF-8, has bad frontmatter or a name that is
    not a word is skipped: `warn` (default: say nothing) receives one SKIPPED line for it.
    Never raises.
    """
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return []
    found: dict[str, Path] = {}
    for entry in entries:  # a named pipe or a device is found too: skipped with a warning
        if entry.name.startswith("."):
            continue
        if entry.name.endswith(SUFFIX) and _exists(Path(entry.path)) and not _is_dir(Path(entry.path)):
            found[entry.name[: -len(SUFFIX)]] = Path(entry.path)
    for entry in entries:
        if entry.name.startswith(".") or entry.name in found:
            continue
        nested = Path(entry.path) / SKILL_FILE
        if _is_dir(Path(entry.path)) and _exists(nested) and not _is_dir(nested):
            found[entry.name] = nested
    skills = []
    for name in sorted(found):
        skill, problem = _read_skill(name, found[name])
        if skill is not None:
            skills.append(skill)
        elif warn is not None:
            warn(SKIPPED.format(path=found[name], reason=problem))
    return _first_wins(skills, warn)


def find_skill(catalogue: Iterable[Skill], name: str) -> Skill | None:
    """The skill of `catalogue` called exactly `name`, or None."""
    return next((s for s in catalogue if s.name == name), None)


def shadowed_skills(catalogue: Iterable[Skill], commands: Iterable[str] = COMMAND_NAMES) -> list[Skill]:
    """The skills named like one of the front end's own commands (`commands`, names without the
    slash; default COMMAND_NAMES, the commands of every front end): never offered as a command,
    since the command wins (mm-acp.md §Skills as commands). Line mode passes its own longer list
    (mm.ui.line.commands.shadowing_names). The caller says so with one SHADOWED line each."""
    names = set(commands)
    return [s for s in catalogue if s.name in names]


def advertised_skills(catalogue: Iterable[Skill], commands: Iterable[str] = COMMAND_NAMES) -> list[Skill]:
    """The skills a front end offers as commands: all but the shadowed ones (see
    shadowed_skills for `commands`), in order."""
    names = set(commands)
    return [s for s in catalogue if s.name not in names]


def shadowed_line(skill: Skill) -> str:
    """The banner line for a shadowed skill (SHADOWED)."""
    return SHADOWED.format(name=skill.name, path=skill.path)


def rewrite_skill_command(text: str, catalogue: Iterable[Skill], commands: Iterable[str] = COMMAND_NAMES) -> str:
    """`/<skill> input` (the prompt, trimmed, starting with an advertised skill's command) as the
    `$<skill> input` notation; any other text unchanged (an unknown `/name` is left as typed,
    and the front end's own commands, `commands` as for shadowed_skills, are the caller's to
    intercept first: a skill of that name is never rewritten). mm-acp.md §Skills as commands."""
    match = re.fullmatch(r"/(\S+)(.*)", text.strip(), re.DOTALL)
    if match is None or find_skill(advertised_skills(catalogue, commands), match.group(1)) is None:
        return text
    return f"${match.group(1)}{match.group(2)}"


def resolve_skill_notation(text: str, catalogue: Iterable[Skill]) -> str:
    """`text` as typed, followed by one SKILL_NOTE line per distinct skill it names as `$name`
    (in the order they first appear), so that the model loads the skill itself with read_skill;
    the skill's body is never added. `$name` counts at the start or after a character that is
    not a letter, digit, `_` or `$`, and must not run on into a longer word; an unknown `$word`
    is left alone. A note already present is not added again. Returns `text` itself when no
    skill is named."""
    names = sorted({s.name for s in catalogue}, key=lambda n: (-len(n), n))
    if not names or "$" not in text:
        return text
    pattern = re.compile(r"(?<![\w$])\$(" + "|".join(map(re.escape, names)) + r")(?![\w-]|\.\w)")
    named: list[str] = []
    for match in pattern.finditer(text):
        if match.group(1) not in named:
            named.append(match.group(1))
    notes = [SKILL_NOTE.format(name=n) for n in named]
    notes = [note for note in notes if note not in text]
    return text + "".join("\n" + note for note in notes)


def skills_system_prompt(system_prompt: str, catalogue: Iterable[Skill]) -> str:
    """`system_prompt` followed by SYSTEM_PROMPT_NOTE on its own line when `catalogue` holds a
    skill; else `system_prompt` unchanged."""
    if not list(catalogue):
        return system_prompt
    return f"{system_prompt.rstrip(chr(10))}\n{SYSTEM_PROMPT_NOTE}"


def catalogue_of(registry: Any) -> list[Skill]:
    """The catalogue of the registry's read_skill tool (mm.tools.registry.Registry); [] when the
    tool is not declared (no skill found, or skills off)."""
    tool = registry.get("read_skill")
    return list(getattr(tool, "catalogue", None) or [])


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def _read_skill(name: str, path: Path) -> tuple[Skill | None, str]:
    """(the skill, "") or (None, why it is skipped). `name`: the file's, unless the frontmatter
    gives one."""
    from mm.fs import read_head

    try:  # without blocking: a named pipe or a device is refused (mm.fs.open_regular)
        head = read_head(path, HEAD_BYTES)
    except OSError as err:  # FileRefused says why in its own words
        return None, getattr(err, "reason", None) or UNREADABLE.format(reason=(err.strerror or str(err)).lower())
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=len(head) < HEAD_BYTES)
    except UnicodeDecodeError:
        return None, NOT_UTF8
    text = text.removeprefix("\ufeff")
    meta, body, problem = split_frontmatter(text)
    if problem:
        return None, problem
    given = meta.get("name")
    if given is not None and not isinstance(given, str):
        return None, NAME_NOT_TEXT
    name = given.strip() if given and given.strip() else name
    if len(name) > NAME_CHARS or not NAME_PATTERN.fullmatch(name):
        return None, BAD_NAME.format(name=name, n=NAME_CHARS)
    description = meta.get("description")
    if description is not None and not isinstance(description, str):
        return None, BAD_DESCRIPTION
    if not description or not description.strip():
        description = _first_line(body)
    return Skill(name, one_line(description, DESCRIPTION_CHARS), path), ""


def split_frontmatter(text: str) -> tuple[dict, str, str]:
    """(frontmatter mapping, body, problem) of a skill's `text`. Frontmatter is YAML between a
    first line `---` and the next `---` (or `...`) line; without it the mapping is {} and the
    body is the whole text. `problem` is "" or why the frontmatter is unusable (BAD_YAML,
    UNCLOSED, NOT_A_MAPPING)."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").rstrip() != "---":
        return {}, text, ""
    for i, line in enumerate(lines[1:], start=1):
        if line.rstrip("\r\n").rstrip() in ("---", "..."):
            break
    else:
        return {}, text, UNCLOSED
    import yaml  # only for a file with frontmatter (start-up time)

    try:
        meta = yaml.safe_load("".join(lines[1:i]))
    except RecursionError:
        return {}, text, BAD_YAML.format(problem="the nesting is too deep")
    except yaml.YAMLError as err:
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        return {}, text, BAD_YAML.format(problem=f"{problem}{where}")
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        return {}, text, NOT_A_MAPPING
    return meta, "".join(lines[i + 1:]), ""


def _first_line(body: str) -> str:
    """The first non-empty line of `body`, without a heading's `#` marks; NO_DESCRIPTION when none."""
    for line in body.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line
    return NO_DESCRIPTION
