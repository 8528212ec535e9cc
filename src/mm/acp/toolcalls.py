"""How a tool call looks in an editor: title, kind, locations, content (mm-acp.md §Tool kinds,
§session/update notifications sent, §session/load replay).

Shared by the live turn and the replay of `session/load`, so that a replayed call has the title
and kind the live one had.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mm.tools.base import PATH_ARGUMENT

ACP_KINDS = ("read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other")
# The kinds of tools that may be absent from the registry when a session is replayed.
KNOWN_KINDS = {"bash": "execute", "read_file": "read", "read_skill": "read", "write_file": "edit",
               "edit_file": "edit", "save_answer": "edit", "fetch_content": "fetch", "web_crawler": "fetch",
               "web_search": "fetch", "search_memory": "search", "ask_user": "other", "ask_agent": "other",
               "unload_model": "other",
               "fs_read": "read", "fs_write": "edit", "file_edit": "edit",
               "lsp": "read"}
DIFF_LIMIT = 2_000_000  # characters of old + new text above which a change travels as text


def tool_kind(name: str, tool: Any = None, arguments: Any = None) -> str:
    """The ACP ToolKind of a call of `name` with `arguments` (`tool`: the registry's tool, when
    there is one; its `call_kind(arguments)` when it has one: lsp's rename is `edit`); an unknown
    kind is `execute` (mm-acp.md §Tool kinds)."""
    per_call = getattr(tool, "call_kind", None)
    kind = (per_call(arguments) if callable(per_call) else None) or getattr(tool, "kind", None) or \
        KNOWN_KINDS.get(name, "execute")
    return kind if kind in ACP_KINDS else "execute"


def own_title(tool: Any, arguments: Any) -> str | None:
    """The title a tool gives a call itself (a declared tool's argv, ask_agent's agent and
    prompt), when it has one and can give it without the turn's context; else None."""
    title = getattr(tool, "title", None)
    if not callable(title) or not isinstance(arguments, dict) or getattr(tool, "name", "") == "save_answer":
        return None
    try:
        return title(arguments)
    except Exception:  # a stored call of another shape: the generic title
        return None


def call_locations(name: str, arguments: Any, cwd: Path) -> list[dict[str, str]]:
    """`[{"path": <absolute path>}]` for a call naming a file (PATH_ARGUMENT's tools, lsp's `path`,
    fetch_content with `output`), else []."""
    args = arguments if isinstance(arguments, dict) else {}
    key = PATH_ARGUMENT.get(name) or {"lsp": "path", "fetch_content": "output"}.get(name)
    value = args.get(key) if key else None
    if not isinstance(value, str) or not value.strip():
        return []
    return [{"path": absolute(value, cwd)}]


def absolute(path: str, cwd: Path) -> str:
    """`path` (relative to `cwd`, or absolute, or `~…`) as an absolute, normalised path."""
    return os.path.abspath(os.path.join(str(cwd), os.path.expanduser(path)))


def text_chunk(kind: str, text: str) -> dict[str, Any]:
    """A `session/update` of `kind` (`agent_message_chunk`, `user_message_chunk`,
    `agent_thought_chunk`) holding one text block."""
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def text_content(text: str) -> list[dict[str, Any]]:
    """A tool call's content holding one text block."""
    return [{"type": "content", "content": {"type": "text", "text": text}}]


def diff_content(change: Any) -> list[dict[str, Any]] | None:
    """A tool call's content holding the diff of `change` (mm.tools.base.FileChange: `oldText`
    absent for a created file), or None when the texts are too large to send (DIFF_LIMIT)."""
    old, new = change.old_text, change.new_text
    if len(old or "") + len(new) > DIFF_LIMIT:
        return None
    diff: dict[str, Any] = {"type": "diff", "path": str(change.path), "newText": new}
    if old is not None:
        diff["oldText"] = old
    return [diff]


def result_content(result: Any) -> list[dict[str, Any]]:
    """The content of a finished call: the diff of a file change, else the text it shows
    (`summary` for a call whose output already streamed, else the output)."""
    if result.change is not None and not result.failed:
        diff = diff_content(result.change)
        if diff is not None:
            return diff
    shown = getattr(result, "summary", None)
    return text_content(shown if shown is not None else result.text)
