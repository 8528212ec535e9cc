"""The ask_user tool: one to four questions put to the user through the front end (mm-tools.md §ask_user)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult

if TYPE_CHECKING:
    from mm.tools.ask_user.questions import Question

DESCRIPTION = (
    "Ask the user one to four questions and get their answers. Use it when you cannot go on without a "
    "decision or a fact only the user has; do not ask what you can find out with the other tools."
)
QUESTIONS_DESCRIPTION = (
    "1 to 4 questions. Each is an object with: question (the text), type (choice, multi, text or confirm; "
    "choice when options are given, text otherwise), options (a list of at least two strings, for choice and "
    "multi) and default (optional: an option, yes/no, or a text)."
)
ANSWERED = "The user answered:"
ANSWER_LINE = "- {question} → {answer}"
DECLINED = "[the user declined to answer: do not ask the same thing again; go on without it or stop]"
CANCELLED = "[the question was cancelled before the user answered]"
NOBODY = "[the user cannot be asked in this mode: make a reasonable assumption, say which, and go on]"


class AskUser:
    """The ask_user tool: kind `other`, never gated by yolo (asking changes nothing).

    The front end answers through an optional Interaction method
    `async ask_user(questions: list[Question]) -> list[str] | "declined" | "cancelled" | "nobody"`;
    a front end without it cannot ask (one-shot mode), nor one that answers "nobody" (an editor
    that offers neither forms nor dialogs for these questions).
    """

    name = "ask_user"
    kind: ToolKind = "other"
    description = DESCRIPTION
    needs_permission = False
    params = [Param("questions", "array", QUESTIONS_DESCRIPTION, items={"type": "object"})]

    def schema(self) -> dict:
        """The tools[] entry: a question's fields described in words, without `properties`
        (llama.cpp would impose them in alphabetical order; mm-tools.md §ask_user)."""
        questions = {"type": "array", "description": QUESTIONS_DESCRIPTION,
                     "items": {"type": "object", "description": "One question: question, type, options, default."}}
        return {"type": "function", "function": {"name": self.name, "description": self.description, "parameters": {
            "type": "object", "properties": {"questions": questions}, "required": ["questions"]}}}

    @staticmethod
    def normalize_arguments(args: Any) -> Any:
        """A single question sent without the list, or one question object as `questions`, becomes a list."""
        if isinstance(args, dict) and "questions" not in args and "question" in args:
            return {"questions": [args]}
        if isinstance(args, dict) and isinstance(args.get("questions"), dict):
            return {**args, "questions": [args["questions"]]}
        return args

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Ask the questions and return the answers, or the declined, cancelled or nobody text."""
        from mm.tools.ask_user.questions import parse_questions  # on first use: start-up time

        questions = parse_questions(args)
        if isinstance(questions, str):
            return ToolResult(questions, failed=True)
        ask = getattr(ctx.interaction, "ask_user", None)
        if ask is None:
            return ToolResult(NOBODY, failed=True)
        outcome = await ask(questions)
        if outcome == "nobody":
            return ToolResult(NOBODY, failed=True)
        if outcome == "declined":
            return ToolResult(DECLINED, failed=True)
        if outcome == "cancelled" or not isinstance(outcome, list):
            return ToolResult(CANCELLED, failed=True)
        return ToolResult(answered_text(questions, outcome))


def answered_text(questions: list[Question], answers: list[str]) -> str:
    """`The user answered:` then one `- <question> → <answer>` line per question."""
    return "\n".join([ANSWERED] + [ANSWER_LINE.format(question=q.text, answer=a) for q, a in zip(questions, answers)])
