"""ask_user_question(question, options): a decision handed back to the user as a picker, drawn
with ask_user's machinery in each front end (mnemo-tools.md, Ask, plan, and delegate;
mnemoai.md §2.10; docs/subagents.md)."""

from __future__ import annotations

import json
import re
from typing import Any

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult

DESCRIPTION = ("Hand a decision back to the user as a picker: one question, 2 to 8 options. The user may also "
               "pick none and write what they want instead.")
MAX_OPTIONS = 8  # the rest are dropped (§2.10)
LABEL_CHARS = 120
QUESTION_CHARS = 400
ESCAPE = "None of these — let's talk about it"
NOTE_QUESTION = "What would you like instead? (optional note)"
NEEDS_QUESTION = "ask_user_question needs a non-empty question: say what the user should decide."
NEEDS_OPTIONS = "ask_user_question needs at least 2 distinct options for the user to pick from."
NOT_INTERACTIVE = ("Cannot ask the user (this session is not interactive). Do NOT ask again — continue with your "
                   "own best judgment, and say which choice you made.")
CHOSE = 'The user chose: "{choice}". Don\'t re-ask — go on with this choice.'
WROTE = 'The user picked none of the options and wrote: "{note}". Reply to what they wrote before going on.'
PICKED_NONE = ("The user picked none of the options (\"" + ESCAPE + "\") and wrote nothing more. Reply to what "
               "they wrote: ask what they have in mind, in your own words, without offering the same options again.")
DISMISSED = ("The user dismissed the question without answering. Do NOT ask again — continue with your own best "
             "judgment.")


def options_of(raw: Any) -> list[str]:
    """The options as labels: a list (of texts, or of dicts with `label`, `text` or `value`) or a
    single text (a JSON list, else one option per line); None entries dropped, white space
    collapsed, duplicates (ignoring case) and the escape row removed, the first MAX_OPTIONS kept,
    each cut to LABEL_CHARS."""
    from mm.text import cut

    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        raw = parsed if isinstance(parsed, list) else raw.splitlines()
    if isinstance(raw, dict):
        raw = [raw]
    labels: list[str] = []
    seen = {ESCAPE.lower()}
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict):
            item = next((item[k] for k in ("label", "text", "value") if item.get(k) is not None), None)
        if item is None or isinstance(item, (list, dict)):
            continue
        label = cut(" ".join(str(item).split()), LABEL_CHARS)
        if label and label.lower() not in seen:
            seen.add(label.lower())
            labels.append(label)
    return labels[:MAX_OPTIONS]


class AskUserQuestion:
    """ask_user_question: kind `other`, never gated (asking changes nothing)."""

    name = "ask_user_question"
    kind: ToolKind = "other"
    description = DESCRIPTION
    needs_permission = False
    params = [
        Param("question", "string", "The decision to make, as one question."),
        Param("options", "array", "2 to 8 short options.", items={"type": "string"}),
    ]

    @staticmethod
    def normalize_arguments(args: Any) -> Any:
        """Options sent as one text, or as objects, become the list of labels before coercion."""
        if isinstance(args, dict) and "options" in args and not (
                isinstance(args["options"], list) and all(isinstance(o, str) for o in args["options"])):
            return {**args, "options": options_of(args["options"])}
        return args

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Ask; the result texts of mnemoai.md §2.10 (a front end that fails counts as a dismissal)."""
        from mm.text import cut
        from mm.tools.ask_user.questions import Question

        question = cut(" ".join(str(args.get("question") or "").split()), QUESTION_CHARS)
        if not question:
            return ToolResult(NEEDS_QUESTION, failed=True)
        options = options_of(args.get("options"))
        if len(options) < 2:
            return ToolResult(NEEDS_OPTIONS, failed=True)
        ask = getattr(ctx.interaction, "ask_user", None)
        if ask is None:
            return ToolResult(NOT_INTERACTIVE, failed=True)
        try:
            outcome = await ask([Question(question, "choice", [*options, ESCAPE])])
        except Exception:  # the picker failed: a dismissal (§2.10)
            return ToolResult(DISMISSED)
        if outcome == "nobody":
            return ToolResult(NOT_INTERACTIVE, failed=True)
        if not isinstance(outcome, list) or not outcome:
            return ToolResult(DISMISSED)
        answer = " ".join(str(outcome[0]).split())
        chosen = next((o for o in options if o.lower() == answer.lower()), None)
        if chosen is not None:
            return ToolResult(CHOSE.format(choice=chosen))
        if answer.lower() != ESCAPE.lower():  # the user's own words instead of an option
            return ToolResult(WROTE.format(note=answer)) if answer else ToolResult(DISMISSED)
        note = await _note(ask)
        return ToolResult(WROTE.format(note=note) if note else PICKED_NONE)


async def _note(ask: Any) -> str:
    """The free-text note after the escape row ("" when none, or when it cannot be asked)."""
    from mm.tools.ask_user.questions import Question

    try:
        outcome = await ask([Question(NOTE_QUESTION, "text", default="")])
    except Exception:
        return ""
    return " ".join(str(outcome[0]).split()) if isinstance(outcome, list) and outcome else ""
