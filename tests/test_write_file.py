"""write_file on real files: create, replace with a numbered diff, identical content, JSON
content, line endings, modes, limits (mm-tools.md §write_file)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mm.tools.base import Settings, ToolContext
from mm.tools.write_file import WriteFile
from harness import CASES_DIR




ARG_CASES = [p for p in sorted((CASES_DIR / "tool-args").glob("*.json"))
             if json.loads(p.read_text(encoding="utf-8"))["tool"] == "write_file"]


async def write(tmp_path: Path, args: dict, **conf):
    return await WriteFile().run(args, ToolContext(cwd=tmp_path, settings=Settings(**conf)))


def test_declaration():
    tool = WriteFile()
    assert (tool.name, tool.kind, tool.needs_permission) == ("write_file", "edit", True)
    assert [(p.name, p.type, p.required) for p in tool.params] == [("path", "string", True),
                                                                   ("content", "string", True)]


def test_tool_args_cases_found():
    assert ARG_CASES


@pytest.mark.parametrize("case_file", ARG_CASES, ids=lambda p: p.stem)
async def test_tool_args_case(case_file: Path, tmp_path: Path):
    case = json.loads(case_file.read_text(encoding="utf-8"))
    for name, content in case.get("files", {}).items():
        (tmp_path / name).write_text(content)
    expect = case["expect"]
    result = await write(tmp_path, case["arguments"])
    assert (not result.failed) == expect["runs"], result.text
    written = (tmp_path / expect["file"]).read_text(encoding="utf-8")
    if "file_json_equals" in expect:
        assert json.loads(written) == expect["file_json_equals"]
    if "file_ends_with_newline" in expect:
        assert written.endswith("\n") == expect["file_ends_with_newline"]


async def test_create_with_parent_dirs(tmp_path):
    result = await write(tmp_path, {"path": "a/b/c.txt", "content": "one\ntwo\n"})
    target = tmp_path / "a/b/c.txt"
    assert target.read_bytes() == b"one\ntwo\n"
    assert not result.failed
    assert result.text == "a/b/c.txt: created · 2 lines\n@@ -0,0 +1,2 @@\n+1 │ one\n+2 │ two"
    assert result.change.path == target and result.change.old_text is None
    assert result.change.new_text == "one\ntwo\n"
    assert result.locations == [target]
    assert target.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


async def test_create_single_line_and_empty(tmp_path):
    assert (await write(tmp_path, {"path": "x", "content": "hi"})).text == (
        "x: created · 1 line\n@@ -0,0 +1 @@\n+1 │ hi\n\\ No newline at end of file")
    assert (await write(tmp_path, {"path": "e", "content": ""})).text == "e: created · 0 lines"
    assert (tmp_path / "x").read_bytes() == b"hi" and (tmp_path / "e").read_bytes() == b""


async def test_replace_shows_numbered_diff(tmp_path):
    (tmp_path / "f.txt").write_text("a\nb\nc\n")
    result = await write(tmp_path, {"path": "f.txt", "content": "a\nB\nc\nd\n"})
    assert (tmp_path / "f.txt").read_text() == "a\nB\nc\nd\n"
    assert result.text == (
        "f.txt: replaced · +2 -1 lines · first change at line 2\n"
        "@@ -1,3 +1,4 @@\n"
        " 1 │ a\n"
        "-2 │ b\n"
        "+2 │ B\n"
        " 3 │ c\n"
        "+4 │ d"
    )
    assert result.change.old_text == "a\nb\nc\n" and result.change.new_text == "a\nB\nc\nd\n"


async def test_final_newline_change_is_visible(tmp_path):
    (tmp_path / "f.txt").write_text("a\nb")
    result = await write(tmp_path, {"path": "f.txt", "content": "a\nb\n"})
    assert result.text == (
        "f.txt: replaced · +1 -1 lines · first change at line 2\n"
        "@@ -1,2 +1,2 @@\n"
        " 1 │ a\n"
        "-2 │ b\n"
        "\\ No newline at end of file\n"
        "+2 │ b"
    )


async def test_identical_content_not_written(tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("same\n")
    os.utime(target, ns=(1_000_000_000, 1_000_000_000))
    result = await write(tmp_path, {"path": "f.txt", "content": "same\n"})
    assert not result.failed and result.change is None
    assert result.text == "f.txt: unchanged — the file already has exactly this content; nothing was written"
    assert target.stat().st_mtime_ns == 1_000_000_000


def test_coercer_turns_objects_into_json_text():
    from mm.tools.coerce import coerce_tool_args

    args, problem = coerce_tool_args(WriteFile(), {"path": "p.json", "content": {"a": 1}})
    assert problem is None and args["content"] == '{\n  "a": 1\n}\n'


async def test_json_content_for_object_array_number(tmp_path):
    await write(tmp_path, {"path": "o.json", "content": {"name": "démo", "list": [1, 2]}})
    assert (tmp_path / "o.json").read_text() == '{\n  "name": "démo",\n  "list": [\n    1,\n    2\n  ]\n}\n'
    await write(tmp_path, {"path": "a.json", "content": [1, "x"]})
    assert (tmp_path / "a.json").read_text() == '[\n  1,\n  "x"\n]\n'
    await write(tmp_path, {"path": "n.txt", "content": 42})
    assert (tmp_path / "n.txt").read_text() == "42"


async def test_crlf_and_bom_of_replaced_file_kept(tmp_path):
    target = tmp_path / "w.ini"
    target.write_bytes("\ufeff[a]\r\nx=1\r\n".encode())
    result = await write(tmp_path, {"path": "w.ini", "content": "[a]\nx=2\n"})
    assert target.read_bytes() == "\ufeff[a]\r\nx=2\r\n".encode()
    assert "-2 │ x=1\n+2 │ x=2" in result.text
    again = await write(tmp_path, {"path": "w.ini", "content": "[a]\nx=2\n"})
    assert again.text.startswith("w.ini: unchanged")


async def test_crlf_content_written_as_sent_to_new_file(tmp_path):
    await write(tmp_path, {"path": "n.txt", "content": "a\r\nb\r\n"})
    assert (tmp_path / "n.txt").read_bytes() == b"a\r\nb\r\n"


async def test_mode_kept_and_no_temp_left(tmp_path):
    target = tmp_path / "run.sh"
    target.write_text("echo a\n")
    target.chmod(0o750)
    await write(tmp_path, {"path": "run.sh", "content": "echo b\n"})
    assert target.stat().st_mode & 0o777 == 0o750
    assert [p.name for p in tmp_path.iterdir()] == ["run.sh"]


async def test_replacing_binary_file(tmp_path):
    (tmp_path / "b.bin").write_bytes(b"\0\1\2")
    result = await write(tmp_path, {"path": "b.bin", "content": "text\n"})
    assert not result.failed
    assert result.text == "b.bin: replaced · 1 line (the previous content was not UTF-8 text: no diff)"
    assert (tmp_path / "b.bin").read_bytes() == b"text\n"


async def test_refusals(tmp_path):
    (tmp_path / "d").mkdir()
    result = await write(tmp_path, {"path": "d", "content": "x"})
    assert result.failed and result.text == "d is a directory — give the path of a file; nothing was written"
    result = await write(tmp_path, {"path": "f.txt"})
    assert result.failed
    assert result.text == 'f.txt: content is required — the whole text of the file ("" for an empty file); nothing was written'
    assert not (tmp_path / "f.txt").exists()
    result = await write(tmp_path, {"content": "x"})
    assert result.failed
    assert result.text == "write_file: path is required — the path of the file to write, relative to the working directory"
    (tmp_path / "plain").write_text("x")
    result = await write(tmp_path, {"path": "plain/sub.txt", "content": "y"})
    assert result.failed
    assert result.text == "plain/sub.txt: cannot create it — plain is a file, not a directory; nothing was written"


async def test_diff_truncated_to_max_output(tmp_path):
    (tmp_path / "f.txt").write_text("".join(f"old {i}\n" for i in range(300)))
    result = await write(tmp_path, {"path": "f.txt", "content": "".join(f"new {i}\n" for i in range(300))},
                         max_output=500)
    assert len(result.text) <= 500
    assert result.text.startswith("f.txt: replaced · +300 -300 lines · first change at line 1\n@@ -1,300 +1,300 @@\n")
    assert result.text.endswith(" more lines ...]")
