"""Options read as GNU getopt_long (and git's parse-options) read them, for plan mode's
read-only check (docs/plan-mode.md §Commands). Two facts the check depends on:

- a long option may be shortened to any unique prefix: `sort --outp=x` is `sort --output=x`,
  `sed --in` is `sed --in-place`, `git grep --open=…` is `--open-files-in-pager=…`;
- short options cluster, and the first that takes an argument takes the rest of the word or the
  next word: `sed -ne 'w x'` is `-n -e 'w x'`, `sed -l 5 'w x'` has the script `w x`.

`abbreviates` answers the first for a program whose options are not all listed; `getopt` reads a
whole command line when they are, and refuses any option it does not know.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

NO_ARG, ARG, OPTIONAL = "", "=", "?"  # how a long option takes its argument (`--x`, `--x=V`/`--x V`, `--x[=V]`)
UNKNOWN_OPTION = "mm does not know {program}'s option {option}"
NO_ARGUMENT = "{program} {option} lacks its argument"


class OptionProblem(Exception):
    """`str(err)` says which option could not be read (UNKNOWN_OPTION, NO_ARGUMENT); `option`: it."""

    def __init__(self, template: str, program: str, option: str):
        super().__init__(template.format(program=program, option=option))
        self.option = option


@dataclass(frozen=True)
class Syntax:
    """A program's options: `flags` (short, no argument), `with_arg` (short, argument attached or
    the next word), `optional` (short, argument attached only: `-i.bak`), `longs` (name without
    `--` → NO_ARG, ARG or OPTIONAL); `permute`: options may follow operands (GNU), else the first
    operand ends them (awk)."""
    flags: str = ""
    with_arg: str = ""
    optional: str = ""
    longs: Mapping[str, str] = field(default_factory=dict)
    permute: bool = True


def abbreviates(word: str, *longs: str) -> bool:
    """Whether `word` (a command-line word) is the long option `--name[=value]` whose name is a
    non-empty prefix of one of `longs` (full names with `--`): getopt_long takes it for that
    option when no other starts so. A prefix of several is refused as well (getopt fails)."""
    if not word.startswith("--") or word == "--":
        return False
    name = word[2:].split("=", 1)[0]
    return bool(name) and any(long[2:].startswith(name) for long in longs)


def getopt(program: str, words: list[str], syntax: Syntax) -> tuple[list[tuple[str, str | None]], list[str]]:
    """`(options, operands)` of `words` (the words after `program`): each option by its full name
    (`-e`, `--expression`) with its argument (None without one), in order. Raises OptionProblem
    for an option not in `syntax` (unknown or an ambiguous prefix) or lacking its argument."""
    options: list[tuple[str, str | None]] = []
    operands: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word == "--":
            return options, operands + words[i:]
        if word.startswith("--"):
            i = _long(program, word, words, i, syntax, options)
        elif word.startswith("-") and word != "-":
            i = _cluster(program, word, words, i, syntax, options)
        else:
            operands.append(word)
            if not syntax.permute:
                return options, operands + words[i:]
    return options, operands


def _long(program: str, word: str, words: list[str], i: int, syntax: Syntax,
          options: list[tuple[str, str | None]]) -> int:
    name, eq, value = word[2:].partition("=")
    full = name if name in syntax.longs else None
    if full is None:
        matches = [long for long in syntax.longs if name and long.startswith(name)]
        if len(matches) != 1:
            raise OptionProblem(UNKNOWN_OPTION, program, word)
        full = matches[0]
    kind = syntax.longs[full]
    if kind == NO_ARG and eq:
        raise OptionProblem(UNKNOWN_OPTION, program, word)
    if kind == ARG and not eq:
        if i >= len(words):
            raise OptionProblem(NO_ARGUMENT, program, word)
        value, i = words[i], i + 1
    options.append(("--" + full, value if (eq or kind == ARG) else None))
    return i


def _cluster(program: str, word: str, words: list[str], i: int, syntax: Syntax,
             options: list[tuple[str, str | None]]) -> int:
    for j in range(1, len(word)):
        letter = word[j]
        if letter in syntax.with_arg:
            if j + 1 < len(word):
                options.append(("-" + letter, word[j + 1:]))
            elif i < len(words):
                options.append(("-" + letter, words[i]))
                i += 1
            else:
                raise OptionProblem(NO_ARGUMENT, program, "-" + letter)
            return i
        if letter in syntax.optional:
            options.append(("-" + letter, word[j + 1:] or None))
            return i
        if letter not in syntax.flags:
            raise OptionProblem(UNKNOWN_OPTION, program, "-" + letter)
        options.append(("-" + letter, None))
    return i
