"""The safety floor's rules, applied to each simple command (docs/safety.md §Rules).

Each rule refuses by raising walk.Refused(rule, what). Commands that run another command
(wrappers, shells, eval, source, xargs, find -exec) are looked into; `cd` moves the state.
"""

from __future__ import annotations

import os
import re
import stat
from typing import TYPE_CHECKING

from mm.tools.floor.commands import SHELLS, find_parts, shell_parts, unwrap, xargs_parts
from mm.tools.floor.paths import DEVICE_FOLDERS, ROOT, absolute, protected_folder, refused_step, resolve
from mm.tools.floor.static import printed, read_script
from mm.tools.floor.values import UNKNOWN, Value, exact
from mm.tools.floor.walk import Outcome, Refused, Simple

if TYPE_CHECKING:
    from tree_sitter import Node

    from mm.tools.floor.state import State
    from mm.tools.floor.walk import Reader

# What each rule says (the refusal line is mm.tools.floor.REFUSAL around it).
DELETE = "{program} would {verb} {target}{holds}"
HOLDS_HOME = ", which holds the home folder {home}"
HOLDS_WORKDIR = ", which holds the working directory {workdir}"
EVERY_ENTRY = "every entry of {folder}"
SYSTEM_WRITE = "{program} would write {target}, in the system folder {root}"
ROOT_WRITE = "{program} would write {target}"
AT_ROOT = "{path}, at the filesystem root /"
THE_ROOT = "the filesystem root /"
ANYWHERE = "anywhere under the filesystem root /"
DEVICE_WRITE = "{program} would write onto the device {target}"
DISK = "{program} would format, wipe or repartition {target}"
DISK_UNKNOWN = "{program} would format, wipe or repartition a device the floor cannot know before it runs"
POWER = "{program} would shut down or restart the machine"
KILL_ALL = "{program} would kill {target}"
FORK_BOMB = "{what} starts processes without end (a fork bomb)"
REDIRECTION = "a redirection"
UNKNOWN_PROGRAM = "a program the floor cannot know before it runs"
EXEMPT_SINKS = frozenset({"/dev/null", "/dev/zero", "/dev/full", "/dev/stdout", "/dev/stderr", "/dev/stdin",
                          "/dev/tty", "/dev/fd"})
DISK_TOOLS = frozenset({"mkfs", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "mkexfatfs", "mkhfs", "wipefs", "blkdiscard",
                        "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "cgdisk", "parted", "badblocks", "zpool"})
DISK_READ_ONLY = frozenset({"-l", "--list", "-p", "--print", "-s", "--show", "print", "-V", "--version", "-h", "--help",
                            "--no-act", "list", "status", "iostat"})
POWER_TOOLS = frozenset({"shutdown", "reboot", "halt", "poweroff", "kexec"})
POWER_VERBS = frozenset({"poweroff", "reboot", "halt", "kexec", "soft-reboot", "emergency", "rescue",
                         "default", "suspend-then-hibernate"})
POWER_TARGETS = frozenset({"poweroff.target", "reboot.target", "halt.target", "rescue.target", "emergency.target",
                           "kexec.target"})
# Every operand is written: (program, how many leading operands are not paths: chmod's mode…).
WRITES_ALL = {"tee": 0, "truncate": 0, "touch": 0, "mkdir": 0, "mkfifo": 0, "mknod": 0, "rmdir": 0, "unlink": 0,
              "chmod": 1, "chown": 1, "chgrp": 1, "chattr": 1, "setfacl": 0, "chcon": 1, "shred": 0, "mv": 0,
              "rm": 0, "srm": 0}
WRITES_LAST = frozenset({"cp", "install", "ln", "rsync", "scp", "link"})
VALUED = {"truncate": {"-s", "--size", "-r", "--reference"}, "mkdir": {"-m", "--mode"}, "install": {"-m", "-o", "-g",
          "--mode", "--owner", "--group", "-S", "--suffix"}, "cp": {"-S", "--suffix"}, "mv": {"-S", "--suffix"},
          "ln": {"-S", "--suffix"}, "mknod": {"-m", "--mode"}, "mkfifo": {"-m", "--mode"}, "touch": {"-d", "-t", "-r",
          "--date", "--reference"}, "shred": {"-n", "--iterations", "-s", "--size", "--random-source"},
          "setfacl": {"-m", "-M", "-x", "-X", "--modify", "--remove", "--set"}, "rsync": {"-e", "--rsh", "--exclude",
          "--include", "--filter", "-f", "--exclude-from", "--include-from", "--files-from"}}
INTERPRETERS = re.compile(r"(python[0-9.]*|perl|ruby|node|nodejs|php|lua|deno|bun)")
FORK_LOOP = re.compile(r"\bfork\b.*\b(while|for|loop|each)\b|\b(while|for|loop|until)\b.*\bfork\b|fork\s*while\s*fork",
                       re.S)


def check_simple(reader: "Reader", cmd: Simple, st: "State") -> Outcome:
    """Apply every rule to one simple command in `st`; returns the state after it (success) and
    the working directories it may leave on failure. Raises Refused."""
    reader.check_redirects(cmd.redirects, st)
    if not cmd.words:
        return st, st.where
    name = cmd.words[0]
    if name.exact is None:
        _delete_operands(reader, UNKNOWN_PROGRAM, cmd.words[1:], st, only_recursive=True)
        return st, st.where
    program = os.path.basename(name.exact.rstrip("/")) or name.exact
    outcome = _run(reader, program, cmd, st)
    out = printed(program, cmd.words[1:], cmd.stdin if cmd.items is None else cmd.items, st)
    _remember_files(cmd, out, outcome[0])
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
    _check_program(reader, program, args, st)
    if "/" in (cmd.words[0].exact or "") and program not in SHELLS:
        _script(reader, cmd.words[0].exact or "", args, st)
    return st, st.where


def _check_program(reader: "Reader", program: str, args: list[Value], st: "State") -> None:
    """The rules on one program and its operands."""
    base = program.split(".", 1)[0] if program.startswith("mkfs") else program
    if base in DISK_TOOLS or program in ("mkfs", "cryptsetup", "shred"):
        _disk(program, args, st)
    if program in ("rm", "srm") or program == "mv":
        _delete_operands(reader, program, args, st, only_recursive=program != "mv")
    if program in WRITES_ALL or program in WRITES_LAST:
        _write_operands(reader, program, args, st)
    if program == "ln":
        _remember_link(args, st)
    if program == "dd":
        _dd(reader, args, st)
    if program in ("sed", "perl") or program.startswith("perl"):
        _in_place(reader, program, args, st)
    if program in ("tar", "bsdtar", "unzip", "7z", "cpio"):
        _extract(reader, program, args, st)
    if program == "rsync" and any((a.exact or "").startswith("--delete") for a in args):
        operands = [a for a in args if not (a.exact or "-").startswith("-")]
        if operands:
            _delete_target(reader, program, operands[-1], st)
    _power(program, args)
    _kill(program, args)
    if INTERPRETERS.fullmatch(program):
        _interpreter(program, args)


# -- commands that run commands
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
    text = read_script(args[0].exact, st)
    if text is None:
        return st, st.where
    saved = st.positional
    if len(args) > 1:
        st.positional = [saved[0]] + [a.exact for a in args[1:]]
    ok, failed = reader.script(text, st)
    ok.positional = saved
    return ok, failed


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
                for item in found:
                    _delete_target(reader, "find -delete", item, st)
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


# -- deleting
def _delete_operands(reader: "Reader", program: str, args: list[Value], st: "State", only_recursive: bool) -> None:
    recursive = not only_recursive
    operands: list[Value] = []
    options_done = False
    for arg in args:
        text = arg.exact
        if not options_done and text is not None and text.startswith("-") and len(text) > 1:
            if text == "--":
                options_done = True
            elif text in ("--recursive", "-r", "-R") or not text.startswith("--") and re.search(r"[rR]", text):
                recursive = True
            continue
        operands.append(arg)
    if recursive:
        for operand in operands:
            _delete_target(reader, program, operand, st)


def _delete_target(reader: "Reader", program: str, value: Value, st: "State") -> None:
    """Refuse deleting (recursively) the root, the home folder, the working directory, or a
    folder holding one of them."""
    if value.kind not in ("exact", "contents") or not value.text:  # "": no file has that name
        return
    home = os.path.normpath(st.lookup("HOME") or st.home)
    for cwd in st.places:
        if cwd is None and not value.text.startswith("/"):
            continue
        path = absolute(value.text, cwd or "/")
        paths = {path, resolve(path, st.links)} if value.kind == "contents" else {path}
        for target in paths:
            shown = EVERY_ENTRY.format(folder=target) if value.kind == "contents" else target
            verb = "move away" if program == "mv" else "delete"
            if target == ROOT:
                raise Refused("delete_root", DELETE.format(program=program, verb=verb, target=shown, holds=""))
            if _holds(target, home):
                holds = "" if target == home else HOLDS_HOME.format(home=home)
                raise Refused("delete_home", DELETE.format(program=program, verb=verb, target=shown, holds=holds))
            for workdir in reader.workdirs:
                if _holds(target, workdir):
                    holds = "" if target == workdir else HOLDS_WORKDIR.format(workdir=workdir)
                    raise Refused("delete_workdir", DELETE.format(program=program, verb=verb, target=shown,
                                                                   holds=holds))


def _holds(folder: str, path: str) -> bool:
    """Whether `folder` is `path` or one of its parents."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


# -- writing
def check_write(reader: "Reader", value: Value, st: "State", exempt: bool = False, program: str = REDIRECTION) -> None:
    """Refuse a write to `value` in a system folder, at the root, or onto a device (the path
    policy, mm.tools.floor.paths). `exempt`: /dev/null, /dev/stdout… are allowed (redirections,
    tee, dd)."""
    if not value.text:  # unknown, or "": no file has that name
        return
    for cwd in st.places:
        if cwd is None and not value.text.startswith("/"):
            continue
        path = absolute(value.text, cwd or "/")
        if value.kind == "exact" and exempt and (path in EXEMPT_SINKS or path.startswith("/dev/fd/")):
            continue
        if value.kind == "under":
            root = ROOT if path == ROOT else protected_folder(path)
            if root is not None:
                _refuse_write(program, ANYWHERE if root == ROOT else path + "/…", root)
            continue
        step = refused_step(path, cwd, st.links)
        if step is not None:
            _refuse_write(program, path if step[0] == path else f"{path} (it leads to {step[0]})", step[1])
        if value.kind == "exact" and _is_device(resolve(path, st.links)):
            raise Refused("device_write", DEVICE_WRITE.format(program=program, target=path))


def _refuse_write(program: str, target: str, root: str) -> None:
    if root in DEVICE_FOLDERS and root == "/dev":
        raise Refused("device_write", DEVICE_WRITE.format(program=program, target=target))
    if root == ROOT:
        shown = THE_ROOT if target == ROOT else target if target == ANYWHERE else AT_ROOT.format(path=target)
        raise Refused("root_write", ROOT_WRITE.format(program=program, target=shown))
    raise Refused("system_write", SYSTEM_WRITE.format(program=program, target=target, root=root))


def _is_device(path: str) -> bool:
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISBLK(mode) or stat.S_ISCHR(mode)


def _write_operands(reader: "Reader", program: str, args: list[Value], st: "State") -> None:
    valued = VALUED.get(program, set())
    operands: list[Value] = []
    target: Value | None = None
    i, options_done = 0, False
    while i < len(args):
        arg, text = args[i], args[i].exact
        if not options_done and text is not None and text.startswith("-") and len(text) > 1:
            name, _, attached = text.partition("=")
            if text == "--":
                options_done = True
            elif name in ("-t", "--target-directory"):
                target = exact(attached) if attached else (args[i + 1] if i + 1 < len(args) else None)
                i += 0 if attached else 1
            elif name in valued and not attached:
                i += 1
            i += 1
            continue
        operands.append(arg)
        i += 1
    if program in WRITES_LAST:
        written = [target] if target is not None else operands[-1:] if len(operands) > 1 else []
    else:
        written = operands[WRITES_ALL[program]:] + ([target] if target is not None else [])
    for value in written:
        if value is not None:
            check_write(reader, value, st, exempt=program == "tee", program=program)


def _remember_link(args: list[Value], st: "State") -> None:
    """`ln -s TARGET LINK`: later paths through LINK lead to TARGET."""
    operands = [a.exact for a in args if not (a.exact or "-").startswith("-")]
    if len(operands) != 2 or None in operands:
        return
    target, link = operands
    for cwd in st.places:
        if cwd is None:
            continue
        path = absolute(link, cwd)  # type: ignore[arg-type]
        if os.path.isdir(path):
            path = os.path.join(path, os.path.basename(target))  # type: ignore[arg-type]
        st.links[path] = target  # type: ignore[assignment]


def _remember_files(cmd: Simple, out, st: "State") -> None:
    """`cat > x.sh <<EOF …`: the file's text, for a later `bash x.sh` in the same command."""
    for redirect in cmd.redirects:
        if redirect.op in (">", ">|", ">>") and redirect.target.exact is not None:
            for cwd in st.places:
                if cwd is not None:
                    path = absolute(redirect.target.exact, cwd)
                    if isinstance(out, str):
                        before = st.files.get(path, "") if redirect.op == ">>" else ""
                        st.files[path] = before + out
                    else:
                        st.files.pop(path, None)


def _in_place(reader: "Reader", program: str, args: list[Value], st: "State") -> None:
    """`sed -i`, `perl -i`/`-pi`: every file operand is rewritten."""
    texts = [a.exact or "" for a in args]
    in_place = any(t == "--in-place" or t.startswith("--in-place=") or re.fullmatch(r"-[a-zA-Z]*i.*", t)
                   and not t.startswith("--") for t in texts)
    if not in_place:
        return
    script_given = any(t in ("-e", "-f", "--expression", "--file") or t.startswith("--expression=") for t in texts)
    operands, skip = [], False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        text = arg.exact or ""
        if text in ("-e", "-f", "--expression", "--file", "-I", "-M", "-m"):
            skip = True
            continue
        if text.startswith("-") and len(text) > 1:
            continue
        operands.append(arg)
    if not script_given:
        operands = operands[1:]
    for operand in operands:
        check_write(reader, operand, st, program=program)


def _extract(reader: "Reader", program: str, args: list[Value], st: "State") -> None:
    """tar -x -C DIR, unzip -d DIR: files are written under DIR (the working directory by default)."""
    texts = [a.exact or "" for a in args]
    extracting = any(t in ("-x", "--extract", "--get") or re.fullmatch(r"-[a-zA-Z]*x[a-zA-Z]*", t) for t in texts) \
        or bool(texts) and re.fullmatch(r"[a-zA-Z]*x[a-zA-Z]*", texts[0]) is not None
    if program in ("tar", "bsdtar") and not extracting:
        return
    flag = {"tar": ("-C", "--directory"), "bsdtar": ("-C", "--directory"), "unzip": ("-d",), "7z": ("-o",),
            "cpio": ("-D", "--directory")}[program]
    for i, text in enumerate(texts):
        folder = None
        if text in flag and i + 1 < len(args):
            folder = args[i + 1]
        elif any(text.startswith(f + "=") or f == "-o" and text.startswith("-o") and len(text) > 2 for f in flag):
            folder = exact(text.split("=", 1)[1] if "=" in text else text[2:])
        if folder is not None and folder.text is not None:
            check_write(reader, Value(folder.text, "under"), st, program=program)


# -- disks, power, processes
def _disk(program: str, args: list[Value], st: "State") -> None:
    texts = [a.exact for a in args]
    if any(t in DISK_READ_ONLY for t in texts if t is not None) and program not in ("wipefs", "blkdiscard"):
        return
    if program == "cryptsetup" and not any(t in ("luksFormat", "erase", "luksErase", "reencrypt") for t in texts):
        return
    if program == "badblocks" and not any(t is not None and re.fullmatch(r"-[a-zA-Z]*[wn][a-zA-Z]*", t) for t in texts):
        return
    for arg in args:
        if arg.exact is not None and arg.exact.startswith("-"):
            continue
        if arg.exact is None and program != "shred":
            raise Refused("disk", DISK_UNKNOWN.format(program=program))
        if arg.exact is None:
            continue
        if _names_device(arg.exact, st):
            raise Refused("disk", DISK.format(program=program, target=arg.exact))


def _names_device(text: str, st: "State") -> bool:
    for cwd in st.places:
        path = absolute(text, cwd or "/")
        if path.startswith("/dev/") or _is_device(resolve(path, st.links)) or resolve(path, st.links).startswith("/dev/"):
            return True
    return False


def _dd(reader: "Reader", args: list[Value], st: "State") -> None:
    for arg in args:
        text = arg.exact
        if text is not None and text.startswith("of="):
            target = text[3:]
            if _names_device(target, st) and os.path.normpath(target) not in EXEMPT_SINKS:
                raise Refused("disk", DISK.format(program="dd", target=target))
            check_write(reader, exact(target), st, exempt=True, program="dd")


def _power(program: str, args: list[Value]) -> None:
    texts = [a.exact for a in args]
    if program in POWER_TOOLS or program in ("init", "telinit") and texts[:1] in (["0"], ["6"]):
        if program == "shutdown" and "-c" in texts:
            return
        raise Refused("power", POWER.format(program=program))
    if program in ("systemctl", "loginctl") and any(t in POWER_VERBS or t in POWER_TARGETS for t in texts):
        raise Refused("power", POWER.format(program=program))


def _kill(program: str, args: list[Value]) -> None:
    """kill of pid -1 (every process the user may signal: all of them, as root) or 1 (init)."""
    if program == "killall5":
        raise Refused("kill_all", KILL_ALL.format(program=program, target="every process"))
    if program != "kill":
        return
    texts = [a.exact for a in args]
    pids: list[str | None] = []
    signal_given, i = False, 0
    while i < len(texts):
        text = texts[i]
        if text == "--":
            pids += texts[i + 1:]
            break
        if text in ("-l", "-L", "--list", "--table"):
            return
        if text in ("-s", "-n", "--signal"):
            signal_given, i = True, i + 2
            continue
        if text is not None and text.startswith("-") and not signal_given and not pids:
            signal_given, i = True, i + 1
            continue
        pids.append(text)
        i += 1
    if "1" in pids or "-1" in pids:
        raise Refused("kill_all", KILL_ALL.format(program=program, target="every process (pid -1) or init (pid 1)"))


def _interpreter(program: str, args: list[Value]) -> None:
    for i, arg in enumerate(args):
        if arg.exact in ("-c", "-e", "-E", "-r", "--eval") and i + 1 < len(args) and args[i + 1].exact:
            if FORK_LOOP.search(args[i + 1].exact or ""):
                raise Refused("fork_bomb", FORK_BOMB.format(what=f"{program} {arg.exact} …"))


def check_fork_bomb(reader: "Reader", name: str, body: "Node") -> None:
    """A function that calls itself in a pipeline or in the background: `:(){ :|:& };:`."""
    if not name:
        return
    for node in _walk(body):
        if node.type == "pipeline" and sum(_calls(reader, part, name) for part in node.named_children) >= 1:
            raise Refused("fork_bomb", FORK_BOMB.format(what=f"the function {name}"))
        if node.type == "&" and node.prev_sibling is not None and _calls(reader, node.prev_sibling, name):
            raise Refused("fork_bomb", FORK_BOMB.format(what=f"the function {name}"))


def check_loop_bomb(reader: "Reader", loop: "Node", body: "Node | None") -> None:
    """A loop without end that starts a process in the background at each turn."""
    if body is None:
        return
    condition = loop.child_by_field_name("condition")
    text = reader.expander.text(condition).strip().rstrip(";").strip() if condition is not None else ""
    if loop.type == "while_statement" and text not in ("true", ":", "[ 1 ]", "((1))") or \
            loop.type == "until_statement" and text != "false" or \
            loop.type == "c_style_for_statement" and ";;" not in reader.expander.text(loop).replace(" ", ""):
        return
    if any(child.type == "&" for child in body.children):
        raise Refused("fork_bomb", FORK_BOMB.format(what="a loop without end with a job in the background"))


def _walk(node: "Node"):
    yield node
    for child in node.children:
        yield from _walk(child)


def _calls(reader: "Reader", node: "Node", name: str) -> bool:
    for inner in _walk(node):
        if inner.type == "command_name" and reader.expander.text(inner).strip() == name:
            return True
    return False
