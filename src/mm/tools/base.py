"""The tool protocol: what every tool declares and returns (DESIGN.md §Architecture)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from mm.tools.reads import ReadLog

ToolKind = Literal["execute", "read", "edit", "fetch", "search", "other"]
# The file tools, and the argument naming the file each reads or writes (file_edit says
# file_path: mnemo-tools.md), for the front ends' titles, headers and locations.
PATH_ARGUMENT = {"read_file": "path", "write_file": "path", "edit_file": "path", "save_answer": "path",
                 "fs_read": "path", "fs_write": "path", "file_edit": "file_path",
                 "describe_image": "image_path"}
ParamType = Literal["string", "integer", "number", "boolean", "array", "object"]


@dataclass(frozen=True)
class Param:
    """One field of a tool's arguments, as declared to the model."""

    name: str
    type: ParamType
    description: str
    required: bool = True
    default: Any = None
    items: dict | None = None  # JSON schema of array items, for type "array"


@dataclass
class FileChange:
    """A file change for front ends: absolute path, text before (None when created) and after."""

    path: Path
    old_text: str | None
    new_text: str


@dataclass
class PlanEntry:
    """One item of a plan front ends show (todo_write's list; an ACP `plan` entry): its text,
    status (`pending`, `in_progress` or `completed`) and priority (`high`, `medium` or `low`)."""

    content: str
    status: str
    priority: str = "medium"


@dataclass
class ToolResult:
    """What a tool returns: `text` for the model, the rest for front ends.

    A tool never raises for an ordinary failure: the failure is `text`, with `failed=True`.
    `preview` is what terminal front ends echo (defaults to `text`).
    """

    text: str
    failed: bool = False
    change: FileChange | None = None
    locations: list[Path] = field(default_factory=list)
    preview: str | None = None
    summary: str | None = None  # shown as the call's output where the output already streamed (ask_agent)
    stop: str | None = None  # an error that ends the turn (an asked agent gone silent: the watchdog)
    plan: list[PlanEntry] | None = None  # the whole plan to show now ([]: none any more), from the todo tools


@dataclass
class Settings:
    """The settings tools read (agent-file keys, mm-tools.md)."""

    max_output: int = 20000  # characters
    bash_timeout: float = 30.0  # seconds
    preview_lines: int = 5
    watchdog_timeout: float = 120.0  # seconds of silence that end a turn (an asked agent's too)


@dataclass
class ToolContext:
    """What a running tool may use: working directory, settings, and the turn's cancel event.

    Tools that wait (bash) must also stop when `cancelled` is set, and then report
    `[error: cancelled]` (mm-tools.md §bash, Cancellation).
    """

    cwd: Path
    settings: Settings = field(default_factory=Settings)
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    interaction: Any = None  # the front end (mm.events.Interaction), for tools that ask the user
    message_text: str = ""  # the text of the model message whose calls are running (save_answer)
    previous_answer: str = ""  # the conversation's last answer when the turn started (save_answer)
    history: list[dict] = field(default_factory=list)  # the history the turn started from (ask_agent)
    hooks: Any = None  # the agent file's hooks (mm.hooks.point.Hooks), None without any (ask_agent's preAsk…)
    session_id: str = ""  # the conversation's session id, for the hooks' input
    model_client: Any = None  # the conversation's model client: base_url, model, provider, api_key (unload_model)
    reads: ReadLog = field(default_factory=ReadLog)  # the conversation's reads (read-before-write)
    context_window: int | None = None  # the model's context window in tokens, when known (fs_read's cap)
    plan_mode: Any = None  # the conversation's plan mode (mm.tools.plan.state.PlanMode), None: never on

    def resolve(self, path: str) -> Path:
        """Return `path` (str, as the model sent it) resolved against the working directory, `~`
        expanded. Raises mm.tools.failures.ArgumentError for a path no file can have (a NUL byte,
        a name over 255 bytes…) or a `~user` whose home is unknown (issue 10.5)."""
        from mm.tools.failures import ArgumentError, home_problem, path_problem

        problem = path_problem(path)
        if problem is not None:
            raise ArgumentError(path, problem)
        try:
            p = Path(path).expanduser()
        except RuntimeError:  # "Could not determine home directory"
            raise ArgumentError(path, home_problem(path)) from None
        return p if p.is_absolute() else self.cwd / p


class Tool(Protocol):
    """A tool declared to the model.

    `params` drives both the JSON schema sent to the model and argument coercion
    (mm.tools.coerce); `run` receives the coerced arguments.
    """

    name: str
    kind: ToolKind
    description: str
    params: list[Param]
    needs_permission: bool

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...


def schema_of(tool: Tool) -> dict:
    """Return the OpenAI `tools[]` entry for `tool` (function name, description, JSON schema)."""
    props: dict[str, dict] = {}
    for p in tool.params:
        prop: dict[str, Any] = {"type": p.type, "description": p.description}
        if p.items is not None:
            prop["items"] = p.items
        props[p.name] = prop
    required = [p.name for p in tool.params if p.required]
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": {"type": "object", "properties": props, "required": required},
        },
    }
