"""ask_user_question (mnemo-tools.md, Ask, plan, and delegate; notes/mnemoai.md §2.10;
docs/subagents.md): option normalisation, the escape row and the free-text note, and every
result text, through the real engine against the scripted model server."""

from __future__ import annotations

import pytest

from harness import RecordingUI, make_conversation
from mm.tools.agents import question as q

AGENTS = {"toolsets": ["core", "agents"]}


class AskingUI(RecordingUI):
    """A front end that answers ask_user's questions from a list (or raises)."""

    def __init__(self, outcomes: list):
        super().__init__()
        self.outcomes, self.questions = list(outcomes), []

    async def ask_user(self, questions: list):
        self.questions.append(questions)
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


async def ask(srv, tmp_path, arguments: dict, ui: RecordingUI) -> str:
    conv = make_conversation(srv.base_url, tmp_path, AGENTS)
    try:
        srv.add_tool_calls([{"name": "ask_user_question", "arguments": arguments}])
        srv.add_reply("ok")
        await conv.run_turn("go", ui)
    finally:
        await conv.close()
    [done] = ui.done_calls()
    return done.result.text


async def test_options_are_normalised_and_the_escape_row_added(scripted_server, tmp_path):
    ui = AskingUI([["a b"]])
    long = " ".join(f"word{i}" for i in range(100))
    options = ["  a \n b ", None, "A B", {"label": "c"}, {"text": "d"}, {"value": "e"}, "f", "g", "h", "i", "j", q.ESCAPE]
    text = await ask(scripted_server, tmp_path, {"question": "  Pick\n one " + long, "options": options}, ui)
    assert text == 'The user chose: "a b". Don\'t re-ask — go on with this choice.'
    [[asked]] = ui.questions
    assert asked.type == "choice" and asked.text == ("Pick one " + long)[:399] + "…" and len(asked.text) == 400
    assert asked.options == ["a b", "c", "d", "e", "f", "g", "h", "i", q.ESCAPE]  # 8 kept, the rest dropped


async def test_a_label_is_cut_to_120_characters(scripted_server, tmp_path):
    long = " ".join(f"w{i}" for i in range(60))
    ui = AskingUI([["b"]])
    await ask(scripted_server, tmp_path, {"question": "Q", "options": [long, "b"]}, ui)
    assert ui.questions[0][0].options[0] == long[:119] + "…"


@pytest.mark.parametrize("options,expected", [
    ('["one", "two"]', ["one", "two"]),
    ("one\ntwo\n", ["one", "two"]),
    ([{"label": "one"}, {"label": "two", "text": "ignored"}], ["one", "two"]),
])
async def test_a_single_text_or_dicts_are_options_too(scripted_server, tmp_path, options, expected):
    ui = AskingUI([["two"]])
    await ask(scripted_server, tmp_path, {"question": "Q", "options": options}, ui)
    assert ui.questions[0][0].options == [*expected, q.ESCAPE]


@pytest.mark.parametrize("arguments,expected", [
    ({"question": " ", "options": ["a", "b"]}, q.NEEDS_QUESTION),
    ({"question": "Q", "options": ["a", "A ", None]}, q.NEEDS_OPTIONS),
    ({"question": "Q", "options": "only one"}, q.NEEDS_OPTIONS),
])
async def test_the_argument_errors(scripted_server, tmp_path, arguments, expected):
    ui = AskingUI([])
    assert await ask(scripted_server, tmp_path, arguments, ui) == expected
    assert ui.questions == []
    assert q.NEEDS_QUESTION.startswith("ask_user_question needs a non-empty question")
    assert q.NEEDS_OPTIONS.startswith("ask_user_question needs at least 2 distinct options")


@pytest.mark.parametrize("outcomes,expected", [
    ([["Blue"]], 'The user chose: "blue". Don\'t re-ask — go on with this choice.'),
    ([["something else entirely"]], 'The user picked none of the options and wrote: "something else entirely". '
                                    "Reply to what they wrote before going on."),
    ([[q.ESCAPE], ["  mauve,\n maybe "]], 'The user picked none of the options and wrote: "mauve, maybe". '
                                          "Reply to what they wrote before going on."),
    ([[q.ESCAPE], [""]], q.PICKED_NONE),
    ([[q.ESCAPE], "declined"], q.PICKED_NONE),
    (["declined"], q.DISMISSED),
    (["cancelled"], q.DISMISSED),
    ([RuntimeError("the picker broke")], q.DISMISSED),
    (["nobody"], q.NOT_INTERACTIVE),
])
async def test_every_result_text(scripted_server, tmp_path, outcomes, expected):
    ui = AskingUI(outcomes)
    assert await ask(scripted_server, tmp_path, {"question": "Colour?", "options": ["red", "blue"]}, ui) == expected
    if len(ui.questions) == 2:  # the free-text note after the escape row
        [note] = ui.questions[1]
        assert (note.text, note.type) == (q.NOTE_QUESTION, "text")


async def test_without_a_picker_the_session_is_not_interactive(scripted_server, tmp_path):
    text = await ask(scripted_server, tmp_path, {"question": "Q", "options": ["a", "b"]}, RecordingUI())
    assert text == q.NOT_INTERACTIVE and "(this session is not interactive)" in text
    assert q.DISMISSED.endswith("Do NOT ask again — continue with your own best judgment.")
    assert q.ESCAPE == "None of these — let's talk about it"
