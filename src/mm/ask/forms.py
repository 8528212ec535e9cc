"""An asked agent's `elicitation/create` form as ask_user questions, and the answers back as the
form's content (mm-acp.md §elicitation/create requests sent, read from the other side)."""

from __future__ import annotations

from typing import Any

from mm.tools.ask_user.questions import YES, Question


def questions_of(schema: Any, message: str, prefix: str) -> list[tuple[str, Question]]:
    """(property name, question) for each property of the form's `requestedSchema` (a pydantic
    model or a dict), the question's text the property's `title` (else the form's `message`,
    else its name) after `prefix`."""
    data = schema.model_dump(by_alias=True, exclude_none=True) if hasattr(schema, "model_dump") else schema
    properties = data.get("properties") if isinstance(data, dict) else None
    questions = []
    for name, prop in (properties or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        text = prefix + str(prop.get("title") or (message if len(properties) == 1 else "") or name)
        items = prop.get("items") if isinstance(prop.get("items"), dict) else {}
        default = prop.get("default")
        if prop.get("type") == "boolean":
            question = Question(text, "confirm", default=None if default is None else ("yes" if default else "no"))
        elif prop.get("type") == "array" and isinstance(items.get("enum"), list):
            question = Question(text, "multi", [str(o) for o in items["enum"]])
        elif isinstance(prop.get("enum"), list) and len(prop["enum"]) >= 2:
            options = [str(o) for o in prop["enum"]]
            question = Question(text, "choice", options, str(default) if default in options else None)
        else:
            question = Question(text, "text", default=str(default) if isinstance(default, str) else None)
        questions.append((str(name), question))
    return questions


def content_of(questions: list[tuple[str, Question]], answers: list[str]) -> dict[str, Any]:
    """The accepted form's `content`: each answer under its property name, typed as the schema
    asks (a boolean for a confirm, a list for a multi)."""
    return {name: _typed(q, a) for (name, q), a in zip(questions, answers)}


def _typed(question: Question, answer: str) -> Any:
    if question.type == "confirm":
        return answer.strip().lower() in YES
    if question.type == "multi":
        picked = [o for o in question.options if o in [p.strip() for p in answer.split(",")]]
        return picked or [answer]
    return answer
