"""Issue 9, points 1–4: edit_file on realistic small-model mistakes.

A fast, fixed subset of the mutation benchmark (bench/fit/edits.py) through the real tool on
real files, then each rule through the real engine: the scripted model server sends the
edit_file call, the real tool runs on a real file, and the file on disk is checked.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from harness import RecordingUI, make_conversation

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench" / "fit"))

from edits import run_all  # noqa: E402
from kinds import generate  # noqa: E402

SEED, PER_KIND, PYTHON_FILES = 9, 6, 12


@pytest.fixture(scope="module")
def outcomes():
    import asyncio

    return asyncio.run(run_all(generate(SEED, PER_KIND, PYTHON_FILES)))


def test_benchmark_subset_has_every_kind(outcomes):
    kinds = Counter(o.case.kind for o in outcomes)
    assert len(kinds) >= 26 and min(kinds.values()) >= 4, kinds


def test_benchmark_subset_never_writes_a_wrong_file(outcomes):
    wrong = [(o.case.kind, o.case.source, o.case.old, o.case.new) for o in outcomes if o.verdict in ("wrong", "crashed")]
    assert wrong == []


def test_benchmark_subset_refuses_every_misquote(outcomes):
    refuse = [o for o in outcomes if o.case.expected is None]
    assert refuse and all(o.verdict == "correct" for o in refuse)


def test_benchmark_subset_applies_the_fixable_ones(outcomes):
    by_kind: dict[str, Counter] = defaultdict(Counter)
    for o in outcomes:
        if o.case.expected is not None:
            by_kind[o.case.kind][o.verdict] += 1
    correct = sum(c["correct"] for c in by_kind.values())
    total = sum(sum(c.values()) for c in by_kind.values())
    assert correct >= 0.97 * total, dict(by_kind)


# --- each rule through the real engine ---------------------------------------------------

async def _edit_through_engine(server, cwd: Path, name: str, content: str, old: str, new: str):
    """One turn: the model calls edit_file once, then answers; returns (file after, tool result)."""
    (cwd / name).write_bytes(content.encode())
    server.add_tool_calls([{"name": "edit_file", "arguments": {"path": name, "edits": [{"old": old, "new": new}]}}])
    server.add_reply("done")
    conv = make_conversation(server.base_url, cwd)
    ui = RecordingUI()
    await conv.run_turn("edit it", ui)
    (call,) = ui.done_calls()
    return (cwd / name).read_bytes().decode(), call.result


GO = "package p\n\nfunc f(x int) int {\n\tif x > 0 {\n\t\treturn x\n\t}\n\treturn -x\n}\n"


async def test_new_with_old_s_mistake_is_moved_into_the_file_frame(scripted_server, tmp_path):
    old = "    if x > 0 {\n        return x\n    }"
    new = "    if x > 0 {\n        if x > 9 {\n            return 9\n        }\n        return x\n    }"
    after, result = await _edit_through_engine(scripted_server, tmp_path, "f.go", GO, old, new)
    assert after == GO.replace("\t\treturn x\n", "\t\tif x > 9 {\n\t\t\treturn 9\n\t\t}\n\t\treturn x\n")
    assert result.text.split("\n")[0].endswith(" · 1 matched ignoring whitespace")


async def test_new_already_in_the_file_frame_is_not_moved(scripted_server, tmp_path):
    old = "    if x > 0 {\n        return x\n    }"
    new = "\tif x > 0 {\n\t\tif x > 9 {\n\t\t\treturn 9\n\t\t}\n\t\treturn x\n\t}"
    after, _ = await _edit_through_engine(scripted_server, tmp_path, "f.go", GO, old, new)
    assert after == GO.replace("\t\treturn x\n", "\t\tif x > 9 {\n\t\t\treturn 9\n\t\t}\n\t\treturn x\n")


async def test_shifted_block_lands_at_the_file_s_depth(scripted_server, tmp_path):
    py = "class A:\n    def f(self):\n        if self.x:\n            return 1\n        return 2\n"
    old = "      if self.x:\n          return 1\n      return 2"  # shifted -2
    new = "      if self.x:\n          log(1)\n          return 1\n      return 2"
    after, _ = await _edit_through_engine(scripted_server, tmp_path, "a.py", py, old, new)
    assert after == py.replace("            return 1\n", "            log(1)\n            return 1\n")


async def test_identity_keeps_alignment_spaces_exactly(scripted_server, tmp_path):
    js = "function f() {\n  /**\n   * Doc.\n   */\n  return call(a,\n              b);\n}\n"
    old = "  /**\n   * Doc.\n   */\n  return call(a,\n              b);  "  # only trailing whitespace differs
    new = "  /**\n   * Doc, longer.\n   */\n  return call(a,\n              b, c);"
    after, result = await _edit_through_engine(scripted_server, tmp_path, "f.js", js, old, new)
    assert after == "function f() {\n  /**\n   * Doc, longer.\n   */\n  return call(a,\n              b, c);\n}\n"
    assert not result.failed


async def test_alignment_spaces_survive_a_tab_retype(scripted_server, tmp_path):
    c = "int f(void)\n{\n\treturn g(a,\n\t         b);\n}\n"
    old = "    return g(a,\n             b);"  # the tab retyped as four spaces
    new = "    return g(a,\n             b, c);"
    after, _ = await _edit_through_engine(scripted_server, tmp_path, "f.c", c, old, new)
    assert after == "int f(void)\n{\n\treturn g(a,\n\t         b, c);\n}\n"


async def test_unit_comes_from_the_file_not_from_old_and_new(scripted_server, tmp_path):
    # old and new alone would say the unit is 2 (their steps); the file's unit is 4.
    py = "def f():\n    if a:\n        b()\n    c()\n"
    old = "  if a:\n    b()\n  c()"
    new = "  if a:\n    b()\n    if d:\n      e()\n  c()"
    after, _ = await _edit_through_engine(scripted_server, tmp_path, "f.py", py, old, new)
    assert after == "def f():\n    if a:\n        b()\n        if d:\n            e()\n    c()\n"


async def test_frames_that_cannot_be_told_apart_are_refused(scripted_server, tmp_path):
    py = "def f():\n    x = 1\n    return x\n"
    # old is one line typed without its indentation; new's second line is at 4: one level under
    # x (old's frame) or level with it (the file's) — nothing tells which.
    after, result = await _edit_through_engine(scripted_server, tmp_path, "f.py", py, "x = 1", "x = 1\n    y = 2")
    assert after == py
    assert result.failed
    assert "new's indentation fits those lines in two ways" in result.text


@pytest.mark.parametrize("char", ["\u00a0", "\u2007", "\u3000"])
async def test_unicode_spaces_are_characters_not_whitespace(scripted_server, tmp_path, char):
    py = "def f():\n    x = 1\n    return x\n"
    old = f"{char * 4}x = 1\n{char * 4}return x"
    after, result = await _edit_through_engine(scripted_server, tmp_path, "f.py", py, old, "    x = 2\n    return x")
    assert after == py and result.failed
    assert "old text not found" in result.text
    assert "the closest the file comes to it" in result.text


async def test_a_unicode_space_inside_a_line_is_not_forgiven(scripted_server, tmp_path):
    py = "def f():\n    x = 1\n    return x\n"
    after, result = await _edit_through_engine(scripted_server, tmp_path, "f.py", py, "    x =\u00a01", "    x = 2")
    assert after == py and result.failed


async def test_new_never_brings_a_unicode_space_into_the_indentation(scripted_server, tmp_path):
    py = "def f():\n    x = 1\n    return x\n"
    after, result = await _edit_through_engine(scripted_server, tmp_path, "f.py", py, "    x = 1\n",
                                               "    x = 1\n\u00a0\u00a0\u00a0\u00a0y = 2\n")
    assert after == py and result.failed
    assert result.text == ("f.py: edit #1: new's line 2 is indented with no-break space (U+00A0), which the file "
                           "does not use — indent with spaces or tabs as the file does")


@pytest.mark.parametrize("old", [
    "    if x > 0 {\n        return x\n    }\n",   # indent pass
    "\tif x > 0 {\n\t\treturn x\n\t}\n\n",        # edges pass (a trailing blank line)
    "if x > 0 {\n\t\treturn x\n\t}\n",            # exact, begun after the indentation
])
async def test_deleting_lines_loosely_removes_them_with_their_breaks(scripted_server, tmp_path, old):
    after, result = await _edit_through_engine(scripted_server, tmp_path, "f.go", GO, old, "")
    assert after == "package p\n\nfunc f(x int) int {\n\treturn -x\n}\n", result.text


async def test_deleting_the_last_line_keeps_a_file_without_final_newline_so(scripted_server, tmp_path):
    after, _ = await _edit_through_engine(scripted_server, tmp_path, "f.txt", "a\n\tb\n\tc", "    b\n    c", "")
    assert after == "a"


async def test_an_edge_line_break_new_does_not_carry_is_kept(scripted_server, tmp_path):
    after, _ = await _edit_through_engine(scripted_server, tmp_path, "f.txt", "a\nb\nc\n", "\nb\n", "B")
    assert after == "a\nB\nc\n"


async def test_deleting_a_padded_line_does_not_join_its_neighbours(scripted_server, tmp_path):
    after, _ = await _edit_through_engine(scripted_server, tmp_path, "f.txt", "a\nb\nc\n", "\nb\n", "")
    assert after == "a\nc\n"
