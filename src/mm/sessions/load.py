"""Reading session files back: load one, list them, find the latest (docs/sessions.md).

Loading is tolerant (cases sessions-07, sessions-08): unknown keys at the top level and on
messages are ignored, and a tool call without a recorded result gets the tool message
UNRECORDED_RESULT so that the history is one every server accepts.
"""

from __future__ import annotations

import bisect
import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from mm.sessions.units import NOTE_PREFIXES, question_text, text_of
from mm.text import one_line

UNRECORDED_RESULT = "[error: no result was recorded for this call]"
NOT_A_SESSION = "{path}: not a session file ({why})"
MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name", "summary", "pinned", "prompts")
ROLES = ("system", "user", "assistant", "tool")
SESSION_BYTES = 256 << 20  # the largest session file read


class SessionError(ValueError):
    """A file that cannot be read as a session; `str(err)` names the file and why."""


@dataclass
class SessionMeta:
    """What a session file says besides its messages. `updated` and `created` are ISO 8601
    strings as written; `unanswered` lists the ids of tool calls that had no recorded result."""

    id: str
    path: Path
    created: str = ""
    updated: str = ""
    cwd: str = ""
    model: str = ""
    errors: list[dict] = field(default_factory=list)
    usage: dict = field(default_factory=dict)
    unanswered: list[str] = field(default_factory=list)

    @property
    def updated_at(self) -> float:
        """`updated` in epoch seconds (the file's mtime when it cannot be read)."""
        return timestamp(self.updated, self.path)


@dataclass
class SessionInfo:
    """One line of a listing: id, `updated` (ISO 8601), its first question, its path, and how
    many messages it holds besides the system prompt."""

    id: str
    updated: str
    first_question: str
    path: Path
    messages: int = 0  # messages besides the system prompt


def timestamp(text: str, path: Path | None = None) -> float:
    """An ISO 8601 time (`Z` or an offset; naive is local time) in epoch seconds; when it cannot
    be read, the mtime of `path` (0.0 without one)."""
    try:
        return datetime.fromisoformat(text).timestamp()
    except (TypeError, ValueError):
        try:
            return path.stat().st_mtime if path is not None else 0.0
        except OSError:
            return 0.0


def read_record(path: Path) -> dict[str, Any]:
    """The JSON object of a session file, read without blocking and at most SESSION_BYTES
    (mm.fs.read_bytes); raises SessionError (a named pipe or a device, too large,
    unreadable, not JSON, not an object)."""
    from mm.fs import read_bytes

    try:
        data = json.loads(read_bytes(path, SESSION_BYTES).decode("utf-8", errors="replace"))
    except OSError as err:  # FileRefused says why in its own words
        why = getattr(err, "reason", None) or err.strerror or err
        raise SessionError(NOT_A_SESSION.format(path=path, why=why)) from err
    except ValueError as err:
        raise SessionError(NOT_A_SESSION.format(path=path, why=f"invalid JSON: {err}")) from err
    if not isinstance(data, dict):
        raise SessionError(NOT_A_SESSION.format(path=path, why="not a JSON object"))
    return data


def load_session(path: Path) -> tuple[SessionMeta, list[dict]]:
    """Read a session file: its metadata and its history, repaired (module docstring).

    Raises SessionError when the file cannot be read, is not a JSON object, or holds no list of
    messages.
    """
    path = Path(path)
    data = read_record(path)
    if not isinstance(data.get("messages"), list):  # nothing to go on with: never overwritten as empty
        raise SessionError(NOT_A_SESSION.format(path=path, why="no list of messages"))
    messages, unanswered = repair(clean_messages(data.get("messages")))
    meta = SessionMeta(id=_str(data.get("id")) or path.stem, path=path, created=_str(data.get("created")),
                       updated=_str(data.get("updated")), cwd=_str(data.get("cwd")),
                       model=_str(data.get("model")), unanswered=unanswered,
                       errors=[e for e in _list(data.get("errors")) if isinstance(e, dict)],
                       usage=data["usage"] if isinstance(data.get("usage"), dict) else {})
    return meta, messages


def clean_messages(raw: Any) -> list[dict]:
    """The messages of a record with only the keys mm knows (MESSAGE_KEYS), in well-formed shapes
    (_well_formed); non-objects and unknown roles are dropped."""
    out = []
    for msg in _list(raw):
        if isinstance(msg, dict) and msg.get("role") in ROLES:
            out.append(_well_formed({k: msg[k] for k in MESSAGE_KEYS if k in msg}))
    return out


def _well_formed(msg: dict) -> dict:
    """`msg` in shapes every server takes: a content that is neither text nor a list of parts
    becomes its JSON text; tool calls that are not objects with a function name are dropped,
    their arguments made JSON text (a file edited by hand, or by another program)."""
    import json

    content = msg.get("content")
    if content is not None and not isinstance(content, (str, list)):
        msg["content"] = json.dumps(content, ensure_ascii=False)
    if "tool_calls" in msg:
        calls = []
        for call in _list(msg["tool_calls"]):
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                arguments = function.get("arguments", "{}")
                if not isinstance(arguments, str):
                    arguments = json.dumps(arguments, ensure_ascii=False)
                calls.append({**call, "id": str(call.get("id") or ""), "type": "function",
                              "function": {"name": function["name"], "arguments": arguments}})
        if calls:
            msg["tool_calls"] = calls
        else:
            del msg["tool_calls"]
    return msg


def repair(messages: list[dict]) -> tuple[list[dict], list[str]]:
    """Put every tool result right after the message that made its call, paired by
    `tool_call_id` wherever the file holds it (a result saved after a later message is kept);
    answer a call without a result with UNRECORDED_RESULT; drop results that answer no call.
    Returns the history and the repaired call ids.

    Servers reuse ids (`call_0` every turn): a result answers the last call of its id made
    before it, else the first one made after it."""
    calls: list[tuple[int, str]] = []  # (message index, call id), in order
    for at, msg in enumerate(messages):
        if msg["role"] == "assistant":
            calls += [(at, c.get("id")) for c in _list(msg.get("tool_calls")) if isinstance(c, dict)]
    waiting: dict[Any, list[int]] = {}  # call id -> the indexes in `calls` of its unanswered calls
    for n, (_at, call_id) in enumerate(calls):
        waiting.setdefault(call_id, []).append(n)
    answers: dict[int, dict] = {}  # index in `calls` -> its result
    for at, msg in enumerate(messages):
        call_id = msg.get("tool_call_id")
        same = waiting.get(call_id) if msg["role"] == "tool" and isinstance(call_id, str) else None
        if same:
            made_before = bisect.bisect_left(same, at, key=lambda n: calls[n][0])
            answers[same.pop(made_before - 1 if made_before else 0)] = msg
    out: list[dict] = []
    unanswered: list[str] = []
    n = 0
    for at, msg in enumerate(messages):
        if msg["role"] == "tool":
            continue
        out.append(msg)
        while n < len(calls) and calls[n][0] == at:
            result = answers.get(n)
            if result is None:
                result = {"role": "tool", "tool_call_id": calls[n][1], "content": UNRECORDED_RESULT}
                unanswered.append(calls[n][1])
            out.append(result)
            n += 1
    return out, unanswered


def session_paths(directory: Path) -> list[Path]:
    """The session files of `directory`: `*.json` not starting with a dot (temporary files of an
    atomic write are `.<name>.<random>.tmp`, the index `.index.sqlite`)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    prefix = os.path.join(directory, "")
    return [Path(prefix + n) for n in names if n.endswith(".json") and not n.startswith(".")]


def first_question(messages: list) -> str:
    """The first user question of a history, on one line ("" when there is none)."""
    for msg in messages:
        if isinstance(msg, dict) and msg.get("role") == "user" and not msg.get("summary"):
            text = text_of(msg)
            if not text.lstrip().startswith(NOTE_PREFIXES):
                return one_line(question_text(text))
    return ""


def list_sessions(directory: Path) -> list[SessionInfo]:
    """The well-formed sessions of `directory`, newest first (by `updated`, then by the file's
    modification time — `updated` counts whole seconds, and `/new` writes two files in the same
    second — then id). Skipped: files that cannot be read, and those load_session refuses (not a
    JSON object, no list of messages), so that every session listed can be resumed."""
    found = []
    for path in session_paths(directory):
        try:
            data = read_record(path)
            written = path.stat().st_mtime_ns
        except (SessionError, OSError):
            continue
        if not isinstance(data.get("messages"), list):  # another program's JSON: not a session
            continue
        messages = data["messages"]
        said = sum(1 for m in messages if isinstance(m, dict) and m.get("role") != "system")
        info = SessionInfo(_str(data.get("id")) or path.stem, _str(data.get("updated")),
                           first_question(messages), path, said)
        found.append((timestamp(info.updated, path), written, info.id, info))
    found.sort(key=lambda t: t[:3], reverse=True)
    return [t[3] for t in found]


def latest_session(directory: Path) -> SessionInfo | None:
    """The most recently updated session of `directory` that holds a conversation (a file left
    empty by `/new` is passed over), else the most recent one; None when there is none."""
    sessions = list_sessions(directory)
    return next((s for s in sessions if s.messages), sessions[0] if sessions else None)


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []
