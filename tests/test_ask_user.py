"""ask_user: every row of mm-tools.md §ask_user that line mode and one-shot implement."""

import pytest

from mm.tools.ask_user.answers import read_answer
from mm.tools.ask_user.questions import Question, parse_questions
from mm.tools.ask_user.tool import CANCELLED, DECLINED, NOBODY, AskUser, answered_text
from mm.tools.base import ToolContext


@pytest.mark.parametrize("args,text", [
    ({}, "[ask_user: no question — send questions: [{question, type, options}]]"),
    ({"questions": []}, "[ask_user: no question — send questions: [{question, type, options}]]"),
    ({"questions": ["a", "b", "c", "d", "e"]}, "[ask_user: 5 questions — ask at most 4 at a time]"),
    ({"questions": ["ok", {"question": " "}]}, "[ask_user: question 2 has no text]"),
    ({"questions": [{"question": "Which?", "options": ["a"]}]},
     "[ask_user: question 1 is a choice question — give it at least two options]"),
    ({"questions": [{"question": "Which?", "type": "multi", "options": ["a", "A"]}]},
     "[ask_user: question 1 is a multi question — give it at least two options]"),
    ({"questions": [{"question": "Which?", "type": "dropdown"}]},
     '[ask_user: question 1 has type "dropdown" — use choice, multi, text or confirm]'),
])
def test_errors(args, text):
    assert parse_questions(args) == text


@pytest.mark.parametrize("synonym,kind", [
    ("single", "choice"), ("select", "choice"), ("radio", "choice"), ("enum", "choice"), ("one", "choice"),
    ("multiple", "multi"), ("multiselect", "multi"), ("checkbox", "multi"), ("checkboxes", "multi"),
    ("many", "multi"), ("input", "text"), ("string", "text"), ("free", "text"), ("freetext", "text"),
    ("yesno", "confirm"), ("yes_no", "confirm"), ("boolean", "confirm"), ("bool", "confirm"),
    ("confirmation", "confirm"), ("CHOICE", "choice"),
])
def test_type_synonyms(synonym, kind):
    (q,) = parse_questions({"questions": [{"question": "Q?", "type": synonym, "options": ["a", "b"]}]})
    assert q.type == kind


def test_defaults_and_options():
    choice, multi, text, confirm, plain = parse_questions({"questions": [
        {"question": "Pick", "options": [" tabs ", "spaces", "Tabs", ""], "default": "SPACES"},
        {"question": "Pick many", "type": "multi", "options": ["a", "b"], "default": "a"},
        {"question": "Name?", "default": "mm"},
        {"question": "Sure?", "type": "confirm", "default": "oui", "options": ["x", "y"]},
    ]}) + parse_questions({"question": "Single at the top level?"})
    assert (choice.type, choice.options, choice.default) == ("choice", ["tabs", "spaces"], "spaces")
    assert multi.default is None and text.default == "mm" and text.type == "text"
    assert (confirm.options, confirm.default) == ([], "yes")
    assert plain.text == "Single at the top level?" and plain.type == "text"
    (bad,) = parse_questions({"questions": [{"question": "Pick", "options": ["a", "b"], "default": "c"}]})
    assert bad.default is None


@pytest.mark.parametrize("line,answer", [
    ("2", "spaces"), ("Tabs", "tabs"), ("sp", "spaces"), ("mixed", "mixed"), ("", None),
    ("t", "t"),  # the start of two options ("tabs", "two tabs"): taken as the user's own answer
])
def test_choice_answers(line, answer):
    assert read_answer(Question("Pick", "choice", ["tabs", "spaces", "two tabs"]), line) == answer


def test_multi_confirm_text_answers():
    multi = Question("Pick", "multi", ["a", "b", "c"])
    assert read_answer(multi, "1, 3") == "a, c" and read_answer(multi, "3;1 2") == "c, a, b"
    assert read_answer(multi, "4") is None and read_answer(multi, "a") is None
    confirm = Question("Sure?", "confirm", [], "no")
    for word in ("y", "yes", "o", "oui", "true", "1", "YES"):
        assert read_answer(confirm, word) == "yes"
    for word in ("n", "no", "non", "false", "0"):
        assert read_answer(confirm, word) == "no"
    assert read_answer(confirm, "maybe") is None and read_answer(confirm, "") == "no"
    assert read_answer(Question("Name?", "text"), "  Ada ") == "Ada"


def test_answered_text_and_schema_without_properties():
    qs = [Question("Pick", "multi", ["a", "b"]), Question("Sure?", "confirm")]
    assert answered_text(qs, ["a, b", "yes"]) == "The user answered:\n- Pick → a, b\n- Sure? → yes"
    items = AskUser().schema()["function"]["parameters"]["properties"]["questions"]["items"]
    assert "properties" not in items


class Asker:
    def __init__(self, outcome):
        self.outcome = outcome

    async def ask_user(self, questions):
        return self.outcome


@pytest.mark.parametrize("interaction,text", [
    (None, NOBODY), (Asker("declined"), DECLINED), (Asker("cancelled"), CANCELLED),
    (Asker(["x"]), "The user answered:\n- Q? → x"),
])
async def test_results(tmp_path, interaction, text):
    result = await AskUser().run({"questions": [{"question": "Q?"}]}, ToolContext(cwd=tmp_path, interaction=interaction))
    assert result.text == text and result.failed == (not text.startswith("The user"))
