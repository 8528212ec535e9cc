"""One conversation: the history and the turn loop (DESIGN.md §Architecture, engine)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mm.engine import recap as recaps
from mm.engine.events import (Composing, Interaction, Recap, TextChunk, ThoughtChunk, TurnDone,
                              UsageReport)
from mm.engine.loops import LoopDetector, RunawayError, check_runaway
from mm.engine.toolrun import Permissions, run_call
from mm.llm.types import AssistantMessage, LLMError, StreamDelta, Usage, fix_surrogates
from mm.tools.base import Settings, ToolContext
from mm.tools.registry import Registry

MAX_TURNS_REACHED = (
    "[error: the turn reached maxTurns ({n} model requests) without a final answer — "
    "turn stopped; ask again, or raise maxTurns]"
)
CANCELLED = "[error: cancelled]"
NOT_RUN = "[error: not run — the turn was stopped before this call]"
UNKNOWN_TOOL_NOTE = (
    '[mm: your answer holds a call of "{name}", but there is no tool of that name — the tools are: {names}. '
    "Call one of them, with its arguments as a JSON object]"
)


class ModelClient(Protocol):
    """What the engine needs of a model client (mm.llm.client.ChatClient)."""

    async def complete(self, messages: list[dict], tools: list[dict], on_delta: Any = None) -> AssistantMessage: ...


@dataclass
class Conversation:
    """The history (system prompt first) and everything a turn needs.

    Build it with `client` (a model client), `registry` (the declared tools), `cwd`, and the
    settings; then `await run_turn(prompt, ui)` once per user prompt.
    """

    client: ModelClient
    registry: Registry
    cwd: Path
    system_prompt: str
    settings: Settings = field(default_factory=Settings)
    yolo: bool = True
    max_turns: int = 40
    history: list[dict] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    totals: Usage = field(default_factory=Usage)  # the session's token totals
    permissions: Permissions = field(default_factory=Permissions)
    loops: LoopDetector = field(default_factory=LoopDetector)
    on_turn_end: Any = None  # callable(conversation) run after each turn (session save)
    context_window: int | None = None  # tokens, when known (contextWindow or the server's probe)

    def __post_init__(self) -> None:
        if not self.history:
            self.history.append({"role": "system", "content": self.system_prompt})
        self._cancel = asyncio.Event()

    def cancel(self) -> None:
        """Cancel the turn in flight: the stream stops and running commands are killed."""
        self._cancel.set()

    async def run_turn(self, prompt: str, ui: Interaction) -> TurnDone:
        """Run one turn for `prompt`: stream the model, run its tool calls, repeat until it answers.

        Returns the TurnDone event (also emitted to `ui`). Never raises for model or tool failures:
        they end the turn with stop_reason "error" and the one-line `error` text.
        """
        self._cancel = asyncio.Event()
        self.history.append({"role": "user", "content": fix_surrogates(prompt)})
        recap = Recap()
        try:
            done = await self._loop(ui, recap)
        except asyncio.CancelledError:
            done = TurnDone("cancelled", recap)
        if done.error and done.stop_reason == "error":
            self.errors.append({"where": "generation", "message": done.error})
        if self.on_turn_end is not None:
            self.on_turn_end(self)
        ui.emit(done)
        return done

    async def _loop(self, ui: Interaction, recap: Recap) -> TurnDone:
        ctx = ToolContext(cwd=self.cwd, settings=self.settings, cancelled=self._cancel)
        for _ in range(self.max_turns):
            try:
                message = await self._request(ui)
            except _Cancelled:
                return TurnDone("cancelled", recap)
            except (LLMError, RunawayError) as err:
                return TurnDone("error", recap, error=str(err))
            _repair(message)
            self.history.append(message.to_history())
            if message.usage is not None:
                self.totals.add(message.usage)
                ui.emit(UsageReport(message.usage))
            for name, _raw in message.unknown_calls:
                note = UNKNOWN_TOOL_NOTE.format(name=name, names=", ".join(self.registry.names))
                self.history.append({"role": "user", "content": note})
            if not message.tool_calls and not message.unknown_calls:
                return TurnDone("end_turn", recap)
            for call in message.tool_calls:
                outcome = await run_call(call, self.registry, ctx, ui, self.permissions, self.yolo, self.loops)
                recaps.count(recap, call.name)
                self.history.append({"role": "tool", "tool_call_id": call.id, "content": outcome.result.text})
                if outcome.stop_error:
                    self._answer_skipped(message, call.id, NOT_RUN)
                    return TurnDone("error", recap, error=outcome.stop_error)
                if self._cancel.is_set():
                    self._answer_skipped(message, call.id, CANCELLED)
                    return TurnDone("cancelled", recap)
        return TurnDone("max_turn_requests", recap, error=MAX_TURNS_REACHED.format(n=self.max_turns))

    def _answer_skipped(self, message: AssistantMessage, last_id: str, text: str) -> None:
        """Give every call after `last_id` the result `text`, so the history stays well-formed."""
        ids = [c.id for c in message.tool_calls]
        for call_id in ids[ids.index(last_id) + 1:]:
            self.history.append({"role": "tool", "tool_call_id": call_id, "content": text})

    async def _request(self, ui: Interaction) -> AssistantMessage:
        shown: Any = None  # the TextCallFilter, made at the first text (start-up time)
        composing: set[int] = set()

        def on_delta(delta: StreamDelta) -> None:
            nonlocal shown
            if delta.kind == "text":
                if shown is None:
                    from mm.llm.textcalls import TextCallFilter

                    shown = TextCallFilter(self.registry.names)
                visible = shown.feed(delta.text)
                if visible:
                    ui.emit(TextChunk(visible))
            elif delta.kind == "thought":
                ui.emit(ThoughtChunk(delta.text))
            else:
                if delta.index not in composing:
                    composing.add(delta.index)
                    ui.emit(Composing(delta.name))
                check_runaway(delta.text)

        request = asyncio.ensure_future(self.client.complete(self.history, self.registry.schemas(), on_delta))
        stop = asyncio.ensure_future(self._cancel.wait())
        try:
            await asyncio.wait({request, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
        if not request.done():
            request.cancel()
            await asyncio.gather(request, return_exceptions=True)
            raise _Cancelled()
        message = request.result()
        rest = shown.flush() if shown is not None else ""
        if rest:
            ui.emit(TextChunk(rest))
        return message


def _repair(message: AssistantMessage) -> None:
    """Make the message's text encodable (a server may split an emoji between two chunks)."""
    message.content = fix_surrogates(message.content)
    message.reasoning = fix_surrogates(message.reasoning)
    for call in message.tool_calls:
        call.arguments = fix_surrogates(call.arguments)
        call.raw_arguments = fix_surrogates(call.raw_arguments)


class _Cancelled(Exception):
    pass
