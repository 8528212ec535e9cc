"""An edit written in the answer's text is not the end of the task (docs/engine.md §Edits written
in the answer): through a real conversation, the scripted server, real files and real tools."""

import pytest

from harness import RecordingUI, make_conversation, write_files
from mm.engine.loops import LOOP_DETECTED
from mm.engine.textedit import EDIT_IN_TEXT_NOTE

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
FIXED = CALC.replace("a - b", "a + b")

SEARCH_REPLACE = """I fixed the bug in calc.py:

calc.py
```python
<<<<<<< SEARCH
    return a - b
=======
    return a + b
>>>>>>> REPLACE
```
"""
DIFF = """Apply this change:

```diff
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
```
"""
PATCH = """*** Begin Patch
*** Update File: calc.py
@@ def add(a, b):
-    return a - b
+    return a + b
*** End Patch
"""
UPDATED = "Here is the updated `calc.py`:\n\n```python\n" + FIXED + "```\n\nThat fixes `add`."
WHOLE_FILE = "src/calc.py\n```\n" + FIXED + "```\n"
INFO_STRING = "```python:calc.py\n" + FIXED + "```\n"


def note(what: str) -> dict:
    return {"role": "user", "content": EDIT_IN_TEXT_NOTE.format(what=what)}


def test_the_note_text():
    assert EDIT_IN_TEXT_NOTE.format(what="a diff of calc.py") == (
        "[mm: your answer holds a diff of calc.py, but no file was changed: an edit written in an answer is not "
        "applied. If the task is to change files, make the change now with edit_file (write_file for a whole "
        "file); if the user only asked to see it, answer in one line]")


@pytest.mark.parametrize("answer, what", [
    (SEARCH_REPLACE, "SEARCH/REPLACE blocks"),
    (DIFF, "a diff of calc.py"),
    (PATCH, "a patch for calc.py"),
    (UPDATED, "new content for calc.py"),
    (INFO_STRING, "new content for calc.py"),
], ids=["search-replace", "unified-diff", "codex-patch", "updated-file", "path-in-info-string"])
async def test_an_edit_in_the_text_gets_a_note_and_the_turn_goes_on(answer, what, scripted_server, tmp_path):
    write_files(tmp_path, {"calc.py": CALC})
    scripted_server.add_reply(answer)
    scripted_server.add_tool_calls([{"name": "edit_file", "arguments": {
        "path": "calc.py", "old": "return a - b", "new": "return a + b"}}])
    scripted_server.add_reply("Fixed: add now adds.")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    done = await conv.run_turn("fix add in calc.py", RecordingUI())
    assert done.stop_reason == "end_turn"
    assert len(scripted_server.requests) == 3
    sent = scripted_server.requests[1]["messages"]
    assert sent[-2:] == [{"role": "assistant", "content": answer}, note(what)]
    assert (tmp_path / "calc.py").read_text() == FIXED
    assert conv.history[-1] == {"role": "assistant", "content": "Fixed: add now adds."}


async def test_a_lone_path_line_before_a_fence_presents_the_file(scripted_server, tmp_path):
    write_files(tmp_path, {"src/calc.py": CALC})
    scripted_server.add_reply(WHOLE_FILE)
    scripted_server.add_tool_calls([{"name": "write_file", "arguments": {"path": "src/calc.py", "content": FIXED}}])
    scripted_server.add_reply("Written.")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    assert (await conv.run_turn("fix add", RecordingUI())).stop_reason == "end_turn"
    assert scripted_server.requests[1]["messages"][-1] == note("new content for src/calc.py")
    assert (tmp_path / "src/calc.py").read_text() == FIXED


async def test_once_per_turn_the_second_edit_in_text_ends_the_turn(scripted_server, tmp_path):
    write_files(tmp_path, {"calc.py": CALC})
    scripted_server.add_reply(DIFF)
    scripted_server.add_reply(SEARCH_REPLACE)
    conv = make_conversation(scripted_server.base_url, tmp_path)
    done = await conv.run_turn("fix add", RecordingUI())
    assert done.stop_reason == "end_turn" and done.error is None
    assert len(scripted_server.requests) == 2
    assert [m["content"] for m in conv.history if m["role"] == "user"] == [
        "fix add", EDIT_IN_TEXT_NOTE.format(what="a diff of calc.py")]
    assert conv.history[-1] == {"role": "assistant", "content": SEARCH_REPLACE}
    assert (tmp_path / "calc.py").read_text() == CALC
    scripted_server.add_reply(DIFF)  # a new turn: the note is given again
    scripted_server.add_reply("ok")
    await conv.run_turn("again", RecordingUI())
    assert scripted_server.requests[-1]["messages"][-1] == note("a diff of calc.py")


async def test_the_note_counts_for_the_loop_detector(scripted_server, tmp_path):
    """The note is recorded as a call: the same edit written in the answer, turn after turn with
    nothing else between, gets LOOP_DETECTED at the third time."""
    write_files(tmp_path, {"calc.py": CALC})
    conv = make_conversation(scripted_server.base_url, tmp_path)
    for _ in range(3):
        scripted_server.add_reply(DIFF)
        scripted_server.add_reply("I will not.")
        await conv.run_turn("fix add", RecordingUI())
    notes = [r["messages"][-1]["content"] for r in scripted_server.requests[1::2]]
    plain = EDIT_IN_TEXT_NOTE.format(what="a diff of calc.py")
    assert notes == [plain, plain, f"{plain}\n{LOOP_DETECTED}"]


ORDINARY = {
    "code example": "Use a list comprehension:\n\n```python\nsquares = [x * x for x in range(10)]\n```\n",
    "excerpt of calc.py": "The bug is here, in `calc.py`:\n\n```python\ndef add(a, b):\n    return a - b\n```\n"
                          "It subtracts. Shall I fix it?",
    "updated words, file absent": "Here is the updated `missing.py`:\n\n```python\nprint('hi')\n```\n",
    "the file as it now is": "Done. The updated `calc.py` now reads:\n\n```python\n" + FIXED + "```\n",
    "a diff already applied": DIFF.replace("Apply this change", "I made this change"),
    "a diff of a file outside": DIFF.replace("calc.py", "../outside.py"),
    "a diff without hunk": "--- a/calc.py\n+++ b/calc.py\nno hunk here\n",
    "merge conflict markers": "Resolve it:\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> topic\n",
    "shell command": "Run the tests for `calc.py` with:\n\n```bash\npytest -q test_calc.py\n```\n",
}


@pytest.mark.parametrize("kind", ORDINARY)
async def test_an_ordinary_answer_with_code_ends_the_turn(kind, scripted_server, tmp_path):
    answer = ORDINARY[kind]
    made = kind in ("the file as it now is", "a diff already applied")
    write_files(tmp_path / "work", {"calc.py": FIXED if made else CALC})
    write_files(tmp_path, {"outside.py": "x = 1\n"})
    scripted_server.add_reply(answer)
    conv = make_conversation(scripted_server.base_url, tmp_path / "work")
    done = await conv.run_turn("look at calc.py", RecordingUI())
    assert done.stop_reason == "end_turn"
    assert len(scripted_server.requests) == 1
    assert conv.history[-1] == {"role": "assistant", "content": answer}


async def test_no_note_without_a_file_tool(scripted_server, tmp_path):
    write_files(tmp_path, {"calc.py": CALC})
    scripted_server.add_reply(DIFF)
    conv = make_conversation(scripted_server.base_url, tmp_path, {"editTools": False})
    assert (await conv.run_turn("fix add", RecordingUI())).stop_reason == "end_turn"
    assert len(scripted_server.requests) == 1


MUL_HUNK = "@@ -5,2 +5,2 @@\n def mul(a, b):\n-    return a * b\n+    return a * b * 1\n"
TWO_HUNKS = DIFF.replace("+    return a + b\n", "+    return a + b\n" + MUL_HUNK)


@pytest.mark.parametrize("applied, noted", [(0, True), (1, True), (2, False)])
async def test_a_diff_is_an_edit_while_one_of_its_hunks_is_not_applied(applied, noted, scripted_server, tmp_path):
    content = [CALC, FIXED, FIXED.replace("a * b", "a * b * 1")][applied]
    write_files(tmp_path, {"calc.py": content})
    scripted_server.add_reply(TWO_HUNKS)
    scripted_server.add_reply("ok")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    await conv.run_turn("fix calc.py", RecordingUI())
    assert len(scripted_server.requests) == (2 if noted else 1)
