"""`old` copied exactly with its indentation, `new` sent without any on its first line — what small
models do all the time: the first line continues at old's indentation (docs/tools-edit.md §Frames,
point 5), alone or followed by lines already in the file's frame; when new's other lines may be
relative to that first line or absolute, the edit is refused, never guessed (found by an outside
tester: `return 2` was written at column 0 inside a function)."""

from __future__ import annotations

import pytest

from mm.tools.base import Settings, ToolContext
from mm.tools.edit import EditFile

APPLIED = {
    "one line": ("def f():\n    return 1\n", "    return 1", "return 2", "def f():\n    return 2\n"),
    "one line, newline": ("def f():\n        x = 1\n        y = 2\n", "        x = 1\n", "x = 2\n",
                          "def f():\n        x = 2\n        y = 2\n"),
    "a method's header": ("class A:\n    def f(self):\n        pass\n", "    def f(self):", "def f(self, y):",
                          "class A:\n    def f(self, y):\n        pass\n"),
    "tabs": ("func f() {\n\tx := 1\n}\n", "\tx := 1", "x := 2", "func f() {\n\tx := 2\n}\n"),
    "rest in the file's frame": ("def f():\n        x = 1\n        return x\n", "        x = 1\n        return x",
                                 "x = 2\n        return x", "def f():\n        x = 2\n        return x\n"),
    "an opener, rest deeper in the file's frame": ("def f():\n    if a:\n        b()\n", "    if a:\n        b()",
                                                   "if a:\n        c()", "def f():\n    if a:\n        c()\n"),
}
REFUSED = {
    "rest typed relative to the first line": ("def f():\n    if a:\n        b()\n", "    if a:\n        b()",
                                              "if a:\n    b()"),
    "rest flat": ("def f():\n    x = 1\n    return x\n", "    x = 1\n    return x", "x = 2\nreturn x"),
    "no opener, next line deeper": ("def f():\n    x = 1\n    y = 2\n", "    x = 1\n    y = 2", "x = 2\n        y = 2"),
}


async def edit(tmp_path, text, old, new):
    path = tmp_path / "f.py"
    path.write_text(text)
    result = await EditFile().run({"path": "f.py", "edits": [{"old": old, "new": new}]},
                                  ToolContext(cwd=tmp_path, settings=Settings(max_output=4000)))
    return result, path.read_text()


@pytest.mark.parametrize("name", list(APPLIED))
async def test_the_first_line_continues_at_olds_indentation(tmp_path, name):
    text, old, new, expected = APPLIED[name]
    result, after = await edit(tmp_path, text, old, new)
    assert not result.failed, result.text
    assert after == expected


@pytest.mark.parametrize("name", list(REFUSED))
async def test_relative_or_absolute_is_refused(tmp_path, name):
    text, old, new = REFUSED[name]
    result, after = await edit(tmp_path, text, old, new)
    assert result.failed and after == text
    assert result.text == ("f.py: edit #1: old starts with its indentation but new's first line has none, and new's "
                           "other lines may be indented from that first line or as the file is — send new with every "
                           "line indented exactly as it must stand in the file")
