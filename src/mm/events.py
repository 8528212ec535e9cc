"""Events the engine sends to a front end, and the Interaction a front end provides."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from mm.llm.types import Usage
from mm.tools.base import FileChange, ToolResult


@dataclass
class TextChunk:
    """A piece of the answer's visible text."""

    text: str


@dataclass
class ThoughtChunk:
    """A piece of the model's reasoning."""

    text: str


@dataclass
class Composing:
    """A tool call is being streamed (spinner: `Composing a tool call`)."""

    name: str


@dataclass
class ToolCallStarted:
    """A tool call is about to run (after permission)."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    title: str | None = None  # the tool's own title for the call (a declared tool's argv)
    change: FileChange | None = None  # what the call would change, when permission will be asked
    kind: str | None = None  # the ACP kind, for a call an asked agent makes (the tool's own otherwise)


@dataclass
class ToolCallRunning:
    """The tool itself starts (after the permission, when one was asked)."""

    call_id: str


@dataclass
class ToolCallDone:
    """A tool call finished; `result.text` is what the model reads."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    result: ToolResult
    title: str | None = None  # the call's title from now on: `<tool> — denied by a hook` (mm-acp.md)


@dataclass
class RelayedText:
    """A piece of an asked agent's answer (`thought`: of its reasoning), streamed through the
    turn of the ask_agent call (mm-tools.md §ask_agent, Display)."""

    agent: str
    text: str
    thought: bool = False


@dataclass
class Answered:
    """One model request of the turn was answered (its message is in the history): `tool_calls`
    is how many calls it makes (0 for an answer that may end the turn). Front ends count the
    turn's requests with it (docs/scripting.md: `num_turns`)."""

    tool_calls: int = 0


@dataclass
class HookLine:
    """A line about a hook for the user, not the model (docs/hooks.md §Failures): `🪝 <event> hook
    <command> <what happened> — ignored`, or a hook's own message. On stderr in `mm -p` and ACP."""

    line: str


@dataclass
class UsageReport:
    """Token usage of one model request."""

    usage: Usage


@dataclass
class Compacted:
    """The history was made to fit the context window before a request (docs/engine.md §Context):
    `line` is the compaction line (`🗜️ compressed …` or `[compact: failed, …]`) or the cut note."""

    line: str


@dataclass
class Recap:
    """Counters of a turn (mm-tools.md §Counters shown after a turn)."""

    commands: int = 0
    file_ops: int = 0
    skills: int = 0
    lsp_calls: int = 0


# max_tokens: the answer was cut at the model's output limit (docs/engine.md §Output limit)
StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "cancelled", "error"]


@dataclass
class TurnDone:
    """The turn is over: why, its recap, the error text when it failed (or the line saying the
    answer was cut at the output limit: stop reason max_tokens), and with a structured
    output (`structuredOutput:`, `--json-schema`) the validated answer as one line of JSON."""

    stop_reason: StopReason
    recap: Recap
    error: str | None = None
    structured: str | None = None


Event = (TextChunk | ThoughtChunk | Composing | ToolCallStarted | ToolCallRunning | ToolCallDone | RelayedText
         | Answered | HookLine | UsageReport | Compacted | TurnDone)

PermissionAnswer = Literal["allow_once", "allow_always", "reject_once", "reject_always"]


class Interaction(Protocol):
    """What the engine asks of the front end: events out, permission in."""

    def emit(self, event: Event) -> None: ...

    async def request_permission(self, name: str, arguments: dict[str, Any], preview: str) -> PermissionAnswer:
        """Ask the user whether the call may run; front ends that cannot ask return `reject_once`."""
        ...
