"""Attacks on edit_file with the mistakes small models make (mm-tools.md §edit_file, *How `old`
is matched*; docs/tools-edit.md).

The promise under test: a mistake is absorbed correctly or refused with a clear message — never
applied wrongly. Each case states the file, the call, and the exact file that must result.

- The first group are calls mm once wrote WRONG (or refused needlessly), found by an outside
  tester before the fixes of docs/tools-edit.md §Frames (new in another style than old, nesting
  steps, block openers, the BOM, CR-only files); they guard the fixes.
- The other tests are attacks mm already handled; they guard the behaviour.

Real files: the running interpreter's `textwrap.py` is copied into the test's folder (the blocks
used have been in it since Python 3.4); the rest are small inline files in the shapes of real
ones (Makefile, Go, shell heredoc, Markdown…). Nothing outside `tmp_path` is ever written.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from mm.tools.base import ToolContext
from mm.tools.edit import EditFile


async def edit(tmp_path: Path, content: str | bytes, edits: list[dict], name: str = "f.py"):
    """Write `content` to `tmp_path/name`, run edit_file on it; return (result, text after).

    The text after is decoded as UTF-8 when it is; raw bytes otherwise (bytes in, bytes out).
    """
    target = tmp_path / name
    raw = content if isinstance(content, bytes) else content.encode("utf-8")
    target.write_bytes(raw)
    result = await EditFile().run({"path": name, "edits": edits}, ToolContext(cwd=tmp_path))
    after = target.read_bytes()
    return result, (after if isinstance(content, bytes) else after.decode("utf-8"))


def one(old: str, new: str) -> list[dict]:
    return [{"old": old, "new": new}]


def compiles(source: str) -> bool:
    try:
        compile(source, "f.py", "exec")
    except SyntaxError:  # TabError and IndentationError included
        return False
    return True


def stdlib_file(name: str) -> str:
    return (Path(sysconfig.get_paths()["stdlib"]) / name).read_text("utf-8")


MAKEFILE = "CC = gcc\n\nall: foo\n\nfoo: foo.c\n\t$(CC) -o foo foo.c\n\nclean:\n\trm -f foo\n"
GO = "package main\n\nfunc main() {\n\tx := 1\n\tprintln(x)\n}\n"
PY4 = "def main():\n    x = 1\n    print(x)\n    return x\n"


# =========================================================================================
# Once written WRONG (or refused needlessly) — guards of the fixes
# =========================================================================================

# --- R3: old copied exactly, new typed in the other indentation style ------------------------
# The model copies `old` from read_file (tabs and all) but types `new` itself with spaces — or
# the reverse. The exact pass wins and `new` is written as sent (docs/tools-edit.md §Frames
# point 1), although the reference says `new` is re-indented to the file's unit "so a
# tab-indented file does not end up with a block of spaces in the middle of it".



async def test_makefile_recipe_retyped_with_spaces_in_new(tmp_path):
    result, after = await edit(tmp_path, MAKEFILE,
                               one("clean:\n\trm -f foo\n", "clean:\n    rm -f foo\n    rm -f *.o\n"), "Makefile")
    assert not result.failed
    assert after == MAKEFILE.replace("\trm -f foo\n", "\trm -f foo\n\trm -f *.o\n")


async def test_makefile_added_recipe_line_with_spaces(tmp_path):
    result, after = await edit(tmp_path, MAKEFILE,
                               one("\t$(CC) -o foo foo.c\n", "\t$(CC) -o foo foo.c\n    strip foo\n"), "Makefile")
    assert after == MAKEFILE.replace("\t$(CC) -o foo foo.c\n", "\t$(CC) -o foo foo.c\n\tstrip foo\n")


async def test_go_exact_old_new_in_spaces(tmp_path):
    result, after = await edit(tmp_path, GO,
                               one("\tx := 1\n\tprintln(x)", "    x := 1\n    println(x)\n    println(2)"), "main.go")
    assert after == "package main\n\nfunc main() {\n\tx := 1\n\tprintln(x)\n\tprintln(2)\n}\n"


async def test_python_exact_old_new_in_tabs(tmp_path):
    result, after = await edit(tmp_path, PY4, one("    print(x)\n", "\tprint(x)\n\tprint('done')\n"))
    assert after == "def main():\n    x = 1\n    print(x)\n    print('done')\n    return x\n"
    assert compiles(after)


async def test_python_added_line_typed_with_tab(tmp_path):
    result, after = await edit(tmp_path, PY4, one("    print(x)", "    print(x)\n\tprint('done')"))
    assert after == "def main():\n    x = 1\n    print(x)\n    print('done')\n    return x\n"


async def test_stdlib_textwrap_method_retyped_with_tabs_in_new(tmp_path):
    source = stdlib_file("textwrap.py")
    old = "        text = self._munge_whitespace(text)\n        return self._split(text)\n"
    assert source.count(old) == 1
    new = "\t\ttext = self._munge_whitespace(text)\n\t\tchunks = self._split(text)\n\t\treturn chunks\n"
    result, after = await edit(tmp_path, source, one(old, new), "textwrap.py")
    want = source.replace(old, "        text = self._munge_whitespace(text)\n"
                               "        chunks = self._split(text)\n        return chunks\n")
    assert compiles(after)
    assert after == want


# --- R1: the step of new's nesting is not converted to the file's unit ---------------------
# When `old` shows a single indentation level, the model's nesting step in `new` is kept as
# columns (docs §Frames point 2: "the model's columns per file unit come from old's lines …,
# never from new"), leaving 2-space steps in 4-space files, spaces inside tab files, and a
# two-tab step where the model meant one.



async def test_wrap_in_try_two_space_model_four_space_file(tmp_path):
    src = "def f(path):\n    fh = open(path)\n    fh.close()\n    return 1\n"
    result, after = await edit(tmp_path, src, one("  fh.close()", "  try:\n    fh.close()\n  except OSError:\n    pass"))
    assert after == ("def f(path):\n    fh = open(path)\n    try:\n        fh.close()\n"
                     "    except OSError:\n        pass\n    return 1\n")


async def test_tab_python_four_space_old_two_space_nesting(tmp_path):
    src = "def f():\n\tx = 1\n\treturn x\n"
    result, after = await edit(tmp_path, src, one("    x = 1", "    if b:\n      x = 1"))
    assert after == "def f():\n\tif b:\n\t\tx = 1\n\treturn x\n"


async def test_tab_go_two_space_model_nesting_over_indented(tmp_path):
    src = "func f() {\n\tif a {\n\t\tx := 1\n\t}\n\treturn\n}\n"
    result, after = await edit(tmp_path, src, one("  x := 1", "  if b {\n    x := 1\n  }"), "f.go")
    assert after == "func f() {\n\tif a {\n\t\tif b {\n\t\t\tx := 1\n\t\t}\n\t}\n\treturn\n}\n"


async def test_go_new_function_with_space_body(tmp_path):
    result, after = await edit(tmp_path, GO, one("func main() {", "func helper() {\n    return\n}\n\nfunc main() {"), "main.go")
    assert after == "package main\n\nfunc helper() {\n\treturn\n}\n\nfunc main() {\n\tx := 1\n\tprintln(x)\n}\n"


async def test_python_toplevel_guard_typed_with_tab(tmp_path):
    src = "import os\n\n\ndef main():\n    print(os.getcwd())\n\n\nmain()\n"
    result, after = await edit(tmp_path, src, one("main()\n", "if __name__ == '__main__':\n\tmain()\n"))
    assert after == src.replace("\nmain()\n", "\nif __name__ == '__main__':\n    main()\n")


# --- edges pass: a deliberate dedent keeps the model's spaces --------------------------------

async def test_edges_dedent_one_level_tab_file(tmp_path):
    result, after = await edit(tmp_path, "if a {\n\t\tfoo()\n}\n", one("        foo()", "    foo()"), "f.go")
    assert after == "if a {\n\tfoo()\n}\n"


# --- R2: new's first line shallower than old's, the rest at old's depth ---------------------
# The model wraps a line in `if x:` but types the header without indentation (a common slip).
# Literally the header is outside the function; mm puts it at the line's depth (docs §Frames
# point 5) and the body beside it: IndentationError either way. Refusing (two readings) or
# nesting the body would both keep the promise.

WRAP_SRC = "def f():\n    bar()\n    baz()\n"
WRAPPED = "def f():\n    if x:\n        bar()\n        baz()\n"


async def test_wrap_header_unindented_indent_pass(tmp_path):
    result, after = await edit(tmp_path, WRAP_SRC, one("  bar()\n  baz()", "if x:\n  bar()\n  baz()"))
    assert (result.failed and after == WRAP_SRC) or after == WRAPPED


async def test_wrap_header_unindented_edges_pass(tmp_path):
    result, after = await edit(tmp_path, WRAP_SRC, one("\tbar()", "if x:\n\tbar()"))
    assert (result.failed and after == WRAP_SRC) or after == "def f():\n    if x:\n        bar()\n    baz()\n"


# --- needless refusals ---------------------------------------------------------------------

async def test_bom_copied_from_read_file(tmp_path):
    content = "\ufeffimport os\nx = 1\n".encode()
    result, after = await edit(tmp_path, content, one("\ufeffimport os", "import sys"))
    assert not result.failed
    assert after == "\ufeffimport sys\nx = 1\n".encode()


async def test_cr_only_file_multiline_old(tmp_path):
    result, after = await edit(tmp_path, b"a = 1\rb = 2\rc = 3\r", one("a = 1\nb = 2", "a = 1\nb = 3"))
    assert not result.failed
    assert after == b"a = 1\rb = 3\rc = 3\r"


# =========================================================================================
# Attacks mm handles (passing)
# =========================================================================================

async def test_overlapping_exact_occurrences_are_ambiguous(tmp_path):
    result, after = await edit(tmp_path, "x = 1\nx = 1\nx = 1\n", one("x = 1\nx = 1", "y"))
    assert result.failed and "appears 2 times (lines 1, 2)" in result.text
    assert after == "x = 1\nx = 1\nx = 1\n"


async def test_edges_match_in_a_space_line_and_a_tab_line_is_ambiguous(tmp_path):
    src = "def f():\n    return 1\n\ndef g():\n\treturn 1\n"
    result, after = await edit(tmp_path, src, one("return 1 ", "return 2 "))
    assert result.failed and "appears 2 times (lines 2, 5)" in result.text
    assert after == src


async def test_same_block_at_two_depths_is_ambiguous(tmp_path):
    src = "if a:\n    x = 1\n    y = 2\nif b:\n        x = 1\n        y = 2\n"
    result, after = await edit(tmp_path, src, one("  x = 1\n  y = 2", "  x = 3\n  y = 4"))
    assert result.failed and "appears 2 times (lines 2, 5)" in result.text
    assert after == src


async def test_newline_padded_line_never_matches_a_longer_line(tmp_path):
    src = "a = 0\nx = 10\ny = 2\n"
    result, after = await edit(tmp_path, src, one("\nx = 1\n", "\nx = 2\n"))
    assert result.failed and after == src


async def test_indented_word_never_matches_inside_a_line(tmp_path):
    src = "x = foo(1)\ny = 2\n"
    result, after = await edit(tmp_path, src, one("  foo", "  bar"))
    assert result.failed and after == src


async def test_two_space_retype_with_new_branch(tmp_path):
    src = "class A:\n    def f(self):\n        if a:\n            return 1\n        return 2\n"
    result, after = await edit(tmp_path, src, one(
        "  def f(self):\n    if a:\n      return 1\n    return 2",
        "  def f(self):\n    if a:\n      return 1\n    elif b:\n      return 3\n    return 2"))
    assert after == ("class A:\n    def f(self):\n        if a:\n            return 1\n"
                     "        elif b:\n            return 3\n        return 2\n")


async def test_go_block_retyped_with_spaces_and_wrapped(tmp_path):
    src = "func f() {\n\tif a {\n\t\tx := 1\n\t}\n\treturn\n}\n"
    result, after = await edit(tmp_path, src, one(
        "    if a {\n        x := 1\n    }",
        "    if a {\n        if b {\n            x := 1\n        }\n    }"), "f.go")
    assert after == "func f() {\n\tif a {\n\t\tif b {\n\t\t\tx := 1\n\t\t}\n\t}\n\treturn\n}\n"


async def test_makefile_retyped_with_spaces_in_old_and_new_keeps_tabs(tmp_path):
    result, after = await edit(tmp_path, MAKEFILE, one(
        "foo: foo.c\n    $(CC) -o foo foo.c", "foo: foo.c\n    $(CC) -o foo foo.c\n    strip foo"), "Makefile")
    assert after == MAKEFILE.replace("\t$(CC) -o foo foo.c\n", "\t$(CC) -o foo foo.c\n\tstrip foo\n")


async def test_two_edits_unwrap_an_if(tmp_path):
    src = "def f():\n    if a:\n        x = 1\n        y = 2\n    return 0\n"
    result, after = await edit(tmp_path, src, [{"old": "    if a:\n", "new": ""},
                                               {"old": "        x = 1\n        y = 2", "new": "    x = 1\n    y = 2"}])
    assert after == "def f():\n    x = 1\n    y = 2\n    return 0\n"


async def test_three_edits_exact_retyped_and_padded(tmp_path):
    src = ("class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n\n"
           "    def h(self):\n        return 3\n")
    result, after = await edit(tmp_path, src, [
        {"old": "        return 1", "new": "        return 10"},
        {"old": "  def g(self):\n    return 2", "new": "  def g(self):\n    return 20"},
        {"old": "\n    def h(self):\n", "new": "\n    def h(self, x):\n"}])
    assert after == src.replace("return 1\n", "return 10\n").replace("return 2", "return 20").replace("h(self)", "h(self, x)")
    assert result.text.splitlines()[0].endswith(" · 1 matched ignoring whitespace")  # #3 is exact: padding included


async def test_first_line_copied_without_its_indentation(tmp_path):
    src = ("class C:\n    def m(self):\n        if c:\n            result = calc()\n"
           "            return result\n        return None\n")
    result, after = await edit(tmp_path, src, one(
        "if c:\n            result = calc()\n            return result",
        "if c:\n            new_result = calc_v2()\n            return new_result"))
    assert after == src.replace("result = calc()", "new_result = calc_v2()").replace("return result", "return new_result")


async def test_tab_retype_deleting_the_first_line(tmp_path):
    src = "class A:\n    def f(self):\n        x = 1\n        print(x)\n\n    def g(self):\n        pass\n"
    result, after = await edit(tmp_path, src, one("\t\tprint(x)\n\n\tdef g(self):\n\t\tpass", "\tdef g(self):\n\t\tpass"))
    assert after == "class A:\n    def f(self):\n        x = 1\n    def g(self):\n        pass\n"


async def test_crlf_file_gets_crlf_new_lines(tmp_path):
    result, after = await edit(tmp_path, b"a = 1\r\nb = 2\r\nc = 3\r\n", one("b = 2\n", "b = 2\nbb = 3\n"))
    assert after == b"a = 1\r\nb = 2\r\nbb = 3\r\nc = 3\r\n"


async def test_crlf_tab_file_spaces_call(tmp_path):
    result, after = await edit(tmp_path, b"func f() {\r\n\tx := 1\r\n\ty := 2\r\n}\r\n", one(
        "    x := 1\n    y := 2", "    x := 1\n    if y {\n        y := 2\n    }"))
    assert after == b"func f() {\r\n\tx := 1\r\n\tif y {\r\n\t\ty := 2\r\n\t}\r\n}\r\n"


async def test_padded_old_on_last_line_without_final_newline(tmp_path):
    result, after = await edit(tmp_path, "a\nb\nc", one("c\n", "C\n"))
    assert after == "a\nb\nC"


# Retypes whose file holds lines that are not indentation: a form feed line, a line separator
# inside a string, a Markdown hard break, string and heredoc lines at column 0, a continuation
# line aligned on a parenthesis. (id, file name, file, old, new, file after)
LAYOUT_CASES = [
    ("form-feed-line", "f.py", "def a():\n    pass\n\x0c\ndef b():\n    return 1\n",
     "def b():\n  return 1", "def b():\n  return 2",
     "def a():\n    pass\n\x0c\ndef b():\n    return 2\n"),
    ("line-separator-in-string", "f.js", 'const s = "a\u2028b";\nfunction f() {\n  return s;\n}\n',
     "function f() {\n    return s;\n}", "function f() {\n    return s + 1;\n}",
     'const s = "a\u2028b";\nfunction f() {\n  return s + 1;\n}\n'),
    ("markdown-hard-break", "f.md", "- a\n    - first line\n      second\n",
     "  - first line\n    second", "  - first line  \n    second line",
     "- a\n    - first line  \n      second line\n"),
    ("string-at-column-0", "f.py", 'class A:\n    def f(self):\n        sql = """\nSELECT *\nFROM t\n"""\n        return sql\n',
     '    sql = """\nSELECT *\nFROM t\n"""\n    return sql', '    sql = """\nSELECT *\nFROM t\nWHERE x\n"""\n    return sql',
     'class A:\n    def f(self):\n        sql = """\nSELECT *\nFROM t\nWHERE x\n"""\n        return sql\n'),
    ("heredoc-at-column-0", "s.sh", "#!/bin/sh\nsetup() {\n    cat > conf <<EOF\nkey=1\nother=2\nEOF\n    echo done\n}\n",
     "\tcat > conf <<EOF\nkey=1\nother=2\nEOF\n\techo done", "\tcat > conf <<EOF\nkey=1\nother=2\nthird=3\nEOF\n\techo done",
     "#!/bin/sh\nsetup() {\n    cat > conf <<EOF\nkey=1\nother=2\nthird=3\nEOF\n    echo done\n}\n"),
    ("continuation-alignment", "f.py", "def f():\n    result = some_function(arg1,\n                           arg2)\n    return result\n",
     "  result = some_function(arg1,\n                         arg2)",
     "  result = some_function(arg1,\n                         arg2,\n                         arg3)",
     "def f():\n    result = some_function(arg1,\n                           arg2,\n                           arg3)\n    return result\n"),
]


@pytest.mark.parametrize("name, content, old, new, want", [c[1:] for c in LAYOUT_CASES], ids=[c[0] for c in LAYOUT_CASES])
async def test_retype_keeps_lines_that_are_not_indentation(tmp_path, name, content, old, new, want):
    result, after = await edit(tmp_path, content, one(old, new), name)
    assert not result.failed
    assert after == want


async def test_new_in_a_third_style_lands_in_the_file_s(tmp_path):
    # old typed with two spaces, new with tabs, the file has four: new's lines kept from old show
    # where its tabs go (a refusal would keep the promise too).
    result, after = await edit(tmp_path, PY4, one("  x = 1\n  print(x)", "\tx = 1\n\tprint(x)\n\tprint('done')"))
    assert (result.failed and after == PY4) or after == PY4.replace("    return x", "    print('done')\n    return x")


async def test_stdlib_textwrap_method_retyped_two_spaces(tmp_path):
    source = stdlib_file("textwrap.py")
    block = ("        if self.break_on_hyphens is True:\n            chunks = self.wordsep_re.split(text)\n"
             "        else:\n            chunks = self.wordsep_simple_re.split(text)\n")
    assert source.count(block) == 1
    old = "    if self.break_on_hyphens is True:\n      chunks = self.wordsep_re.split(text)\n    else:\n      chunks = self.wordsep_simple_re.split(text)\n"
    new = old.replace("    else:\n", "      chunks.reverse()\n    else:\n")
    result, after = await edit(tmp_path, source, one(old, new), "textwrap.py")
    assert after == source.replace(block, block.replace("        else:\n", "            chunks.reverse()\n        else:\n"))
    assert compiles(after)


async def test_not_utf8_file_refused_untouched(tmp_path):
    result, after = await edit(tmp_path, b"# caf\xe9\nx = 1\n", one("x = 1", "x = 2"))
    assert result.failed and "is not UTF-8 text" in result.text
    assert after == b"# caf\xe9\nx = 1\n"
