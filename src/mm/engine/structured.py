"""The end of a turn with a structured output (`structuredOutput:`, `--json-schema`;
docs/scripting.md §Structured output): the final answer validated, asked again once.

While tools are declared, the work's requests carry them and no `response_format`: llama.cpp and
ollama turn the schema into a grammar over the whole reply, which leaves no room for a tool call
(or fails to build with the tools' own). A final answer that does not follow the schema is asked
again once, with the problem, without tools and with `response_format`; a server that honours it
can then only answer the schema. With no tool declared, every request carries `response_format`.
Whatever the server did, mm validates the answer itself (mm.answer_schema.read_answer).
"""

from __future__ import annotations

from typing import Any

from mm.answer_schema import ASK_AGAIN, FAILED, read_answer, response_format
from mm.events import Recap, TurnDone


def request_options(schema: dict, tools: list[dict]) -> dict[str, Any]:
    """The request fields a structured output adds: `response_format` when no tool is sent."""
    return {} if tools else {"response_format": response_format(schema)}


def structured_end(history: list[dict], schema: dict, answer: str, recap: Recap,
                   asked_again: bool) -> TurnDone | None:
    """The turn's end for a final `answer` (text): `end_turn` with TurnDone.structured when it
    follows `schema`, an error (FAILED) when it was already asked again; else None, ASK_AGAIN
    appended to `history` (a user-role note) for the request that asks for the answer alone."""
    structured, problem = read_answer(answer, schema)
    if problem is None:
        return TurnDone("end_turn", recap, structured=structured)
    if asked_again:
        return TurnDone("error", recap, error=FAILED.format(problem=problem))
    history.append({"role": "user", "content": ASK_AGAIN.format(problem=problem)})
    return None
