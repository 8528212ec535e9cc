"""edit_file beyond the shared cases: exact messages, tolerance, re-indentation, line endings,
file modes, large files, truncation, and properties (mm-tools.md §edit_file)."""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from mm.tools.base import Settings, ToolContext
from mm.tools.edit import EditFile
from mm.tools.edit.reindent import detect_unit


async def edit(tmp_path: Path, content: str | bytes | None, args: dict, name: str = "f.txt", **conf):
    """Write `content` to `name`, run edit_file with `args` (path added), return (result, bytes after)."""
    target = tmp_path / name
    if content is not None:
        target.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    result = await EditFile().run({"path": name, **args}, ToolContext(cwd=tmp_path, settings=Settings(**conf)))
    return result, (target.read_bytes() if target.is_file() else None)


def one(old: str, new: str, **extra) -> dict:
    return {"edits": [{"old": old, "new": new}], **extra}


# --- declaration ---------------------------------------------------------------------------

def test_declaration():
    tool = EditFile()
    assert (tool.name, tool.kind, tool.needs_permission) == ("edit_file", "edit", True)
    assert [p.name for p in tool.params] == ["path", "edits", "dry_run"]
    assert [p.required for p in tool.params] == [True, True, False]
    assert tool.params[1].items["required"] == ["old", "new"]


# --- headlines and diffs -------------------------------------------------------------------

async def test_headline_and_numbered_diff_exact_text(tmp_path):
    result, after = await edit(tmp_path, "a\nb\nc\n", one("b", "B"))
    assert after == b"a\nB\nc\n"
    assert result.text == (
        "f.txt: 1 edit applied · +1 -1 lines · first change at line 2\n"
        "@@ -1,3 +1,3 @@\n"
        " 1 │ a\n"
        "-2 │ b\n"
        "+2 │ B\n"
        " 3 │ c"
    )


async def test_relaxed_headline_ends_with_count(tmp_path):
    content = "func a() {\n\tx := 1\n\ty := 2\n}\n"
    args = {"edits": [{"old": "    x := 1\n    y := 2", "new": "    x := 10\n    y := 20"},
                      {"old": "func a() {", "new": "func b() {"}]}
    result, after = await edit(tmp_path, content, args)
    assert after == b"func b() {\n\tx := 10\n\ty := 20\n}\n"
    assert result.text.split("\n")[0] == (
        "f.txt: 2 edits applied · +3 -3 lines · first change at line 1 · 1 matched ignoring whitespace")


async def test_dry_run_headline_and_nothing_written(tmp_path):
    result, after = await edit(tmp_path, "    x = 1\n", one("x = 1", "x = 2", dry_run="true"))
    assert after == b"    x = 1\n"
    assert result.change is None and not result.failed
    assert result.text.split("\n")[0] == (
        "f.txt: dry run, nothing written — 1 edit would apply · +1 -1 lines · first change at line 1")


async def test_far_apart_edits_make_two_hunks(tmp_path):
    content = "".join(f"line {i}\n" for i in range(1, 31))
    result, _ = await edit(tmp_path, content, {"edits": [{"old": "line 2\n", "new": "two\n"},
                                                         {"old": "line 29\n", "new": ""}]})
    assert result.text == (
        "f.txt: 2 edits applied · +1 -2 lines · first change at line 2\n"
        "@@ -1,5 +1,5 @@\n"
        "  1 │ line 1\n"
        "- 2 │ line 2\n"
        "+ 2 │ two\n"
        "  3 │ line 3\n"
        "  4 │ line 4\n"
        "  5 │ line 5\n"
        "@@ -26,5 +26,4 @@\n"
        " 26 │ line 26\n"
        " 27 │ line 27\n"
        " 28 │ line 28\n"
        "-29 │ line 29\n"
        " 29 │ line 30"
    )


async def test_two_edits_on_one_line(tmp_path):
    result, after = await edit(tmp_path, "a = b + c\nz\n", {"edits": [{"old": "a =", "new": "A ="},
                                                                       {"old": "+ c", "new": "+ C"}]})
    assert after == b"A = b + C\nz\n"
    assert "-1 │ a = b + c\n+1 │ A = b + C\n 2 │ z" in result.text


async def test_edit_joining_lines_diffs_correctly(tmp_path):
    result, after = await edit(tmp_path, "a\nb\nc\nd\n", one("b\nc", "B c"))
    assert after == b"a\nB c\nd\n"
    assert "+1 -2 lines" in result.text
    assert "-2 │ b\n-3 │ c\n+2 │ B c\n 3 │ d" in result.text


# --- refusals, word for word ---------------------------------------------------------------

async def test_ambiguous_lists_at_most_ten_lines(tmp_path):
    result, _ = await edit(tmp_path, "x\n" * 12, one("x", "y"))
    assert result.text == (
        "f.txt: edit #1: old text appears 12 times (lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …) — to change ONE "
        "of them, include its surrounding lines in old until the text is unique; to change several, send one "
        "edit per place.")


async def test_ambiguous_on_one_line(tmp_path):
    result, _ = await edit(tmp_path, "a\nfoo foo\n", one("foo", "bar"))
    assert result.text.startswith("f.txt: edit #1: old text appears 2 times (line 2) — ")


async def test_not_found_full_text(tmp_path):
    content = "package main\n\nfunc main() {\n\tcount := 1\n\tprint(count)\n}\n"
    result, after = await edit(tmp_path, content, one("func main() {\n    count := 2\n    print(count)\n}", "x"),
                               name="main.go")
    assert after == content.encode()
    assert result.failed and result.change is None
    assert result.text == (
        "main.go: edit #1: old text not found — it must match the file exactly, including indentation and line breaks:\n"
        "  │ func main() {\n"
        "  │     count := 2\n"
        "  │     print(count)\n"
        "  │ }\n"
        "the closest the file comes to it — copy these lines:\n"
        "  │ 3 │ func main() {\n"
        "  │ 4 │ \tcount := 1\n"
        "  │ 5 │ \tprint(count)\n"
        "  │ 6 │ }"
    )


async def test_not_found_without_excerpt_says_so(tmp_path):
    result, _ = await edit(tmp_path, "abc\n", one("xyz", "q"))
    assert result.text == (
        "f.txt: edit #1: old text not found — it must match the file exactly, including indentation and line breaks:\n"
        "  │ xyz\n"
        "no part of the file comes close — read the file again (read_file) and copy old from it."
    )


async def test_closest_region_numbers_right_aligned(tmp_path):
    content = "".join(f"x{i}\n" for i in range(1, 9)) + "a\nb\nc\n"
    result, _ = await edit(tmp_path, content, one("x8\na\nB\nc", "q"))
    assert result.text.endswith("  │  8 │ x8\n  │  9 │ a\n  │ 10 │ b\n  │ 11 │ c")


async def test_long_old_is_quoted_up_to_30_lines(tmp_path):
    old = "".join(f"nope {i}\n" for i in range(40))
    result, _ = await edit(tmp_path, "abc\n", one(old, "q"))
    assert "  │ nope 29\n  │ … (10 more lines)\n" in result.text
    assert "nope 30" not in result.text


async def test_every_failing_edit_is_reported_and_nothing_written(tmp_path):
    result, after = await edit(tmp_path, "one\ntwo\nthree\n", {"edits": [
        {"old": "zero", "new": "0"}, {"old": "two", "new": "2"}, {"old": "four", "new": "4"}]})
    assert after == b"one\ntwo\nthree\n"
    lines = result.text.split("\n")
    assert lines[0].startswith("f.txt: edit #1: old text not found")
    assert any(line.startswith("f.txt: edit #3: old text not found") for line in lines)
    assert lines[-1] == "nothing was written: the 3 edits apply together or not at all — send them all again once fixed"


async def test_conflict_messages(tmp_path):
    content = "alpha\nbeta\ngamma\ndelta\n"
    result, _ = await edit(tmp_path, content, {"edits": [{"old": "gamma", "new": "1"}, {"old": "gamma", "new": "2"}]})
    assert result.text.split("\n")[0] == (
        "f.txt: edits #1 and #2 change the same text (line 3) — edits must not repeat; send one edit per place")
    result, _ = await edit(tmp_path, content, {"edits": [{"old": "gamma", "new": "G"},
                                                         {"old": "beta\ngamma\ndelta", "new": "x"}]})
    assert result.text.split("\n")[0] == (
        "f.txt: edit #1 lies inside edit #2 (lines 2-4) — edits must not nest; make the change of edit #1 "
        "part of edit #2's new text")
    result, _ = await edit(tmp_path, content, {"edits": [{"old": "gamma\ndelta", "new": "x"},
                                                         {"old": "beta\ngamma", "new": "y"}]})
    assert result.text.split("\n")[0] == (
        "f.txt: edits #1 and #2 overlap (line 3) — edits must not overlap; merge them into one edit")
    assert (tmp_path / "f.txt").read_text() == content


async def test_same_old_and_new_refused(tmp_path):
    result, _ = await edit(tmp_path, "a\n", one("a", "a"))
    assert result.failed
    assert result.text == "f.txt: edit #1: old and new are identical — the edit would change nothing"


async def test_relaxed_edit_that_changes_nothing_refused(tmp_path):
    result, after = await edit(tmp_path, "\tfoo()\n", one("    foo()", "\tfoo()"))
    assert result.failed and after == b"\tfoo()\n"
    assert result.text == "f.txt: the edits leave the file as it is — nothing was written"


async def test_missing_file_message_and_nothing_created(tmp_path):
    result, after = await edit(tmp_path, None, one("a", "b"), name="sub/none.txt")
    assert result.failed and after is None and not (tmp_path / "sub").exists()
    assert result.text == "sub/none.txt does not exist. Create it with write_file"


async def test_directory_binary_and_non_utf8_refused(tmp_path):
    (tmp_path / "d").mkdir()
    result, _ = await edit(tmp_path, None, one("a", "b"), name="d")
    assert result.failed and result.text == "d is a directory, not a file"
    result, after = await edit(tmp_path, b"a\0b", one("a", "b"), name="bin")
    assert result.failed and after == b"a\0b"
    assert result.text == "bin is a binary file — edit_file and write_file only change text files"
    result, after = await edit(tmp_path, "café\n".encode("latin-1"), one("caf", "CAF"), name="l1")
    assert result.failed and after == "café\n".encode("latin-1")
    assert result.text == "l1 is not UTF-8 text — edit_file and write_file only change UTF-8 text files"


async def test_path_required(tmp_path):
    result = await EditFile().run({"edits": [{"old": "a", "new": "b"}]}, ToolContext(cwd=tmp_path))
    assert result.failed
    assert result.text == "edit_file: path is required — the path of the file to edit, relative to the working directory"


# --- what small models send ----------------------------------------------------------------

async def test_edits_as_json_string(tmp_path):
    _, after = await edit(tmp_path, "a\nb\n", {"edits": '[{"old": "a", "new": "A"}]'})
    assert after == b"A\nb\n"


async def test_single_object_and_top_level_and_aliases(tmp_path):
    _, after = await edit(tmp_path, "a\nb\n", {"edits": {"old": "a", "new": "A"}})
    assert after == b"A\nb\n"
    _, after = await edit(tmp_path, "a\nb\n", {"old": "b", "new": "B"})
    assert after == b"a\nB\n"
    _, after = await edit(tmp_path, "a\nb\n", {"edits": [{"old_string": "a", "new_string": "A"}]})
    assert after == b"A\nb\n"


async def test_malformed_edits_refused_clearly(tmp_path):
    result, after = await edit(tmp_path, "a\n", {"edits": "replace a with b"})
    assert result.failed and after == b"a\n"
    assert result.text == ('f.txt: edits must be a list of {"old": "...", "new": "..."} objects, e.g. '
                           '[{"old": "x = 1", "new": "x = 2"}] — got text that is not JSON')
    result, _ = await edit(tmp_path, "a\n", {"edits": []})
    assert result.text == 'f.txt: edits is empty — send at least one {"old": "...", "new": "..."}'
    result, _ = await edit(tmp_path, "a\n", {"edits": [{"old": "a"}, 5, {"old": 3, "new": "x"}]})
    assert result.text == (
        "f.txt: edit #1: new is missing — every edit needs old (the text to replace) and new\n"
        'f.txt: edit #2: must be an object {"old": "...", "new": "..."} — got a number\n'
        "f.txt: edit #3: old must be text — got a number\n"
        "nothing was written: the 3 edits apply together or not at all — send them all again once fixed")


# --- matching and re-indentation -----------------------------------------------------------

async def test_edges_pass_reindents_a_multiline_new(tmp_path):
    content = "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n"
    new = "        y := 2\n        if y > 1 {\n            return y\n        }"
    result, after = await edit(tmp_path, content, one("        return 1", new))
    assert after == b"func f() {\n\tif x {\n\t\ty := 2\n\t\tif y > 1 {\n\t\t\treturn y\n\t\t}\n\t}\n}\n"
    assert result.text.split("\n")[0].endswith(" · 1 matched ignoring whitespace")


async def test_edges_pass_new_without_indent_keeps_file_indent(tmp_path):
    _, after = await edit(tmp_path, "def f():\n\treturn 1\n", one("    return 1", "return 2"))
    assert after == b"def f():\n\treturn 2\n"


async def test_edges_pass_needs_whitespace_where_old_has_it(tmp_path):
    result, after = await edit(tmp_path, "xreturn 1\n", one("  return 1", "return 2"))
    assert result.failed and after == b"xreturn 1\n"


async def test_edges_pass_deleting_a_line_removes_it(tmp_path):
    _, after = await edit(tmp_path, "a\n\tdrop()\nb\n", one("    drop()", ""))
    assert after == b"a\nb\n"


async def test_indent_pass_with_blank_lines_around_old_and_new(tmp_path):
    content = "class A:\n    def f(self):\n        return 1\n"
    old = "\n\tdef f(self):\n\t\treturn 1\n"
    new = "\n\tdef f(self):\n\t\treturn 2\n\n"
    _, after = await edit(tmp_path, content, one(old, new))
    assert after == b"class A:\n    def f(self):\n        return 2\n\n"


async def test_indent_pass_keeps_new_verbatim_when_indents_agree(tmp_path):
    _, after = await edit(tmp_path, "a = [  \n  1,\n]\n", one("a = [\n  1,", "a = [\n  1,\n      2,"))
    assert after == b"a = [\n  1,\n      2,\n]\n"


async def test_indent_pass_dedent_below_base(tmp_path):
    content = "def f():\n\tif x:\n\t\treturn 1\n\treturn 0\n"
    _, after = await edit(tmp_path, content, one("        return 1\n    return 0", "        return 2\n    return 3"))
    assert after == b"def f():\n\tif x:\n\t\treturn 2\n\treturn 3\n"


async def test_file_without_indent_keeps_the_models_unit(tmp_path):
    result, after = await edit(tmp_path, "x\nfoo\ny\n", one("\n\nfoo", "\n\nbar:\n  baz"))
    assert after == b"x\nbar:\n  baz\ny\n"
    assert result.text.split("\n")[0].endswith(" · 1 matched ignoring whitespace")


def test_detect_unit():
    assert detect_unit(["a", "\tb", "\t\tc"]) == "\t"
    assert detect_unit(["a:", "  b:", "    c: 1", "  d: 2"]) == "  "
    assert detect_unit(["def f():", "    if x:", "        y", "    z"]) == "    "
    assert detect_unit(["/*", " * doc", " */", "int x;", "    x = 1;"]) == "    "
    assert detect_unit(["a", "b"]) is None
    assert detect_unit(["    a", "    b"]) is None


# --- line endings, BOM, file modes, symlinks -----------------------------------------------

async def test_crlf_indent_pass_and_added_lines_stay_crlf(tmp_path):
    content = b"if x {\r\n\ta()\r\n\tb()\r\n}\r\n"
    _, after = await edit(tmp_path, content, one("    a()\r\n    b()", "    a()\n    c()\n    b()"))
    assert after == b"if x {\r\n\ta()\r\n\tc()\r\n\tb()\r\n}\r\n"


async def test_mixed_endings_untouched_elsewhere(tmp_path):
    content = b"a\r\nb\nc\r\n"
    _, after = await edit(tmp_path, content, one("b", "B"))
    assert after == b"a\r\nB\nc\r\n"


async def test_mixed_endings_indent_pass_keeps_carriage_return(tmp_path):
    _, after = await edit(tmp_path, b"x\n\ta\r\n\tb\r\ny\n", one("    a\n    b", "    a\n    c"))
    assert after == b"x\n\ta\r\n\tc\r\ny\n"


async def test_bom_kept(tmp_path):
    _, after = await edit(tmp_path, "\ufeffa = 1\nb\n".encode(), one("a = 1", "a = 2"))
    assert after == "\ufeffa = 2\nb\n".encode()


async def test_mode_kept(tmp_path):
    target = tmp_path / "run.sh"
    target.write_text("echo hi\n")
    target.chmod(0o751)
    await edit(tmp_path, None, one("hi", "ho"), name="run.sh")
    assert target.read_text() == "echo ho\n"
    assert target.stat().st_mode & 0o777 == 0o751
    assert [p.name for p in tmp_path.iterdir()] == ["run.sh"]


async def test_symlink_target_edited_link_kept(tmp_path):
    (tmp_path / "real.txt").write_text("a\n")
    (tmp_path / "link.txt").symlink_to("real.txt")
    await edit(tmp_path, None, one("a", "b"), name="link.txt")
    assert (tmp_path / "link.txt").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "b\n"


# --- large files and output limits ---------------------------------------------------------

def big_file(lines: int = 10_000) -> str:
    return "".join(f"def func_{i}(x):\n    return x + {i}\n" for i in range(lines // 2))


async def test_huge_file_edit_and_small_diff(tmp_path):
    content = big_file()
    result, after = await edit(tmp_path, content, one("    return x + 4999\n", "    return x - 4999\n"))
    assert after == content.replace("x + 4999\n", "x - 4999\n").encode()
    assert result.text.split("\n")[:2] == [
        "f.txt: 1 edit applied · +1 -1 lines · first change at line 10000",
        "@@ -9997,4 +9997,4 @@",
    ]
    assert len(result.text) < 400


async def test_huge_file_indent_pass_and_closest(tmp_path):
    content = big_file()
    result, after = await edit(tmp_path, content, one("def func_2500(x):\n\treturn x + 2500", "def g():\n\treturn 0"))
    assert b"def g():\n    return 0\n" in after and not result.failed
    result, _ = await edit(tmp_path, content, one("def func_3000(x):\n    return x + 7\ndef func_3001(x):", "z"))
    assert result.failed
    assert result.text.endswith("  │ 6001 │ def func_3000(x):\n  │ 6002 │     return x + 3000\n  │ 6003 │ def func_3001(x):")


async def test_diff_truncated_to_max_output_headline_kept(tmp_path):
    content = "".join(f"line {i}\n" for i in range(200))
    new = "".join(f"LINE {i}\n" for i in range(200))
    result, after = await edit(tmp_path, content, one(content, new), max_output=300)
    assert after == new.encode()
    assert len(result.text) <= 300
    assert result.text.startswith("f.txt: 1 edit applied · +200 -200 lines · first change at line 1\n@@ -1,200 +1,200 @@\n")
    assert result.text.endswith(" more lines ...]")


async def test_refusal_first_line_never_cut(tmp_path):
    result, _ = await edit(tmp_path, "abc\n", one("x\n" * 50, "q"), max_output=20)
    first = result.text.split("\n")[0]
    assert first == ("f.txt: edit #1: old text not found — it must match the file exactly, including "
                     "indentation and line breaks:")


# --- properties ----------------------------------------------------------------------------

TEXT = st.text(alphabet=st.sampled_from(list("ab \t\nxé{}")), max_size=60)


@settings(max_examples=150, deadline=None)
@given(content=TEXT, data=st.data(), new=TEXT)
def test_exact_unique_old_always_applies(content, data, new):
    i = data.draw(st.integers(0, len(content)))
    j = data.draw(st.integers(i, len(content)))
    old = content[i:j]
    if not old or old == new or content.find(old, content.find(old) + 1) != -1:
        return
    line_start = content.rfind("\n", 0, i) + 1
    inside_indent = i > line_start and not content[line_start:i].strip(" \t")
    if old[0] == "\n" or old[-1] == "\n" or (inside_indent and (not new or "\n" in new or new[0] in " \t")):
        return  # the documented adjustments (tests below): edge line breaks, a match inside the indentation
    if i == line_start and old[0] in " \t" and new.strip() and new[0] not in " \t\n":
        return  # new's bare first line continues at old's indentation (tests/test_edit_bare_first_line.py)
    with tempfile.TemporaryDirectory() as tmp:
        result, after = asyncio.run(edit(Path(tmp), content, one(old, new)))
    assert not result.failed, result.text
    assert after == (content[:i] + new + content[j:]).encode()
    assert "matched ignoring whitespace" not in result.text.split("\n")[0]


@settings(max_examples=100, deadline=None)
@given(content=TEXT, old=TEXT, new=TEXT)
def test_dry_run_never_writes(content, old, new):
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "f.txt"
        target.write_text(content)
        os.utime(target, ns=(1_000_000_000, 1_000_000_000))
        result, after = asyncio.run(edit(Path(tmp), None, one(old, new, dry_run=True)))
        assert after == content.encode()
        assert target.stat().st_mtime_ns == 1_000_000_000
        assert result.change is None
        assert sorted(p.name for p in Path(tmp).iterdir()) == ["f.txt"]


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab\n")), max_size=30), data=st.data())
def test_changed_blocks_cover_every_change(text, data):
    """The line windows edit_file hands to the diff hold every changed line (diff.opcodes)."""
    from mm.tools.diff import opcodes, split_lines
    from mm.tools.edit.match import Match
    from mm.tools.edit.apply import apply

    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    matches = []
    for a, b in zip(cuts[::2], cuts[1::2]):
        if b > a and (not matches or a >= matches[-1].end):
            matches.append(Match(a, b, data.draw(st.text(alphabet="ab\n", max_size=8)), False))
    new, blocks = apply(text, matches)
    old_lines, new_lines = split_lines(text), split_lines(new)
    rebuilt = []
    for tag, i1, i2, j1, j2 in opcodes(old_lines, new_lines, blocks):
        if tag == "equal":
            assert old_lines[i1:i2] == new_lines[j1:j2]
        rebuilt += new_lines[j1:j2]
    assert "".join(rebuilt) == new
