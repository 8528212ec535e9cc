"""An asked agent's events, permission requests and questions, put through this agent's front end
(mm-tools.md §ask_agent, Display; §ask_user, Asked agent; mm-acp.md, "When mm is the client")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mm.events import RelayedText, ToolCallDone, ToolCallRunning, ToolCallStarted
from mm.tools.base import FileChange, ToolResult

ASKS = "{agent} asks: "  # before each relayed question
ASKING = "{agent} asks"  # the name of a relayed permission: `🔐 <agent> asks: allow? …`
TITLE = "{agent} · {title}"
CANNOT_ASK = "nobody can answer a question here"
KIND_FOR = {"allow_once": ("allow_once", "allow_always"), "allow_always": ("allow_always", "allow_once"),
            "reject_once": ("reject_once", "reject_always"), "reject_always": ("reject_always", "reject_once")}


class Relay:
    """The Sink (mm.ask.child.Sink) of one question to `agent`, for the front end `ui`.

    `yolo`: the agent's calls run without asking this agent's user (mm-tools.md §ask_agent,
    "The asked agent's calls").
    """

    def __init__(self, agent: str, ui: Any, yolo: bool):
        self.agent, self.ui, self.yolo = agent, ui, yolo
        self._calls: dict[str, ToolCallStarted] = {}
        self._titles: dict[str, str] = {}  # the agent's own title of each call

    def update(self, update: Any) -> None:
        """One `session/update` of the agent, as this agent's events."""
        kind = getattr(update, "session_update", "")
        if kind in ("agent_message_chunk", "agent_thought_chunk"):
            text = getattr(getattr(update, "content", None), "text", None)
            if isinstance(text, str) and text:
                self.ui.emit(RelayedText(self.agent, text, thought=kind == "agent_thought_chunk"))
        elif kind == "tool_call":
            self._started(update)
            if update.status in ("completed", "failed"):
                self._done(update)
        elif kind == "tool_call_update":
            if update.tool_call_id not in self._calls:
                self._started(update)
            if update.status == "in_progress":
                self.ui.emit(ToolCallRunning(self._id(update.tool_call_id)))
            elif update.status in ("completed", "failed"):
                self._done(update)

    def _id(self, ref: str) -> str:
        return f"{self.agent}/{ref}"

    def _started(self, call: Any) -> ToolCallStarted:
        self._titles[call.tool_call_id] = call.title or "tool call"
        title = TITLE.format(agent=self.agent, title=self._titles[call.tool_call_id])
        arguments = call.raw_input if isinstance(call.raw_input, dict) else {}
        event = ToolCallStarted(self._id(call.tool_call_id), self.agent, arguments, title, _change(call.content),
                                kind=call.kind)
        self._calls[call.tool_call_id] = event
        self.ui.emit(event)
        return event

    def _done(self, call: Any) -> None:
        started = self._calls.get(call.tool_call_id)
        result = ToolResult(_output(call), failed=call.status == "failed", change=_change(call.content))
        self.ui.emit(ToolCallDone(self._id(call.tool_call_id), self.agent, started.arguments if started else {},
                                  result))

    async def permission(self, tool_call: Any, options: list) -> str | None:
        """The option to answer the agent's permission request with: allowed at once when the
        agent's calls run without asking, else the user's answer through the front end."""
        if self.yolo:
            return _option(options, "allow_once")
        started = self._calls.get(tool_call.tool_call_id) or self._started(tool_call)
        preview = self._titles.get(tool_call.tool_call_id, "")
        if started.change is not None:
            from mm.tools.diff import diff_texts

            preview += "\n" + "\n".join(diff_texts(started.change.old_text or "", started.change.new_text).rows)
        answer = await self.ui.request_permission(ASKING.format(agent=self.agent), started.arguments, preview)
        return _option(options, answer)

    async def elicit(self, message: str, mode: Any) -> dict[str, Any]:
        """The agent's form put to the user as ask_user questions, prefixed `<agent> asks: `;
        a front end that cannot ask answers with an error (mm-acp.md §elicitation/create)."""
        from acp import RequestError

        from mm.ask.forms import content_of, questions_of

        ask = getattr(self.ui, "ask_user", None)
        schema = getattr(mode, "requested_schema", None)
        questions = questions_of(schema, message, ASKS.format(agent=self.agent)) if schema is not None else []
        if ask is None or not questions:
            raise RequestError.internal_error({"error": CANNOT_ASK})
        outcome = await ask([q for _, q in questions])
        if outcome == "declined":
            return {"action": "decline"}
        if outcome == "nobody":
            raise RequestError.internal_error({"error": CANNOT_ASK})
        if not isinstance(outcome, list):
            return {"action": "cancel"}
        return {"action": "accept", "content": content_of(questions, outcome)}


def _option(options: list, answer: str) -> str | None:
    """The id of the option whose kind fits `answer` best (None: nothing fits, a cancel)."""
    for kind in KIND_FOR.get(answer, ()):
        for option in options:
            if getattr(option, "kind", None) == kind:
                return option.option_id
    return None


def _change(content: Any) -> FileChange | None:
    for item in content or []:
        if getattr(item, "type", None) == "diff":
            return FileChange(Path(item.path), item.old_text, item.new_text)
    return None


def _output(call: Any) -> str:
    """A finished call's output: `rawOutput.output`, else its text content."""
    raw = call.raw_output
    if isinstance(raw, dict) and isinstance(raw.get("output"), str):
        return raw["output"]
    texts = [getattr(getattr(c, "content", None), "text", None) for c in call.content or []]
    return "\n".join(t for t in texts if isinstance(t, str))
