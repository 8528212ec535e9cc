"""MEMORY.md: the entries the `memory` tool keeps, where the file lives, and its section of the
system prompt (notes/mnemoai.md §2.11, §4.6; docs/memory.md).

Entries are separated by a Markdown rule (`\\n\\n---\\n\\n` on write); on read any line of three
dashes or more, or a lone `§` (the reference's older files), separates them, so an entry may
span several lines but never hold such a line (refused: the reference split it in two on the
next read). The cap is counted in characters on the file as it would be written, separators and
final newline included. The file is read and written through mm.fs only: bounded, regular files
only, written atomically; a read-modify-write holds an advisory lock on the file's folder, so
two mm writing at once never lose an entry.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping

FILE_NAME = "MEMORY.md"
PROJECT_FOLDER = ".mm"  # memory.scope: project → <project root>/.mm/MEMORY.md
DELIMITER = "\n\n---\n\n"
SEPARATOR = re.compile(r"^(?:-{3,}|§)[ \t]*\r?$", re.MULTILINE)  # a line that separates entries on read
READ_LIMIT = 1 << 20  # bytes of MEMORY.md read at most (a larger file is refused, never cut and rewritten)

# The reference's texts (memory_store.py, memory_tool.py: notes §2.11), byte for byte.
NOT_UPDATED = "Memory not updated: {reason}"
EMPTY_ADD = "Refusing to add empty memory text."
DUPLICATE = "That entry already exists; not adding a duplicate."
ADD_OVERFLOW = ("Adding this would exceed the memory limit ({projected} > {limit} chars). Consolidate or remove "
                "existing entries first (use replace/remove), then add again.")
REPLACE_OVERFLOW = ("That replacement would exceed the memory limit ({projected} > {limit} chars). Make it shorter "
                    "or remove another entry first.")
NO_MATCH = "No memory entry contains: {old!r}"
AMBIGUOUS = "{n} entries match {old!r}; be more specific."
REMOVE_NEEDS = "remove requires old_text."
ADDED = "Added memory entry ({used}/{limit} chars used)."
REPLACED = "Replaced memory entry ({used}/{limit} chars used)."
REMOVED = "Removed memory entry ({used}/{limit} chars used)."
# mm's own: the reference said "old_text and new_text", but the parameter is `text`.
REPLACE_NEEDS = "replace requires both old_text and text (the new entry)."
SEPARATOR_IN_ENTRY = ("an entry cannot hold a line of only dashes (---) or only §: such a line separates the entries "
                      "of MEMORY.md — write that line another way.")
UNREADABLE = "{path} cannot be read ({reason}); nothing was changed — fix or move that file, then try again."
NOT_TEXT = "{path} is not UTF-8 text; nothing was changed — fix or move that file, then try again."
UNWRITABLE = "{path} cannot be written ({reason}); nothing was changed."
# The system prompt's section (docs/memory.md §In the system prompt).
SECTION = ("# Memory\nYour notes from earlier sessions, kept with the memory tool in {path} ({used}/{limit} "
           "characters). Each was true when written: check one before relying on it.\n\n{entries}")
OVER_CAP = ("[mm: {path} holds {used} characters, more than its cap of {limit} (memory.maxChars): the rest is "
            "left out here — consolidate it with the memory tool's replace and remove]")
CANNOT_SHOW = "[mm: your memory file cannot be used: {reason}]"
LINKED_OUT = ("{path} is a symbolic link leading out of the project (to {target}): a project's memory is neither "
              "read nor written there; nothing was changed — make it a plain file in the project.")


class MemoryRefused(Exception):
    """An operation refused; `str(err)` is the reason, said to the model after NOT_UPDATED."""


def memory_path(scope: str, cwd: Path, env: Mapping[str, str] | None = None) -> Path:
    """Where MEMORY.md is: `$XDG_CONFIG_HOME/mm/MEMORY.md` (default `~/.config/mm/`) for the
    scope "user"; `<project>/.mm/MEMORY.md` for "project", the project being the repository
    `cwd` belongs to, else `cwd` itself (mm.config.places). Touches no file."""
    from mm.config.places import repository_root, user_folder

    if scope == "project":
        here = Path(os.path.abspath(cwd))
        return (repository_root(here) or here) / PROJECT_FOLDER / FILE_NAME
    return user_folder(env) / FILE_NAME


def split_entries(text: str) -> list[str]:
    """The entries of a MEMORY.md `text`: split on SEPARATOR lines, trimmed, blanks dropped."""
    return [e.strip() for e in SEPARATOR.split(text) if e.strip()]


def render(entries: list[str]) -> str:
    """The file holding `entries`: joined by DELIMITER, with a final newline; "" for none."""
    return DELIMITER.join(entries) + "\n" if entries else ""


@dataclass
class MemoryFile:
    """MEMORY.md at `path`, capped at `max_chars` characters; `shown` is how messages name it.
    `project`: the project folder for memory.scope project — a file (or `.mm`) that is a symbolic
    link leading out of it is refused for reading and writing (LINKED_OUT: a cloned repository
    could ship `.mm/MEMORY.md` → `~/.bashrc`); None for the user's file, which may be a link."""

    path: Path
    max_chars: int = 2200
    project: Path | None = None

    @property
    def shown(self) -> str:
        from mm.config.places import tilde

        return tilde(self.path)

    def read(self) -> str:
        """The file's text ("" when there is none), a leading BOM dropped. Raises MemoryRefused
        (UNREADABLE, NOT_TEXT) when it cannot be read: never taken for empty, which would lose
        every entry at the next write."""
        from mm.fs import read_bytes

        self._inside_project()
        try:
            data = read_bytes(self.path, READ_LIMIT, self.shown)
        except FileNotFoundError:
            return ""
        except OSError as err:  # FileRefused (a named pipe, a device, too large), a permission
            reason = getattr(err, "reason", None) or (err.strerror or str(err)).lower()
            raise MemoryRefused(UNREADABLE.format(path=self.shown, reason=reason)) from None
        try:
            return data.decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError:
            raise MemoryRefused(NOT_TEXT.format(path=self.shown)) from None

    def plan(self, action: str, text: str, old_text: str) -> tuple[str, str, str]:
        """(the file's text now, its text after `action`, the success message) — nothing is
        written. `action`: add, replace or remove (already normalised). Raises MemoryRefused."""
        before = self.read()
        entries, message = change(split_entries(before), action, text, old_text, self.max_chars)
        return before, render(entries), message

    def apply(self, action: str, text: str, old_text: str) -> tuple[str, str, str]:
        """`plan`, then the new text written atomically (mm.fs.write_atomic) under the folder's
        lock; returns what `plan` does. Raises MemoryRefused (UNWRITABLE too)."""
        from mm.fs import write_atomic

        self._inside_project()  # before the folder is made or locked
        with self._locked():
            before, after, message = self.plan(action, text, old_text)
            try:
                write_atomic(self.path, after, self.shown)
            except OSError as err:  # FileRefused: a named pipe, a device, a system path
                reason = getattr(err, "reason", None) or (err.strerror or str(err)).lower()
                raise MemoryRefused(UNWRITABLE.format(path=self.shown, reason=reason)) from None
        return before, after, message

    def _inside_project(self) -> None:
        """Raises MemoryRefused (LINKED_OUT) when `project` is set and the file, its links
        followed, is not inside it."""
        if self.project is None:
            return
        target = Path(os.path.realpath(self.path))
        if not target.is_relative_to(os.path.realpath(self.project)):
            from mm.config.places import tilde

            raise MemoryRefused(LINKED_OUT.format(path=self.shown, target=tilde(target)))

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """An exclusive flock on the file's folder (created if missing) while the block runs;
        without a lock when the folder cannot be locked (a file system without flock)."""
        import fcntl

        folder = self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as err:
            reason = (err.strerror or str(err)).lower()
            raise MemoryRefused(UNWRITABLE.format(path=self.shown, reason=reason)) from None
        try:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def section(self) -> str:
        """The system prompt's section: SECTION with the entries as the file holds them ("" when
        there is none), cut at the cap with OVER_CAP when a hand edit made the file larger;
        CANNOT_SHOW when it cannot be read. Never raises."""
        try:
            text = render(split_entries(self.read()))
        except MemoryRefused as err:
            return CANNOT_SHOW.format(reason=err)
        if not text:
            return ""
        used = len(text)
        shown = text.rstrip("\n")
        if used > self.max_chars:
            shown = shown[: self.max_chars].rstrip() + "\n" + OVER_CAP.format(path=self.shown, used=used,
                                                                             limit=self.max_chars)
        return SECTION.format(path=self.shown, used=used, limit=self.max_chars, entries=shown)


def change(entries: list[str], action: str, text: str, old_text: str, limit: int) -> tuple[list[str], str]:
    """`entries` after `action` (add, replace, remove) and the success message, as the reference
    does (notes §2.11), with mm's fixes (docs/memory.md §Where mm differs). Raises MemoryRefused."""
    text, old_text = (text or "").strip(), (old_text or "").strip()
    if action == "add":
        if not text:
            raise MemoryRefused(EMPTY_ADD)
        _check_entry(text)
        if text in entries:
            raise MemoryRefused(DUPLICATE)
        after = entries + [text]
        projected = len(render(after))
        if projected > limit:
            raise MemoryRefused(ADD_OVERFLOW.format(projected=projected, limit=limit))
        return after, ADDED.format(used=projected, limit=limit)
    if action == "replace":
        if not old_text or not text:
            raise MemoryRefused(REPLACE_NEEDS)
        _check_entry(text)
        found = _the_entry(entries, old_text)
        if any(e == text for i, e in enumerate(entries) if i != found):
            raise MemoryRefused(DUPLICATE)
        after = entries[:found] + [text] + entries[found + 1:]
        projected = len(render(after))
        if projected > limit:
            raise MemoryRefused(REPLACE_OVERFLOW.format(projected=projected, limit=limit))
        return after, REPLACED.format(used=projected, limit=limit)
    if not old_text:
        raise MemoryRefused(REMOVE_NEEDS)
    found = _the_entry(entries, old_text)
    after = entries[:found] + entries[found + 1:]
    return after, REMOVED.format(used=len(render(after)), limit=limit)


def _the_entry(entries: list[str], old_text: str) -> int:
    """The index of the one entry containing `old_text`; an entry equal to it wins over others
    that merely contain it. Raises MemoryRefused (NO_MATCH, AMBIGUOUS)."""
    matches = [i for i, e in enumerate(entries) if old_text in e]
    exact = [i for i in matches if entries[i] == old_text]
    if len(exact) == 1:
        return exact[0]
    if not matches:
        raise MemoryRefused(NO_MATCH.format(old=old_text))
    if len(matches) > 1:
        raise MemoryRefused(AMBIGUOUS.format(n=len(matches), old=old_text))
    return matches[0]


def _check_entry(text: str) -> None:
    """Refuse an entry holding a line that would separate entries on the next read."""
    if SEPARATOR.search(text):
        raise MemoryRefused(SEPARATOR_IN_ENTRY)
