"""ask_user in the editor: an `elicitation/create` form, or one permission dialog per question
(mm-acp.md §elicitation/create requests sent; mm-tools.md §ask_user, Editor (ACP))."""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from mm.tools.ask_user.questions import NO, YES, Question

MANY_QUESTIONS = "The agent has {n} questions for you."
SCOPE_META = "mm.elicitationScope"
DECLINE_OPTION = {"optionId": "decline", "name": "Decline", "kind": "reject_once"}
CONFIRM_NAMES = ("Yes", "No")
NO_ANSWER = "(no answer)"

Request = Callable[[str, dict], Awaitable[Any]]  # sends a JSON-RPC request, returns its result, raises on error


def form_request(session_id: str, tool_call_id: str, questions: list[Question]) -> dict[str, Any]:
    """The `elicitation/create` params for `questions`: properties `q1`, `q2`… all required."""
    properties = {f"q{n}": _property(q) for n, q in enumerate(questions, 1)}
    message = questions[0].text if len(questions) == 1 else MANY_QUESTIONS.format(n=len(questions))
    scope = {"sessionId": session_id, "toolCallId": tool_call_id}
    return {"sessionId": session_id, "toolCallId": tool_call_id, "mode": "form", "message": message,
            "requestedSchema": {"type": "object", "properties": properties, "required": list(properties)},
            "_meta": {SCOPE_META: scope}}


def _property(question: Question) -> dict[str, Any]:
    prop: dict[str, Any]
    if question.type == "choice":
        prop = {"type": "string", "title": question.text, "enum": list(question.options)}
    elif question.type == "multi":
        prop = {"type": "array", "title": question.text, "items": {"type": "string", "enum": list(question.options)}}
    elif question.type == "confirm":
        prop = {"type": "boolean", "title": question.text}
    else:
        prop = {"type": "string", "title": question.text}
    if question.default is not None:
        prop["default"] = _confirmed(question.default) if question.type == "confirm" else question.default
    return prop


def answers_from_form(questions: list[Question], content: Any) -> list[str]:
    """The answers an accepted form carries in `content`, by property name (a string, a list of
    strings, or a boolean); a missing one takes the question's default."""
    content = content if isinstance(content, dict) else {}
    return [_answer(question, content.get(f"q{n}")) for n, question in enumerate(questions, 1)]


def _answer(question: Question, value: Any) -> str:
    """One property's value as the answer text: a confirm reads a boolean (or a yes/no word), a
    multi a list (or one string); what does not fit takes the default, else NO_ANSWER."""
    fallback = question.default if question.default is not None else NO_ANSWER
    if question.type == "confirm":
        word = str(value).strip().lower() if isinstance(value, (str, int)) and not isinstance(value, bool) else None
        if isinstance(value, bool) or word in YES or word in NO:
            return "yes" if value is True or word in YES else "no"
        return _confirmed_text(question.default) if question.default is not None else NO_ANSWER
    if isinstance(value, list):
        picked = [str(v) for v in value if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
        return ", ".join(picked) if picked else fallback
    if value is None or value == "" or isinstance(value, (dict, bool)):
        return fallback
    return str(value)


def _confirmed_text(default: str) -> str:
    return "yes" if _confirmed(default) else "no"


async def ask_with_form(request: Request, session_id: str, tool_call_id: str,
                        questions: list[Question]) -> list[str] | str:
    """Put `questions` as one form; returns the answers, "declined", "cancelled" or "nobody"
    (an error response)."""
    try:
        result = await request("elicitation/create", form_request(session_id, tool_call_id, questions))
    except Exception:  # an error response, or the client gone: nobody can be asked
        return "nobody"
    action = result.get("action") if isinstance(result, dict) else None
    if action == "accept":
        return answers_from_form(questions, result.get("content"))
    if action == "decline":
        return "declined"
    return "cancelled"


def can_ask_with_dialogs(questions: list[Question]) -> bool:
    """Without form support, only `choice` and `confirm` questions can become dialogs."""
    return all(q.type in ("choice", "confirm") for q in questions)


def dialog_options(question: Question) -> list[dict[str, str]]:
    """The buttons of one question's dialog: `0`, `1`… named after the choices (`Yes`/`No` for a
    confirm), then `decline`."""
    return [{"optionId": str(i), "name": name, "kind": "allow_once"}
            for i, name in enumerate(_dialog_names(question))] + [DECLINE_OPTION]


def _dialog_names(question: Question) -> list[str] | tuple[str, ...]:
    """The choices a dialog's buttons stand for: the options, or `Yes`/`No` for a confirm."""
    return CONFIRM_NAMES if question.type == "confirm" else question.options


async def ask_with_dialogs(request: Request, session_id: str, tool_call_id: str,
                           questions: list[Question]) -> list[str] | str:
    """One `session/request_permission` per question (title `? <question>`, kind `other`);
    returns the answers, "declined", "cancelled" or "nobody" (an error response)."""
    answers = []
    for question in questions:
        params = {"sessionId": session_id, "options": dialog_options(question),
                  "toolCall": {"toolCallId": tool_call_id, "title": f"? {question.text}", "kind": "other"}}
        try:
            result = await request("session/request_permission", params)
        except Exception:  # an error response, or the client gone: nobody can be asked
            return "nobody"
        outcome = result.get("outcome") if isinstance(result, dict) else None
        picked = outcome.get("optionId") if isinstance(outcome, dict) and outcome.get("outcome") == "selected" else None
        if picked == "decline":
            return "declined"
        names = _dialog_names(question)
        if not (isinstance(picked, str) and picked.isdigit() and int(picked) < len(names)):
            return "cancelled"
        chosen = names[int(picked)]
        answers.append(chosen.lower() if question.type == "confirm" else chosen)
    return answers


def _confirmed(default: str) -> bool:
    low = default.strip().lower()
    return low in YES or (low not in NO and bool(low))

