"""A region indented with the other character than the lines around it — tab-led recipe lines in a
Makefile whose continuation lines use spaces, one tab-indented function in a space-indented module,
and the reverse — keeps its own indentation when old or new is retyped in the neighbours' style
(docs/tools-edit.md §Frames; found by a new user's trial: the recipe lines came out in spaces and
`make` failed with "missing separator")."""

from __future__ import annotations

import pytest

from mm.tools.base import Settings, ToolContext
from mm.tools.edit import EditFile

MAKEFILE = "SRCS = a.c \\\n    b.c \\\n    c.c \\\n    d.c\n\nall: build\n\nbuild:\n\tgcc -o app $(SRCS)\n\techo built\n"
MODULE = ("def a():\n    return 1\n\ndef b():\n    x = 1\n    return x\n\ndef c():\n\ty = 2\n\treturn y\n\n"
          "def d():\n    return 4\n")
TABBED = ("func a() {\n\treturn 1\n}\n\nfunc b() {\n\tx := 1\n\treturn x\n}\n\n"
          "def helper():\n    value = 2\n    return value\n")

CASES = {
    "recipe retyped with four spaces": (
        MAKEFILE, "build:\n    gcc -o app $(SRCS)\n    echo built", "build:\n    gcc -O2 -o app $(SRCS)\n    echo built",
        MAKEFILE.replace("gcc -o", "gcc -O2 -o")),
    "recipe exact, new typed with spaces": (
        MAKEFILE, "build:\n\tgcc -o app $(SRCS)\n\techo built", "build:\n    gcc -g -o app $(SRCS)\n    echo built",
        MAKEFILE.replace("gcc -o", "gcc -g -o")),
    "recipe gains a line": (
        MAKEFILE, "build:\n    gcc -o app $(SRCS)\n    echo built",
        "build:\n    gcc -o app $(SRCS)\n    strip app\n    echo built",
        MAKEFILE.replace("\techo built", "\tstrip app\n\techo built")),
    "tab function among spaces": (
        MODULE, "def c():\n    y = 2\n    return y", "def c():\n    y = 3\n    return y",
        MODULE.replace("\ty = 2", "\ty = 3")),
    "tab function gains a nested block": (
        MODULE, "def c():\n    y = 2\n    return y", "def c():\n    y = 2\n    if y:\n        y += 1\n    return y",
        MODULE.replace("\ty = 2\n", "\ty = 2\n\tif y:\n\t\ty += 1\n")),
    "space function among tabs, retyped with tabs": (
        TABBED, "def helper():\n\tvalue = 2\n\treturn value", "def helper():\n\tvalue = 3\n\treturn value",
        TABBED.replace("value = 2", "value = 3")),
}


@pytest.mark.parametrize("name", list(CASES))
async def test_a_region_keeps_its_own_indentation(tmp_path, name):
    text, old, new, expected = CASES[name]
    path = tmp_path / "Makefile"
    path.write_text(text)
    result = await EditFile().run({"path": "Makefile", "edits": [{"old": old, "new": new}]},
                                  ToolContext(cwd=tmp_path, settings=Settings(max_output=4000)))
    assert not result.failed, result.text
    assert path.read_text() == expected


async def test_a_block_line_is_never_left_between_two_depths(tmp_path):
    """The benchmark's one wrong write over fourteen seeds (go/tabwriter.go, seed 11): `} else {`
    wrapped in `if debug {` typed with 32/40 spaces in a tab-indented file came out as
    `\\t\\t\\t\\t  if debug {` — tabs plus alignment spaces on a block's opener. Refused now."""
    text = "func f() {\n\t\t\t\tif x {\n\t\t\t\t\ta()\n\t\t\t\t} else { // align right\n\t\t\t\t\tb()\n\t\t\t\t}\n}\n"
    path = tmp_path / "t.go"
    path.write_text(text)
    new = " " * 32 + "if debug {\n" + " " * 40 + "} else { // align right\n" + " " * 32 + "}\n"
    result = await EditFile().run({"path": "t.go", "edits": [{"old": "\t\t\t\t} else { // align right\n", "new": new}]},
                                  ToolContext(cwd=tmp_path, settings=Settings(max_output=4000)))
    assert result.failed and "fits those lines in two ways" in result.text
    assert path.read_text() == text
