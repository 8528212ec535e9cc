"""Tab completion at line mode's prompt (issue 11 point 6; docs/line-mode.md §Keys): the slash
commands and the skills offered as `/name` at the start of the prompt, a skill after `$`, and the
files and folders of the working directory after `@` (what mm.attach then attaches).

Imported once line mode starts: prompt_toolkit is loaded by then.
"""

from __future__ import annotations

from typing import Any, Iterable

from prompt_toolkit.completion import Completer, Completion, PathCompleter
from prompt_toolkit.document import Document

from mm.commands import LINE_COMMANDS


class PromptCompleter(Completer):
    """The completions for `conv` (mm.engine.conversation.Conversation: its skills and `cwd`).

    `/wo` (the whole prompt so far) → the commands and the skills offered as commands whose name
    starts with `wo`, case aside, each with its description; `$wo` anywhere → the skills; `@pa`
    anywhere → the paths under `cwd` (or absolute, or `~…`) starting with `pa`, a folder shown
    with a final `/`."""

    def __init__(self, conv: Any):
        self.conv = conv
        self.paths = PathCompleter(get_paths=lambda: [str(conv.cwd)], expanduser=True)

    def get_completions(self, document: Document, complete_event: Any) -> Iterable[Completion]:
        before = document.text_before_cursor
        word = document.get_word_before_cursor(WORD=True)
        if before.startswith("/") and word == before:
            yield from _matching(word[1:], "/", self._commands())
        elif word.startswith("$"):
            yield from _matching(word[1:], "$", [(s.name, s.description) for s in self._skills()])
        elif word.startswith("@"):
            path = word[1:]
            for c in self.paths.get_completions(Document(path, len(path)), complete_event):
                yield Completion(path[:len(path) + c.start_position] + c.text, -len(path), display=c.display)

    def _skills(self, offered: bool = False) -> list[Any]:
        from mm.skills import advertised_skills, catalogue_of
        from mm.ui.line.commands import shadowing_names

        catalogue = catalogue_of(self.conv.registry)
        return advertised_skills(catalogue, shadowing_names(catalogue)) if offered else catalogue

    def _commands(self) -> list[tuple[str, str]]:
        return [(c.name, c.description) for c in LINE_COMMANDS] + [(s.name, s.description)
                                                                   for s in self._skills(offered=True)]


def _matching(start: str, mark: str, names: list[tuple[str, str]]) -> Iterable[Completion]:
    """A Completion of `mark + name` for each (name, description) whose name starts with `start`,
    case aside, replacing the word typed (its mark included)."""
    for name, description in names:
        if name.lower().startswith(start.lower()):
            yield Completion(mark + name, -len(start) - 1, display_meta=description)
