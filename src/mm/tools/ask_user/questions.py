"""ask_user's questions: reading what the model sent into plain Question objects (mm-tools.md §ask_user)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_QUESTIONS = 4
NO_QUESTION = "[ask_user: no question — send questions: [{question, type, options}]]"
TOO_MANY = "[ask_user: {n} questions — ask at most 4 at a time]"
NO_TEXT = "[ask_user: question {n} has no text]"
TOO_FEW_OPTIONS = "[ask_user: question {n} is a {type} question — give it at least two options]"
BAD_TYPE = '[ask_user: question {n} has type "{type}" — use choice, multi, text or confirm]'

TYPES = {
    "choice": "choice", "single": "choice", "select": "choice", "radio": "choice", "enum": "choice", "one": "choice",
    "multi": "multi", "multiple": "multi", "multiselect": "multi", "checkbox": "multi", "checkboxes": "multi",
    "many": "multi",
    "text": "text", "input": "text", "string": "text", "free": "text", "freetext": "text",
    "confirm": "confirm", "yesno": "confirm", "yes_no": "confirm", "boolean": "confirm", "bool": "confirm",
    "confirmation": "confirm",
}
YES = ("y", "yes", "o", "oui", "true", "1")
NO = ("n", "no", "non", "false", "0")


@dataclass
class Question:
    """One question: its text, type (choice, multi, text, confirm), options and default (or None)."""

    text: str
    type: str
    options: list[str] = field(default_factory=list)
    default: str | None = None


def parse_questions(args: dict[str, Any]) -> list[Question] | str:
    """The questions of an ask_user call, or the reference's error text (mm-tools.md §ask_user, Errors)."""
    raw = args.get("questions")
    if raw is None and "question" in args:  # a single question sent without the list
        raw = [args]
    if isinstance(raw, (dict, str)):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        return NO_QUESTION
    if len(raw) > MAX_QUESTIONS:
        return TOO_MANY.format(n=len(raw))
    questions = []
    for n, item in enumerate(raw, 1):
        question = _question(n, item)
        if isinstance(question, str):
            return question
        questions.append(question)
    return questions


def _question(n: int, item: Any) -> Question | str:
    if isinstance(item, str):
        item = {"question": item}
    if not isinstance(item, dict):
        return NO_TEXT.format(n=n)
    text = item.get("question") or item.get("text") or item.get("prompt")
    if not isinstance(text, str) or not text.strip():
        return NO_TEXT.format(n=n)
    options = _options(item.get("options"))
    declared = item.get("type")
    if declared is None or (isinstance(declared, str) and not declared.strip()):
        kind = "choice" if options else "text"
    else:
        kind = TYPES.get(str(declared).strip().lower())
        if kind is None:
            return BAD_TYPE.format(n=n, type=declared)
    if kind in ("choice", "multi") and len(options) < 2:
        return TOO_FEW_OPTIONS.format(n=n, type=kind)
    if kind in ("text", "confirm"):
        options = []
    return Question(text.strip(), kind, options, _default(kind, options, item.get("default")))


def _options(raw: Any) -> list[str]:
    """Options trimmed, empty ones and duplicates (ignoring case) dropped, in order."""
    if not isinstance(raw, list):
        return []
    seen: set[str] = set()
    out = []
    for option in raw:
        text = str(option).strip() if option is not None else ""
        if text and text.lower() not in seen:
            seen.add(text.lower())
            out.append(text)
    return out


def _default(kind: str, options: list[str], raw: Any) -> str | None:
    """The default, kept only when it means something for the question's type."""
    if raw is None or kind == "multi":
        return None
    text = str(raw).strip()
    if kind == "choice":
        return next((o for o in options if o.lower() == text.lower()), None)
    if kind == "confirm":
        low = text.lower()
        return "yes" if low in YES else "no" if low in NO else None
    return text or None
