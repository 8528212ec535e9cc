"""A `session/prompt`'s content made into the text of one user message (mm-acp.md §session/prompt,
Prompt content; §Skills as commands)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from mm.attach import ATTACHED_FILE, attach_paths
from mm.commands import ACP_COMMANDS

ALONE = tuple("/" + c.name for c in ACP_COMMANDS if not c.takes)  # a command only when the prompt is exactly it
WITH_WORDS = tuple("/" + c.name for c in ACP_COMMANDS if c.takes)  # a command, then what follows it


@dataclass
class PromptText:
    """The flattened prompt: `text` for the model; `command` (`/new`, `/model`…: mm.commands.
    ACP_COMMANDS) when the prompt is one, and `argument`, the words after it; the `attached`
    absolute paths and the kinds of the `ignored` blocks (for the log)."""

    text: str
    command: str | None = None
    argument: str = ""
    attached: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)


def flatten(blocks: list[Any], cwd: Path, catalogue: list[Any] | tuple[Any, ...] = ()) -> PromptText:
    """The prompt `blocks` (SDK content blocks or dicts) as one text.

    `text` blocks are concatenated; a `resource_link` adds `[attached file: <path>]` (the URI
    without `file://`, percent-escapes decoded); other blocks are ignored. Without a link, a
    prompt that is exactly one of the commands that take nothing (`/new`, `/compact`, `/help`…),
    or starts with one that takes words (`/model`, `/resume`), is a command. `/<skill> …` for
    a skill of `catalogue` (mm.skills.Skill) becomes `$<skill> …`; any other `/word` is left as
    typed. Then every `@path` naming an existing file or directory (under `cwd`, or absolute,
    or `~…`) adds one attached line, once per path, in order (mm.attach).
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
    words = text.split(None, 1)
    if not links and (text.strip() in ALONE or (words and words[0] in WITH_WORDS)):
        argument = words[1].strip() if len(words) > 1 else ""
        return PromptText(text, command=words[0], argument=argument, ignored=ignored)
    from mm.skills import rewrite_skill_command

    text = rewrite_skill_command(text, catalogue)
    out, seen = text, []
    for path in links:
        if path not in seen:
            seen.append(path)
            out += ATTACHED_FILE.format(path=path)
    lines, attached = attach_paths(text, cwd, seen)
    return PromptText(out + lines, attached=attached, ignored=ignored)


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
