"""The safety floor's rules, applied to each simple command (docs/safety.md §Rules): which rules a
program meets (mm.tools.floor.writes, mm.tools.floor.machine), and the commands that run another
command — wrappers, shells, eval, source, script files, xargs, find -exec — looked into; `cd`,
`set -e`, `read` change the state. Each rule refuses by raising values.Refused(rule, what).
"""

from __future__ import annotations

import os
import re
import shlex
from typing import TYPE_CHECKING

from mm.protected_paths import absolute
from mm.tools.floor.commands import SHELLS, find_parts, shell_parts, unwrap, xargs_parts
from mm.tools.floor.machine import DISK_TOOLS, INTERPRETERS, dd, disk, interpreter, kill, power
from mm.tools.floor.static import printed, read_script
from mm.tools.floor.values import UNKNOWN, Outcome, Reader, Simple, Value, exact
from mm.tools.floor.writes import (WRITES_ALL, WRITES_LAST, check_write, delete_operands, delete_target, extract,
                                   in_place, remember_files, remember_link, tar_removed, write_operands)

if TYPE_CHECKING:
    from mm.tools.floor.state import State

STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-"})
UNKNOWN_PROGRAM = "a program the floor cannot know before it runs"


def check_simple(reader: "Reader", cmd: Simple, st: "State") -> Outcome:
    """Apply every rule to one simple command in `st`; returns the state after it (success) and
    the working directories it may leave on failure. Raises Refused."""
    reader.check_redirects(cmd.redirects, st)
    if not cmd.words:
        return st, st.where
    name = cmd.words[0]
    if name.exact is None:
        delete_operands(reader, UNKNOWN_PROGRAM, cmd.words[1:], st, only_recursive=True)
        return st, st.where
    if name.exact in st.aliases and name.exact not in reader.calling:
        return _alias(reader, name.exact, cmd, st)
    if name.exact in st.functions and name.exact not in reader.calling:
        return _call(reader, name.exact, cmd, st)
    program = os.path.basename(name.exact.rstrip("/")) or name.exact
    outcome = _run(reader, program, cmd, st)
    out = printed(program, cmd.words[1:], cmd.stdin if cmd.items is None else cmd.items, st)
    remember_files(cmd, out, outcome[0])
    reader.stdout = None if any(r.op in (">", ">>", ">|", "&>", "&>>") for r in cmd.redirects) else out
    return outcome


def _run(reader: "Reader", program: str, cmd: Simple, st: "State") -> Outcome:
    args = cmd.words[1:]
    inner = unwrap(program, cmd.words)
    if inner is not None:
        return _wrapped(reader, program, inner, cmd, st)
    if program in SHELLS:
        _shell(reader, cmd, st)
    elif program in ("eval", "source", "."):
        return _same_shell(reader, program, args, cmd, st)
    elif program in ("su", "flock") or program == "watch":
        _shell_string_option(reader, program, args, st)
    elif program == "xargs":
        _xargs(reader, cmd, st)
    elif program == "find":
        _find(reader, args, st)
    elif program in ("cd", "pushd", "popd"):
        return _cd(program, args, st)
    elif program in ("exit", "return", "false", "logout"):
        dead = st.at(())
        dead.dead = st.where
        return dead, (st.where if program == "false" else frozenset())
    elif program == "set":
        _set(args, st)
    elif program in ("read", "mapfile", "readarray") or program == "printf" and args[:1] and args[0].exact == "-v":
        _read_into(program, args, st)
    elif program == "shift":
        st.positional = st.positional[:1] + st.positional[2:]
    elif program == "alias":
        _define_aliases(args, st)
    _check_program(reader, program, args, st)
    if "/" in (cmd.words[0].exact or "") and program not in SHELLS:
        _script(reader, cmd.words[0].exact or "", args, st)
    return st, st.where


def _check_program(reader: "Reader", program: str, args: list[Value], st: "State") -> None:
    """The rules on one program and its operands."""
    base = program.split(".", 1)[0] if program.startswith("mkfs") else program
    if base in DISK_TOOLS or program in ("mkfs", "cryptsetup", "shred"):
        disk(program, args, st)
    if program in ("rm", "srm") or program == "mv":
        delete_operands(reader, program, args, st, only_recursive=program != "mv")
    if program in WRITES_ALL or program in WRITES_LAST:
        write_operands(reader, program, args, st)
    if program == "ln":
        remember_link(args, st)
    if program == "dd":
        dd(reader, args, st)
    if program in ("sed", "perl") or program.startswith("perl"):
        in_place(reader, program, args, st)
    if program in ("tar", "bsdtar", "unzip", "7z", "cpio"):
        extract(reader, program, args, st)
    if program in ("tar", "bsdtar"):
        tar_removed(reader, program, args, st)
    if program == "rsync" and any((a.exact or "").startswith("--delete") for a in args):
        operands = [a for a in args if not (a.exact or "-").startswith("-")]
        if operands:
            delete_target(reader, program, operands[-1], st)
    power(program, args)
    kill(program, args)
    if INTERPRETERS.fullmatch(program):
        interpreter(program, args)


# -- commands that run commands
def _alias(reader: "Reader", name: str, cmd: Simple, st: "State") -> Outcome:
    """An alias the command defined, expanded at its call (bash -c would not expand it: the floor
    does, on the safe side) with the call's words after it (unknown ones stay unknown)."""
    words = " ".join(shlex.quote(w.exact) if w.exact is not None else '"$(mm-floor-unknown)"' for w in cmd.words[1:])
    reader.calling.add(name)
    try:
        return reader.script(f"{st.aliases[name]} {words}", st)
    finally:
        reader.calling.discard(name)


def _call(reader: "Reader", name: str, cmd: Simple, st: "State") -> Outcome:
    """A function the command defined, read again at its call with the call's words as $1, $2…
    (in this shell: a `cd` in it moves it). A function calling itself is read once."""
    saved = st.positional
    st.positional = [name] + [w.exact for w in cmd.words[1:]]
    reader.calling.add(name)
    try:
        ok, failed = reader.run(st.functions[name], st)  # type: ignore[arg-type]
    finally:
        reader.calling.discard(name)
        st.positional = saved
    ok.positional = saved
    return ok, failed


def _wrapped(reader: "Reader", program: str, inner: tuple[list[Value], dict[str, Value]], cmd: Simple,
             st: "State") -> Outcome:
    words, options = inner
    if program == "env" and "-S" in options or program == "env" and "--split-string" in options:
        split = options.get("-S") or options.get("--split-string")
        if split is not None and split.exact is not None:
            reader.script(split.exact + " " + " ".join(w.exact or "" for w in words), st.copy())
        return st, st.where
    if program == "watch":
        _shell_text(reader, " ".join(w.exact or "" for w in words), st.copy(), words)
        return st, st.where
    place = options.get("-C") or options.get("--chdir") or options.get("-D") or options.get("--working-directory")
    where = st
    if place is not None:
        where = st.at(_moved(st, place))
    if not words:
        return st, st.where
    outcome = check_simple(reader, Simple(words, [], cmd.stdin, cmd.items), where if place is not None else st)
    if program == "exec":  # exec replaces the shell: what follows never runs (read all the same)
        return outcome
    return (st, st.where) if place is not None else outcome


def _shell(reader: "Reader", cmd: Simple, st: "State") -> None:
    how, script, rest = shell_parts(cmd.words)
    if how == "string":
        if script is not None and script.exact is not None:
            positional = [(w.exact) for w in rest] or ["bash"]
            _shell_text(reader, script.exact, st.copy(), None, positional)
    elif how == "file" and script is not None and script.exact in STDIN_FILES and isinstance(cmd.stdin, str):
        _shell_text(reader, cmd.stdin, st.copy(), None)
    elif how == "file" and script is not None and script.exact is not None:
        _script(reader, script.exact, rest, st)
    elif how == "stdin" and isinstance(cmd.stdin, str):
        _shell_text(reader, cmd.stdin, st.copy(), None)


def _shell_text(reader: "Reader", text: str, st: "State", words, positional=None) -> None:
    if positional is not None:
        st.positional = positional
    reader.script(text, st)


def _same_shell(reader: "Reader", program: str, args: list[Value], cmd: Simple, st: "State") -> Outcome:
    """eval and source run in this shell: a `cd` in them moves it."""
    if program == "eval":
        texts = [a.exact for a in args]
        if None in texts or not texts:
            return st, st.where
        return reader.script(" ".join(texts), st)  # type: ignore[arg-type]
    if not args or args[0].exact is None:
        return st, st.where
    text = _script_text(args[0].exact, cmd, st)
    if text is None:
        return st, st.where
    saved = st.positional
    if len(args) > 1:
        st.positional = [saved[0]] + [a.exact for a in args[1:]]
    ok, failed = reader.script(text, st)
    ok.positional = saved
    return ok, failed


def _script_text(name: str, cmd: Simple, st: "State") -> str | None:
    """The script `source NAME` reads: what the command feeds it on stdin for /dev/stdin."""
    if name in STDIN_FILES:
        return cmd.stdin if isinstance(cmd.stdin, str) else None
    return read_script(name, st)


def _shell_string_option(reader: "Reader", program: str, args: list[Value], st: "State") -> None:
    """`su -c STRING`, `flock FILE -c STRING`: the string is run by a shell."""
    for i, arg in enumerate(args):
        if arg.exact in ("-c", "--command") and i + 1 < len(args) and args[i + 1].exact is not None:
            reader.script(args[i + 1].exact or "", st.copy())
        elif (arg.exact or "").startswith("--command="):
            reader.script((arg.exact or "").split("=", 1)[1], st.copy())
    if program == "flock":
        words = [a for a in args if not (a.exact or "").startswith("-")][1:]
        if words and "-c" not in [a.exact for a in args]:
            check_simple(reader, Simple(words), st.copy())


def _script(reader: "Reader", path: str, args: list[Value], st: "State") -> None:
    """A script file run by a shell (`bash x.sh`, `./x.sh`): its text is read as the command's."""
    text = read_script(path, st)
    if text is None:
        return
    first = text.split("\n", 1)[0]
    if first.startswith("#!") and not re.search(r"\b(ba|da|z|k|mk|a)?sh\b", first):
        return  # a Python or other script: not the shell's
    inner = st.copy()
    inner.positional = [path] + [a.exact for a in args]
    reader.script(text, inner)


def _xargs(reader: "Reader", cmd: Simple, st: "State") -> None:
    words, options = xargs_parts(cmd.words)
    if cmd.items is not None:
        items = list(cmd.items)
    elif isinstance(cmd.stdin, str):
        sep = "\0" if "-0" in options or "--null" in options else options.get("-d") or options.get("--delimiter")
        items = [exact(t) for t in (cmd.stdin.split(sep) if sep else cmd.stdin.split()) if t]
    else:
        items = [UNKNOWN]
    replace = options.get("-I")
    if replace:
        for item in items[:16]:
            filled = [_replaced(w, replace, item) for w in words]
            check_simple(reader, Simple(filled), st.copy())
    else:
        check_simple(reader, Simple(words + items[:64]), st.copy())


def _replaced(word: Value, marker: str, item: Value) -> Value:
    text = word.exact
    if text is None or marker not in text:
        return word
    if text == marker:
        return item
    if item.exact is not None:
        return exact(text.replace(marker, item.exact))
    return Value(item.text, "under") if item.text is not None else UNKNOWN


def _find(reader: "Reader", args: list[Value], st: "State") -> None:
    starts, filtered, actions = find_parts(args)
    for start in starts:
        found = [Value(start.text, "under")] if start.text is not None else [UNKNOWN]
        if not filtered and start.exact is not None:
            found.insert(0, start)
        for action, words in actions:
            if action == "-delete":
                if start.kind == "unknown":
                    delete_operands(reader, "find -delete", [start], st, only_recursive=False)
                for item in found:
                    delete_target(reader, "find -delete", item, st)
                    check_write(reader, item, st, program="find -delete")
            elif action == "-fprint":
                check_write(reader, words[0], st, program="find")
            else:
                for item in found:
                    check_simple(reader, Simple([_replaced(w, "{}", item) for w in words]), st.copy())


def _cd(program: str, args: list[Value], st: "State") -> Outcome:
    operands = [a for a in args if not (a.exact or "x").startswith("-") or a.exact == "-"]
    new = st.copy()
    new.oldpwd = st.lookup("PWD")
    if program == "popd":
        new.cwds = frozenset({None})
        return new, st.where
    target = operands[0] if operands else exact(st.lookup("HOME") or st.home)
    if target.exact == "-":
        target = exact(st.oldpwd) if st.oldpwd else UNKNOWN
    new.cwds = frozenset(_moved(st, target))
    return new, st.where


def _moved(st: "State", target: Value) -> set:
    if target.exact is None:
        return {None}
    return {absolute(target.exact, cwd or "/") if cwd is not None or target.exact.startswith("/")
            else None for cwd in st.places}


def _read_into(program: str, args: list[Value], st: "State") -> None:
    """`read x`, `mapfile x`, `printf -v x`: the variables get values known only at run time."""
    valued = {"-p", "-d", "-n", "-N", "-t", "-u", "-a", "-i", "-v", "-C", "-c", "-O", "-s"}
    names, skip = [], False
    for arg in args:
        text = arg.exact or ""
        if skip:
            skip = False
            if program == "printf" or text and arg is args[0]:
                names.append(text)
            continue
        if text in valued:
            skip = True
            if text in ("-a", "-v"):
                names.append(args[args.index(arg) + 1].exact or "" if args.index(arg) + 1 < len(args) else "")
            continue
        if not text.startswith("-") and program != "printf":
            names.append(text)
    for name in names or (["REPLY"] if program == "read" else ["MAPFILE"]):
        if name:
            st.assign(name, None)
            st.assign(name + "[@]", None)


def _define_aliases(args: list[Value], st: "State") -> None:
    for arg in args:
        name, equal, value = (arg.exact or "").partition("=")
        if equal and name and not name.startswith("-"):
            st.aliases[name] = value


def _set(args: list[Value], st: "State") -> None:
    texts = [a.exact or "" for a in args]
    for i, text in enumerate(texts):
        if text == "--":
            st.positional = st.positional[:1] + [a.exact for a in args[i + 1:]]
            return
        if re.fullmatch(r"-[a-zA-Z]*e[a-zA-Z]*", text) or text == "-o" and texts[i + 1:i + 2] == ["errexit"]:
            st.errexit = True
        if re.fullmatch(r"\+[a-zA-Z]*e[a-zA-Z]*", text) or text == "+o" and texts[i + 1:i + 2] == ["errexit"]:
            st.errexit = False
