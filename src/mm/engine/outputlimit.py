"""An answer the model server cut at its output limit (`finish_reason: "length"`): the turn ends
with stop reason `max_tokens` and one line saying so (docs/engine.md §Output limit,
docs/scripting.md §The output limit), never as a success.

The references are silent on this: mm does what Claude Code does with `stop_reason: max_tokens`
(the result says so and is an error: the answer is not whole). A text answer stays in the history
as it was shown; one whose end repeats a long passage (mm.engine.runaway.long_repeat: longer than
the runaway rule's 64 characters) is kept without the repetition. A cut tool call is never run:
mm.llm.stream already refuses its arguments, and the turn ends after the complete calls ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mm.engine.runaway import TEXT, AnswerRunaway, long_repeat, runaway_marker
from mm.llm.types import AssistantMessage

LENGTH = "length"  # the OpenAI finish_reason of an answer cut at max_tokens
ANSWER_CUT = (
    "[the answer was cut at the model's output limit ({limit}) and may be incomplete — raise maxTokens in the "
    "agent file (docs/configuration.md), or ask for a shorter answer]"
)
CALL_CUT = (
    "[the {name} call was cut at the model's output limit ({limit}) and was not run: its arguments are incomplete "
    "— raise maxTokens in the agent file (docs/configuration.md), or ask for smaller steps]"
)
ANSWER_REPEATED = (
    "[the answer repeated itself (one {period}-character passage, {count} times) and was cut at the model's "
    "output limit ({limit}) — rephrase the request, or try another model]"
)
LIMIT_SENT = "max_tokens {n}"  # mm sent max_tokens (maxTokens, or the embedded engine's default)
LIMIT_COUNTED = "the server's limit, {n} tokens"  # mm sent none; the server reported the answer's tokens
LIMIT_UNKNOWN = "the server's limit"


@dataclass
class CutAnswer:
    """How a cut answer ends the turn: `line` is the TurnDone error (stop reason `max_tokens`);
    `kept` the content the history keeps instead of the answer's (None: as it is); `call`: a tool
    call was cut (the complete calls before it run first)."""

    line: str
    kept: str | None = None
    call: bool = False


def cut_answer(message: AssistantMessage, max_tokens: int | None) -> CutAnswer | None:
    """The CutAnswer of `message` when the server ended it with finish_reason "length", else None.

    max_tokens: the `max_tokens` mm sent with the request (None: the server's own limit applied).
    A message whose tool calls all parsed is not cut where it matters (its calls are whole): None,
    and the turn goes on. Reference: none (docs/engine.md §Output limit).
    """
    if message.finish_reason != LENGTH:
        return None
    limit = _limit(message, max_tokens)
    if message.tool_calls:
        last = message.tool_calls[-1]
        if last.arguments is not None:
            return None
        name = last.name or "tool"
        return CutAnswer(CALL_CUT.format(name=name, limit=limit), call=True)
    period, count = long_repeat(message.content)
    if period:
        err = AnswerRunaway(ANSWER_REPEATED, TEXT, period)
        line = ANSWER_REPEATED.format(period=period, count=count, limit=limit)
        return CutAnswer(line, kept=runaway_marker(err, message.content))
    return CutAnswer(ANSWER_CUT.format(limit=limit))


def _limit(message: AssistantMessage, max_tokens: int | None) -> str:
    if max_tokens:
        return LIMIT_SENT.format(n=max_tokens)
    if message.usage is not None and message.usage.output_tokens:
        return LIMIT_COUNTED.format(n=message.usage.output_tokens)
    return LIMIT_UNKNOWN


def cut_of(client: Any, message: Any) -> Any:
    """The CutAnswer of `message`, which the server cut at its output limit (finish_reason
    `length`), naming the `max_tokens` `client` (the model client) sent when it sent one."""
    options = getattr(client, "options", None)
    return cut_answer(message, options.get("max_tokens") if isinstance(options, dict) else None)
