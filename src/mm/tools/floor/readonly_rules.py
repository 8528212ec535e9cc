"""How each read-only program may be used in plan mode (docs/plan-mode.md §Commands; issue 14
point 1): `RULES[program](args)` is None when the words after the program (expanded by the floor's
word expander) only read, else why not, in a few words. Options are read as the program reads
them (mm.tools.floor.getopt): a long option refused is refused in every abbreviation
(`sort --outp`), and where a program's options are all listed an option mm does not know is
refused rather than guessed.
"""

from __future__ import annotations

import re
from typing import Callable, Mapping

from mm.tools.floor.getopt import ARG, NO_ARG, OPTIONAL, OptionProblem, Syntax, abbreviates, getopt
from mm.tools.floor.values import Value

GIT_READS = frozenset({"status", "log", "diff", "show", "rev-parse", "describe", "blame", "ls-files", "ls-tree",
                       "cat-file", "shortlog", "grep"})  # the reference's list, and grep
GIT_OPTIONS = frozenset({"--no-pager", "-P", "--no-optional-locks", "--paginate", "-p"})  # before the subcommand
GIT_REFUSED = ("--output", "--ext-diff", "--open-files-in-pager")
HOSTNAME_OPTIONS = frozenset({"-s", "-f", "-d", "-i", "-I", "-a", "-A", "--short", "--fqdn", "--long", "--domain",
                              "--ip-address", "--all-ip-addresses", "--all-fqdns"})

# GNU sed 4.9's options (sed --help)
SED = Syntax(flags="nrEsuzb", with_arg="efl", optional="i", longs={
    "quiet": NO_ARG, "silent": NO_ARG, "debug": NO_ARG, "expression": ARG, "file": ARG, "follow-symlinks": NO_ARG,
    "in-place": OPTIONAL, "line-length": ARG, "null-data": NO_ARG, "zero-terminated": NO_ARG, "posix": NO_ARG,
    "regexp-extended": NO_ARG, "separate": NO_ARG, "sandbox": NO_ARG, "unbuffered": NO_ARG, "binary": NO_ARG,
    "help": NO_ARG, "version": NO_ARG})
# GNU uniq's options (uniq --help)
UNIQ = Syntax(flags="cdDiuz", with_arg="fsw", longs={
    "count": NO_ARG, "repeated": NO_ARG, "all-repeated": OPTIONAL, "skip-fields": ARG, "group": OPTIONAL,
    "ignore-case": NO_ARG, "skip-chars": ARG, "unique": NO_ARG, "zero-terminated": NO_ARG, "check-chars": ARG,
    "help": NO_ARG, "version": NO_ARG})
# GNU date's options (date --help)
DATE = Syntax(flags="Ru", with_arg="dfrs", optional="I", longs={
    "date": ARG, "debug": NO_ARG, "file": ARG, "iso-8601": OPTIONAL, "resolution": NO_ARG, "rfc-email": NO_ARG,
    "rfc-3339": ARG, "reference": ARG, "set": ARG, "universal": NO_ARG, "utc": NO_ARG, "uct": NO_ARG,
    "help": NO_ARG, "version": NO_ARG})
# awk: -F and -v (and their gawk long forms), then one program text; every other option refused
AWK = Syntax(with_arg="Fv", longs={"field-separator": ARG, "assign": ARG}, permute=False)

AWK_OPTION = "awk {option} may run code or write files: only -F, -v and one program text are allowed"
AWK_WRITES = "this awk program may write files or run commands (system, getline, |, >)"
AWK_INDIRECT = "this awk program calls a function by its name (@), which may run anything"
AWK_WRITING = re.compile(r"system|getline|\||>(?!=)")


class NotReadOnly(Exception):
    """`str(err)` says why the command is not read-only."""


def _any(args: list[Value]) -> str | None:
    return None


def _known(program: str, args: list[Value]) -> list[str]:
    """The arguments' texts; NotReadOnly when one cannot be known before the command runs."""
    texts = [a.exact for a in args]
    if any(t is None for t in texts):
        raise NotReadOnly(f"an argument of {program} is not known before it runs")
    return texts  # type: ignore[return-value]


def _parsed(program: str, args: list[Value], syntax: Syntax) -> tuple[list[tuple[str, str | None]], list[str]]:
    try:
        return getopt(program, _known(program, args), syntax)
    except OptionProblem as err:
        raise NotReadOnly(str(err)) from None


def _options(texts: list[str]) -> list[str]:
    """The options among `texts` (before `--`), for a program whose options are not all listed."""
    out = []
    for t in texts:
        if t == "--":
            break
        if t.startswith("-") and t != "-":
            out.append(t)
    return out


def _short(options: list[str], letter: str) -> bool:
    """Whether a short option cluster holds `letter` (`-ni` holds `i`)."""
    return any(o[1:2] != "-" and letter in o[1:] for o in options)


def _long(options: list[str], *names: str) -> str | None:
    """The first of `options` naming one of `names` or abbreviating it (getopt.abbreviates)."""
    return next((o for o in options if abbreviates(o, *names)), None)


def _sed(args: list[Value]) -> str | None:
    options, operands = _parsed("sed", args, SED)
    names = [name for name, _ in options]
    if "-i" in names or "--in-place" in names:
        return "sed -i edits files in place"
    if "-f" in names or "--file" in names:
        return "sed -f runs a script the command does not show"
    scripts = [value or "" for name, value in options if name in ("-e", "--expression")] or operands[:1]
    for script in scripts:
        problem = sed_script_problem(script)
        if problem:
            return problem
    return None


_SED_PLAIN = set("pPnNdDhHgGxlzF=qQ{}!")


def sed_script_problem(script: str) -> str | None:
    """Why a sed script may write or run something (`w`, `W`, `e`, `s///w`, `s///e`), or None;
    a script mm cannot follow is refused too (when unsure whether it writes, it is refused)."""
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;":
            i += 1
        elif c.isdigit() or c in "$,~+":
            i += 1
        elif c in "/\\":  # an address /re/ or \cREc
            delim = "/" if c == "/" else (script[i + 1] if i + 1 < n else "")
            i = _past_delimited(script, i + (1 if c == "/" else 2), delim)
            if i < 0:
                return "a sed script mm cannot follow"
            while i < n and script[i] in "IM":
                i += 1
        elif c in "sy":
            if i + 1 >= n:
                return "a sed script mm cannot follow"
            delim = script[i + 1]
            i = _past_delimited(script, i + 2, delim)
            i = _past_delimited(script, i, delim) if i >= 0 else -1
            if i < 0:
                return "a sed script mm cannot follow"
            flags = re.match(r"[^;\n}]*", script[i:]).group(0)  # type: ignore[union-attr]
            if c == "s" and ("w" in flags or "e" in flags):
                return "sed's s///w writes a file, s///e runs a command"
            i += len(flags)
        elif c in "wWe":
            return "sed's w writes a file, e runs a command"
        elif c in "btT:":  # a label: GNU sed ends it at `;` too (`:a;N;$!ba`), so what follows is read
            i = _line_end(script, i, ";\n")
        elif c in "aicrR#":  # text, a file read, a comment: to the end of the line
            i = _line_end(script, i, "\n")
        elif c in _SED_PLAIN:
            i += 1
        else:
            return "a sed script mm cannot follow"
    return None


def _line_end(text: str, i: int, ends: str) -> int:
    return next((j for j in range(i + 1, len(text)) if text[j] in ends), len(text))


def _past_delimited(text: str, i: int, delim: str) -> int:
    """The index after the `delim` closing the part starting at `i`, or -1."""
    if not delim or delim in "\n\\":
        return -1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == delim:
            return i + 1
        i += 1
    return -1


def _find(args: list[Value]) -> str | None:
    texts = _known("find", args)
    for t in texts:
        if t in ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"):
            return f"find {t} changes files or runs commands"
    return None


def _awk(args: list[Value]) -> str | None:
    """Only -F, -v and one program text (or `--` then it): gawk's -f, -e, -W, -o, -p, -d,
    --profile… run code the command does not show or write files (docs/plan-mode.md)."""
    try:
        _, operands = getopt("awk", _known("awk", args), AWK)
    except OptionProblem as err:
        return AWK_OPTION.format(option=err.option)
    program = operands[0] if operands else ""
    if AWK_WRITING.search(program):
        return AWK_WRITES
    if "@" in program:
        return AWK_INDIRECT
    return None


def _git(args: list[Value]) -> str | None:
    texts = _known("git", args)
    i = 0
    while i < len(texts) and texts[i].startswith("-"):
        if texts[i] == "-C" and i + 1 < len(texts):
            i += 2
            continue
        if texts[i] not in GIT_OPTIONS:
            return f"git {texts[i]} may change what git runs"
        i += 1
    if i >= len(texts) or texts[i] not in GIT_READS:
        return f"git {texts[i] if i < len(texts) else ''} is not one of git's read-only commands".replace("  ", " ")
    rest = _options(texts[i + 1:])
    bad = _long(rest, *GIT_REFUSED) or ("-O" if any(o.startswith("-O") for o in rest) or
                                         (texts[i] == "grep" and _short(rest, "O")) else None)
    if bad:
        return f"git {texts[i]} {bad} writes a file or runs a program"
    return None


def _refusing(program: str, *letters: str, longs: tuple[str, ...] = (), why: str = "writes a file") -> Callable:
    def rule(args: list[Value]) -> str | None:
        options = _options(_known(program, args))
        for letter in letters:
            if _short(options, letter):
                return f"{program} -{letter} {why}"
        bad = _long(options, *longs) if longs else None
        return f"{program} {bad} {why}" if bad else None
    return rule


_LESS_LOG = _refusing("less", "o", "O", longs=("--log-file", "--LOG-FILE"), why="writes a log file")
LESS_PLUS = re.compile(r"\+(\d+|[GgF]|/[^!|]*)")  # the initial commands that only move or search


def _less(args: list[Value]) -> str | None:
    """less's -o/-O/--log-file write a file, and an initial `+cmd` may save (`s`) or run (`!`, `|`)."""
    problem = _LESS_LOG(args)
    plus = next((t for t in _known("less", args)
                 if t.startswith("+") and not LESS_PLUS.fullmatch(t)), None)
    return problem or (f"less {plus} may save a file or run a command" if plus else None)


def _uniq(args: list[Value]) -> str | None:
    """At most one operand (`--` included): uniq's second one is the file it writes."""
    _, operands = _parsed("uniq", args, UNIQ)
    return "uniq with a second operand writes it" if len(operands) > 1 else None


def _date(args: list[Value]) -> str | None:
    options, operands = _parsed("date", args, DATE)
    if any(name in ("-s", "--set") for name, _ in options):
        return "date -s sets the clock"
    if any(not t.startswith("+") for t in operands):
        return "date with an operand that is no +FORMAT sets the clock"
    return None


def _hostname(args: list[Value]) -> str | None:
    texts = _known("hostname", args)
    return None if all(t in HOSTNAME_OPTIONS for t in texts) else "hostname with these arguments may set the name"


def _env(args: list[Value]) -> str | None:
    texts = _known("env", args)
    return None if all(t in ("-0", "--null") for t in texts) else "env with arguments runs another program"


RULES: Mapping[str, Callable[[list[Value]], str | None]] = {
    **{name: _any for name in ("ls", "cat", "head", "tail", "more", "pwd", "echo", "grep", "egrep", "fgrep",
                               "wc", "stat", "which", "type", "whoami", "printenv", "ps", "uname", "id", "diff",
                               "cut", "realpath", "readlink", "basename", "dirname", "du", "df", "cd", "true",
                               "false", "test", "[", "nl", "tac", "tr", "printf", "cmp", "md5sum", "sha1sum",
                               "sha256sum")},
    "find": _find, "sed": _sed, "awk": _awk, "gawk": _awk, "mawk": _awk, "git": _git, "date": _date,
    "hostname": _hostname, "env": _env, "uniq": _uniq, "less": _less,
    "rg": _refusing("rg", longs=("--pre",), why="runs a program on every file"),
    "sort": _refusing("sort", "o", longs=("--output", "--compress-program"), why="writes a file or runs a program"),
    "tree": _refusing("tree", "o", why="writes a file"),
    "file": _refusing("file", "C", longs=("--compile",), why="writes a file"),
}
