"""Read-before-write through real conversations (mnemo-tools.md §Read-before-write;
notes/mnemoai.md §3, read_state): the two errors word for word, what counts as a read, what
makes it stale, how long it lasts, and the same gate on write_file and edit_file with
`readBeforeWrite: true`."""

from __future__ import annotations

import os

import pytest

from files_calls import Session


def must_read(path) -> dict:
    return {"error": True, "must_read_first": True,
            "message": f"Refusing to modify {path}: read it first with fs_read so the edit is based on its current "
                       "content.",
            "next_steps": [f'Call fs_read(path="{path}") to load the file',
                           "Then retry this change against the exact text you just read"]}


def stale(path) -> dict:
    return {"error": True, "stale_read": True,
            "message": f"Refusing to modify {path}: it changed on disk since you last read it. Read it again so your "
                       "edit is based on the current content.",
            "next_steps": [f'Call fs_read(path="{path}") to reload the current content',
                           "Re-derive your edit from the fresh read, then retry"]}


WRITES = [("fs_write", lambda: {"path": "f.txt", "command": "str_replace", "old_str": "one", "new_str": "ONE"}),
          ("fs_write", lambda: {"path": "f.txt", "command": "create", "file_text": "new\n"}),
          ("fs_write", lambda: {"path": "f.txt", "command": "insert", "insert_line": 0, "new_str": "x"}),
          ("fs_write", lambda: {"path": "f.txt", "command": "append", "new_str": "x"}),
          ("file_edit", lambda: {"file_path": "f.txt", "old_string": "one", "new_string": "ONE"})]


@pytest.mark.parametrize("tool, args", WRITES, ids=["str_replace", "create", "insert", "append", "file_edit"])
async def test_a_file_never_read_is_refused(scripted_server, tmp_path, tool, args):
    (tmp_path / "f.txt").write_text("one\ntwo\n")
    assert await Session(scripted_server, tmp_path).call(tool, args()) == must_read(tmp_path / "f.txt")
    assert (tmp_path / "f.txt").read_text() == "one\ntwo\n"


@pytest.mark.parametrize("tool, args", WRITES, ids=["str_replace", "create", "insert", "append", "file_edit"])
async def test_a_file_changed_since_it_was_read_is_refused(scripted_server, tmp_path, tool, args):
    (tmp_path / "f.txt").write_text("one\ntwo\n")
    session = Session(scripted_server, tmp_path)
    await session.read("f.txt")
    (tmp_path / "f.txt").write_text("one\ntwo\nthree\n")
    assert await session.call(tool, args()) == stale(tmp_path / "f.txt")
    assert (tmp_path / "f.txt").read_text() == "one\ntwo\nthree\n"
    await session.read("f.txt")  # read again: it goes through
    assert (await session.call(tool, args())).get("success") is True


async def test_a_change_that_kept_the_size_and_the_time_is_still_stale(scripted_server, tmp_path):
    """The reference compared the modification time only."""
    target = tmp_path / "f.txt"
    target.write_text("value = 1\n")
    session = Session(scripted_server, tmp_path)
    await session.read("f.txt")
    before = target.stat()
    target.write_text("value = 2\n")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert target.stat().st_mtime_ns == before.st_mtime_ns and target.stat().st_size == before.st_size
    assert await session.edit("f.txt", "value = 1", "value = 3") == stale(target)


async def test_a_file_touched_without_change_is_not_stale(scripted_server, tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("x = 1\n")
    session = Session(scripted_server, tmp_path)
    await session.read("f.txt")
    os.utime(target, ns=(1, 10**9))
    assert (await session.edit("f.txt", "x = 1", "x = 2"))["success"] is True


async def test_new_and_empty_files_need_no_read(scripted_server, tmp_path):
    (tmp_path / "empty.txt").write_text("")
    session = Session(scripted_server, tmp_path)
    assert (await session.write("new.txt", "create", file_text="a\n"))["success"] is True
    assert (await session.write("empty.txt", "create", file_text="b\n"))["success"] is True
    assert (tmp_path / "empty.txt").read_text() == "b\n"


async def test_a_successful_write_counts_as_a_read(scripted_server, tmp_path):
    session = Session(scripted_server, tmp_path)
    await session.write("f.txt", "create", file_text="a\nb\n")
    assert (await session.edit("f.txt", "a", "A"))["success"] is True
    assert (await session.edit("f.txt", "b", "B"))["success"] is True
    assert (await session.write("f.txt", "append", new_str="c\n"))["success"] is True
    assert (tmp_path / "f.txt").read_text() == "A\nB\nc\n"


async def test_the_record_is_keyed_by_the_resolved_path(scripted_server, tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f.txt").write_text("one\n")
    os.symlink(tmp_path / "real", tmp_path / "link")
    session = Session(scripted_server, tmp_path)
    await session.read("link/../real/./f.txt")
    assert (await session.edit("link/f.txt", "one", "ONE"))["success"] is True
    assert (tmp_path / "real" / "f.txt").read_text() == "ONE\n"


async def test_a_directory_listing_records_nothing(scripted_server, tmp_path):
    (tmp_path / "f.txt").write_text("one\n")
    session = Session(scripted_server, tmp_path)
    await session.read(".", mode="Directory")
    assert await session.edit("f.txt", "one", "ONE") == must_read(tmp_path / "f.txt")


@pytest.mark.parametrize("read", [{"mode": "Search", "pattern": "line 3"}, {"start_line": 2, "end_line": 3},
                                  {"mode": "JSON", "start_line": -1}],
                         ids=["search", "range", "json-range"])
async def test_a_partial_read_allows_an_edit_but_not_a_whole_rewrite(scripted_server, tmp_path, read):
    """The reference let a Search or a partial read bless the whole file."""
    (tmp_path / "f.txt").write_text("".join(f'"line {i}"\n' for i in range(1, 6)))
    session = Session(scripted_server, tmp_path)
    assert "error" not in await session.read("f.txt", **read)
    out = await session.write("f.txt", "create", file_text="everything new\n")
    assert out["must_read_first"] is True and out["message"].startswith(
        f"Refusing to replace {tmp_path / 'f.txt'} whole: only part of it was read (")
    assert out["next_steps"] == [f'Call fs_read(path="{tmp_path / "f.txt"}") without a line range to load the whole '
                                 "file", "Then retry, or change only the part you read with an edit"]
    assert (await session.edit("f.txt", '"line 3"', '"line three"'))["success"] is True
    assert (await session.write("f.txt", "create", file_text="everything new\n"))["success"] is True  # written whole


async def test_a_truncated_read_is_partial(scripted_server, tmp_path):
    (tmp_path / "f.txt").write_text("".join(f"line {i}\n" for i in range(500)))
    session = Session(scripted_server, tmp_path, {"files": {"docMaxTokens": 50}})
    assert (await session.read("f.txt"))["truncated"] is True
    out = await session.write("f.txt", "create", file_text="x\n")
    assert "only part of it was read (the output was cut short after line" in out["message"]


async def test_read_file_counts_for_fs_write_and_file_edit(scripted_server, tmp_path):
    (tmp_path / "f.txt").write_text("one\n")
    session = Session(scripted_server, tmp_path, {"toolsets": ["core", "files"]})
    await session.text("read_file", {"path": "f.txt"})
    assert (await session.edit("f.txt", "one", "ONE"))["success"] is True
    assert (await session.write("f.txt", "create", file_text="whole\n"))["success"] is True


async def test_the_record_survives_compaction_and_not_new(scripted_server, tmp_path):
    (tmp_path / "f.txt").write_text("one\n")
    session = Session(scripted_server, tmp_path, {"context": {"keepLastTurns": 0}})
    await session.read("f.txt")
    scripted_server.add_reply("The file f.txt was read.")
    assert (await session.conv.compact()).startswith("🗜️ compressed")
    assert (await session.edit("f.txt", "one", "ONE"))["success"] is True
    session.conv.new()
    assert await session.edit("f.txt", "ONE", "1") == must_read(tmp_path / "f.txt")


async def test_each_conversation_has_its_own_record(scripted_server, tmp_path):
    (tmp_path / "f.txt").write_text("one\n")
    first, second = Session(scripted_server, tmp_path), Session(scripted_server, tmp_path)
    await first.read("f.txt")
    assert await second.edit("f.txt", "one", "ONE") == must_read(tmp_path / "f.txt")


# --- write_file and edit_file --------------------------------------------------------------------

async def test_mm_s_own_tools_need_no_read_by_default(scripted_server, tmp_path):
    (tmp_path / "f.txt").write_text("one\n")
    session = Session(scripted_server, tmp_path, {"toolsets": ["core"]})
    text = await session.text("edit_file", {"path": "f.txt", "edits": [{"old": "one", "new": "ONE"}]})
    assert text.startswith("f.txt: 1 edit applied")
    assert (await session.text("write_file", {"path": "f.txt", "content": "x\n"})).startswith("f.txt: replaced")


async def test_read_before_write_true_gates_write_file_and_edit_file(scripted_server, tmp_path):
    (tmp_path / "f.txt").write_text("one\n")
    session = Session(scripted_server, tmp_path, {"toolsets": ["core"], "readBeforeWrite": True})
    assert await session.text("edit_file", {"path": "f.txt", "edits": [{"old": "one", "new": "ONE"}]}) == (
        "f.txt: not modified — read it first with read_file, so the change is based on its current content; "
        "nothing was written")
    assert await session.text("write_file", {"path": "f.txt", "content": "x\n"}) == (
        "f.txt: not modified — read it first with read_file, so the change is based on its current content; "
        "nothing was written")
    await session.text("read_file", {"path": "f.txt", "start": 1, "end": 1})
    assert (await session.text("edit_file", {"path": "f.txt", "edits": [{"old": "one", "new": "ONE"}]})).startswith(
        "f.txt: 1 edit applied")
    (tmp_path / "f.txt").write_text("changed by someone\n")
    assert await session.text("write_file", {"path": "f.txt", "content": "x\n"}) == (
        "f.txt: not modified — it changed on disk since you last read it; read it again with read_file and "
        "re-derive the change; nothing was written")
    assert (tmp_path / "f.txt").read_text() == "changed by someone\n"
    assert (await session.text("write_file", {"path": "new.txt", "content": "x\n"})).startswith("new.txt: created")


async def test_a_partial_read_file_does_not_allow_write_file(scripted_server, tmp_path):
    (tmp_path / "f.txt").write_text("a\nb\nc\n")
    session = Session(scripted_server, tmp_path, {"toolsets": ["core"], "readBeforeWrite": True})
    await session.text("read_file", {"path": "f.txt", "start": 2, "end": 2})
    assert await session.text("write_file", {"path": "f.txt", "content": "x\n"}) == (
        "f.txt: not replaced — only part of it was read (lines 2-2 of 3); read it whole with read_file first, so "
        "nothing you have not seen is overwritten; nothing was written")


async def test_fs_read_counts_for_write_file(scripted_server, tmp_path):
    (tmp_path / "f.txt").write_text("one\n")
    session = Session(scripted_server, tmp_path, {"toolsets": ["core", "files"], "readBeforeWrite": True})
    await session.read("f.txt")
    assert (await session.text("write_file", {"path": "f.txt", "content": "x\n"})).startswith("f.txt: replaced")
    assert (await session.edit("f.txt", "x", "y"))["success"] is True  # write_file's write counts as a read
