"""An answer whose text holds an edit instead of a tool call (docs/engine.md §Edits written in the answer).

Small models often "answer" with the change written out — aider's SEARCH/REPLACE blocks, Codex's
`*** Begin Patch`, a unified diff, or a file's new content in a fence — and stop, believing the
file changed. mm tells them once per turn to make the change with a tool. Signals, to spare
ordinary answers with code in them: SEARCH/REPLACE or `*** Begin Patch` markers; a diff whose `+++`/`---` header names a file of the
working directory, with a hunk header; a fenced block presented as the content of an existing
file of the working directory (a lone path line right before it, its path in the fence's info
string, or a line naming it with a word such as "updated"). A block or hunk that is already in
the file (an excerpt, or a change already made and shown) is no edit.
"""

from __future__ import annotations

import re
from typing import Any
from pathlib import Path

EDIT_IN_TEXT_NOTE = (
    "[mm: your answer holds {what}, but no file was changed: an edit written in an answer is not applied. "
    "If the task is to change files, make the change now with edit_file (write_file for a whole file); "
    "if the user only asked to see it, answer in one line]"
)
WHAT_SEARCH_REPLACE = "SEARCH/REPLACE blocks"
WHAT_PATCH = "a patch for {path}"
WHAT_DIFF = "a diff of {path}"
WHAT_CONTENT = "new content for {path}"
EDIT_TOOLS = ("edit_file", "write_file")  # the note is given only when one of them is declared

MAX_FILE_BYTES = 1_000_000  # a larger file is not read for the comparison (its block counts as an edit)
MAX_PATH_LINE = 160  # characters of the line before a fence that may present a file
_SEARCH = re.compile(r"^<{5,9} ?SEARCH[ \t]*$", re.M)
_DIVIDER = re.compile(r"^={5,9}[ \t]*$", re.M)
_REPLACE = re.compile(r"^>{5,9} ?REPLACE[ \t]*$", re.M)
_FENCE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^`]*)")  # an opening fence line: marker, info string
_PATCH = re.compile(r"^\*\*\* Begin Patch[ \t]*\n\*\*\* (?:Update|Add|Delete) File: *(\S[^\n]*?)[ \t]*$", re.M)
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z0-9_]{1,10}|(?:[\w.-]+/)+[\w.-]+)(?![\w/-])")
_NEW_WORDS = re.compile(r"\b(updated?|new|modified|changed|fixed|corrected|revised|rewritten|complete|full|final|"
                        r"replace|edited|patched|refactored|version)\b", re.I)
_MARKUP = " \t*_`'\"#>:-"


def edit_in_text(text: str, cwd: Path) -> str | None:
    """What edit `text` (an answer without tool calls) holds, as the `{what}` of
    EDIT_IN_TEXT_NOTE, or None when it holds none (module docstring). `cwd`: the working
    directory paths are resolved against; files are only read."""
    if not text or len(text) > 4 * MAX_FILE_BYTES:
        return None
    root = cwd.resolve()
    if _search_replace(text):
        return WHAT_SEARCH_REPLACE
    patch = _PATCH.search(text)
    if patch:
        return WHAT_PATCH.format(path=patch.group(1))
    path = _diff_target(text, root)
    if path is not None:
        return WHAT_DIFF.format(path=path)
    path = _content_target(text, root)
    return WHAT_CONTENT.format(path=path) if path is not None else None


def _search_replace(text: str) -> bool:
    search = _SEARCH.search(text)
    divider = _DIVIDER.search(text, search.end()) if search else None
    return bool(divider and _REPLACE.search(text, divider.end()))


def _diff_target(text: str, root: Path) -> str | None:
    """The file a unified diff in `text` changes, when it names one of `root` and one of its
    hunks is not applied yet."""
    lines = text.split("\n")
    for i, line in enumerate(lines[:-2]):
        if not (line.startswith("--- ") and lines[i + 1].startswith("+++ ")):
            continue
        old_name, new_name = _diff_name(line), _diff_name(lines[i + 1])
        name = old_name if new_name == "/dev/null" else new_name
        hunks = _hunks(lines, i + 2)
        file = _file_of(name, root) if hunks else None
        if file is None:
            continue
        content = _read(file)
        if content is None or not all(_applied(content, *_sides(hunk)) for hunk in hunks):
            return name
    return None


def _diff_name(header: str) -> str:
    name = header[4:].split("\t")[0].strip()
    return name[2:] if name[:2] in ("a/", "b/") else name


def _hunks(lines: list[str], start: int) -> list[list[str]]:
    """The hunks' lines from `lines[start]` on, after a diff header (none when no hunk header
    comes first)."""
    hunks: list[list[str]] = []
    for line in lines[start:]:
        if _HUNK.match(line):
            hunks.append([])
        elif not hunks or line[:1] not in (" ", "+", "-", "\\", "") or line.startswith(("--- ", "+++ ")):
            break
        elif not line.startswith("\\"):
            hunks[-1].append(line)
    return [hunk for hunk in hunks if hunk]


def _sides(hunk: list[str]) -> tuple[str, str]:
    """A hunk's old side (context and `-` lines) and new side (context and `+` lines)."""
    old = "\n".join(line[1:] for line in hunk if line[:1] in (" ", "-", ""))
    new = "\n".join(line[1:] for line in hunk if line[:1] in (" ", "+", ""))
    return old, new


def _content_target(text: str, root: Path) -> str | None:
    """The existing file a fenced block of `text` is presented as the new content of."""
    for info, body, before in fenced_blocks(text):
        for name in _presented_names(info.strip(), before):
            file = _file_of(name, root)
            if file is None:
                continue
            content = _read(file)
            if content is None or _norm(body) not in _norm(content):
                return name
    return None


def fenced_blocks(text: str) -> list[tuple[str, str, str]]:
    """The fenced code blocks of Markdown `text` as (info string, body, the last non-blank line
    before the fence), in one pass. A fence closes on a line of the same character, at least as
    long, and nothing else; an unclosed one runs to the end (CommonMark)."""
    lines = text.split("\n")
    blocks: list[tuple[str, str, str]] = []
    before, i = "", 0
    while i < len(lines):
        opening = _FENCE.fullmatch(lines[i])
        if opening is None:
            before = lines[i] if lines[i].strip() else before
            i += 1
            continue
        marker, end = opening.group(1), i + 1
        while end < len(lines) and not _closes(lines[end], marker):
            end += 1
        blocks.append((opening.group(2), "\n".join(lines[i + 1:end]), before))
        before, i = "", end + 1
    return blocks


def _closes(line: str, marker: str) -> bool:
    bare = line.strip()
    return len(line) - len(line.lstrip(" ")) <= 3 and len(bare) >= len(marker) and bare == marker[0] * len(bare)


def _presented_names(info: str, before: str) -> list[str]:
    """Path-like names that present a fenced block as a file's content: in the info string
    (```python:src/x.py), a lone path on the line before, or named beside a word like "updated"."""
    names = [m.group(1) for m in _PATH.finditer(info)]
    if len(before) > MAX_PATH_LINE:
        return names
    bare = before.strip(_MARKUP)
    if _PATH.fullmatch(bare):
        return names + [bare]
    if _NEW_WORDS.search(before):
        names += [m.group(1) for m in _PATH.finditer(before)]
    return names


def _file_of(name: str, root: Path) -> Path | None:
    """`name` as a regular file inside `root`, or None."""
    if not name or name == "/dev/null" or "\0" in name:
        return None
    try:
        path = (root / name).resolve()
        path.relative_to(root)
        return path if path.is_file() else None
    except (OSError, ValueError, RuntimeError):
        return None


def _read(file: Path) -> str | None:
    """The file's text, or None when it is too large or unreadable."""
    try:
        if file.stat().st_size > MAX_FILE_BYTES:
            return None
        return file.read_bytes().decode("utf-8", "replace")
    except OSError:
        return None


def _norm(text: str) -> str:
    """Text compared line by line without line-end differences or trailing white space."""
    return "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").strip("\n").split("\n"))


def _applied(content: str, old: str, new: str) -> bool:
    """True when the change old → new is already in `content` (the answer shows a change made):
    `new` is there, and `old` is not, outside the places `new` holds it."""
    content, old, new = _norm(content), _norm(old), _norm(new)
    return bool(new) and new in content and (old == new or old not in content.replace(new, "\0"))


EDIT_IN_TEXT_CALL = "edit_file"  # the loop detector's name for an edit written in an answer


def edit_in_answer(conv: Any, text: str) -> str | None:
    """What edit the answer `text` of `conv` (a Conversation) holds instead of a tool call
    (edit_in_text), None when none, or when no file tool is declared to make it with."""
    if not any(name in conv.registry.names for name in EDIT_TOOLS):
        return None
    return edit_in_text(text, conv.cwd)


def note_edit_in_answer(conv: Any, answer: str, what: str) -> str | None:
    """Answer an edit written in the text with EDIT_IN_TEXT_NOTE, recorded by `conv`'s loop
    detector as a call; returns the detector's stop error, or None when the turn goes on."""
    from mm.engine.loops import with_note

    note = EDIT_IN_TEXT_NOTE.format(what=what)
    verdict = conv.loops.record(EDIT_IN_TEXT_CALL, {"answer": answer}, note, failed=True)
    if verdict.action == "stop":
        return verdict.text
    conv.history.append({"role": "user", "content": with_note(note, verdict)})
    return None
