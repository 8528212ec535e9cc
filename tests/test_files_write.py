"""fs_write through a real conversation: the four commands, their errors, what a file keeps
(encoding, BOM, line endings — `create` too), and the weaknesses notes/mnemoai.md §2.2 lists,
shown absent in mm (mnemo-tools.md, fs_write commands)."""

from __future__ import annotations

import os

import pytest

from files_calls import Session


def ok(path, command: str, message: str, summary: str = "") -> dict:
    return {"success": True, "operation": command, "path": str(path), "message": message, "summary": summary}


async def read_first(session: Session, name: str) -> None:
    out = await session.read(name)
    assert "error" not in out, out


# --- create --------------------------------------------------------------------------------------

async def test_create_makes_parent_folders(scripted_server, tmp_path):
    session = Session(scripted_server, tmp_path)
    out = await session.write("a/b/new.py", "create", file_text="print(1)\n", summary="a script")
    assert out == ok(tmp_path / "a/b/new.py", "create", "File created successfully", "a script")
    assert (tmp_path / "a/b/new.py").read_bytes() == b"print(1)\n"


async def test_create_overwrites_keeping_encoding_bom_and_line_endings(scripted_server, tmp_path):
    """The reference's create wrote UTF-8 LF whatever the file was."""
    files = {"crlf.txt": b"old\r\nlines\r\n", "bom.txt": b"\xef\xbb\xbfold\n",
             "u16.txt": b"\xff\xfe" + "old\r\n".encode("utf-16-le"), "l1.txt": "vieux café\n".encode("latin-1")}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    session = Session(scripted_server, tmp_path)
    for name in files:
        await read_first(session, name)
        assert await session.write(name, "create", file_text="new é\nline\n") == \
            ok(tmp_path / name, "create", "File overwritten successfully")
    assert (tmp_path / "crlf.txt").read_bytes() == "new é\r\nline\r\n".encode()
    assert (tmp_path / "bom.txt").read_bytes() == b"\xef\xbb\xbf" + "new é\nline\n".encode()
    assert (tmp_path / "u16.txt").read_bytes() == b"\xff\xfe" + "new é\r\nline\r\n".encode("utf-16-le")
    assert (tmp_path / "l1.txt").read_bytes() == "new é\nline\n".encode("latin-1")


async def test_create_with_the_same_content_writes_nothing(scripted_server, tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("same\n")
    os.utime(target, ns=(10**9, 10**9))
    session = Session(scripted_server, tmp_path)
    await read_first(session, "f.txt")
    out = await session.write("f.txt", "create", file_text="same\n")
    assert out["message"] == "File unchanged: it already has exactly this content (nothing was written)"
    assert target.stat().st_mtime_ns == 10**9


async def test_create_an_empty_file(scripted_server, tmp_path):
    assert (await Session(scripted_server, tmp_path).write("e.txt", "create"))["success"] is True
    assert (tmp_path / "e.txt").read_bytes() == b""


# --- str_replace ---------------------------------------------------------------------------------

async def test_str_replace(scripted_server, tmp_path):
    (tmp_path / "f.py").write_text("a = 1\nb = 2\nb = 2\n")
    session = Session(scripted_server, tmp_path)
    await read_first(session, "f.py")
    assert await session.write("f.py", "str_replace", old_str="a = 1", new_str="a = 10") == \
        ok(tmp_path / "f.py", "str_replace", "Text replaced successfully")
    assert await session.write("f.py", "str_replace", old_str="zzz", new_str="y") == {
        "error": True, "message": "Text to replace not found in file"}
    assert await session.write("f.py", "str_replace", old_str="b = 2", new_str="y") == {
        "error": True, "message": "2 occurrences of old_str were found when only 1 is expected"}
    assert (tmp_path / "f.py").read_text() == "a = 10\nb = 2\nb = 2\n"


async def test_str_replace_has_no_replace_all(scripted_server, tmp_path):
    (tmp_path / "f.py").write_text("b\nb\n")
    session = Session(scripted_server, tmp_path)
    await read_first(session, "f.py")
    text = await session.text("fs_write", {"path": "f.py", "command": "str_replace", "old_str": "b", "new_str": "c",
                                           "replace_all": True})
    assert text.startswith("[fs_write: invalid call, nothing was run — \"replace_all\" is not a parameter of this tool")


async def test_str_replace_refuses_an_empty_old_str(scripted_server, tmp_path):
    """The reference took an empty old_str as many matches."""
    (tmp_path / "f.txt").write_text("x\n")
    assert await Session(scripted_server, tmp_path).write("f.txt", "str_replace", old_str="", new_str="y") == {
        "error": True, "message": "old_str is empty: give the exact text to replace, present once in the file"}


async def test_str_replace_identical_and_missing_file(scripted_server, tmp_path):
    (tmp_path / "f.txt").write_text("x\n")
    session = Session(scripted_server, tmp_path)
    await read_first(session, "f.txt")
    assert (await session.write("f.txt", "str_replace", old_str="x", new_str="x"))["message"] == \
        "Replacement produced no changes (old_str and new_str are identical)"
    assert await session.write("no.txt", "str_replace", old_str="x", new_str="y") == {
        "error": True, "message": f"File does not exist: {tmp_path / 'no.txt'}"}


async def test_str_replace_tolerates_a_gutter_and_keeps_crlf(scripted_server, tmp_path):
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    session = Session(scripted_server, tmp_path)
    await read_first(session, "w.txt")
    out = await session.write("w.txt", "str_replace", old_str="     2\ttwo\n     3\tthree", new_str="2\n3")
    assert out["success"] is True
    assert (tmp_path / "w.txt").read_bytes() == b"one\r\n2\r\n3\r\n"


# --- insert --------------------------------------------------------------------------------------

@pytest.mark.parametrize("after, expected", [
    (0, "new\na\nb\nc\n"),  # 0 prepends
    (1, "a\nnew\nb\nc\n"),
    (3, "a\nb\nc\nnew\n"),  # the maximum is the line count
])
async def test_insert_after_a_line(scripted_server, tmp_path, after, expected):
    (tmp_path / "f.txt").write_text("a\nb\nc\n")
    session = Session(scripted_server, tmp_path)
    await read_first(session, "f.txt")
    assert await session.write("f.txt", "insert", insert_line=after, new_str="new") == \
        ok(tmp_path / "f.txt", "insert", f"Content inserted after line {after}")
    assert (tmp_path / "f.txt").read_text() == expected


@pytest.mark.parametrize("after", [4, -1])
async def test_insert_out_of_range(scripted_server, tmp_path, after):
    (tmp_path / "f.txt").write_text("a\nb\nc\n")
    session = Session(scripted_server, tmp_path)
    await read_first(session, "f.txt")
    assert await session.write("f.txt", "insert", insert_line=after, new_str="x") == {
        "error": True, "message": f"Invalid line number {after}. File has 3 lines."}


async def test_insert_after_a_last_line_without_newline_does_not_join_them(scripted_server, tmp_path):
    """The reference wrote `cnew` there."""
    (tmp_path / "f.txt").write_text("a\nb\nc")
    session = Session(scripted_server, tmp_path)
    await read_first(session, "f.txt")
    await session.write("f.txt", "insert", insert_line=3, new_str="new")
    assert (tmp_path / "f.txt").read_text() == "a\nb\nc\nnew"


async def test_insert_needs_text(scripted_server, tmp_path):
    (tmp_path / "f.txt").write_text("a\n")
    assert await Session(scripted_server, tmp_path).write("f.txt", "insert", insert_line=1) == {
        "error": True, "message": "new_str is empty: give the text to insert"}


# --- append --------------------------------------------------------------------------------------

async def test_append_adds_a_leading_newline_when_missing(scripted_server, tmp_path):
    (tmp_path / "a.txt").write_text("x")
    (tmp_path / "b.txt").write_bytes(b"x\r\ny\r\n")
    (tmp_path / "u.txt").write_bytes(b"\xfe\xff" + "x\n".encode("utf-16-be"))
    session = Session(scripted_server, tmp_path)
    for name in ("a.txt", "b.txt", "u.txt"):
        await read_first(session, name)
        assert await session.write(name, "append", new_str="more\n") == \
            ok(tmp_path / name, "append", "Content appended successfully")
    assert (tmp_path / "a.txt").read_text() == "x\nmore\n"
    assert (tmp_path / "b.txt").read_bytes() == b"x\r\ny\r\nmore\r\n"
    assert (tmp_path / "u.txt").read_bytes() == b"\xfe\xff" + "x\nmore\n".encode("utf-16-be")


# --- the command and the path --------------------------------------------------------------------

async def test_an_invalid_command_is_said_before_the_read_gate(scripted_server, tmp_path):
    """The reference answered must_read_first to a bad command on an unread file."""
    (tmp_path / "f.txt").write_text("x\n")
    assert await Session(scripted_server, tmp_path).write("f.txt", "delete") == {
        "error": True, "message": "Invalid command 'delete'. Use: create, str_replace, insert, append"}
    assert (tmp_path / "f.txt").read_text() == "x\n"


async def test_a_command_in_another_case_is_read(scripted_server, tmp_path):
    assert (await Session(scripted_server, tmp_path).write("n.txt", "Create", file_text="x"))["success"] is True


async def test_only_regular_files_are_written(scripted_server, tmp_path):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "dir").mkdir()
    session = Session(scripted_server, tmp_path)
    out = await session.write("pipe", "create", file_text="x")
    assert out["error"] is True and "is a named pipe, not a regular file" in out["message"]
    out = await session.write("dir", "create", file_text="x")
    assert out == {"error": True, "message": f"{tmp_path / 'dir'} is a directory, not a file"}


async def test_a_character_the_encoding_cannot_store_is_refused(scripted_server, tmp_path):
    (tmp_path / "l1.txt").write_bytes("café\n".encode("latin-1"))
    session = Session(scripted_server, tmp_path)
    await read_first(session, "l1.txt")
    out = await session.write("l1.txt", "append", new_str="日本\n")
    assert out["error"] is True and out["message"].startswith("The new text holds '日' (U+65E5), which the file's "
                                                              "encoding (")
    assert (tmp_path / "l1.txt").read_bytes() == "café\n".encode("latin-1")


async def test_permission_shows_the_change_and_a_rejection_writes_nothing(scripted_server, tmp_path):
    session = Session(scripted_server, tmp_path, {"yolo": False})
    text = await session.text("fs_write", {"path": "n.txt", "command": "create", "file_text": "hi\n"},
                              answers=["reject_once"])
    assert text == "[fs_write rejected by the user]" and not (tmp_path / "n.txt").exists()
    assert session.ui.previews == [f"n.txt\n@@ -0,0 +1 @@\n+1 │ hi"]
    await session.text("fs_write", {"path": "n.txt", "command": "create", "file_text": "hi\n"}, answers=["allow_once"])
    assert (tmp_path / "n.txt").read_text() == "hi\n"


async def test_the_terminal_and_editors_get_the_change(scripted_server, tmp_path):
    (tmp_path / "f.txt").write_text("a\nb\n")
    session = Session(scripted_server, tmp_path)
    await read_first(session, "f.txt")
    (call,) = await session.done(("fs_write", {"path": "f.txt", "command": "str_replace", "old_str": "b",
                                               "new_str": "B"}))
    assert call.result.change.old_text == "a\nb\n" and call.result.change.new_text == "a\nB\n"
    assert call.result.preview == f"{tmp_path / 'f.txt'}: str_replace · +1 -1 lines\n-2 │ b\n+2 │ B"


async def test_an_empty_path_is_refused_by_each_tool(scripted_server, tmp_path):
    session = Session(scripted_server, tmp_path)
    said = {"error": True, "message": "path is required: the path of the file, relative to the working directory"}
    assert await session.write(" ", "create", file_text="x") == said
    assert await session.read("") == said
    assert await session.edit("", "a", "b") == {"error": True, "message": "file_path is required: the path of the "
                                                                          "file to edit"}


async def test_a_quoted_or_escaped_new_path_is_created_unquoted(scripted_server, tmp_path):
    """The reference's fs_write stripped quotes without looking; its fs_read looked first: mm looks in both."""
    session = Session(scripted_server, tmp_path)
    assert (await session.write('"new file.txt"', "create", file_text="a\n"))["path"] == str(tmp_path / "new file.txt")
    assert (await session.write("other\\ file.txt", "create", file_text="b\n"))["path"] == str(tmp_path / "other file.txt")
    assert (await session.edit("'new file.txt'", "a", "A"))["success"] is True
    assert (tmp_path / "new file.txt").read_text() == "A\n" and (tmp_path / "other file.txt").read_text() == "b\n"
