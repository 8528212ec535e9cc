"""`@path` in a prompt: the files and folders it names, attached as one line each (mm-acp.md
§session/prompt, Prompt content; docs/acp.md §Sessions and prompts; docs/line-mode.md §@path).

Both front ends use it: ACP on the flattened prompt, line mode on the typed one. Nothing is read:
a line names the path, and the model reads it with its tools.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable

ATTACHED_FILE = "\n[attached file: {path}]"
ATTACHED_DIRECTORY = "\n[attached directory: {path}]"
_AT_PATH = re.compile(r"(?<!\S)@(\S+)")
_TRAILING = ".,;:!?)]}'\"`"


def attach_paths(text: str, cwd: Path, seen: Iterable[str] = ()) -> tuple[str, list[str]]:
    """The ATTACHED_FILE / ATTACHED_DIRECTORY lines for every `@path` of `text` naming an existing
    file or folder — relative to `cwd` and inside it, or absolute, or `~…` — once per path, in
    order, leaving out the paths of `seen`; and the absolute paths attached. An `@word` is one
    after a space or at the start; trailing punctuation is dropped when the path with it does not
    exist. Returns ("", []) when nothing is attached. Never raises."""
    lines, attached, done = "", [], set(seen)
    for match in _AT_PATH.finditer(text):
        path = _existing(match.group(1), cwd)
        if path is None or path in done:
            continue
        done.add(path)
        attached.append(path)
        lines += (ATTACHED_DIRECTORY if os.path.isdir(path) else ATTACHED_FILE).format(path=path)
    return lines, attached


def _existing(token: str, cwd: Path) -> str | None:
    """The absolute path `token` names — tried whole, then without trailing punctuation — when
    it exists and, for a relative path, lies under `cwd`; else None."""
    candidates = [token]
    while token and token[-1] in _TRAILING:
        token = token[:-1]
        candidates.append(token)
    root = os.path.abspath(str(cwd))
    for candidate in candidates:
        if not candidate:
            continue
        expanded = os.path.expanduser(candidate)
        path = os.path.abspath(os.path.join(root, expanded))
        inside = os.path.isabs(expanded) or path == root or path.startswith(root + os.sep)
        try:
            if inside and os.path.exists(path):
                return path
        except (OSError, ValueError):  # a NUL byte, a name too long
            continue
    return None
