"""A `session/prompt`'s content made into the text of one user message (mm-acp.md §session/prompt,
Prompt content; §Skills as commands)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

ATTACHED_FILE = "\n[attached file: {path}]"
ATTACHED_DIRECTORY = "\n[attached directory: {path}]"
COMMANDS = ("/new", "/compact")
_AT_PATH = re.compile(r"(?<!\S)@(\S+)")
_TRAILING = ".,;:!?)]}'\"`"


@dataclass
class PromptText:
    """The flattened prompt: `text` for the model, `command` (`/new`, `/compact`) when the prompt
    is exactly one of them, the `attached` absolute paths and the kinds of the `ignored` blocks
    (for the log)."""

    text: str
    command: str | None = None
    attached: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)


def flatten(blocks: list[Any], cwd: Path, catalogue: list[Any] | tuple[Any, ...] = ()) -> PromptText:
    """The prompt `blocks` (SDK content blocks or dicts) as one text.

    `text` blocks are concatenated; a `resource_link` adds `[attached file: <path>]` (the URI
    without `file://`, percent-escapes decoded); other blocks are ignored. A prompt that is
    exactly `/new` or `/compact` is a command. `/<skill> …` for a skill of `catalogue`
    (mm.skills.Skill) becomes `$<skill> …`; any other `/word` is left as typed. Then every
    `@path` naming an existing file or directory (under `cwd`, or absolute, or `~…`) adds one
    attached line, once per path, in order.
    """
    text, links, ignored = "", [], []
    for block in blocks:
        kind = _field(block, "type")
        if kind == "text":
            text += str(_field(block, "text") or "")
        elif kind == "resource_link":
            links.append(_link_path(str(_field(block, "uri") or "")))
        else:
            ignored.append(str(kind))
    if text.strip() in COMMANDS and not links:
        return PromptText(text, command=text.strip(), ignored=ignored)
    from mm.skills import rewrite_skill_command

    text = rewrite_skill_command(text, catalogue)
    out, seen, attached = text, set(), []
    for path in links:
        if path not in seen:
            seen.add(path)
            out += ATTACHED_FILE.format(path=path)
    for path, is_dir in _at_paths(text, cwd):
        if path not in seen:
            seen.add(path)
            attached.append(path)
            out += (ATTACHED_DIRECTORY if is_dir else ATTACHED_FILE).format(path=path)
    return PromptText(out, attached=attached, ignored=ignored)


def _at_paths(text: str, cwd: Path) -> list[tuple[str, bool]]:
    """The existing paths `@…` names in `text`: (absolute path, is a directory), in order."""
    found = []
    for match in _AT_PATH.finditer(text):
        path = _existing(match.group(1), cwd)
        if path is not None:
            found.append((path, os.path.isdir(path)))
    return found


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


def _link_path(uri: str) -> str:
    """A `file:` URI's path (`file:///a/b`, `file://localhost/a/b`, percent-escapes decoded);
    any other URI as it is."""
    if not uri.startswith("file://"):
        return uri
    rest = uri[len("file://"):]
    if rest.startswith("localhost/"):
        rest = rest[len("localhost"):]
    return unquote(rest)


def _field(block: Any, name: str) -> Any:
    return block.get(name) if isinstance(block, dict) else getattr(block, name, None)
