"""The JSON Schema the final answer must follow: `structuredOutput:` in the agent file, or
`mm -p --json-schema FILE` (docs/scripting.md §Structured output, docs/configuration.md).

The schema is checked when the configuration is read (NOT_A_SCHEMA, a configuration error),
told to the model in the system prompt (SYSTEM_NOTE), sent as `response_format` when no tool
can be called (the answer asked again; every request when no tool is declared), and every final
answer is validated here whatever the server did: a server may accept `response_format` and
still return something else. The `jsonschema` library is imported only when a schema is in effect.
"""

from __future__ import annotations

import json
import re
from typing import Any

NOT_A_SCHEMA = "not a valid JSON Schema: {problem}"
NOT_AN_OBJECT = "a JSON Schema is a mapping of keywords (type, properties…), not {what}"
SYSTEM_NOTE = (
    "\n\nYour final answer is read by a program: once the work is done, answer with one JSON value that follows "
    "this JSON Schema, and nothing before or after it (no prose, no code fence):\n{schema}"
)
ASK_AGAIN = (
    "[mm: your answer does not follow the JSON Schema it must follow: {problem}. Answer again with the JSON value "
    "alone, nothing before or after it]"
)
FAILED = "[error: the answer does not follow the JSON Schema of the structured output, asked twice: {problem}]"
NOT_JSON = "it is not JSON ({error})"
EMPTY = "it is empty"
AT = "{message} (at {path})"
PROBLEM_LIMIT = 300  # characters of a validation problem (its message quotes the value)
RESPONSE_FORMAT_NAME = "answer"  # response_format.json_schema.name, which OpenAI requires
_FENCE = re.compile(r"\A```[A-Za-z0-9_+-]*[ \t]*\n(.*?)\n?```\Z", re.S)


def schema_problem(schema: Any) -> str | None:
    """NOT_A_SCHEMA (or NOT_AN_OBJECT) when `schema` is not a valid JSON Schema under its own
    `$schema` dialect (Draft 2020-12 when none is named), else None. One line."""
    from mm.text import one_line

    if not isinstance(schema, dict):
        return NOT_AN_OBJECT.format(what=f"a {type(schema).__name__}")
    from jsonschema import SchemaError
    from jsonschema.validators import validator_for

    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as err:
        return NOT_A_SCHEMA.format(problem=one_line(_located(err), PROBLEM_LIMIT))
    return None


def system_note(schema: dict) -> str:
    """The paragraph the system prompt ends with: SYSTEM_NOTE with the schema as compact JSON."""
    return SYSTEM_NOTE.format(schema=json.dumps(schema, ensure_ascii=False, separators=(",", ":")))


def response_format(schema: dict) -> dict:
    """The request's `response_format` (OpenAI's, which llama.cpp, ollama, LM Studio and vLLM read):
    `{"type": "json_schema", "json_schema": {"name": "answer", "schema": …}}`."""
    return {"type": "json_schema", "json_schema": {"name": RESPONSE_FORMAT_NAME, "schema": schema}}


def read_answer(text: str, schema: dict) -> tuple[str | None, str | None]:
    """Read a final answer against `schema`: (the JSON as mm prints it — one line, keys in the
    answer's order —, None) when it follows the schema, else (None, the problem: EMPTY, NOT_JSON,
    or the validation error AT its place). The answer is the whole text, or the inside of one
    code fence that is the whole text (```json … ```); outer blanks do not count."""
    from mm.text import one_line

    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    if not body:
        return None, EMPTY
    try:
        value = json.loads(body, parse_constant=_not_json)
    except (ValueError, RecursionError) as err:
        return None, NOT_JSON.format(error=one_line(str(err), 120))
    problem = _validation_problem(value, schema)
    if problem is not None:
        return None, one_line(problem, PROBLEM_LIMIT)
    return json.dumps(value, ensure_ascii=False), None


def _validation_problem(value: Any, schema: dict) -> str | None:
    """The best-matching validation error of `value` (jsonschema's best_match), None when valid."""
    from jsonschema.exceptions import best_match
    from jsonschema.validators import validator_for

    try:
        error = best_match(validator_for(schema)(schema).iter_errors(value))
    except Exception as err:  # a $ref that cannot be resolved, say: the schema itself is at fault
        return NOT_A_SCHEMA.format(problem=f"{type(err).__name__}: {err}")
    return _located(error) if error is not None else None


def _located(error: Any) -> str:
    """A jsonschema error's message, with where it is (`$.items[0].name`) when not at the root."""
    path = getattr(error, "json_path", "$")
    return error.message if path == "$" else AT.format(message=error.message, path=path)


def _not_json(constant: str) -> Any:
    """NaN, Infinity and -Infinity are Python's, not JSON's."""
    raise ValueError(f"{constant} is not a JSON value")
