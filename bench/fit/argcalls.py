"""Realistic tool calls built from real text: blocks of the running interpreter's standard library.

Four-space Python from `Path(os.__file__).parent`, tab-indented text from the interpreter's own
`Makefile` (sysconfig), two-space and tab-indented variants of Python blocks (the indentation
re-typed, the text kept), blocks around non-ASCII lines; quotes, backslashes and unicode come
with the text. Every call is what a coding agent sends: write_file, edit_file, bash, read_file.
"""

from __future__ import annotations

import os
import random
import re
import sysconfig
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

STDLIB = Path(os.__file__).parent
_SKIP_DIRS = {"site-packages", "dist-packages", "test", "tests", "idle_test", "__pycache__"}
_IDENT = re.compile(r"\b[a-z_][a-z0-9_]{3,}\b")


@dataclass
class Call:
    """A call the model means to make: the tool and its arguments."""

    tool: str
    args: dict


@dataclass
class Source:
    """One real file: its path relative to where it was found, and its lines (with line ends)."""

    path: str
    lines: list[str]
    unicode: bool


@lru_cache(maxsize=1)
def sources() -> tuple[list[Source], list[Source]]:
    """(Python files of the standard library, tab-indented files), sorted by path."""
    python: list[Source] = []
    for path in sorted(STDLIB.rglob("*.py")):
        rel = path.relative_to(STDLIB)
        if _SKIP_DIRS & set(rel.parts):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        lines = text.splitlines(keepends=True)
        if 30 <= len(lines) <= 4000:
            python.append(Source(str(rel), lines, not text.isascii()))
    tabbed: list[Source] = []
    makefile = sysconfig.get_makefile_filename()
    if makefile and Path(makefile).is_file():
        text = Path(makefile).read_text(encoding="utf-8", errors="replace")
        tabbed.append(Source("Makefile", text.splitlines(keepends=True), False))
    return python, tabbed


def block(rng: random.Random, min_lines: int, max_lines: int) -> tuple[str, str]:
    """(path, text) of a block of consecutive lines of one real file, in one of the indentation
    conventions: four spaces (as found), tabs, or two spaces; some blocks hold non-ASCII text."""
    python, tabbed = sources()
    style = rng.choice(["4", "4", "tab", "2", "unicode"])
    if style == "tab" and tabbed and rng.random() < 0.5:
        src = tabbed[0]
    elif style == "unicode":
        src = rng.choice([s for s in python if s.unicode] or python)
    else:
        src = rng.choice(python)
    n = rng.randint(min_lines, max_lines)
    if style == "unicode":
        hits = [i for i, line in enumerate(src.lines) if not line.isascii()] or [0]
        start = max(0, rng.choice(hits) - rng.randint(0, n - 1))
    else:
        start = rng.randrange(max(1, len(src.lines) - n))
    text = "".join(src.lines[start:start + n])
    if style in ("tab", "2") and src.path != "Makefile":
        text = reindent(text, "\t" if style == "tab" else "  ")
    return src.path, text


def reindent(text: str, unit: str) -> str:
    """`text` with each leading run of four spaces re-typed as `unit`."""
    def one(line: str) -> str:
        stripped = line.lstrip(" ")
        levels, rest = divmod(len(line) - len(stripped), 4)
        return unit * levels + " " * rest + stripped
    return "".join(one(line) for line in text.splitlines(keepends=True))


def write_file(rng: random.Random) -> Call:
    path, text = block(rng, 3, 60)
    if rng.random() < 0.12:
        text = text.rstrip("\n")  # a file without its final newline
    return Call("write_file", {"path": _place(rng, path), "content": text})


def edit_file(rng: random.Random) -> Call:
    path, text = block(rng, 1, 15)
    edits = [{"old": text, "new": _changed(rng, text)}]
    if rng.random() < 0.25:
        _, other = block(rng, 1, 6)
        edits.append({"old": other, "new": _changed(rng, other)})
    args: dict = {"path": _place(rng, path), "edits": edits}
    if rng.random() < 0.3:
        args["dry_run"] = rng.random() < 0.5
    return Call("edit_file", args)


def bash(rng: random.Random) -> Call:
    path, text = block(rng, 1, 12)
    path = _place(rng, path)
    words = _IDENT.findall(text) or ["main"]
    word = rng.choice(words)
    line = text.strip().splitlines()[0] if text.strip() else word
    commands = [
        f"grep -n 'def {word}' {path}",
        f'grep -rn "{word}\\|{rng.choice(words)}" --include=*.py .',
        f"sed -n '{rng.randint(1, 200)},{rng.randint(201, 400)}p' {path}",
        f"python3 -m pytest -q -x tests/test_{word}.py -k '{word} and not slow'",
        f"cat > {path} <<'EOF'\n{text}EOF",
        f"printf '%s\\n' {_shell_quote(line)} | wc -c",
        f"find . -name '*.py' -newer {path} | xargs grep -l \"{word}\" 2>/dev/null | head -20",
        f'git diff --stat && git log --oneline -5 -- "{path}"',
        f"python3 -c \"import re; print(re.findall(r'\\\\b{word}\\\\w*', open('{path}').read()))\"",
    ]
    return Call("bash", {"command": rng.choice(commands)})


def read_file(rng: random.Random) -> Call:
    path, _ = block(rng, 1, 1)
    args: dict = {"path": _place(rng, path)}
    if rng.random() < 0.6:
        start = rng.randint(1, 300)
        args["start"] = start
        if rng.random() < 0.7:
            args["end"] = start + rng.randint(10, 120)
    if rng.random() < 0.3:
        args["numbered"] = rng.random() < 0.5
    return Call("read_file", args)


MAKERS = {"write_file": write_file, "edit_file": edit_file, "bash": bash, "read_file": read_file}


def make_call(rng: random.Random, tools: tuple[str, ...] = tuple(MAKERS)) -> Call:
    """A realistic call of one of `tools` (write_file and edit_file twice as often)."""
    weights = {"write_file": 2, "edit_file": 2, "bash": 1, "read_file": 1}
    return MAKERS[rng.choices(tools, [weights[t] for t in tools])[0]](rng)


def _place(rng: random.Random, path: str) -> str:
    return rng.choice(["", "src/", "lib/", "./"]) + path


def _changed(rng: random.Random, text: str) -> str:
    """`text` as a model would rewrite it: a name renamed, a comment line added, or a line dropped."""
    lines = text.splitlines(keepends=True) or [""]
    words = _IDENT.findall(text)
    choice = rng.random()
    if words and choice < 0.4:
        word = rng.choice(words)
        return text.replace(word, word + "_new", 1)
    if choice < 0.75 or len(lines) == 1:
        i = rng.randrange(len(lines))
        indent = lines[i][:len(lines[i]) - len(lines[i].lstrip(" \t"))]
        note = rng.choice(["# keep the old behaviour for callers", "# it's \"safe\" here: see the note above",
                           "# path: C:\\temp\\out (Windows)", "# café — naïve façade"])
        return "".join(lines[:i + 1]) + indent + note + "\n" + "".join(lines[i + 1:])
    del lines[rng.randrange(len(lines))]
    return "".join(lines)


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
