"""A git command as git will read it: split with shlex, checked for the options that make git run
another program or work on another repository, and scanned into flags, option values and
positional arguments (mnemo-tools.md §Work with git; notes/mnemoai.md §3, Git safety classifier;
docs/tools-git.md).

The scan reads options as git's parse-options does: `-abc` is three letters until one takes a
value (the rest of the token, or the next one); `--name=value`; `--nam` abbreviates `--name`;
`--` ends the options. A value is never read as a flag, so a commit message that mentions
`reset --hard` or `--exec` is only a message.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

NO_COMMAND = "No git command provided"
UNPARSABLE = "Could not parse the command ({error}). Check the quoting."
RUNS_A_COMMAND = "The {option} option is refused: it makes git execute an arbitrary command."
LEADING_REFUSED = ("The git-level option {option} is refused: it can redirect git to another repository or make it "
                   "run an arbitrary command. Drop it, or use execute_bash if you genuinely need it.")
LEADING_UNEXPECTED = ("Unexpected git-level option {option} before the subcommand. Pass the subcommand first "
                      "(e.g. \"status\", \"commit -m 'msg'\").")

# Options that make git run a program given on the command line (notes §3), wherever they are.
RUNNERS = ("upload-pack", "receive-pack", "exec")
# Git-level options refused before the subcommand: they run programs or retarget the repository.
LEADING = ("-c", "-C", "--config-env", "--exec-path", "--git-dir", "--work-tree", "--namespace", "--super-prefix")
HARMLESS_LEADING = ("--version", "--help", "-h", "--no-pager", "-P", "--paginate", "-p", "--no-optional-locks")
# Long options whose value is free text or a name, for every subcommand (the reference's list, and more).
VALUE_LONGS = ("message", "file", "author", "date", "template", "fixup", "squash", "reuse-message", "reedit-message",
               "trailer", "output", "output-directory", "format", "pretty", "push-option", "onto", "source",
               "expire", "expire-unreachable", "set-upstream-to", "orphan", "repo",
               "upload-pack", "receive-pack", "exec", "extcmd", "branch", "origin", "reference", "separate-git-dir",
               "default", "type", "blob", "comment", "strategy", "strategy-option", "depth", "jobs", "config")
# Short options that take a value, by subcommand.
VALUE_SHORTS = {"commit": "mFCct", "tag": "mFu", "stash": "m", "clean": "e", "checkout": "bB", "switch": "cC",
                "branch": "u", "merge": "mFsX", "rebase": "xsX", "archive": "o", "format-patch": "o", "push": "o",
                "config": "f", "clone": "bocuj", "ls-remote": "u", "restore": "s", "worktree": "bB",
                "difftool": "xty", "pull": "sX", "revert": "m", "cherry-pick": "mX"}
# Options of one subcommand that make git run a program: clone's and ls-remote's `-u` (upload-pack);
# clone's and init's configuration and template folder (its hooks and fsmonitor run at checkout).
SUB_RUNNERS = {"clone": ("-u", "-c", "config", "template"), "ls-remote": ("-u",), "init": ("template",)}
ATTACHED_ONLY = {"commit": "Su", "merge": "S", "rebase": "S", "tag": ""}  # optional values: attached or none
# Long options recognised when abbreviated (beside VALUE_LONGS), for the rules of mm.tools.git.rules.
KNOWN_LONGS = ("force", "force-with-lease", "force-if-includes", "delete", "mirror", "no-verify", "all", "tags",
               "prune", "dry-run", "hard", "soft", "mixed", "merge", "keep", "amend", "allow-empty", "staged",
               "worktree", "discard-changes", "move", "copy", "interactive", "get", "get-all", "get-regexp",
               "list", "unset", "unset-all", "add", "replace-all", "global", "system", "local", "extcmd",
               "force-create", "patch", "quiet", "verbose")


@dataclass
class Scan:
    """A subcommand's arguments, read as git reads them: `flags` (`-f`, `force`…), the values of
    options (`values["message"]`, `values["-m"]`), the positional arguments, and the paths after `--`."""

    flags: set[str] = field(default_factory=set)
    values: dict[str, list[str]] = field(default_factory=dict)
    positionals: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    def has(self, *names: str) -> bool:
        """Whether any of `names` (`-f`, `force`…) was given."""
        return any(n in self.flags for n in names)

    def value(self, *names: str) -> list[str]:
        """Every value given to any of the options `names`."""
        return [v for n in names for v in self.values.get(n, [])]


def split(command: str) -> list[str] | str:
    """The tokens git gets for `command` (a leading `git` dropped), or the refusal when it is
    empty or its quoting is broken — splitting it another way would run another command."""
    text = command.strip()
    if not text:
        return NO_COMMAND
    try:
        tokens = shlex.split(text)
    except ValueError as err:
        return UNPARSABLE.format(error=err)
    if tokens and tokens[0].lower() == "git":
        tokens = tokens[1:]
    return tokens or NO_COMMAND


def subcommand(tokens: list[str]) -> tuple[str, list[str]] | str:
    """The subcommand and its arguments, or the refusal of a git-level option before it."""
    at = 0
    while at < len(tokens) and tokens[at].startswith("-"):
        option = tokens[at].split("=", 1)[0]
        if option in LEADING:
            return LEADING_REFUSED.format(option=option)
        if option not in HARMLESS_LEADING:
            return LEADING_UNEXPECTED.format(option=option)
        at += 1
    if at == len(tokens):
        return "", []
    return tokens[at], tokens[at + 1:]


def scan(sub: str, args: list[str]) -> Scan:
    """Read `args` (what follows the subcommand `sub`) as git would (module docstring)."""
    out = Scan()
    shorts, attached = VALUE_SHORTS.get(sub, ""), ATTACHED_ONLY.get(sub, "")
    at = 0
    while at < len(args):
        token = args[at]
        at += 1
        if token == "--":
            out.paths = args[at:]
            break
        if token.startswith("--"):
            name, eq, value = token[2:].partition("=")
            names = _long_names(name)
            if not eq and any(n in VALUE_LONGS for n in names) and at < len(args):
                value, at = args[at], at + 1
            for full in names:
                out.flags.add(full)
                if eq or full in VALUE_LONGS:  # `--prune=now`: an optional value, attached
                    out.values.setdefault(full, []).append(value)
            continue
        if token.startswith("-") and len(token) > 1:
            at = _shorts(token, args, at, shorts, attached, out)
            continue
        out.positionals.append(token)
    return out


def _long_names(name: str) -> list[str]:
    """The long options `--<name>` stands for: itself when known, else every known option it
    abbreviates (several when ambiguous: each is looked at), else itself."""
    known = VALUE_LONGS + KNOWN_LONGS
    if name in known or not name:
        return [name]
    return [n for n in known if n.startswith(name)] or [name]


def _shorts(token: str, args: list[str], at: int, shorts: str, attached: str, out: Scan) -> int:
    """Read the short options of `token` (`-fdx`, `-mmessage`) into `out`; returns where the next
    argument is (after the value taken from `args`, when one was)."""
    for i, letter in enumerate(token[1:], 1):
        out.flags.add("-" + letter)
        if letter in shorts or letter in attached:
            value = token[i + 1:]
            if not value and letter in shorts and at < len(args):
                value, at = args[at], at + 1
            out.values.setdefault("-" + letter, []).append(value)
            break
    return at


def runner_refusal(sub: str, args: list[str]) -> str | None:
    """RUNS_A_COMMAND for an option that makes git run a program (`--upload-pack`, `--exec`… and
    their abbreviations, or `-u` of clone and ls-remote) — never a value of another option."""
    found = scan(sub, args)
    for name in RUNNERS:
        if name in found.flags:
            return RUNS_A_COMMAND.format(option=f"--{name}")
    for option in SUB_RUNNERS.get(sub, ()):
        if option in found.flags:
            return RUNS_A_COMMAND.format(option=option if option.startswith("-") else f"--{option}")
    return None
