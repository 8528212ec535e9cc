"""The editor as a front end: engine events become `session/update` notifications, permission
questions `session/request_permission`, ask_user an elicitation form (mm-acp.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Awaitable, Callable

from mm.acp.outbox import CallIds, Outbox
from mm.ask.child import RELAYED_META  # `_meta` key of a chunk an asked agent wrote, naming it
from mm.acp.toolcalls import call_locations, diff_content, result_content, text_chunk, tool_kind
from mm.tools.titles import tool_title
from mm.events import (Compacted, Event, HookLine, PermissionAnswer, RelayedText, TextChunk, ThoughtChunk,
                              ToolCallDone, ToolCallRunning, ToolCallStarted, UsageReport)

PERMISSION_OPTIONS = [
    {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "allow_always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
    {"optionId": "never", "name": "Never", "kind": "reject_always"},
]
PLAN_OPTIONS = [
    {"optionId": "approve", "name": "Approve the plan and start", "kind": "allow_once"},
    {"optionId": "keep", "name": "Keep planning", "kind": "reject_once"},
]
PLAN_TITLE = "Approve the plan?"
PLAN_COMMANDS = "\n\n---\nRun without asking once approved: {commands}"
ANSWERS: dict[str, PermissionAnswer] = {"allow": "allow_once", "allow_always": "allow_always",
                                        "reject": "reject_once", "never": "reject_always"}

Request = Callable[[str, dict], Awaitable[Any]]


class EditorFrontEnd:
    """The Interaction of one `session/prompt` (mm.events.Interaction).

    `notify(update)` sends one `session/update` (awaitable), `request(method, params)` one
    request to the client; `cancelled` is set by `session/cancel`, which answers a pending
    question at once. `forms`: the client advertised `elicitation.form`.
    """

    def __init__(self, session_id: str, cwd: Path, registry: Any, notify: Callable[[dict], Awaitable[None]],
                 request: Request, ids: CallIds, log: Callable[[str], None], forms: bool = False,
                 window: Callable[[], int] = lambda: 0):
        self.session_id, self.cwd, self.registry = session_id, cwd, registry
        self.request_raw, self.ids, self.log, self.forms, self.window = request, ids, log, forms, window
        self.outbox = Outbox(notify, lambda err: log(f"[acp] session {session_id}: update not sent: {err}"))
        self.cancelled = asyncio.Event()
        self._ids: dict[str, str] = {}  # the engine's call id → the ACP id
        self._current = ""  # the ACP id of the call being run (asked about)
        self._started: ToolCallStarted | None = None  # its ToolCallStarted
        self._relayed_text = ""  # the asked agent whose text was streamed in this call

    def emit(self, event: Event) -> None:
        """Send the notification an engine event stands for (mm-acp.md §session/update)."""
        if isinstance(event, TextChunk):
            self.outbox.put(text_chunk("agent_message_chunk", event.text))
        elif isinstance(event, ThoughtChunk):
            self.outbox.put(text_chunk("agent_thought_chunk", event.text))
        elif isinstance(event, RelayedText):  # an asked agent's answer streams through the turn
            chunk = text_chunk("agent_thought_chunk" if event.thought else "agent_message_chunk", event.text)
            chunk["_meta"] = {RELAYED_META: event.agent}  # not this agent's answer (mm.ask.child)
            self.outbox.put(chunk)
            if not event.thought:
                self._relayed_text = event.agent
        elif isinstance(event, ToolCallStarted):
            self._call_started(event)
        elif isinstance(event, ToolCallRunning):
            acp_id = self._ids.get(event.call_id)
            if acp_id:
                self.outbox.put({"sessionUpdate": "tool_call_update", "toolCallId": acp_id, "status": "in_progress"})
        elif isinstance(event, ToolCallDone):
            self._call_done(event)
            if self._relayed_text and event.name == "ask_agent":  # this agent's own text starts apart
                separator = text_chunk("agent_message_chunk", "\n\n")
                self.outbox.put({**separator, "_meta": {RELAYED_META: self._relayed_text}})
                self._relayed_text = ""
        elif isinstance(event, UsageReport):
            used = event.usage.input_tokens + event.usage.output_tokens
            self.outbox.put({"sessionUpdate": "usage_update", "used": used, "size": self.window() or 0})
        elif isinstance(event, HookLine):  # mm-acp.md §Transport, Logs: the failure lines of hooks
            self.log(event.line)
        elif isinstance(event, Compacted):
            self.log(f"[acp] session {self.session_id}: {event.line}")
            self.outbox.put(text_chunk("agent_thought_chunk", event.line + "\n"))

    def _call_started(self, event: ToolCallStarted) -> None:
        self._current = self._ids[event.call_id] = self.ids.next()
        self._started = event
        self.outbox.put(self._announce(self._current, event.name, event.arguments, event.title, event.kind,
                                       event.change))

    def _announce(self, acp_id: str, name: str, arguments: Any, title: str | None = None,
                  kind: str | None = None, change: Any = None) -> dict[str, Any]:
        """A `tool_call` (pending) for a call; `kind`: an asked agent's own kind for its call;
        `change`: the file change it plans, sent as its diff (before a permission is asked)."""
        update: dict[str, Any] = {"sessionUpdate": "tool_call", "toolCallId": acp_id,
                                  "title": tool_title(name, arguments, title),
                                  "kind": kind or tool_kind(name, self.registry.get(name), arguments), "status": "pending",
                                  "rawInput": arguments}
        locations = call_locations(name, arguments, self.cwd)
        if locations:
            update["locations"] = locations
        diff = diff_content(change) if change is not None else None
        if diff is not None:
            update["content"] = diff
        return update

    def _call_done(self, event: ToolCallDone) -> None:
        result = event.result
        status = "failed" if result.failed else "completed"
        finished: dict[str, Any] = {"status": status, "content": result_content(result),
                                    "rawOutput": {"output": result.text}}
        if result.locations:
            finished["locations"] = [{"path": str(p)} for p in result.locations]
        if event.title:  # a call a hook denied: `<tool> — denied by a hook`
            finished["title"] = event.title
        acp_id = self._ids.get(event.call_id)
        if acp_id is None:  # refused before it could start (unknown tool, invalid arguments)
            self.outbox.put({**self._announce(self.ids.next(), event.name, event.arguments), **finished})
            return
        self.outbox.put({"sessionUpdate": "tool_call_update", "toolCallId": acp_id, **finished})
        if result.plan is not None:  # the todo list, as the editor's plan (mm-acp.md §session/update)
            self.outbox.put({"sessionUpdate": "plan", "entries": [
                {"content": e.content, "priority": e.priority, "status": e.status} for e in result.plan]})

    async def request_permission(self, name: str, arguments: dict[str, Any], preview: str) -> PermissionAnswer:
        """`session/request_permission` with the four options (mm-acp.md §session/request_permission);
        a cancelled outcome, a transport error or `session/cancel` count as a rejection."""
        started = self._started
        tool_call = self._announce(self._current, name, arguments, started.title if started else None,
                                   started.kind if started else None, started.change if started else None)
        del tool_call["sessionUpdate"]
        if started is not None and name.startswith(f"{started.name}: "):  # the tool's own question (git's override)
            tool_call["content"] = [{"type": "content", "content": {"type": "text", "text": preview}}]
        params = {"sessionId": self.session_id, "toolCall": tool_call, "options": PERMISSION_OPTIONS}
        result = await self._ask("session/request_permission", params)
        outcome = result.get("outcome") if isinstance(result, dict) else None
        if isinstance(outcome, dict) and outcome.get("outcome") == "selected":
            return ANSWERS.get(str(outcome.get("optionId")), "reject_once")
        return "reject_once"

    async def approve_plan(self, plan: str, allowed_bash: list[str], plan_file: Path) -> tuple[str, str]:
        """exit_plan_mode's question: `session/request_permission` whose tool call carries the plan
        as Markdown, with PLAN_OPTIONS (docs/plan-mode.md §Over ACP). Approved, the mode becomes
        `default` (current_mode_update); anything else keeps planning."""
        from mm.acp.modes import AVAILABLE

        content = plan + (PLAN_COMMANDS.format(commands=", ".join(allowed_bash)) if allowed_bash else "")
        tool_call = {"toolCallId": self._current, "title": PLAN_TITLE, "kind": "switch_mode", "status": "pending",
                     "content": [{"type": "content", "content": {"type": "text", "text": content}}]}
        params = {"sessionId": self.session_id, "toolCall": tool_call, "options": PLAN_OPTIONS}
        result = await self._ask("session/request_permission", params)
        outcome = result.get("outcome") if isinstance(result, dict) else None
        if isinstance(outcome, dict) and outcome.get("outcome") == "selected" and outcome.get("optionId") == "approve":
            self.outbox.put({"sessionUpdate": "current_mode_update", "currentModeId": AVAILABLE[0]["id"]})
            return "approve", plan
        return "keep", ""

    async def ask_user(self, questions: list) -> list[str] | str:
        """ask_user's questions as one form when the client takes forms, else as dialogs when
        every question is a choice or a confirm, else nobody can be asked (mm-tools.md §ask_user)."""
        from mm.acp.elicit import ask_with_dialogs, ask_with_form, can_ask_with_dialogs

        async def request(method: str, params: dict) -> Any:
            result = await self._ask(method, params)
            if result is None or result is _CANCELLED:  # an error answer, or the turn stopped
                raise ConnectionError(method)
            return result

        if self.forms:
            outcome = await ask_with_form(request, self.session_id, self._current, questions)
        elif can_ask_with_dialogs(questions):
            outcome = await ask_with_dialogs(request, self.session_id, self._current, questions)
        else:
            outcome = "nobody"
        return "cancelled" if self.cancelled.is_set() else outcome

    async def _ask(self, method: str, params: dict) -> Any:
        """Send a request after every queued notification; `_CANCELLED` when the turn is cancelled
        first, None when the client answers with an error or is gone."""
        from mm.tools.waiting import Cancelled, unless_cancelled

        await self.outbox.flush()
        try:
            return await unless_cancelled(self.request_raw(method, params), self.cancelled)
        except Cancelled:
            return _CANCELLED
        except Exception as err:  # an error answer, or the client gone
            self.log(f"[acp] session {self.session_id}: {method} failed: {err}")
            return None


_CANCELLED = object()
