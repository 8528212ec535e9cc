"""Python's exceptions about a tool's arguments, said as sentences about the argument (issue 10.5).

A NUL byte in a path (`ValueError: embedded null byte`), a name longer than a file system allows
(`OSError: [Errno 36] File name too long`), a `~user` whose home is unknown (`RuntimeError: Could
not determine home directory`), a host name the IDNA codec refuses (`UnicodeError: label empty or
too long`) or a lone surrogate never reach the model as Python's text: `path_problem` and
`host_problem` check an argument before it is used (ToolContext.resolve, the web tools' URL
check), and `failure_text` turns what a tool still lets escape into `[<tool>: <argument>: <why>]`
for the engine (mm.engine.toolrun), the one place every tool's failure passes.
"""

from __future__ import annotations

import errno
import os
import re
from typing import Any, Callable

from mm.llm.types import fix_surrogates

NUL = "contains a NUL byte (\\u0000), which no file name, command or address can hold — send it without that character"
NAME_TOO_LONG = ("a name in it is {size} bytes long, more than the {limit} bytes a file name may have "
                 "— use a shorter name")
PATH_TOO_LONG = "it is {size} bytes long, more than the {limit} bytes a path may have — use a shorter path"
TOO_LONG = "it names a file whose name or path is too long for the file system — use a shorter name"
NO_HOME = ("it starts with {user}, but that home directory is unknown{why} — give an absolute path, or one "
           "relative to the working directory")
HOME_UNSET = " (HOME is not set)"
BAD_LABEL = "its host name is not a valid internet name: each part between dots must have 1 to 63 characters"
BAD_HOST = "its host name is not a valid internet name ({reason})"
SURROGATE = "it holds text that is not valid Unicode (a lone surrogate) — send it as UTF-8 text"
OS_FAILURE = "{reason}{where}"
ARGUMENT = "[{tool}: {param}: {problem}]"
NO_ARGUMENT = "[{tool}: {problem}]"
GENERIC = "[error: {tool} failed: {kind}: {message}]"  # a bug of the tool: its type helps whoever fixes it
MAX_NAME_BYTES = 255  # NAME_MAX of Linux file systems (ext4, xfs, btrfs, tmpfs)
MAX_PATH_BYTES = 4095  # PATH_MAX less its final NUL
MESSAGE_LIMIT = 300  # characters of an exception's message quoted in GENERIC
_CODEC_REASON = re.compile(r"\((?:UnicodeError: )?([^()]*)\)\s*$")


class ArgumentError(Exception):
    """An argument a tool cannot use: `value` is the argument's text as the model sent it and
    `problem` the sentence about it (str(err)). The engine names the argument (failure_text)."""

    def __init__(self, value: str, problem: str):
        super().__init__(problem)
        self.value, self.problem = value, problem


def path_problem(path: str) -> str | None:
    """Why `path` (str) cannot name a file — a NUL byte, a lone surrogate, a name over 255 bytes,
    a path over 4095 bytes — or None. The home directory of `~` is checked where it is expanded
    (ToolContext.resolve)."""
    if "\0" in path:
        return NUL
    try:
        os.fsencode(path)  # a name that was not UTF-8 comes back to its bytes; a lone surrogate cannot
    except UnicodeEncodeError:
        return SURROGATE
    return _length_problem(path)


def home_problem(path: str) -> str:
    """The sentence for a `~` or `~user` path (str) whose home directory cannot be found."""
    user = path.split("/", 1)[0]
    unset = user == "~" and not os.environ.get("HOME")
    return NO_HOME.format(user=user, why=HOME_UNSET if unset else "")


def host_problem(host: str) -> str | None:
    """Why `host` (a URL's host name) is no valid internet name, or None. Python's IDNA codec is
    what the socket layer encodes names with; its refusal is said in words."""
    try:
        host.encode("idna")
    except UnicodeError as err:
        return _idna_sentence(str(err))
    return None


def failure_text(tool: str, arguments: Any, err: BaseException) -> str:
    """The result of a call whose tool raised `err` (the engine's one place for it).

    A fault of an argument (ArgumentError, a NUL byte, a name too long, an unknown home, a bad
    host name, a lone surrogate) is `[<tool>: <argument>: <sentence>]`, the argument being the
    first of `arguments` (dict) whose text shows the fault; another OSError is `[<tool>: <reason>:
    <file>]`; anything else is GENERIC, with the exception's type (a bug of the tool).
    """
    known = _describer(err)
    if known is not None:
        about, sentence = known
        for name, value in (arguments.items() if isinstance(arguments, dict) else ()):
            said = next((s for s in map(about, _strings(value)) if s), None)
            if said:
                return ARGUMENT.format(tool=tool, param=name, problem=said)
        return NO_ARGUMENT.format(tool=tool, problem=sentence)
    if isinstance(err, OSError) and err.strerror:
        where = f": {err.filename}" if err.filename is not None else ""
        return NO_ARGUMENT.format(tool=tool, problem=OS_FAILURE.format(reason=err.strerror.lower(), where=where))
    message = " ".join(str(err).split())[:MESSAGE_LIMIT]
    return GENERIC.format(tool=tool, kind=type(err).__name__, message=message)


def _describer(err: BaseException) -> tuple[Callable[[str], str | None], str] | None:
    """For a known fault: (the sentence about an argument's text when the fault is in it, else
    None; the sentence when no argument shows it). None for other exceptions."""
    text = str(err)
    if isinstance(err, ArgumentError):
        return (lambda value: err.problem if value == err.value else None), err.problem
    if isinstance(err, ValueError) and "null" in text and ("byte" in text or "character" in text):
        return (lambda value: NUL if "\0" in value else None), NUL
    if isinstance(err, OSError) and err.errno == errno.ENAMETOOLONG:
        return _length_problem, TOO_LONG
    if isinstance(err, RuntimeError) and "home directory" in text:
        return (lambda value: home_problem(value) if value.startswith("~") else None), home_problem("~")
    if isinstance(err, UnicodeEncodeError) and "surrogate" in text:
        return (lambda value: SURROGATE if fix_surrogates(value) is not value else None), SURROGATE
    if isinstance(err, UnicodeError) and "idna" in text:
        sentence = _idna_sentence(text)
        return (lambda value: sentence if "." in value else None), sentence
    return None


def _length_problem(path: str) -> str | None:
    """NAME_TOO_LONG or PATH_TOO_LONG when `path` is too long for Linux file systems, else None."""
    data = path.encode("utf-8", "surrogateescape")
    if len(data) > MAX_PATH_BYTES:
        return PATH_TOO_LONG.format(size=len(data), limit=MAX_PATH_BYTES)
    longest = max(len(part) for part in data.split(b"/"))
    if longest > MAX_NAME_BYTES:
        return NAME_TOO_LONG.format(size=longest, limit=MAX_NAME_BYTES)
    return None


def _idna_sentence(text: str) -> str:
    """The IDNA codec's complaint (`… (UnicodeError: label empty or too long)`) in words."""
    reason = _CODEC_REASON.search(text)
    words = reason.group(1) if reason else text
    return BAD_LABEL if "label" in words else BAD_HOST.format(reason=words)


def _strings(value: Any, depth: int = 0) -> list[str]:
    """The strings in `value` (a string, or inside lists and objects)."""
    if isinstance(value, str):
        return [value]
    if depth > 20:
        return []
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v, depth + 1)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v, depth + 1)]
    return []
