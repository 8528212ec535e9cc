"""ask_user in line mode: each question in turn at the prompt (mm-tools.md §ask_user, Line mode)."""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from mm.tools.ask_user.answers import SKIP, hint, read_answer
from mm.tools.ask_user.questions import Question
from mm.ui.line.keys import EscapePressed

STOPS = ("/abort", "/quit", "/exit")  # slash commands that stop the turn and cancel the question
ANSWER_PROMPT = "  ? "
DEFAULT_LINE = "  default: {default}"  # under a confirm or text question (a choice marks its option)


async def ask_in_line_mode(questions: list[Question], prompt: Callable[[str], Any], say: Callable[[str], None],
                           stop: Callable[[str], None],
                           command: Callable[[str], Awaitable[str | None]] | None = None) -> list[str] | str:
    """Ask `questions` one by one; return the answers, "declined" (/skip, Esc) or "cancelled".

    The `❓ ask_user: N question(s)` line is the tool call's own header, shown before this.

    `prompt(text)` reads one line (awaitable; raises EscapePressed for Esc, KeyboardInterrupt for
    Ctrl-C, EOFError at end of input), `say(line)` prints, `stop(command)` is told of /abort or
    /quit (it stops the turn). `command(line)`: the text a line-mode command answers (/usage…,
    mm.ui.line.commands.question_command), or None when the line is no command — "other slash
    commands keep their meaning" (mm-tools.md §ask_user, Line mode): its text is shown, then the
    question again. An empty line takes the default, else asks again; a line that does not answer
    prints the hint again. The commands are matched without regard to case. Esc declines the
    whole form, as `/skip` does (the window's rule, mm-tools.md §ask_user; docs/line-mode.md);
    Ctrl-C or end of input cancels it and stops the turn.
    """
    answers: list[str] = []
    for question in questions:
        _show(question, say)
        while True:
            try:
                line = await prompt(ANSWER_PROMPT)
            except EscapePressed:
                return "declined"
            except (EOFError, KeyboardInterrupt):
                stop("/abort")
                return "cancelled"
            word = line.strip().lower()
            if word == SKIP:
                return "declined"
            if word in STOPS:
                stop(word)
                return "cancelled"
            shown = await command(line) if command is not None and word.startswith("/") else None
            if shown is not None:
                say(shown)
                _show(question, say)
                continue
            answer = read_answer(question, line)
            if answer is not None:
                answers.append(answer)
                break
            say(hint(question))
    return answers


def _show(question: Question, say: Callable[[str], None]) -> None:
    """The question, its options (the default marked), the default of a confirm or text question,
    and the hint."""
    say(f"❓ {question.text}")
    for n, option in enumerate(question.options, 1):
        say(f"  {n}. {option}" + (" (default)" if option == question.default else ""))
    if question.type in ("confirm", "text") and question.default:
        say(DEFAULT_LINE.format(default=question.default))
    say(hint(question))
