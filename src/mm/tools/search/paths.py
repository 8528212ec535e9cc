"""What glob_search and grep_search share: the folder a call searches, the paths the model reads,
their order, and `{a,b}` alternatives (mnemo-tools.md §Search; docs/tools-search.md)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from mm.tools.base import ToolContext

NOT_FOUND = "Path does not exist: {path}"  # the reference's text (notes/mnemoai.md §2.4, §2.5)
NOT_A_FOLDER = "Path is not a directory: {path} — glob_search looks for files in a folder"
NOT_SEARCHABLE = "Path is a {kind}, not a file or directory: {path} — nothing was searched"
QUOTES = ("'", '"', "`")
_ESCAPED = re.compile(r"\\(.)")
_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")
MAX_ALTERNATIVES = 64  # `{a,b}` expansions of one pattern, at most


def refuse_nul(*values: str | None) -> None:
    """Raise mm.tools.failures.ArgumentError (the engine names the argument) for the first of
    `values` (a pattern, a glob) holding a NUL byte: no program can be given one."""
    from mm.tools.failures import NUL, ArgumentError

    for value in values:
        if value and "\0" in value:
            raise ArgumentError(value, NUL)


def search_root(ctx: ToolContext, path: str | None) -> Path | str:
    """The absolute path a call searches (`path` resolved against the working directory, `~`
    expanded; None or "" is the working directory), or NOT_FOUND's text when nothing is there.

    A path the model quoted or escaped as in a shell (`'my dir'`, `my\\ dir`) is read without
    its quotes when only that form exists, as the reference's tolerance. Raises
    mm.tools.failures.ArgumentError for a path no file can have (ToolContext.resolve).
    """
    if path is None or not path.strip():
        return ctx.cwd
    for form in _forms(path):
        found = ctx.resolve(form)
        if os.path.lexists(found):
            return Path(os.path.normpath(found))
    return NOT_FOUND.format(path=path)


def _forms(path: str) -> list[str]:
    """`path` as given, then without surrounding quotes or shell backslashes."""
    forms = [path]
    bare = path.strip()
    if len(bare) >= 2 and bare[0] == bare[-1] and bare[0] in QUOTES:
        bare = bare[1:-1]
    bare = _ESCAPED.sub(r"\1", bare)
    if bare and bare != path:
        forms.append(bare)
    return forms


def shown(path: str, cwd: Path) -> str:
    """`path` (absolute, str) as the model reads it: relative to the working directory `cwd`
    when it lies inside it, else absolute."""
    base = str(cwd).rstrip("/") + "/"
    return path[len(base):] if path.startswith(base) and len(path) > len(base) else path


def place(root: Path, cwd: Path) -> str:
    """Where a search looked, in words: "the working directory", or the path (as `shown`)."""
    return "the working directory" if root == cwd else shown(str(root), cwd)


def order_key(path: str) -> tuple[bytes, ...]:
    """The order results are given in: by path, name by name, bytewise — ripgrep's `--sort path`
    order, in which `a/b` comes before `a.txt` (mnemo-tools.md: "results are sorted by path")."""
    return tuple(os.fsencode(path).split(b"/"))


def expand_braces(pattern: str) -> list[str]:
    """The alternatives of `pattern`'s `{a,b}` groups (`*.{ts,tsx}` → `*.ts`, `*.tsx`), as
    ripgrep's and Claude Code's globs read them; a pattern without such a group is itself. At most
    MAX_ALTERNATIVES alternatives (the rest of a pattern that would make more stays unexpanded)."""
    done, todo = [], [pattern]
    while todo:
        current = todo.pop(0)
        found = _BRACES.search(current)
        if found is None or len(done) + len(todo) >= MAX_ALTERNATIVES:
            done.append(current)
            continue
        head, tail = current[:found.start()], current[found.end():]
        todo[:0] = [head + choice + tail for choice in found.group(1).split(",")]
    return list(dict.fromkeys(done))
