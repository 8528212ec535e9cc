"""Project instructions: the AGENTS.md files of the user and of the project, in the system prompt
(docs/configuration.md §Project instructions).

In each folder mm reads `AGENTS.md`, or `CLAUDE.md` when the folder has no `AGENTS.md`: first
the user's folder (`$XDG_CONFIG_HOME/mm`), then each folder from the repository root down to the
working directory (just the working directory outside a repository), as Codex does. They are
concatenated in that order, each under a header naming it, and capped at `instructions.maxTokens`
tokens (mm.engine.tokens); what the cap leaves out is said in the prompt and to the user.
Files are read as every file mm reads (mm.fs): without waiting, bounded; a file that is
not a regular file or not UTF-8 text is skipped with a warning. Nothing here is imported by
`mm --version`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

FILE_NAMES = ("AGENTS.md", "CLAUDE.md")  # the first one present in a folder is its file
FILE_BYTES = 256 * 1024  # the head of a file read (the cap is far below)
HEADER = ("# Project instructions\n"
          "The user's instruction files for this work, from the most general to the most specific "
          "(a later one wins where they disagree). Follow them.")
FILE_HEADER = "## {name}"
CUT_NOTE = ("[mm: the instructions end here: they are capped at {limit} tokens (instructions.maxTokens); "
            "left out: {left}]")
READ_LINE = "instructions: {files}"
CUT_LINE = "instructions cut at {limit} tokens (instructions.maxTokens): left out {left}"
SKIPPED = "[warning: instruction file {path} skipped: {reason}]"
NOT_UTF8 = "it is not UTF-8 text"
LINES_OF = "the last {n} of {total} lines of {name}"


@dataclass
class Instructions:
    """What was read: `text`, the system prompt's section ("" when none); `files`, the files
    in it as shown to the user; `left_out`, what the cap cut ("" when nothing); `warnings`, a
    line per file skipped."""

    text: str = ""
    files: list[str] = field(default_factory=list)
    left_out: str = ""
    warnings: list[str] = field(default_factory=list)
    limit: int = 0

    def lines(self) -> list[str]:
        """The lines that tell the user what was read (the banners), and what was cut or skipped."""
        said = [READ_LINE.format(files=", ".join(self.files))] if self.files else []
        if self.left_out:
            said.append(CUT_LINE.format(limit=self.limit, left=self.left_out))
        return said + self.warnings


def instruction_files(cwd: Path, env: Mapping[str, str] | None = None) -> list[tuple[Path, str]]:
    """The instruction files for `cwd`, in order, each with its name as shown: the user's
    (`~/.config/mm/AGENTS.md`), then the project's from the repository root down (relative to
    `cwd`: `../AGENTS.md`, `AGENTS.md`). A file reached twice (a link, a user folder inside the
    project) is taken once."""
    from mm.config.places import project_folders, tilde, user_folder

    found: list[tuple[Path, str]] = []
    seen: set[tuple[int, int]] = set()
    folders = [(user_folder(env), True)] + [(f, False) for f in project_folders(cwd)]
    for folder, mine in folders:
        path = next((folder / n for n in FILE_NAMES if _present(folder / n)), None)
        if path is None:
            continue
        try:
            st = path.stat()
            key = (st.st_dev, st.st_ino)
        except OSError:  # a broken link: read_instructions says why
            key = (-1, len(found))
        if key in seen:
            continue
        seen.add(key)
        found.append((path, tilde(path) if mine else os.path.relpath(path, cwd)))
    return found


def _present(path: Path) -> bool:
    """Something that is not a folder is there (a named pipe too: it is skipped with a warning)."""
    return os.path.lexists(path) and not path.is_dir()


def read_instructions(cwd: Path, max_tokens: int, env: Mapping[str, str] | None = None) -> Instructions:
    """The instructions for `cwd` (Path), capped at `max_tokens` tokens (int; 0: none are read).
    Never raises for a file: one that cannot be read is a warning."""
    if max_tokens <= 0:
        return Instructions()
    texts: list[tuple[str, str]] = []
    warnings: list[str] = []
    for path, name in instruction_files(cwd, env):
        text = _read(path, name, warnings)
        if text is not None and text.strip():
            texts.append((name, text.strip("\n")))
    if not texts:
        return Instructions(warnings=warnings)
    return _capped(texts, max_tokens, warnings)


def _read(path: Path, name: str, warnings: list[str]) -> str | None:
    from mm.fs import read_head

    try:
        data = read_head(path, FILE_BYTES, name)
    except OSError as err:  # FileRefused: a named pipe, a device; or the file went away
        reason = getattr(err, "reason", None) or err.strerror or str(err)
        warnings.append(SKIPPED.format(path=name, reason=reason))
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        if err.start < len(data) - 3:  # not a character cut by FILE_BYTES
            warnings.append(SKIPPED.format(path=name, reason=NOT_UTF8))
            return None
        return data[:err.start].decode("utf-8")


def _capped(texts: list[tuple[str, str]], limit: int, warnings: list[str]) -> Instructions:
    """The section of `texts` (name, text) within `limit` tokens, the note of the cut included:
    whole files while they fit, then the head of the first that does not (whole lines)."""
    from mm.engine.tokens import count_text, head_within

    names = [name for name, _ in texts]
    whole = "\n\n".join([HEADER] + [f"{FILE_HEADER.format(name=n)}\n{t}" for n, t in texts])
    if len(whole.encode("utf-8", "replace")) <= limit or count_text(whole) <= limit:
        return Instructions(whole, names, "", warnings, limit)
    worst = CUT_NOTE.format(limit=limit, left=", ".join(LINES_OF.format(n=0, total=0, name=n) for n in names))
    budget = max(limit - count_text(worst) - 2, 0)  # the note never takes more than `worst`
    kept, files, left = HEADER, [], []
    for i, (name, text) in enumerate(texts):
        header = f"\n\n{FILE_HEADER.format(name=name)}\n"
        fitting = head_within(kept + header + text, budget)
        shown = fitting[len(kept) + len(header):] if len(fitting) > len(kept) + len(header) else ""
        if shown == text:
            kept, files = fitting, files + [name]
            continue
        if shown.strip():
            kept, files = kept + header + shown.rstrip("\n"), files + [name]
            total = text.count("\n") + 1
            left.append(LINES_OF.format(n=total - shown.rstrip("\n").count("\n") - 1, total=total, name=name))
        else:
            left.append(name)
        left += names[i + 1:]
        break
    note = ", ".join(left)
    text = f"{kept}\n\n{CUT_NOTE.format(limit=limit, left=note)}" if files else ""
    return Instructions(text, files, note, warnings, limit)


def with_instructions(system_prompt: str, instructions: Instructions) -> str:
    """`system_prompt` followed by the instructions' section, after a blank line (unchanged
    when there is none)."""
    if not instructions.text:
        return system_prompt
    return f"{system_prompt.rstrip(chr(10))}\n\n{instructions.text}"
