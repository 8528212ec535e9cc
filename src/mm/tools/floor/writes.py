"""The safety floor's rules on deleting and writing (docs/safety.md §Rules): recursive deletes of
the root, the home folder or the working directory; writes the path policy refuses
(mm.protected_paths) — by redirections and by the operands of writing commands.
"""

from __future__ import annotations

import os
import re
import stat
from typing import TYPE_CHECKING

from mm.protected_paths import DEVICE_FOLDERS, ROOT, SYSTEM_FOLDERS, absolute, protected_folder, refused_step, resolve
from mm.tools.floor.values import Reader, Refused, Simple, Value, exact

if TYPE_CHECKING:
    from mm.tools.floor.state import State

DELETE = "{program} would {verb} {target}{holds}"
HOLDS_HOME = ", which holds the home folder {home}"
HOLDS_WORKDIR = ", which holds the working directory {workdir}"
HOLDS_SYSTEM = ", which holds the system folder {root}"
IN_ROOT = ", a folder directly in the filesystem root /"
CHANGE = "change every file of"  # the verb of a recursive chmod, chown, chgrp, chattr, setfacl
RECURSIVE_CHANGES = frozenset({"chmod", "chown", "chgrp", "chattr", "setfacl"})
DELETE_UNKNOWN = ("{program} would delete a path known only when it runs (a command's output, input it reads): "
                  "the target of a recursive delete must be written out")
EVERY_ENTRY = "every entry of {folder}"
SYSTEM_WRITE = "{program} would write {target}, in the system folder {root}"
ROOT_WRITE = "{program} would write {target}"
AT_ROOT = "{path}, at the filesystem root /"
THE_ROOT = "the filesystem root /"
ANYWHERE = "anywhere under the filesystem root /"
DEVICE_WRITE = "{program} would write onto the device {target}"
REDIRECTION = "a redirection"
EXEMPT_SINKS = frozenset({"/dev/null", "/dev/zero", "/dev/full", "/dev/stdout", "/dev/stderr", "/dev/stdin",
                          "/dev/tty", "/dev/fd"})
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


def delete_operands(reader: "Reader", program: str, args: list[Value], st: "State", only_recursive: bool) -> None:
    """rm -r/-R/--recursive (`only_recursive`), mv (every source: not its destination): each
    operand goes to delete_target."""
    recursive = not only_recursive
    operands: list[Value] = []
    target: Value | None = None
    options_done, i = False, 0
    while i < len(args):
        arg, text = args[i], args[i].exact
        i += 1
        if not options_done and text is not None and text.startswith("-") and len(text) > 1:
            name, _, attached = text.partition("=")
            if text == "--":
                options_done = True
            elif program == "mv" and name in ("-t", "--target-directory"):
                target = exact(attached) if attached else (args[i] if i < len(args) else None)
                i += 0 if attached else 1
            elif program == "mv" and name in ("-S", "--suffix") and not attached:
                i += 1
            elif text in ("--recursive", "-r", "-R") or not text.startswith("--") and re.search(r"[rR]", text):
                recursive = True
            continue
        operands.append(arg)
    if program == "mv" and target is None:
        operands = operands[:-1]  # the destination is written, not moved away (write_operands)
    if recursive:
        for operand in operands:
            if operand.kind == "unknown" and not reader.defining:
                raise Refused("delete_unknown", DELETE_UNKNOWN.format(program=program))
            delete_target(reader, program, operand, st)


def delete_target(reader: "Reader", program: str, value: Value, st: "State", verb: str = "") -> None:
    """Refuse deleting (recursively), moving away or (`verb` "change": chmod -R…) changing the
    root, the home folder, the working directory, a folder holding one of them or a system folder,
    or a folder directly in the root (`/home`, `/opt`, `/var`…). A change refuses only the folders
    that hold one (`chmod -R u+w .` is allowed). A target inside a system folder is left to
    check_write, which names it."""
    if value.kind not in ("exact", "contents") or not value.text:  # "": no file has that name
        return
    home = os.path.normpath(st.lookup("HOME") or st.home)
    verb = verb or ("move away" if program == "mv" else "delete")
    for cwd in st.places:
        if cwd is None and not value.text.startswith("/"):
            continue
        path = absolute(value.text, cwd or "/")
        paths = {path, resolve(path, st.links)} if value.kind == "contents" else {path}
        for target in sorted(paths):
            shown = EVERY_ENTRY.format(folder=target) if value.kind == "contents" else target
            _refuse_tree(reader, program, verb, target, shown, home)


def _refuse_tree(reader: "Reader", program: str, verb: str, target: str, shown: str, home: str) -> None:
    def refuse(rule: str, holds: str) -> None:
        raise Refused(rule, DELETE.format(program=program, verb=verb, target=shown, holds=holds))

    itself = verb != CHANGE  # a recursive change of the folder itself is allowed (`chmod -R u+w .`)
    if target == ROOT:
        refuse("delete_root", "")
    if protected_folder(target) not in (None, ROOT):
        return  # in a system folder: check_write names it
    if not itself and (target == home or target in reader.workdirs):
        return
    if _holds(target, home) and (itself or target != home):
        refuse("delete_home", "" if target == home else HOLDS_HOME.format(home=home))
    for workdir in reader.workdirs:
        if _holds(target, workdir) and (itself or target != workdir):
            refuse("delete_workdir", "" if target == workdir else HOLDS_WORKDIR.format(workdir=workdir))
    system = next((root for root in SYSTEM_FOLDERS if _holds(target, root)), None)
    if system is not None:
        refuse("system_write", HOLDS_SYSTEM.format(root=system))
    if os.path.dirname(target) == ROOT:
        refuse("root_write", IN_ROOT)


def _holds(folder: str, path: str) -> bool:
    """Whether `folder` is `path` or one of its parents."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def check_write(reader: "Reader", value: Value, st: "State", exempt: bool = False, program: str = REDIRECTION) -> None:
    """Refuse a write to `value` in a system folder, at the root, or onto a device (the path
    policy, mm.protected_paths). `exempt`: /dev/null, /dev/stdout… are allowed (redirections,
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
        if value.kind == "exact" and is_device(resolve(path, st.links)):
            raise Refused("device_write", DEVICE_WRITE.format(program=program, target=path))


def _refuse_write(program: str, target: str, root: str) -> None:
    if root in DEVICE_FOLDERS and root == "/dev":
        raise Refused("device_write", DEVICE_WRITE.format(program=program, target=target))
    if root == ROOT:
        shown = THE_ROOT if target == ROOT else target if target == ANYWHERE else AT_ROOT.format(path=target)
        raise Refused("root_write", ROOT_WRITE.format(program=program, target=shown))
    raise Refused("system_write", SYSTEM_WRITE.format(program=program, target=target, root=root))


def is_device(path: str) -> bool:
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISBLK(mode) or stat.S_ISCHR(mode)


def write_operands(reader: "Reader", program: str, args: list[Value], st: "State") -> None:
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
    if program in RECURSIVE_CHANGES and any(a.exact in ("-R", "--recursive") or re.fullmatch(r"-[a-zA-Z]*R[a-zA-Z]*",
                                                                                           a.exact or "") for a in args):
        for value in written:
            if value is not None:
                delete_target(reader, f"{program} -R", value, st, verb=CHANGE)


def remember_link(args: list[Value], st: "State") -> None:
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


def remember_files(cmd: Simple, out, st: "State") -> None:
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


def in_place(reader: "Reader", program: str, args: list[Value], st: "State") -> None:
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


TAR_VALUED = frozenset({"-f", "--file", "-C", "--directory", "-T", "--files-from", "-X", "--exclude-from", "-b",
                        "--blocking-factor", "-K", "--starting-file", "-N", "--newer", "-g", "--listed-incremental",
                        "-I", "--use-compress-program", "-H", "--format", "-V", "--label", "--exclude", "--owner",
                        "--group", "--mode", "--mtime", "--transform"})


def tar_removed(reader: "Reader", program: str, args: list[Value], st: "State") -> None:
    """`tar --remove-files -cf x.tar DIR`: every file operand is deleted, folders recursively."""
    texts = [a.exact for a in args]
    if "--remove-files" not in texts:
        return
    operands, i = [], 0
    while i < len(args):
        text = texts[i] or ""
        i += 1
        if text.startswith("--"):
            i += 1 if text in TAR_VALUED else 0
        elif text.startswith("-") and len(text) > 1 or i == 1 and re.fullmatch(r"[a-zA-Z]+", text):
            i += sum(c in "fCTXbKNgIHV" for c in text.lstrip("-"))  # `-cf x.tar`, `czf x.tgz`: each takes a value
        else:
            operands.append(args[i - 1])
    for operand in operands:
        delete_target(reader, f"{program} --remove-files", operand, st)
        check_write(reader, operand, st, program=f"{program} --remove-files")


def extract(reader: "Reader", program: str, args: list[Value], st: "State") -> None:
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
