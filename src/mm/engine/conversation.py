"""One conversation: the history and the turn loop (DESIGN.md §Architecture, engine)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mm.config.schema import ContextConfig
from mm.engine import recap as recaps
from mm.events import (Answered, Composing, Interaction, Recap, TextChunk, ThoughtChunk,
                              TurnDone, UsageReport)
from mm.engine.inbox import background_reported, deliver_reports
from mm.engine.loops import LoopDetector
from mm.engine.runaway import REASONING, TEXT, AnswerRunaway, RepeatWatch, RunawayError, check_runaway, runaway_marker
from mm.engine.tokens import TokenMeter
from mm.engine.toolrun import Permissions, run_call
from mm.engine.turns import WindowExceeded, current_turn_start, forget_reasoning
from mm.llm.types import REASONING_KEY, AssistantMessage, LLMError, StreamDelta, Usage, fix_surrogates, repair_text
from mm.tools.base import Settings, ToolContext
from mm.tools.plan.state import PlanMode
from mm.tools.reads import ReadLog
from mm.tools.registry import Registry

MAX_TURNS_REACHED = (
    "[error: the turn reached maxTurns ({n} model requests) without a final answer — "
    "turn stopped; ask again, or raise maxTurns]"
)
CANCELLED = "[error: cancelled]"
NOT_RUN = "[error: not run — the turn was stopped before this call]"
PROMPT_BLOCKED = "[prompt blocked by a hook: {reason}]"  # a preGeneration hook denied (docs/hooks.md)
UNKNOWN_TOOL_NOTE = (
    '[mm: your answer holds a call of "{name}", but there is no tool of that name — the tools are: {names}. '
    "Call one of them, with its arguments as a JSON object]"
)
NEW_SESSION = "🆕 New session: {n} message(s) forgotten."

WIRE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")  # what a message sends to the server
# ... and REASONING_KEY for the turn in progress (docs/engine.md §Reasoning)


class ModelClient(Protocol):
    """What the engine needs of a model client (mm.llm.client.ChatClient)."""

    async def complete(self, messages: list[dict], tools: list[dict], on_delta: Any = None,
                       **options: Any) -> AssistantMessage: ...


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
    on_change: Any = None  # callable(conversation) run in a turn as it happens: tool calls made, each result
    on_new: Any = None  # callable(conversation, previous history) -> the id it was kept as, run by /new
    kept_as: str | None = None  # the id the conversation before the last /new was kept as (sessions)
    session: Any = None  # the session file (mm.sessions.store.SessionFile) when sessions are on
    context_window: int | None = None  # tokens, when known (contextWindow or the server's probe)
    refuse_overflow: bool = False  # the server cuts a longer prompt silently (ollama): never send one
    context: ContextConfig = field(default_factory=ContextConfig)  # compaction settings (`context:`)
    meter: TokenMeter = field(default_factory=TokenMeter)  # the server's last measure of the history
    hooks: Any = None  # the agent file's hooks (mm.hooks.point.Hooks), None when it has none
    session_id: str = ""  # the id hooks are given when no session file names the conversation (ACP's)
    answer_schema: dict | None = None  # the JSON Schema the final answer follows (structuredOutput, mm.answer_schema)
    reads: ReadLog = field(default_factory=ReadLog)  # the files read, for read-before-write (docs/tools-files.md)
    fresh_system_prompt: Any = None  # callable() -> the system prompt made again (MEMORY.md re-read: docs/memory.md)
    inbox: Any = None  # background sub-agents' reports (mm.tools.agents.runs.SubAgents), delivered before a request
    await_background: bool = False  # `mm -p`: the turn waits for background sub-agents (docs/subagents.md)
    plan_mode: PlanMode = field(default_factory=PlanMode)  # docs/plan-mode.md; a sub-agent's is its parent's

    def __post_init__(self) -> None:
        if not self.history:
            self.history.append({"role": "system", "content": self.system_prompt})
        self._cancel = asyncio.Event()
        self._streamed: list[str] = []  # the answer's text shown so far, kept when the request is cancelled

    def cancel(self) -> None:
        """Cancel the turn in flight: the stream stops and running commands are killed."""
        self._cancel.set()

    async def run_turn(self, prompt: str, ui: Interaction, pinned: bool = False) -> TurnDone:
        """Run one turn for `prompt`: stream the model, run its tool calls, repeat until it answers.

        A `$name` naming a skill gets mm's note (mm.skills.resolve_skill_notation).
        pinned: the prompt holds standing instructions, never summarised by compaction
        (docs/engine.md §Context). Returns the TurnDone event (also emitted to `ui`). Never raises
        for model or tool failures: they end the turn with stop_reason "error" and the one-line
        `error` text. A turn that ends before any answer (cancelled, failed) leaves the history as
        it found it; a prompt that would have to be cut to fit the context window ends it at once
        (mm.engine.compaction.prompt_too_large), the model not called.
        """
        self._cancel = asyncio.Event()
        contexts: list[str] = []
        if self.hooks is not None and self.hooks.wants("preGeneration"):
            blocked = await self._before_generation(prompt, ui)
            if isinstance(blocked, TurnDone):
                ui.emit(blocked)
                return blocked
            prompt, contexts = blocked
        if "$" in prompt:  # a skill named `$name`: the model is told to read it (docs/skills.md)
            from mm.skills import catalogue_of, resolve_skill_notation

            prompt = resolve_skill_notation(prompt, catalogue_of(self.registry))
        if contexts:  # after the skill's note: memory search cuts a question at the marker (mm.sessions.units)
            from mm.text import add_context

            prompt = add_context(prompt, contexts)
        message = {"role": "user", "content": fix_surrogates(prompt)}
        too_large = self._too_large(message)
        if too_large:  # it could only be cut to fit: refused, the history untouched
            done = TurnDone("error", Recap(), error=too_large)
            ui.emit(done)
            return done
        asked = dict(message, pinned=True) if pinned else message
        self.history.append(asked)
        recap = Recap()
        try:
            done = await self._loop(ui, recap)
        except asyncio.CancelledError:
            done = TurnDone("cancelled", recap)
        if self.history and self.history[-1] is asked:  # no answer at all: the question is removed
            self.history.pop()  # (mm-acp.md §session/prompt, History), so no two questions follow each other
        forget_reasoning(self.history)
        if done.error and done.stop_reason in ("error", "max_tokens"):
            self.errors.append({"where": "generation", "message": done.error})
        if self.on_turn_end is not None:
            self.on_turn_end(self)
        ui.emit(done)
        return done

    async def _before_generation(self, prompt: str, ui: Interaction) -> tuple[str, list[str]] | TurnDone:
        """The preGeneration hooks on `prompt` (docs/hooks.md): the prompt to send (a hook may
        replace it) and the contexts to append to it; or the TurnDone of a prompt a hook blocked
        (PROMPT_BLOCKED, nothing sent, the history unchanged) or of a turn cancelled meanwhile."""
        outcome = await self.hooks.run("preGeneration", {"prompt": prompt}, cwd=self.cwd, session_id=self.id_for_hooks,
                                       ui=ui, cancelled=self._cancel)
        if self._cancel.is_set():
            return TurnDone("cancelled", Recap())
        if outcome.denied:
            return TurnDone("error", Recap(), error=PROMPT_BLOCKED.format(reason=outcome.reason))
        return (outcome.replace if outcome.replace is not None else prompt), outcome.contexts

    @property
    def id_for_hooks(self) -> str:
        """The session id hooks are given: the session file's, else `session_id` (made on first
        use when nobody gave one: a conversation without a session file, outside ACP)."""
        if self.session is not None:
            return self.session.id
        if not self.session_id:
            from mm.sessions.store import new_session_id

            self.session_id = new_session_id()
        return self.session_id

    async def _loop(self, ui: Interaction, recap: Recap) -> TurnDone:
        ctx = ToolContext(cwd=self.cwd, settings=self.settings, cancelled=self._cancel, interaction=ui,
                          previous_answer=self._last_answer(), history=list(self.history), hooks=self.hooks,
                          session_id=self.id_for_hooks, reads=self.reads, context_window=self.context_window,
                          model_client=self.client, plan_mode=self.plan_mode)
        edit_noted = False  # an edit written in the answer was pointed out (once per turn)
        asked_again = False  # a structured answer that did not validate was asked again (once per turn)
        for _ in range(self.max_turns):
            deliver_reports(self)
            try:
                message = await self._request(ui, answer_only=asked_again)
            except _Cancelled:
                streamed = "".join(self._streamed)
                if streamed.strip():  # what the user saw stays in the history (mm-acp.md §session/prompt)
                    self.history.append({"role": "assistant", "content": fix_surrogates(streamed)})
                return TurnDone("cancelled", recap)
            except AnswerRunaway as err:  # kept as a marker, not as kilobytes of repetition
                kept = runaway_marker(err, "".join(self._streamed))
                self.history.append({"role": "assistant", "content": fix_surrogates(kept)})
                return TurnDone("error", recap, error=str(err))
            except (LLMError, RunawayError, WindowExceeded) as err:
                return TurnDone("error", recap, error=str(err))
            repair_text(message)
            self.history.append(message.to_history())
            ui.emit(Answered(len(message.tool_calls) + len(message.unknown_calls)))
            if message.usage is not None:
                self.totals.add(message.usage)
                self.meter.record(message.usage, len(self.history))
                ui.emit(UsageReport(message.usage))
            for name, _raw in message.unknown_calls:
                note = UNKNOWN_TOOL_NOTE.format(name=name, names=", ".join(self.registry.names))
                self.history.append({"role": "user", "content": note})
            cut = None
            if message.finish_reason == "length":  # (imported only then: start-up time)
                from mm.engine.outputlimit import cut_of

                cut = cut_of(self.client, message)
            if cut is not None and not cut.call:  # cut at the output limit: never a success
                if cut.kept is not None:
                    self.history[-1]["content"] = fix_surrogates(cut.kept)
                return TurnDone("max_tokens", recap, error=cut.line)
            if not message.tool_calls and not message.unknown_calls:
                if self.answer_schema is not None:
                    from mm.engine.structured import structured_end

                    done = structured_end(self.history, self.answer_schema, message.content, recap, asked_again)
                    if done is not None:
                        return done
                    asked_again = True
                    continue
                what = None if edit_noted else self._edit_in_answer(message.content)
                if what is None:
                    if await background_reported(self):
                        continue
                    return TurnDone("end_turn", recap)
                edit_noted = True
                stop = self._note_edit(message.content, what)
                if stop:
                    return TurnDone("error", recap, error=stop)
                continue
            if self.on_change is not None:  # the calls are saved before they run (docs/sessions.md)
                self.on_change(self)
            ctx.message_text = message.content
            for call in message.tool_calls:
                outcome = await run_call(call, self.registry, ctx, ui, self.permissions, self.yolo, self.loops)
                recaps.count(recap, call.name)
                self.history.append({"role": "tool", "tool_call_id": call.id, "content": outcome.result.text})
                if self.on_change is not None:
                    self.on_change(self)
                if outcome.stop_error:
                    self._answer_skipped(message, call.id, NOT_RUN)
                    return TurnDone("error", recap, error=outcome.stop_error)
                if self._cancel.is_set():
                    self._answer_skipped(message, call.id, CANCELLED)
                    return TurnDone("cancelled", recap)
            if cut is not None:  # the last call was cut: refused above (never run), and the turn ends
                return TurnDone("max_tokens", recap, error=cut.line)
        return TurnDone("max_turn_requests", recap, error=MAX_TURNS_REACHED.format(n=self.max_turns))

    def _edit_in_answer(self, text: str) -> str | None:
        from mm.engine.textedit import edit_in_answer  # (its patterns compiled only when needed)

        return edit_in_answer(self, text)

    def _note_edit(self, answer: str, what: str) -> str | None:
        from mm.engine.textedit import note_edit_in_answer

        return note_edit_in_answer(self, answer, what)

    def _too_large(self, message: dict) -> str | None:
        """compaction.PROMPT_TOO_LARGE when `message` cannot be sent whole, else None."""
        if not self.context_window:  # unknown window: nothing to measure against (and no import)
            return None
        from mm.engine import compaction

        return compaction.prompt_too_large(self, message)

    def _last_answer(self) -> str:
        """The conversation's last answer before the turn's prompt (save_answer saves it)."""
        for message in reversed(self.history[:-1]):
            if message.get("role") == "assistant" and (message.get("content") or "").strip():
                return message["content"]
        return ""

    def _answer_skipped(self, message: AssistantMessage, last_id: str, text: str) -> None:
        """Give every call after `last_id` the result `text`, so the history stays well-formed."""
        ids = [c.id for c in message.tool_calls]
        for call_id in ids[ids.index(last_id) + 1:]:
            self.history.append({"role": "tool", "tool_call_id": call_id, "content": text})

    async def _request(self, ui: Interaction, answer_only: bool = False) -> AssistantMessage:
        """One model request for the history; `answer_only`: no tool is sent (a structured answer
        asked again: mm.engine.structured, which gives the request's `response_format`)."""
        if self.context_window:  # unknown window: nothing to measure against (and no import)
            from mm.engine.compaction import fit_window

            await fit_window(self, ui)
        tools = [] if answer_only else self.registry.schemas()
        options = {}
        if self.answer_schema is not None:
            from mm.engine.structured import request_options

            options = request_options(self.answer_schema, tools)
        shown: Any = None  # the TextCallFilter, made at the first text (start-up time)
        composing: set[int] = set()
        watches = {"text": RepeatWatch(TEXT), "thought": RepeatWatch(REASONING)}

        self._streamed = []

        def on_delta(delta: StreamDelta) -> None:
            nonlocal shown
            if delta.kind in watches:
                watches[delta.kind].feed(delta.text)
            if delta.kind == "text":
                if shown is None:
                    from mm.llm.textcalls import TextCallFilter

                    shown = TextCallFilter(self.registry.names if tools else [])
                visible = shown.feed(delta.text)
                if visible:
                    self._streamed.append(visible)
                    ui.emit(TextChunk(visible))
            elif delta.kind == "thought":
                ui.emit(ThoughtChunk(delta.text))
            else:
                if delta.index not in composing:
                    composing.add(delta.index)
                    ui.emit(Composing(delta.name))
                check_runaway(delta.text)

        sent = self.history
        if self.plan_mode.active:  # the reminder goes with each request, never into the history
            from mm.tools.plan.state import with_reminder

            sent = with_reminder(self.history, current_turn_start(self.history), self.plan_mode)
        message = await self.call_model(sent, tools, on_delta, **options)
        rest = shown.flush() if shown is not None else ""
        if rest:
            ui.emit(TextChunk(rest))
        return message

    async def call_model(self, messages: list[dict], tools: list[dict], on_delta: Any = None,
                         **options: Any) -> AssistantMessage:
        """One model request for `messages`, stopped by `cancel()`: each message is sent with its
        WIRE_KEYS only, plus its REASONING_KEY when it belongs to the turn in progress
        (docs/engine.md §Reasoning).

        options: request fields for this request only (max_tokens…). Raises LLMError, or
        _Cancelled when the conversation was cancelled.
        """
        from mm.tools.waiting import Cancelled, unless_cancelled

        start, in_progress = current_turn_start(messages), WIRE_KEYS + (REASONING_KEY,)
        sent = [{k: m[k] for k in (in_progress if i > start else WIRE_KEYS) if k in m}
                for i, m in enumerate(messages)]
        try:
            return await unless_cancelled(self.client.complete(sent, tools, on_delta, **options), self._cancel)
        except Cancelled:
            raise _Cancelled() from None

    async def compact(self) -> str:
        """`/compact`: compact now, forced (mm-acp.md §session/prompt); returns the line to show.
        Saves the session (`on_turn_end`) when the history changed."""
        from mm.engine import compaction

        self._cancel = asyncio.Event()
        before = list(self.history)
        try:
            line = await compaction.compact(self, force=True)
        except _Cancelled:
            line = compaction.FAILED.format(why="cancelled")
        if self.history != before and self.on_turn_end is not None:
            self.on_turn_end(self)
        return line

    def new(self) -> str:
        """`/new`: the history reset to the system prompt (made again with `fresh_system_prompt`
        when set), the token measure forgotten, the loop
        detector, the errors and the files read (read-before-write) reset, permissions and totals
        kept (mm-acp.md §session/prompt; docs/tools-files.md).
        Returns `🆕 New session: N message(s) forgotten.`; `on_new` keeps the old conversation."""
        forgotten = len(self.history) - 1
        previous = list(self.history)
        if self.fresh_system_prompt is not None:
            self.system_prompt = self.fresh_system_prompt()
        self.history[:] = [{"role": "system", "content": self.system_prompt}]
        self.errors.clear()
        self.meter.forget()
        self.loops.reset()
        self.reads.forget()
        self.plan_mode.approved = []  # an approved plan's commands (docs/plan-mode.md)
        self.kept_as = None
        if self.on_new is not None:  # sessions: keep the old conversation under a new id, rewrite this one
            self.kept_as = self.on_new(self, previous)
        return NEW_SESSION.format(n=forgotten)

    def set_plan_mode(self, on: bool) -> str:
        """Turn plan mode on or off (`/plan`, ACP's session modes: docs/plan-mode.md); returns the
        line to show (mm.tools.plan.state.PLAN_ON, PLAN_OFF)."""
        if not on:
            return self.plan_mode.leave()
        return self.plan_mode.enter(self.id_for_hooks, "exit_plan_mode" in self.registry.names)

    async def close(self) -> None:
        """The conversation ends (mm leaves, or a session is replaced): the agents its tools
        started are stopped and its session file is let go for another mm to go on with."""
        await self.registry.close()
        if self.session is not None:
            self.session.release()

    def tools_text(self) -> str:
        """The tool schemas as sent with every request (JSON), for the token estimate."""
        import json

        return json.dumps(self.registry.schemas(), ensure_ascii=False)

    def used_tokens(self) -> int:
        """Tokens of the context window in use: the larger of the last measure and the estimate of
        the history and tool schemas (usage_update's `used`, docs/engine.md §Context)."""
        from mm.engine.tokens import count_text

        return self.meter.used(self.history, count_text(self.tools_text()))

    def usage_text(self) -> str:
        """`/usage`: the session's token totals, then the context window's fill (mm.engine.usage)."""
        from mm.engine.usage import usage_text

        return usage_text(self)


class _Cancelled(Exception):
    pass
