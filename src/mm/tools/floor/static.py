"""What a command prints, worked out without running it, for the few commands whose output the
safety floor needs to follow (`$(echo rm)`, `echo cm0gLXJmIC8= | base64 -d | sh`, `find / | xargs`):
echo, printf, pwd, cat, base64, rev, xxd -r -p, find (docs/safety.md §How commands are read).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import TYPE_CHECKING

from mm.protected_paths import absolute
from mm.tools.floor.values import Value
from mm.tools.floor.words import ansi_c

if TYPE_CHECKING:
    from mm.tools.floor.state import State

SCRIPT_BYTES = 256 * 1024  # the most of a file the floor reads (a script, what cat prints)
Printed = "str | list[Value] | None"
NOT_READ = ("/dev/", "/proc/")  # read_script reads no file there


# Programs that print nothing (when they work): `$(cd /; pwd)` prints what pwd prints.
SILENT = frozenset({"cd", "true", ":", "export", "unset", "shift", "local", "declare", "typeset", "readonly", "set",
                    "mkdir", "touch", "cp", "mv", "ln", "chmod", "chown", "rm", "rmdir", "sleep", "umask", "alias"})


def printed(program: str, args: list[Value], stdin, st: "State"):
    """What `program args` prints when the floor can tell: text, paths (find), or None."""
    if program in SILENT and not any((a.exact or "").startswith("-") and "v" in (a.exact or "") for a in args):
        return ""
    handler = _PRINTERS.get(program)
    if handler is None:
        return None
    return handler(args, stdin, st)


def _texts(args: list[Value]) -> list[str] | None:
    texts = [a.exact for a in args]
    return None if None in texts else texts  # type: ignore[return-value]


def _echo(args, stdin, st):
    texts = _texts(args)
    if texts is None:
        return None
    newline, escapes = True, False
    while texts and re.fullmatch(r"-[neE]+", texts[0]):
        flags = texts.pop(0)
        newline = newline and "n" not in flags
        escapes = "e" in flags if ("e" in flags or "E" in flags) else escapes
    text = " ".join(texts)
    if escapes:
        text = ansi_c(text.split("\\c")[0])
    return text + ("\n" if newline else "")


def _printf(args, stdin, st):
    texts = _texts(args)
    if not texts:
        return None
    if texts[0] == "-v":
        return ""
    fmt, rest = texts[0], texts[1:]
    out, i = [], 0
    pieces = re.split(r"(%%|%[-+ #0]*\d*(?:\.\d+)?[sbdicqxXo])", fmt)
    while True:
        for piece in pieces:
            if piece == "%%":
                out.append("%")
            elif piece.startswith("%") and len(piece) > 1:
                arg = rest[i] if i < len(rest) else ""
                i += 1
                out.append(ansi_c(arg) if piece.endswith("b") else arg)
            else:
                out.append(ansi_c(piece))
        if i >= len(rest) or not any(p.startswith("%") and p != "%%" for p in pieces):
            break
    return "".join(out)


def _pwd(args, stdin, st):
    cwd = st.lookup("PWD")
    return None if cwd is None else cwd + "\n"


def _cat(args, stdin, st):
    texts = _texts(args)
    if texts is None:
        return None
    files = [t for t in texts if not t.startswith("-") or t == "-"]
    if not files:
        return stdin if isinstance(stdin, str) else None
    out = []
    for name in files:
        text = stdin if name == "-" else read_script(name, st)
        if not isinstance(text, str):
            return None
        out.append(text)
    return "".join(out)


def _ls(args, stdin, st):
    """Names as ls prints them: bare names of the entries of the folders it lists (so something
    in the working directory), an operand as written when it names a file, `.` and `..` with -a."""
    texts = _texts(args)
    if texts is None:
        return [a for a in args] + [Value(".", "under")]
    options = "".join(t[1:] for t in texts if t.startswith("-") and not t.startswith("--"))
    operands = [a for a in args if not (a.exact or "").startswith("-")]
    items = operands + [Value(".", "under" if operands else "contents")]  # `ls`: every entry here
    if "a" in options or "f" in options or "--all" in texts:
        items += [Value(".", "exact"), Value("..", "exact")]
    return items


def _filter(args, stdin, st):
    """grep, sort, head… of the paths a command printed: some of them (the same list)."""
    texts = _texts(args)
    if not isinstance(stdin, list) or texts is None:
        return None
    operands = [t for t in texts if not t.startswith("-") and not t.isdigit()]
    patterns = any(t in ("-e", "-f", "--regexp", "--file") for t in texts)
    if len(operands) > (0 if patterns else 1):
        return None
    return [Value(v.text, "under") if v.kind == "contents" else v for v in stdin]


def _dirname(args, stdin, st):
    texts = _texts(args)
    if not texts or any(t.startswith("-") for t in texts):
        return None
    return "".join(_dir(t) + "\n" for t in texts)


def _dir(path: str) -> str:
    """What `dirname path` prints (POSIX: trailing slashes dropped, `.` without a slash)."""
    stripped = path.rstrip("/")
    if not stripped:
        return "/" if path else "."
    if "/" not in stripped:
        return "."
    return stripped[:stripped.rindex("/")].rstrip("/") or "/"


def _basename(args, stdin, st):
    texts = _texts(args)
    if not texts or any(t.startswith("-") for t in texts) or len(texts) > 2:
        return None
    name = texts[0].rstrip("/").rsplit("/", 1)[-1] or ("/" if texts[0] else "")
    if len(texts) == 2 and name != texts[1] and name.endswith(texts[1]):
        name = name[:-len(texts[1])]
    return name + "\n"


def _base64(args, stdin, st):
    texts = _texts(args)
    if texts is None or not isinstance(stdin, str):
        return None
    decode = any(t in ("-d", "--decode", "-D") or re.fullmatch(r"-[a-zA-Z]*d[a-zA-Z]*", t) for t in texts)
    try:
        if decode:
            return base64.b64decode(re.sub(r"\s", "", stdin) + "==", validate=False).decode("utf-8", "replace")
        return base64.b64encode(stdin.encode()).decode() + "\n"
    except (binascii.Error, ValueError):
        return None


def _rev(args, stdin, st):
    if args or not isinstance(stdin, str):
        return None
    return "".join(line[::-1] + "\n" for line in stdin.splitlines())


def _xxd(args, stdin, st):
    texts = _texts(args)
    if texts is None or not isinstance(stdin, str) or not {"-r", "-p"} <= set(texts) and "-rp" not in texts:
        return None
    try:
        return bytes.fromhex(re.sub(r"\s", "", stdin)).decode("utf-8", "replace")
    except ValueError:
        return None


def _find(args, stdin, st):
    from mm.tools.floor.commands import find_parts

    starts, filtered, _ = find_parts(args)
    items: list[Value] = []
    for start in starts:
        if start.exact is not None and not filtered:
            items.append(start)
        if start.text is not None:
            items.append(Value(start.text, "under"))
    return items


_PRINTERS = {"echo": _echo, "printf": _printf, "pwd": _pwd, "cat": _cat, "base64": _base64, "rev": _rev,
             "xxd": _xxd, "find": _find, "dirname": _dirname, "basename": _basename,
             "ls": _ls, "grep": _filter, "egrep": _filter, "fgrep": _filter, "sort": _filter, "uniq": _filter,
             "head": _filter, "tail": _filter, "tac": _filter, "shuf": _filter}


def read_script(name: str, st: "State") -> str | None:
    """The text of the file `name` (a script, what cat prints): one the command wrote itself, else
    the file on disk (a regular file, at most SCRIPT_BYTES, not binary); None when unknown."""
    for cwd in st.places:
        path = absolute(name, cwd or "/") if cwd or name.startswith("/") else None
        if path is None:
            continue
        if path in st.files:
            return st.files[path]
        if path.startswith(NOT_READ):
            return None  # mm's own descriptors, devices: never the command's
        try:
            from mm.fs import read_head

            data = read_head(path, SCRIPT_BYTES)
        except (OSError, ValueError):
            continue
        if b"\0" in data:
            return None
        return data.decode("utf-8", "replace")
    return None
