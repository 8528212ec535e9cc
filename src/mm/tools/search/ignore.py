"""Which files ripgrep leaves out, read with `pathspec` for the pure-Python search (docs/tools-search.md
§Without ripgrep): ignore files, and `file_pattern`.

Ignore files, as ripgrep 14 reads them by default:
- `.rgignore` and `.ignore` of the searched folder, of every folder below it and of every folder
  above it;
- `.gitignore` of those folders that lie in a git repository (a folder holding `.git`, or below
  one), up to the repository's top; its `.git/info/exclude`, and the user's global excludes file
  (git's `core.excludesFile`, else `$XDG_CONFIG_HOME/git/ignore`).
A deeper file's rule wins over a shallower one's; any `.rgignore` rule wins over any `.ignore` rule,
which wins over `.gitignore`, then `exclude`, then the global file. `!pattern` takes a file back.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Callable, Mapping

from mm.tools.search.paths import expand_braces

KINDS = (".rgignore", ".ignore", ".gitignore", "exclude", "global")  # the order in which they decide
GIT_KINDS = (".gitignore", "exclude", "global")
BAD_RULE = "{file}: line {line}: {error} — this rule is not applied"
_EXCLUDES_FILE = re.compile(r"^\s*excludesfile\s*=\s*(.+?)\s*$", re.IGNORECASE)
_SECTION = re.compile(r"^\s*\[\s*([^\]\s]+)")


@dataclass
class Level:
    """The rules of one folder: its ignore files, by kind."""

    folder: str
    in_repo: bool
    specs: dict[str, object] = field(default_factory=dict)  # kind → pathspec.GitIgnoreSpec


class IgnoreRules:
    """The ignore files that apply in one search; `level(folder, parent)` reads a folder's own."""

    def __init__(self, env: Mapping[str, str], warn: Callable[[str], None]):
        """`env` holds HOME and XDG_CONFIG_HOME (the global excludes file); `warn(line)` is told of
        each rule that cannot be read."""
        self.env, self.warn = env, warn

    def top(self, root: str) -> list[Level]:
        """The levels of `root`'s folder (a file's: its folder) and of every folder above it, top first."""
        folder = root if os.path.isdir(root) else os.path.dirname(root)
        chain = [folder]
        while os.path.dirname(chain[0]) != chain[0]:
            chain.insert(0, os.path.dirname(chain[0]))
        repo = next((f for f in reversed(chain) if os.path.lexists(os.path.join(f, ".git"))), None)
        levels: list[Level] = []
        for f in chain:
            in_repo = repo is not None and (f == repo or f.startswith(repo.rstrip("/") + "/"))
            levels.append(self.level(f, in_repo, top=f == repo))
        return levels

    def level(self, folder: str, in_repo: bool, top: bool = False) -> Level:
        """The rules `folder`'s own files give; `in_repo`: it lies in a git repository (`.git` in it
        or above); `top`: it is the repository's top folder (exclude and global files hang there)."""
        in_repo = in_repo or os.path.lexists(os.path.join(folder, ".git"))
        level = Level(folder, in_repo)
        names = KINDS[:3] if in_repo else KINDS[:2]
        for kind in names:
            self._add(level, kind, os.path.join(folder, kind))
        if in_repo and (top or os.path.isdir(os.path.join(folder, ".git"))):
            self._add(level, "exclude", os.path.join(folder, ".git", "info", "exclude"))
            global_file = self._global_file()
            if global_file:
                self._add(level, "global", global_file)
        return level

    def _add(self, level: Level, kind: str, path: str) -> None:
        try:
            with open(path, "rb") as f:
                text = f.read(1 << 20).decode("utf-8", "replace")
        except OSError:  # none there (the usual case), or not readable
            return
        spec = compile_rules(text.splitlines(), lambda n, err: self.warn(BAD_RULE.format(file=path, line=n, error=err)))
        if spec is not None:
            level.specs[kind] = spec

    def _global_file(self) -> str | None:
        """git's `core.excludesFile` from ~/.gitconfig, else `$XDG_CONFIG_HOME/git/ignore`."""
        home = self.env.get("HOME") or os.path.expanduser("~")
        found = _configured_excludes(os.path.join(home, ".gitconfig"))
        if found:
            return os.path.join(home, found[2:]) if found.startswith("~/") else found
        config = self.env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        return os.path.join(config, "git", "ignore")


def _configured_excludes(gitconfig: str) -> str | None:
    """`core.excludesFile` as ~/.gitconfig sets it (a plain value; includes are not followed)."""
    try:
        with open(gitconfig, encoding="utf-8", errors="replace") as f:
            lines = f.read(1 << 20).splitlines()
    except OSError:
        return None
    section = None
    for line in lines:
        header = _SECTION.match(line)
        if header:
            section = header.group(1).lower()
            continue
        value = _EXCLUDES_FILE.match(line)
        if section == "core" and value:
            return value.group(1).strip('"')
    return None


def compile_rules(lines: list[str], bad: Callable[[int, str], None]):
    """A pathspec GitIgnoreSpec of gitignore `lines`, None when they hold no rule; `bad(line
    number, error)` is told of each line pathspec cannot read (that line is left out)."""
    from pathspec import GitIgnoreSpec

    try:
        spec = GitIgnoreSpec.from_lines(lines)
    except Exception:  # one bad line: read them one by one, to say which
        kept = []
        for n, line in enumerate(lines, 1):
            try:
                GitIgnoreSpec.from_lines([line])
            except Exception as err:
                bad(n, str(err).split("\n")[0])
                continue
            kept.append(line)
        spec = GitIgnoreSpec.from_lines(kept)
    return spec if any(p.include is not None for p in spec.patterns) else None


def ignored(path: str, is_dir: bool, chain: list[Level]) -> bool:
    """Whether the rules of `chain` (levels top first, the last being `path`'s folder) leave
    `path` (absolute) out: the deepest rule of the strongest kind that speaks decides."""
    for kind in KINDS:
        for level in reversed(chain):
            spec = level.specs.get(kind)
            if spec is None:
                continue
            relative = os.path.relpath(path, level.folder)
            if relative.startswith(".."):
                continue
            said = spec.check_file(relative + "/" if is_dir else relative).include
            if said is not None:
                return said
    return False


class FilePattern:
    """`file_pattern`, read as ripgrep's `--glob`: a gitignore-style glob matched against the path
    relative to the working directory — not against its folders, as an ignore rule would be —
    (`*.py` matches a name at any depth, `src/*.py` from the working directory, `dir/` folders
    only), with `{a,b}` alternatives; `!glob` leaves what matches out instead. As in ripgrep, it
    speaks before the ignore files and the hidden-file rule: a file it names is searched even when
    ignored or hidden."""

    def __init__(self, glob: str, cwd: str):
        negated = glob.startswith("!")
        self.negated, self.cwd = negated, cwd.rstrip("/") + "/"
        self.globs = [glob_regex(g) for g in expand_braces(glob[1:] if negated else glob)]

    def says(self, path: str, is_dir: bool) -> bool | None:
        """True: search `path` (absolute) whatever else says; False: leave it out; None: the
        other rules decide (a folder a positive glob does not name is still entered)."""
        relative = path[len(self.cwd):] if path.startswith(self.cwd) else path.lstrip("/")
        matched = any(regex.fullmatch(relative) and (is_dir or not folders_only) for regex, folders_only in self.globs)
        if self.negated:
            return False if matched else None
        return True if matched else (None if is_dir else False)


def glob_regex(glob: str) -> tuple[re.Pattern, bool]:
    """(the regular expression of a gitignore-style `glob`, whether it names folders only), as
    ripgrep's ignore crate reads a glob: `/` at the start or inside anchors it, else it matches at
    any depth; a `/` at the end names folders; `*` and `?` stay within a name; `**` spans folders;
    `dir/**` is what is inside `dir`; `[…]`, `[!…]` classes; a backslash quotes the next character."""
    folders_only = glob.endswith("/") and len(glob) > 1
    body = glob[:-1] if folders_only else glob
    anchored = body.startswith("/") or "/" in body.rstrip("/")
    body = body.lstrip("/") if body.startswith("/") else body
    if not anchored and not body.startswith("**/"):
        body = "**/" + body
    if body.endswith("/**"):
        body += "/*"
    return re.compile(_translate(body), re.DOTALL), folders_only


def _translate(glob: str) -> str:
    parts, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i) and (i == 0 or glob[i - 1] == "/"):
            parts.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            parts.append("/.*")
            i += 3
        elif glob[i] == "*":
            parts.append("[^/]*")
            i += 1
            while i < len(glob) and glob[i] == "*":
                i += 1
        elif glob[i] == "?":
            parts.append("[^/]")
            i += 1
        elif glob[i] == "[" and (end := glob.find("]", i + 2)) > 0:
            inner = glob[i + 1:end]
            negate = inner[:1] in ("!", "^")
            inner = inner[1:] if negate else inner
            parts.append("[" + ("^" if negate else "") + inner.replace("\\", "\\\\").replace("[", "\\[") + "]")
            i = end + 1
        elif glob[i] == "\\" and i + 1 < len(glob):
            parts.append(re.escape(glob[i + 1]))
            i += 2
        else:
            parts.append(re.escape(glob[i]))
            i += 1
    return "".join(parts)
