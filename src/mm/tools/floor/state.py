"""What the safety floor knows while it reads a command: where it runs, its variables, the
symlinks and files it made (docs/safety.md §How commands are read)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Mapping

MAX_CWDS = 8  # working directories a command may be in at one point, kept apart
RUN_TIME_VARIABLES = frozenset({"RANDOM", "SRANDOM", "SECONDS", "LINENO", "BASHPID", "EPOCHSECONDS",
                                "EPOCHREALTIME", "PPID", "REPLY", "BASH_COMMAND", "PIPESTATUS"})


@dataclass
class State:
    """The shell's state at one point of the command, as far as it can be known.

    `cwds`: the working directories it may be in (None: one that cannot be known); empty after
    `exit` (the code after it is read all the same, in `dead`, the directories it died in).
    `assigned`: variables set by the command (None: a value not known); the others come from
    `env`, the environment the command gets, and are empty when absent. `links`, `files`:
    symlinks and files (their text) the command made, by absolute path; `functions` (their body
    node) and `aliases` (their text) it defined.
    """

    cwds: frozenset
    env: Mapping[str, str]
    home: str
    assigned: dict[str, str | None] = field(default_factory=dict)
    unset: set[str] = field(default_factory=set)
    links: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    functions: dict[str, object] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    positional: list[str | None] = field(default_factory=lambda: ["bash"])
    dead: frozenset = frozenset()
    errexit: bool = False
    oldpwd: str | None = None

    @property
    def where(self) -> frozenset:
        """The working directories to read the next command in (those it died in after `exit`)."""
        return self.cwds or self.dead or frozenset({None})

    @property
    def places(self) -> tuple:
        """`where` in a steady order (None last): a refusal names the first that breaks a rule."""
        return tuple(sorted(self.where, key=lambda c: (c is None, c or "")))

    def copy(self) -> "State":
        return replace(self, assigned=dict(self.assigned), unset=set(self.unset), links=dict(self.links),
                       files=dict(self.files), functions=dict(self.functions), aliases=dict(self.aliases), positional=list(self.positional))

    def at(self, cwds) -> "State":
        """A copy in the working directories `cwds`."""
        new = self.copy()
        new.cwds = _capped(frozenset(cwds))
        return new

    def merge(self, other: "State") -> "State":
        """The state after one of two branches ran (either)."""
        new = self.copy()
        new.cwds = _capped(self.cwds | other.cwds)
        new.dead = self.dead | other.dead
        for name in set(self.assigned) | set(other.assigned):
            mine, theirs = self.lookup(name), other.lookup(name)
            new.assigned[name] = mine if mine == theirs else None
        new.links.update(other.links)
        new.files.update(other.files)
        new.functions.update(other.functions)
        new.aliases.update(other.aliases)
        return new

    # -- variables
    def lookup(self, name: str) -> str | None:
        """The value of `$name` (None: not known before the command runs)."""
        if name.isdigit():
            index = int(name)
            return self.positional[index] if index < len(self.positional) else ""
        if name in ("@", "*"):
            rest = self.positional[1:]
            return None if None in rest else " ".join(rest)  # type: ignore[arg-type]
        if name == "#":
            return str(len(self.positional) - 1)
        if name in ("?", "$", "!", "-") or name in RUN_TIME_VARIABLES:
            return None
        if name in self.assigned:
            return self.assigned[name]
        if "[" in name:  # an element of an array the command did not set (or not this way)
            base = name.split("[", 1)[0]
            return None if base in self.assigned or base in self.env else ""
        if name in self.unset:
            return ""
        if name == "PWD":
            return self._single(self.where)
        if name == "OLDPWD":
            return self.oldpwd
        if name == "HOME":
            return self.env.get("HOME", self.home)
        return self.env.get(name, "")

    def is_set(self, name: str) -> bool:
        return name in self.assigned or (name not in self.unset and name in self.env)

    def assign(self, name: str, value: str | None) -> None:
        self.assigned[name] = value
        self.unset.discard(name)

    def drop(self, name: str) -> None:
        self.assigned.pop(name, None)
        self.unset.add(name)

    def tilde(self, user: str) -> str | None:
        """What `~user` expands to (`~`: the home folder, `~+`: PWD, `~-`: OLDPWD); None: unknown."""
        if user == "":
            return self.lookup("HOME")
        if user == "+":
            return self.lookup("PWD")
        if user == "-":
            return self.oldpwd
        try:
            import pwd

            return pwd.getpwnam(user).pw_dir
        except (KeyError, ImportError):
            return None

    @staticmethod
    def _single(cwds: frozenset) -> str | None:
        return next(iter(cwds)) if len(cwds) == 1 else None


def _capped(cwds: frozenset) -> frozenset:
    """At most MAX_CWDS directories: beyond, one of them is not known."""
    if len(cwds) <= MAX_CWDS:
        return cwds
    return frozenset(sorted((c for c in cwds if c is not None))[:MAX_CWDS - 1]) | {None}


def start_state(cwd: str, env: Mapping[str, str] | None) -> State:
    """The state a command starts in: in `cwd`, with the environment `env` (default mm's)."""
    env = os.environ if env is None else env
    home = env.get("HOME") or os.path.expanduser("~")
    return State(cwds=frozenset({os.path.abspath(cwd)}), env=env, home=home, oldpwd=env.get("OLDPWD"))
