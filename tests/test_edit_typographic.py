"""An `old` typed with curly quotes, dashes or Unicode spaces is refused (never matched), and the
refusal names those characters: the excerpt it shows looks the same to a small model, so the
character is what it needs to be told (found by a new user's trial)."""

from __future__ import annotations

import pytest

from mm.tools.base import Settings, ToolContext
from mm.tools.edit import EditFile

FILE = "def greet(name):\n    say('hello ' + name)\n    say(\"bye - now\")\n    return name\n"


@pytest.mark.parametrize("old, named", [
    ("def greet(name):\n    say(\u2018hello \u2019 + name)", "'‘' (U+2018), '’' (U+2019) where the file has none — type \"'\" as the file does"),
    ("say(\u201cbye \u2014 now\u201d)", "'—' (U+2014), '“' (U+201C), '”' (U+201D) where the file has none — type '-', '\"' as the file does"),
    ("def greet(name):\n    say('hello '\u00a0+ name)\n    return name", "'\\xa0' (U+00A0) where the file has none — type a plain space as the file does"),
])
async def test_the_refusal_names_the_typographic_characters(tmp_path, old, named):
    path = tmp_path / "m.py"
    path.write_text(FILE)
    result = await EditFile().run({"path": "m.py", "edits": [{"old": old, "new": "x"}]},
                                  ToolContext(cwd=tmp_path, settings=Settings(max_output=4000)))
    assert result.failed
    assert result.text.splitlines()[-1] == "old has " + named
    assert path.read_text() == FILE


async def test_characters_the_file_has_too_are_not_named(tmp_path):
    (tmp_path / "m.py").write_text("title = \u201cquoted\u201d\nother = 1\n")
    result = await EditFile().run({"path": "m.py", "edits": [{"old": "title = \u201cquote\u201d\nother = 2", "new": "x"}]},
                                  ToolContext(cwd=tmp_path, settings=Settings(max_output=4000)))
    assert result.failed and "where the file has none" not in result.text
