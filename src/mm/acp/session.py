"""One ACP session: a conversation in the session's `cwd`, its prompts, and its slash commands
handed to mm.acp.commands (mm-acp.md §session/prompt)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mm.acp.toolcalls import text_chunk
from mm.engine.conversation import Conversation

ATTACHED_LOG = "[acp] session {id}: attached {path}"
IGNORED_LOG = "[acp] session {id}: a block of type {kind} in the prompt is ignored (mm takes text and resource links)"
EMPTY_LOG = "[acp] session {id}: an empty prompt: nothing to do"
NOT_UNDERSTOOD = ("[mm did not read this prompt: it holds only {kinds} content, and mm takes text and files "
                  "(@ attachments) — write the request as text]")
TURN_LOG = "[acp] turn done: {commands} command(s) · {file_ops} file op(s) · {skills} skill(s)"
CUT_LOG = "[acp] session {id}: stopReason max_tokens: {line}"  # docs/acp.md; the line: mm.engine.outputlimit
STOP_REASONS = ("end_turn", "cancelled", "max_turn_requests", "max_tokens")  # the engine's that are ACP stop reasons


class TurnFailed(Exception):
    """The turn ended in an error; `str(err)` is its one-line explanation."""


@dataclass
class Session:
    """A registered session: its id, `cwd` and conversation, and the prompts in flight."""

    id: str
    cwd: Path
    conv: Conversation
    server: Any  # mm.acp.server.EditorAgent: the lock, the client connection, the call ids, the log
    cancels: set[asyncio.Event] = field(default_factory=set)
    instructions: list[str] = field(default_factory=list)  # what the log says of its AGENTS.md files
    model_facts: Any = None  # what the server said of the model `/model` chose for this session

    @property
    def catalogue(self) -> list[Any]:
        """The session's skills (mm.skills.Skill), from its read_skill tool."""
        from mm.skills import catalogue_of

        return catalogue_of(self.conv.registry)

    async def facts(self) -> Any:
        """What the server says of this session's model (mm.llm.servers.ServerFacts): the model
        `/model` chose, else the process's (mm.acp.server.EditorAgent.server_facts)."""
        return self.model_facts or await self.server.server_facts()

    def cancel(self) -> None:
        """`session/cancel`: stop the turn in flight and every prompt still waiting for its turn."""
        for event in list(self.cancels):
            event.set()
        self.conv.cancel()

    async def prompt(self, blocks: list[Any]) -> dict[str, Any]:
        """Run one `session/prompt` and return the response's fields (`stopReason`, `usage`).

        Waits for the process-wide turn lock. Raises TurnFailed when the turn failed.
        """
        from mm.acp.prompt import flatten

        flat = flatten(blocks, self.cwd, self.catalogue)
        for path in flat.attached:
            self.server.log(ATTACHED_LOG.format(id=self.id, path=path))
        for kind in flat.ignored:
            self.server.log(IGNORED_LOG.format(id=self.id, kind=kind))
        ui = self.server.front_end(self)
        self.cancels.add(ui.cancelled)
        try:
            async with self.server.turns:
                if ui.cancelled.is_set():
                    return self._response("cancelled")
                if flat.command is not None:
                    from mm.acp.commands import run_command

                    return await run_command(self, ui, flat.command, flat.argument)
                if not flat.text.strip():  # nothing asked: the model is not called for an empty message
                    self.server.log(EMPTY_LOG.format(id=self.id))
                    if flat.ignored:  # an image alone, say: the user is told, in the conversation
                        kinds = " and ".join(dict.fromkeys(flat.ignored))
                        ui.outbox.put(text_chunk("agent_message_chunk", NOT_UNDERSTOOD.format(kinds=kinds)))
                        await ui.outbox.flush()
                    return self._response("end_turn")
                return await self.turn(flat.text, ui)
        finally:
            self.cancels.discard(ui.cancelled)

    async def turn(self, text: str, ui: Any) -> dict[str, Any]:
        """Run one turn for `text` with the front end `ui` (within the turn lock); returns the
        response's fields. Raises TurnFailed when the turn failed."""
        from mm.run import apply_facts

        apply_facts(self.conv, await self.facts())
        if ui.cancelled.is_set():
            return self._response("cancelled")
        done = await self.conv.run_turn(text, ui)  # (a question with no answer at all is removed there)
        await ui.outbox.flush()
        r = done.recap
        self.server.log(TURN_LOG.format(commands=r.commands, file_ops=r.file_ops, skills=r.skills))
        await self._usage_update(ui)
        if done.stop_reason not in STOP_REASONS:
            raise TurnFailed(done.error or "the turn failed")
        if done.stop_reason == "max_tokens" and done.error:  # the editor shows max_tokens; the log says why
            self.server.log(CUT_LOG.format(id=self.id, line=done.error))
        return self._response(done.stop_reason)

    async def command_done(self, line: str, ui: Any) -> dict[str, Any]:
        """A slash command's end: its `line` as one agent_message_chunk, the usage_update, then
        the response's fields (`cancelled` when the session was cancelled meanwhile)."""
        ui.outbox.put(text_chunk("agent_message_chunk", line))
        await self._usage_update(ui)
        return self._response("cancelled" if ui.cancelled.is_set() else "end_turn")

    async def _usage_update(self, ui: Any) -> None:
        """`usage_update` at the end of a turn, `/new` and `/compact`: the larger of the last
        measure and the history's estimate (mm-acp.md §session/update notifications sent)."""
        ui.outbox.put({"sessionUpdate": "usage_update", "used": self.conv.used_tokens(),
                       "size": self.conv.context_window or 0})
        await ui.outbox.flush()

    def _response(self, stop_reason: str) -> dict[str, Any]:
        """`stopReason`, and `usage` (the session's totals) once the server reported any count."""
        response: dict[str, Any] = {"stopReason": stop_reason}
        t = self.conv.totals
        if t.input_tokens or t.output_tokens:
            usage = {"inputTokens": t.input_tokens, "outputTokens": t.output_tokens,
                     "totalTokens": t.input_tokens + t.output_tokens}
            if t.thought_tokens:
                usage["thoughtTokens"] = t.thought_tokens
            if t.cached_tokens:
                usage["cachedReadTokens"] = t.cached_tokens
            response["usage"] = usage
        return response
