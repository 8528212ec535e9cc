"""file_edit through a real conversation: the exact match, the gutter retry, replace_all, the
ambiguity samples, the refused no-op, what a file keeps, and the weaknesses notes/mnemoai.md
§2.3 lists, shown absent in mm (mnemo-tools.md, file_edit matching)."""

from __future__ import annotations

import json

from files_calls import Session
from mm.tools.reads import seen_now


async def session_read(server, cwd, *names: str, config: dict | None = None) -> Session:
    session = Session(server, cwd, config)
    for name in names:
        assert "error" not in await session.read(name)
    return session


def replaced(path, n: int = 1, old_lines: int = 1, new_lines: int = 1) -> dict:
    return {"success": True, "file_path": str(path), "replacements": n, "old_lines": old_lines,
            "new_lines": new_lines, "lines_delta": new_lines - old_lines,
            "message": f"Successfully replaced {n} occurrence(s) in {path}"}


async def test_exact_replacement(scripted_server, tmp_path):
    (tmp_path / "f.py").write_text("def f():\n    return 1\n")
    session = await session_read(scripted_server, tmp_path, "f.py")
    assert await session.edit("f.py", "    return 1", "    x = 1\n    return x") == replaced(tmp_path / "f.py", 1, 1, 2)
    assert (tmp_path / "f.py").read_text() == "def f():\n    x = 1\n    return x\n"


async def test_nothing_is_matched_loosely(scripted_server, tmp_path):
    (tmp_path / "f.py").write_text("def f():\n    return 1\n")
    session = await session_read(scripted_server, tmp_path, "f.py")
    assert await session.edit("f.py", "return  1", "return 2") == {
        "error": True, "message": "String to replace not found in file", "old_string_preview": "return  1",
        "next_steps": ["Make sure you read the file with fs_read FIRST",
                       "Copy the EXACT text from the file (including spaces/tabs)",
                       "Check for invisible characters (tabs vs spaces)", "Verify line endings (\\n vs \\r\\n)",
                       "Use a larger context snippet to ensure exact match"]}
    long = "x" * 150
    assert (await session.edit("f.py", long, "y"))["old_string_preview"] == "x" * 100 + "..."


async def test_text_copied_from_fs_read_with_its_gutter_matches(scripted_server, tmp_path):
    (tmp_path / "f.py").write_text("a = 1\nb = 2\nc = 3\n")
    session = Session(scripted_server, tmp_path)
    content = (await session.read("f.py", start_line=2, end_line=3))["content"]
    assert content == "     2\tb = 2\n     3\tc = 3"
    assert (await session.edit("f.py", content, "b = 20\nc = 30"))["success"] is True
    assert (tmp_path / "f.py").read_text() == "a = 1\nb = 20\nc = 30\n"


async def test_new_string_is_never_altered(scripted_server, tmp_path):
    (tmp_path / "t.tsv").write_text("id\tname\n1\tann\n")
    session = await session_read(scripted_server, tmp_path, "t.tsv")
    assert (await session.edit("t.tsv", "1\tann", "2\tbob"))["success"] is True  # a TSV row is no gutter
    assert (tmp_path / "t.tsv").read_text() == "id\tname\n2\tbob\n"


async def test_a_gutter_pasted_into_new_string_too_is_refused(scripted_server, tmp_path):
    (tmp_path / "f.py").write_text("a = 1\nb = 2\n")
    session = await session_read(scripted_server, tmp_path, "f.py")
    out = await session.edit("f.py", "     1\ta = 1", "     1\ta = 10")
    assert out == {"error": True, "message": "old_string matched once its line numbers were taken off, and "
                   "new_string starts each line with a line number too (as fs_read shows them): send new_string "
                   "without them; nothing was written"}
    assert (tmp_path / "f.py").read_text() == "a = 1\nb = 2\n"


async def test_ambiguity_gives_up_to_three_samples(scripted_server, tmp_path):
    (tmp_path / "f.py").write_text("x = 1\n" + "  call()\n" * 5)
    session = await session_read(scripted_server, tmp_path, "f.py")
    assert await session.edit("f.py", "call()", "run()") == {
        "error": True, "message": "Found 5 occurrences of old_string, but replace_all=False",
        "occurrences_sample": [{"line": 2, "preview": "call()"}, {"line": 3, "preview": "call()"},
                               {"line": 4, "preview": "call()"}],
        "next_steps": ["Option 1: Set replace_all=True to replace all 5 occurrences",
                       "Option 2: Make old_string more specific by including more surrounding context",
                       "Example: Include the line before and after to make it unique"]}


async def test_a_multi_line_old_string_gets_samples_too(scripted_server, tmp_path):
    """The reference gave samples only for an old_string on one line."""
    (tmp_path / "f.py").write_text("if a:\n    go()\nx\nif a:\n    go()\n")
    session = await session_read(scripted_server, tmp_path, "f.py")
    out = await session.edit("f.py", "if a:\n    go()", "if b:\n    go()")
    assert out["occurrences_sample"] == [{"line": 1, "preview": "if a:"}, {"line": 4, "preview": "if a:"}]


async def test_replace_all(scripted_server, tmp_path):
    (tmp_path / "f.py").write_text("a\nfoo\nb\nfoo\n")
    session = await session_read(scripted_server, tmp_path, "f.py")
    assert await session.edit("f.py", "foo", "bar", replace_all=True) == replaced(tmp_path / "f.py", 2)
    assert (tmp_path / "f.py").read_text() == "a\nbar\nb\nbar\n"
    assert (await session.edit("f.py", "a", "A", replace_all=True))["replacements"] == 3  # each `bar` holds one too


async def test_a_replacement_that_changes_nothing_is_refused(scripted_server, tmp_path):
    (tmp_path / "f.py").write_text("same\n")
    session = await session_read(scripted_server, tmp_path, "f.py")
    assert await session.edit("f.py", "same", "same") == {
        "error": True, "message": "Replacement produced no changes (old_string and new_string are identical)"}


async def test_an_empty_new_string_deletes(scripted_server, tmp_path):
    (tmp_path / "f.py").write_text("keep\ndrop\nkeep2\n")
    session = await session_read(scripted_server, tmp_path, "f.py")
    assert (await session.edit("f.py", "drop\n", ""))["lines_delta"] == -1
    assert (tmp_path / "f.py").read_text() == "keep\nkeep2\n"


async def test_a_missing_new_string_is_an_invalid_call(scripted_server, tmp_path):
    (tmp_path / "f.py").write_text("x\n")
    text = await Session(scripted_server, tmp_path).text("file_edit", {"file_path": "f.py", "old_string": "x"})
    assert text.startswith("[file_edit: invalid call, nothing was run — new_string is missing.")
    assert 'new_string (string): Replacement text; pass "" to delete old_string.' in text
    assert (tmp_path / "f.py").read_text() == "x\n"


async def test_an_empty_old_string_only_fills_an_empty_file(scripted_server, tmp_path):
    (tmp_path / "e.txt").write_text("")
    (tmp_path / "f.txt").write_text("x\n")
    session = await session_read(scripted_server, tmp_path, "f.txt")
    assert (await session.edit("e.txt", "", "first\n"))["success"] is True
    assert (tmp_path / "e.txt").read_text() == "first\n"
    out = await session.edit("f.txt", "", "y")
    assert out["error"] is True and out["message"].startswith("old_string is empty")


async def test_missing_file_and_directory(scripted_server, tmp_path):
    (tmp_path / "d").mkdir()
    session = Session(scripted_server, tmp_path)
    assert await session.edit("no.py", "a", "b") == {
        "error": True, "message": f"File not found: {tmp_path / 'no.py'}",
        "next_steps": ["Check if the file path is correct", "Verify the file exists with glob_search or execute_bash",
                       "Make sure you're using an absolute path, not a relative path"]}
    assert await session.edit("d", "a", "b") == {"error": True, "message": f"Path is not a file: {tmp_path / 'd'}",
                                                 "next_steps": ["This path points to a directory, not a file"]}


async def test_fs_write_s_path_is_accepted_and_two_paths_fail_closed(scripted_server, tmp_path):
    (tmp_path / "f.py").write_text("a\n")
    (tmp_path / "g.py").write_text("a\n")
    session = await session_read(scripted_server, tmp_path, "f.py", "g.py")
    out = await session.call("file_edit", {"path": "f.py", "old_str": "a", "new_str": "b"})
    assert out["success"] is True and (tmp_path / "f.py").read_text() == "b\n"
    text = await session.text("file_edit", {"file_path": "g.py", "path": "f.py", "old_string": "a", "new_string": "c"})
    assert text.startswith('[file_edit: invalid call, nothing was run — "path" is not a parameter of this tool')
    assert (tmp_path / "g.py").read_text() == "a\n" and (tmp_path / "f.py").read_text() == "b\n"


async def test_encoding_bom_and_line_endings_are_kept(scripted_server, tmp_path):
    files = {"crlf.txt": b"a = 1\r\nb = 2\r\n", "bom.txt": b"\xef\xbb\xbfa = 1\nb = 2\n",
             "u16.txt": b"\xff\xfe" + "a = 1\r\nb = 2\r\n".encode("utf-16-le"),
             "u32.txt": b"\xff\xfe\x00\x00" + "a = 1\nb = 2\n".encode("utf-32-le"),
             "l1.txt": "a = 1 # café\nb = 2\n".encode("latin-1")}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    session = await session_read(scripted_server, tmp_path, *files)
    for name in files:
        assert (await session.edit(name, "a = 1", "a = 1\nc = é"))["success"] is True, name
    assert (tmp_path / "crlf.txt").read_bytes() == "a = 1\r\nc = é\r\nb = 2\r\n".encode()
    assert (tmp_path / "bom.txt").read_bytes() == b"\xef\xbb\xbf" + "a = 1\nc = é\nb = 2\n".encode()
    assert (tmp_path / "u16.txt").read_bytes() == b"\xff\xfe" + "a = 1\r\nc = é\r\nb = 2\r\n".encode("utf-16-le")
    assert (tmp_path / "u32.txt").read_bytes() == b"\xff\xfe\x00\x00" + "a = 1\nc = é\nb = 2\n".encode("utf-32-le")
    assert (tmp_path / "l1.txt").read_bytes() == "a = 1\nc = é # café\nb = 2\n".encode("latin-1")


async def test_mixed_line_endings_stay_mixed(scripted_server, tmp_path):
    """The reference wrote a file back with its dominant line ending on every line."""
    (tmp_path / "m.txt").write_bytes(b"one\r\ntwo\nthree\r\nfour\r\n")
    session = await session_read(scripted_server, tmp_path, "m.txt")
    assert (await session.edit("m.txt", "two", "TWO"))["success"] is True
    assert (tmp_path / "m.txt").read_bytes() == b"one\r\nTWO\nthree\r\nfour\r\n"
    assert (await session.edit("m.txt", "three", "3a\n3b"))["success"] is True
    assert (tmp_path / "m.txt").read_bytes() == b"one\r\nTWO\n3a\r\n3b\r\nfour\r\n"


async def test_binary_files_are_not_edited(scripted_server, tmp_path):
    (tmp_path / "b.bin").write_bytes(b"abc\x00def")
    session = Session(scripted_server, tmp_path)
    out = await session.edit("b.bin", "abc", "xyz")
    assert out["must_read_first"] is True  # the gate comes first, as in the reference; fs_read refuses it too
    session.conv.reads.record(tmp_path / "b.bin", seen_now(tmp_path / "b.bin"))  # as if it had been read
    out = await session.edit("b.bin", "abc", "xyz")
    assert out == {"error": True, "message": f"{tmp_path / 'b.bin'} is a binary file, not text"}
    assert (tmp_path / "b.bin").read_bytes() == b"abc\x00def"


async def test_the_change_reaches_editors_and_the_permission_prompt(scripted_server, tmp_path):
    (tmp_path / "f.py").write_text("a\nb\n")
    session = await session_read(scripted_server, tmp_path, "f.py", config={"yolo": False})
    (call,) = await session.done(("file_edit", {"file_path": "f.py", "old_string": "b", "new_string": "B"}),
                                 answers=["allow_once"])
    assert json.loads(call.result.text)["success"] is True
    assert session.ui.previews == ["f.py\n@@ -1,2 +1,2 @@\n 1 │ a\n-2 │ b\n+2 │ B"]
    assert (call.result.change.path, call.result.change.old_text, call.result.change.new_text) == \
        (tmp_path / "f.py", "a\nb\n", "a\nB\n")


async def test_front_ends_name_the_file_and_count_the_calls(scripted_server, tmp_path):
    from mm.acp.toolcalls import call_locations, tool_kind
    from mm.tools.titles import tool_title
    from mm.ui.render import call_header

    (tmp_path / "f.py").write_text("a\n")
    session = Session(scripted_server, tmp_path)
    await session.done(("fs_read", {"path": "f.py"}), ("file_edit", {"file_path": "f.py", "old_string": "a",
                                                                     "new_string": "b"}))
    assert session.ui.turn_done().recap.file_ops == 2  # 📝 N file op(s)
    assert call_header("file_edit", {"file_path": "f.py"}) == "📝 file_edit: f.py"
    assert call_header("fs_read", {"path": "d", "mode": "Directory"}) == "📝 fs_read: d (Directory)"
    assert call_header("fs_write", {"path": "n.txt", "command": "create"}) == "📝 fs_write: n.txt (create)"
    assert tool_title("file_edit", {"file_path": "f.py"}) == "file_edit: f.py"
    assert call_locations("file_edit", {"file_path": "f.py"}, tmp_path) == [{"path": str(tmp_path / "f.py")}]
    assert [tool_kind(n) for n in ("fs_read", "fs_write", "file_edit")] == ["read", "edit", "edit"]


def test_mm_p_with_the_files_group_end_to_end(scripted_server, tmp_path):
    """`mm -p` as a subprocess: the agent file names the group, the model reads, is refused an
    unread write, edits what it read; the tools are declared with their notes."""
    import os
    import subprocess
    import sys

    (tmp_path / ".mm").mkdir()
    (tmp_path / ".mm" / "agent.yaml").write_text("toolsets: [core, files]\nfiles:\n  docMaxTokens: 500\n")
    (tmp_path / "app.py").write_bytes(b"DEBUG = True\r\nPORT = 80\r\n")
    (tmp_path / "other.py").write_text("x = 1\n")
    srv = scripted_server
    srv.add_tool_calls([{"id": "r", "name": "fs_read", "arguments": {"path": "app.py"}},
                        {"id": "w", "name": "file_edit", "arguments": {"file_path": "other.py", "old_string": "x = 1",
                                                                       "new_string": "x = 2"}}])
    srv.add_tool_calls([{"id": "e", "name": "file_edit", "arguments": {
        "file_path": "app.py", "old_string": "     1\tDEBUG = True", "new_string": "DEBUG = False"}}])
    srv.add_reply("DEBUG is off.")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "mm", "-p", "turn debug off", "--base-url", srv.base_url, "--model",
                           "m"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "app.py").read_bytes() == b"DEBUG = False\r\nPORT = 80\r\n"
    assert (tmp_path / "other.py").read_text() == "x = 1\n"
    declared = {t["function"]["name"]: t["function"]["description"] for t in srv.requests[0]["tools"]}
    assert {"fs_read", "fs_write", "file_edit", "read_file", "edit_file"} <= set(declared)
    assert declared["file_edit"].endswith("Prefer edit_file; use file_edit to replace every occurrence (replace_all).")
    results = {m["tool_call_id"]: json.loads(m["content"]) for m in srv.requests[2]["messages"] if m["role"] == "tool"}
    assert results["r"]["content"] == "     1\tDEBUG = True\n     2\tPORT = 80" and results["r"]["max_tokens"] == 500
    assert results["w"]["must_read_first"] is True and results["e"]["success"] is True
    assert "📝 fs_read: app.py" in done.stderr and "📝 file_edit: app.py" in done.stderr
    assert done.stderr.rstrip().splitlines()[-1] == "⚙ 0 command(s) · 📝 3 file op(s)"
