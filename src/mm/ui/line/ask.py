"""ask_user in line mode: each question in turn at the prompt (mm-tools.md §ask_user, Line mode)."""

from __future__ import annotations

from typing import Any, Callable

from mm.tools.ask_user.answers import SKIP, hint, read_answer
from mm.tools.ask_user.questions import Question
from mm.ui.line.keys import EscapePressed

STOPS = ("/abort", "/quit", "/exit")  # slash commands that stop the turn and cancel the question
ANSWER_PROMPT = "  ? "


async def ask_in_line_mode(questions: list[Question], prompt: Callable[[str], Any], say: Callable[[str], None],
                           stop: Callable[[str], None]) -> list[str] | str:
    """Ask `questions` one by one; return the answers, "declined" (/skip, Esc) or "cancelled".

    The `❓ ask_user: N question(s)` line is the tool call's own header, shown before this.

    `prompt(text)` reads one line (awaitable; raises EscapePressed for Esc, KeyboardInterrupt for
    Ctrl-C, EOFError at end of input), `say(line)` prints, `stop(command)` is told of /abort or
    /quit (it stops the turn). An empty line takes the default, else asks again; a line that does
    not answer prints the hint again. Esc declines the whole form, as `/skip` does (the window's
    rule, mm-tools.md §ask_user; docs/line-mode.md); Ctrl-C or end of input cancels it and stops
    the turn.
    """
    answers: list[str] = []
    for question in questions:
        say(f"❓ {question.text}")
        for n, option in enumerate(question.options, 1):
            say(f"  {n}. {option}" + (" (default)" if option == question.default else ""))
        if question.type == "confirm" and question.default:
            say(f"  default: {question.default}")
        say(hint(question))
        while True:
            try:
                line = await prompt(ANSWER_PROMPT)
            except EscapePressed:
                return "declined"
            except (EOFError, KeyboardInterrupt):
                stop("/abort")
                return "cancelled"
            command = line.strip().lower()
            if command == SKIP:
                return "declined"
            if command in STOPS:
                stop(command)
                return "cancelled"
            answer = read_answer(question, line)
            if answer is not None:
                answers.append(answer)
                break
            say(hint(question))
    return answers
