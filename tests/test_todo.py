"""The `todo` group (mnemo-tools.md §Track multi-step work; notes/mnemoai.md §2.8;
docs/tools-todo.md): every parameter, validation message and scope rule through the real engine
against the scripted model server; the list shown to the user in line mode on a real
pseudo-terminal and sent to an editor as a `plan` update by a real `mm -acp`. Each weakness of the
reference's todo tools (notes §2.8) has a test here saying so."""

from __future__ import annotations

import json

import pytest

from harness import RecordingUI, make_conversation
from test_acp_sdk import ScriptedClient, running_mm, write_agent_file
from mm_runs import agent_file, line_mode, one_shot

TODO = {"toolsets": ["core", "todo"]}
ITEMS = [{"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
         {"content": "Run the tests", "status": "in_progress", "activeForm": "Running the tests"},
         {"content": "Fix the bug", "status": "pending", "activeForm": "Fixing the bug"}]
CHECKLIST = "📋 todo: 1/3 completed\n✔ Read the code\n▶ Running the tests\n☐ Fix the bug"


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


async def results(srv, cwd, *calls, conv=None) -> list:
    """The results of `calls`, made in one turn of a conversation (`conv`, else a new one), as
    ToolCallDone events."""
    conv = conv or make_conversation(srv.base_url, cwd, TODO)
    srv.add_tool_calls(list(calls))
    srv.add_reply("ok")
    ui = RecordingUI()
    await conv.run_turn("go", ui)
    return ui.done_calls()


def answer(done) -> dict | str:
    try:
        return json.loads(done.result.text)
    except ValueError:
        return done.result.text


# ---------------------------------------------------------------------------------------------
# todo_write, todo_read, todo_clear


async def test_write_then_read(scripted_server, tmp_path):
    wrote, read = await results(scripted_server, tmp_path, call("todo_write", todos=ITEMS), call("todo_read"))
    assert answer(wrote) == {"success": True, "total": 3, "pending": 1, "in_progress": 1, "completed": 1,
                             "message": "Todo list updated: 1/3 completed"}
    assert wrote.result.preview == CHECKLIST
    assert [(e.content, e.status, e.priority) for e in wrote.result.plan] == [
        ("Read the code", "completed", "medium"), ("Run the tests", "in_progress", "medium"),
        ("Fix the bug", "pending", "medium")]
    assert answer(read) == {"todos": ITEMS, "count": 3}
    assert read.result.plan is None


async def test_a_json_string_holding_the_array_is_accepted(scripted_server, tmp_path):
    wrote, read = await results(scripted_server, tmp_path, call("todo_write", todos=json.dumps(ITEMS)),
                                call("todo_read"))
    assert answer(wrote)["message"] == "Todo list updated: 1/3 completed"
    assert answer(read)["todos"] == ITEMS


async def test_a_write_replaces_the_list_and_an_empty_list_is_a_list(scripted_server, tmp_path):
    conv = make_conversation(scripted_server.base_url, tmp_path, TODO)
    await results(scripted_server, tmp_path, call("todo_write", todos=ITEMS), conv=conv)
    wrote, read = await results(scripted_server, tmp_path, call("todo_write", todos=[]), call("todo_read"), conv=conv)
    assert answer(wrote)["message"] == "Todo list updated: 0/0 completed"
    assert answer(read) == {"todos": [], "count": 0}


async def test_statuses_are_read_whatever_their_case_and_separator(scripted_server, tmp_path):
    items = [dict(ITEMS[1], status=" In-Progress "), dict(ITEMS[2], status="PENDING"), dict(ITEMS[0], status="in progress")]
    wrote, read = await results(scripted_server, tmp_path, call("todo_write", todos=items), call("todo_read"))
    assert [i["status"] for i in answer(read)["todos"]] == ["in_progress", "pending", "in_progress"]
    assert "warning" in answer(wrote)


async def test_only_the_three_keys_are_kept(scripted_server, tmp_path):
    _, read = await results(scripted_server, tmp_path, call("todo_write", todos=[dict(ITEMS[0], id=7, note="x")]),
                            call("todo_read"))
    assert answer(read)["todos"] == [ITEMS[0]]


async def test_reading_without_a_list(scripted_server, tmp_path):
    [read] = await results(scripted_server, tmp_path, call("todo_read"))
    assert answer(read) == {"todos": [], "message": "No active todo list"}


async def test_clear(scripted_server, tmp_path):
    _, cleared, read, again = await results(scripted_server, tmp_path, call("todo_write", todos=ITEMS),
                                            call("todo_clear"), call("todo_read"), call("todo_clear"))
    assert answer(cleared) == {"success": True, "message": "Todo list cleared"}
    assert cleared.result.plan == [] and cleared.result.preview == "📋 todo list cleared"
    assert answer(read) == {"todos": [], "message": "No active todo list"}
    assert answer(again) == {"success": True, "message": "Todo list cleared"}
    assert again.result.plan is None  # nothing shown any more: nothing to take away


# ---------------------------------------------------------------------------------------------
# validation: every bad input a clear message, nothing stored


BAD = [
    ("[{bad", "Invalid JSON format: Expecting property name enclosed in double quotes: line 1 column 3 (char 2)"),
    ("", "Invalid JSON format: Expecting value: line 1 column 1 (char 0)"),
    # the reference iterated whatever it got: an object's keys, a string's characters (notes §2.8)
    ({"content": "x", "status": "pending", "activeForm": "y"}, "todos must be a JSON array of todo items, not an object"),
    ('{"content": "x", "status": "pending", "activeForm": "y"}',
     "todos must be a JSON array of todo items, not an object"),
    ('"content status activeForm"', "todos must be a JSON array of todo items, not a string"),
    (7, "todos must be a JSON array of todo items, not a number"),
    ("7", "todos must be a JSON array of todo items, not a number"),
    (["contentstatusactiveForm"],
     "Each todo must be an object with 'content', 'status', and 'activeForm' — item 1 is a string"),
    ([ITEMS[0], None], "Each todo must be an object with 'content', 'status', and 'activeForm' — item 2 is null"),
    ([{"content": "x", "status": "pending"}],
     "Each todo must have 'content', 'status', and 'activeForm' — item 1 has no 'activeForm'"),
    ([ITEMS[0], {"status": "pending"}],
     "Each todo must have 'content', 'status', and 'activeForm' — item 2 has no 'content' or 'activeForm'"),
    ([dict(ITEMS[0], status="done")], "Invalid status: done. Must be: pending, in_progress, or completed"),
    ([dict(ITEMS[0], status=["pending"])],
     "Invalid status: ['pending']. Must be: pending, in_progress, or completed"),
    ([dict(ITEMS[0], content="  ")], "'content' of item 1 must be a non-empty string"),
    ([dict(ITEMS[0], activeForm=3)], "'activeForm' of item 1 must be a non-empty string"),
]


@pytest.mark.parametrize("todos,message", BAD, ids=[str(i) for i in range(len(BAD))])
async def test_a_bad_list_is_refused_and_nothing_is_stored(scripted_server, tmp_path, todos, message):
    wrote, read = await results(scripted_server, tmp_path, call("todo_write", todos=todos), call("todo_read"))
    assert answer(wrote) == {"error": True, "message": message}
    assert wrote.result.failed and wrote.result.plan is None
    assert answer(read) == {"todos": [], "message": "No active todo list"}


async def test_todos_missing_is_an_invalid_call(scripted_server, tmp_path):
    [wrote] = await results(scripted_server, tmp_path, call("todo_write", scope="x"))
    assert answer(wrote).startswith("[todo_write: invalid call, nothing was run — todos is missing.")


async def test_several_items_in_progress_are_kept_with_a_warning_the_model_reads(scripted_server, tmp_path):
    """The reference only logged it, where the model never looks (notes §2.8)."""
    two = [dict(ITEMS[1]), dict(ITEMS[2], status="in_progress")]
    [wrote] = await results(scripted_server, tmp_path, call("todo_write", todos=two))
    assert answer(wrote) == {"success": True, "total": 2, "pending": 0, "in_progress": 2, "completed": 0,
                             "message": "Todo list updated: 0/2 completed",
                             "warning": "Expected exactly 1 in_progress task, but found 2. You should have exactly "
                                        "one task in_progress at a time."}


async def test_no_item_in_progress_is_no_warning(scripted_server, tmp_path):
    """The reference warned for 0 as well, against its own documentation (notes §2.8)."""
    [wrote] = await results(scripted_server, tmp_path, call("todo_write", todos=[ITEMS[2], ITEMS[0]]))
    assert "warning" not in answer(wrote)


# ---------------------------------------------------------------------------------------------
# scopes


async def test_scopes_keep_separate_lists(scripted_server, tmp_path):
    done = await results(scripted_server, tmp_path, call("todo_write", todos=ITEMS[:1], scope="docs"),
                         call("todo_write", todos=ITEMS[1:]), call("todo_read", scope="docs"), call("todo_read"),
                         call("todo_clear", scope="docs"), call("todo_read", scope="docs"), call("todo_read"))
    assert done[0].result.preview == "📋 todo (docs): 1/1 completed\n✔ Read the code"
    assert answer(done[2])["todos"] == ITEMS[:1]
    assert answer(done[3])["todos"] == ITEMS[1:]
    assert answer(done[5]) == {"todos": [], "message": "No active todo list"}
    assert answer(done[6])["todos"] == ITEMS[1:]
    assert done[4].result.plan is None  # the list shown is the default one, written last


async def test_a_scope_is_sanitised_and_the_model_told_so(scripted_server, tmp_path):
    """Labels differing only in punctuation collide (the reference's documented trap): mm says
    under which name the list is kept."""
    wrote, read, other = await results(scripted_server, tmp_path, call("todo_write", todos=ITEMS, scope="fix bug #12"),
                                       call("todo_read", scope="fix_bug__12"), call("todo_read", scope="fix-bug-12"))
    assert answer(wrote)["scope_note"] == ("The scope 'fix bug #12' is stored as 'fix_bug__12': only letters, digits, _ "
                                           "and - are kept (64 at most).")
    assert answer(read)["todos"] == ITEMS
    assert answer(other)["message"] == "No active todo list"


async def test_a_long_scope_is_cut_to_64_characters_and_an_empty_one_is_default(scripted_server, tmp_path):
    long = "a" * 70
    wrote, read, empty = await results(scripted_server, tmp_path, call("todo_write", todos=ITEMS, scope=long),
                                       call("todo_read", scope="a" * 64), call("todo_write", todos=ITEMS[:1], scope=" "))
    assert answer(read)["todos"] == ITEMS
    assert "scope_note" in answer(wrote)
    assert empty.result.preview.startswith("📋 todo: ")  # the default list


async def test_lists_are_per_conversation(scripted_server, tmp_path):
    """Two conversations (two mm processes, two ACP sessions) never see each other's lists."""
    await results(scripted_server, tmp_path, call("todo_write", todos=ITEMS))
    [read] = await results(scripted_server, tmp_path, call("todo_read"))
    assert answer(read) == {"todos": [], "message": "No active todo list"}


# ---------------------------------------------------------------------------------------------
# what the user sees


async def test_an_editor_gets_the_list_as_a_plan_update(tmp_path, scripted_server):
    srv = scripted_server
    work = tmp_path.resolve() / "work"
    work.mkdir()
    write_agent_file(work, srv.base_url, toolsets=["core", "todo"])
    client = ScriptedClient()
    async with running_mm(work, srv, client) as mm:
        sid, other = await mm.new_session(), await mm.new_session()
        srv.add_tool_calls([call("todo_write", todos=ITEMS)])
        srv.add_reply("planned")
        mark = len(mm.wire)
        assert (await mm.prompt(sid, "plan it"))["result"]["stopReason"] == "end_turn"
        updates = mm.updates_after(mark, sid)
        kinds = [u["sessionUpdate"] for u in updates]
        assert kinds.index("plan") > kinds.index("tool_call_update")  # after the call's result
        [plan] = [u for u in updates if u["sessionUpdate"] == "plan"]
        assert plan == {"sessionUpdate": "plan", "entries": [
            {"content": "Read the code", "priority": "medium", "status": "completed"},
            {"content": "Run the tests", "priority": "medium", "status": "in_progress"},
            {"content": "Fix the bug", "priority": "medium", "status": "pending"}]}

        srv.add_tool_calls([call("todo_read")])  # another session: another list
        srv.add_reply("read")
        mark = len(mm.wire)
        await mm.prompt(other, "read it")
        assert all(u["sessionUpdate"] != "plan" for u in mm.updates_after(mark, other))
        assert json.loads(srv.requests[-1]["messages"][-1]["content"]) == {"todos": [], "message": "No active todo list"}

        srv.add_tool_calls([call("todo_clear")])
        srv.add_reply("cleared")
        mark = len(mm.wire)
        await mm.prompt(sid, "clear it")
        assert [u for u in mm.updates_after(mark, sid) if u["sessionUpdate"] == "plan"] == [
            {"sessionUpdate": "plan", "entries": []}]


def test_line_mode_shows_the_whole_checklist(scripted_server, tmp_path):
    """previewLines (here 2) cuts a command's output, never the list."""
    agent_file(tmp_path, "toolsets: [core, todo]\npreviewLines: 2\n")
    items = ITEMS + [{"content": f"Step {n}", "status": "pending", "activeForm": f"Doing step {n}"} for n in range(4, 8)]
    scripted_server.add_tool_calls([call("todo_write", todos=items)])
    scripted_server.add_reply("Planned.")
    with line_mode(scripted_server, tmp_path) as (proc, term):
        term.write("plan it\r")
        shown = term.expect("Planned.")
        rows = [line.strip() for line in shown.replace("\r", "").split("\n")]
        start = rows.index("📋 todo: 1/7 completed")
        assert rows[start:start + 8] == ["📋 todo: 1/7 completed", "✔ Read the code", "▶ Running the tests",
                                         "☐ Fix the bug", "☐ Step 4", "☐ Step 5", "☐ Step 6", "☐ Step 7"]
        term.expect("›")
        term.write("/quit\r")
        assert proc.wait(30) == 0


def test_mm_p_shows_the_checklist_on_stderr(scripted_server, tmp_path):
    work = tmp_path / "work"
    agent_file(work, "toolsets: [core, todo]\npreviewLines: 1\n")
    scripted_server.add_tool_calls([call("todo_write", todos=ITEMS)])
    scripted_server.add_reply("Planned.")
    done = one_shot(scripted_server, work, "plan it")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Planned.\n"
    assert "\n".join("   " + line for line in CHECKLIST.split("\n")) in done.stderr


async def test_the_call_shows_the_list_as_sent_or_decoded(scripted_server, tmp_path):
    """What front ends and hooks see of the call: the array (decoded from a JSON string)."""
    conv = make_conversation(scripted_server.base_url, tmp_path, TODO)
    scripted_server.add_tool_calls([call("todo_write", todos=ITEMS), call("todo_write", todos=json.dumps(ITEMS))])
    scripted_server.add_reply("ok")
    ui = RecordingUI()
    await conv.run_turn("go", ui)
    started = [e for e in ui.events if type(e).__name__ == "ToolCallStarted"]
    assert [e.arguments["todos"] for e in started] == [ITEMS, ITEMS]
