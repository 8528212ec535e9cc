"""The `tasks` group (mnemo-tools.md §Run work in the background; notes/mnemoai.md §2.7;
docs/tools-tasks.md): every tool, status, parameter and message, through the real engine against
the scripted model server, with real processes started through mm's command supervisor — tasks
that outlive the turn that started them, are cancelled (their whole process group), are stopped
when the conversation ends, and leave no process behind. Each weakness of the reference's tasks
(notes §2.7) has a test here saying so."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import time
from pathlib import Path

import pytest

from harness import RecordingUI, make_conversation, marked_left, pids_marked
from mm.tools.tasks.logs import tasks_dir

TASKS = {"toolsets": ["core", "tasks"]}
STEP = 60  # seconds any wait may take before the test gives up (a hang, not a measure)
PROTECTED = ("Refusing to run a background task with its working directory inside a protected system location. "
             "Refusing to write under the protected system directory '/etc'. Writes are allowed in your home, "
             "project, temp, and app directories.")


@pytest.fixture
def state(tmp_path, monkeypatch) -> Path:
    """The tasks' log folder under a temporary XDG_STATE_HOME (the test's own)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state" / "mm" / "tasks"


@pytest.fixture
def work(tmp_path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


def parsed(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return text


@contextlib.asynccontextmanager
async def conversation(srv, cwd: Path, **config):
    """A real conversation with the tasks group, closed at the end (its tasks stopped)."""
    conv = make_conversation(srv.base_url, cwd, TASKS | config)
    try:
        yield conv
    finally:
        await conv.close()


async def turn(srv, conv, *calls: dict, ui: RecordingUI | None = None) -> list:
    """One turn in which the model makes `calls` (one message), then answers; the results, parsed."""
    srv.add_tool_calls(list(calls))
    srv.add_reply("ok")
    ui = ui or RecordingUI()
    await conv.run_turn("go", ui)
    return [parsed(done.result.text) for done in ui.done_calls()]


async def until(condition, what: str) -> None:
    deadline = time.monotonic() + STEP
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never saw {what}")
        await asyncio.sleep(0.02)


async def start(srv, conv, command: str, **extra) -> str:
    [started] = await turn(srv, conv, call("start_background_task", command=command, **extra))
    assert started["success"] is True, started
    return started["task_id"]


async def wait(srv, conv, task_id: str, seconds: float = STEP) -> dict:
    [done] = await turn(srv, conv, call("wait_for_task", task_id=task_id, timeout_seconds=seconds))
    return done


# ---------------------------------------------------------------------------------------------
# start_background_task


async def test_a_task_gets_an_8_character_id_a_log_and_outlives_its_turn(scripted_server, work, state, mark):
    command = f"export JOB_MARK={mark}; echo started; until [ -e go ]; do sleep 0.02; done; echo finished"
    async with conversation(scripted_server, work) as conv:
        [started] = await turn(scripted_server, conv, call("start_background_task", command=command))
        task_id = started["task_id"]
        assert re.fullmatch(r"[0-9a-f]{8}", task_id)
        assert started == {"success": True, "task_id": task_id,
                           "message": f"Task started in background: {command[:50]}",
                           "check_status": f'get_task_status(task_id="{task_id}")',
                           "get_output": f'get_task_output(task_id="{task_id}")'}
        await until(lambda: pids_marked(mark), "the task running after its turn ended")
        [status] = await turn(scripted_server, conv, call("get_task_status", task_id=task_id))
        assert status["status"] == "running" and status["return_code"] is None
        assert status["output_file"] == str(state / f"{task_id}.log")
        assert status["description"] == command[:50] and status["command"] == command
        assert status["working_directory"] == str(work)
        (work / "go").touch()
        done = await wait(scripted_server, conv, task_id)
        assert (done["success"], done["status"], done["return_code"]) == (True, "completed", 0)
        assert done["output"] == "started\nfinished\n"
        assert (state / f"{task_id}.log").read_text() == "started\nfinished\n"
    assert marked_left(mark) == []


async def test_the_description_is_kept_when_given(scripted_server, work, state):
    async with conversation(scripted_server, work) as conv:
        [started] = await turn(scripted_server, conv, call("start_background_task", command="true",
                                                             description="Running nothing"))
        assert started["message"] == "Task started in background: Running nothing"
        [status] = await turn(scripted_server, conv, call("get_task_status", task_id=started["task_id"]))
        assert status["description"] == "Running nothing"


async def test_an_empty_command_or_one_no_program_can_be_given_is_refused(scripted_server, work, state):
    async with conversation(scripted_server, work) as conv:
        empty, nul = await turn(scripted_server, conv, call("start_background_task", command="  "),
                                call("start_background_task", command="touch ran\x00x"))
    assert empty == {"error": True, "message": "No command provided"}
    assert nul == {"error": True, "message": "The task could not be started: the command holds a null character or "
                                             "an unpaired surrogate, which no program can be given"}
    assert not state.exists() and not (work / "ran").exists()


async def test_a_command_missing_is_an_invalid_call(scripted_server, work, state):
    async with conversation(scripted_server, work) as conv:
        [result] = await turn(scripted_server, conv, call("start_background_task", description="x"))
    assert result.startswith("[start_background_task: invalid call, nothing was run — command is missing.")


async def test_with_yolo_false_the_user_is_asked_first(scripted_server, work, state):
    async with conversation(scripted_server, work, yolo=False) as conv:
        ui = RecordingUI(["reject_once"])
        [result] = await turn(scripted_server, conv, call("start_background_task", command="touch ran"), ui=ui)
    assert result == "[start_background_task rejected by the user]"
    assert [name for name, _ in ui.asked] == ["start_background_task"]
    assert not (work / "ran").exists()


@pytest.mark.parametrize("tool,arguments,fault", [
    ("get_task_output", {"task_id": "x", "tail_lines": "many"}, 'tail_lines: "many" is not an integer'),
    ("list_background_tasks", {"include_completed": "maybe"}, 'include_completed: "maybe" is not a boolean'),
    ("wait_for_task", {"task_id": "x", "timeout_seconds": "soon"}, 'timeout_seconds: "soon" is not a number'),
    ("cancel_background_task", {}, "task_id is missing"),
    ("clear_completed_tasks", {"all": True}, '"all" is not a parameter of this tool'),
])
async def test_arguments_of_the_wrong_type_are_an_invalid_call(scripted_server, work, state, tool, arguments, fault):
    async with conversation(scripted_server, work) as conv:
        [result] = await turn(scripted_server, conv, call(tool, **arguments))
    assert result.startswith(f"[{tool}: invalid call, nothing was run — {fault}.")


# ---------------------------------------------------------------------------------------------
# statuses


async def test_statuses_completed_failed_and_error(scripted_server, work, state, monkeypatch):
    async with conversation(scripted_server, work) as conv:
        ok = await start(scripted_server, conv, "exit 0")
        bad = await start(scripted_server, conv, "echo oops >&2; exit 3")
        assert (await wait(scripted_server, conv, ok))["status"] == "completed"
        failed = await wait(scripted_server, conv, bad)
        assert (failed["success"], failed["status"], failed["return_code"]) == (False, "failed", 3)
        assert failed["output"] == "oops\n"  # stderr goes to the log too
        with monkeypatch.context() as patch:
            patch.setenv("PATH", str(work / "no-programs-here"))  # bash cannot be found: it never starts
            broken = await start(scripted_server, conv, "true")
        done = await wait(scripted_server, conv, broken)
        assert (done["status"], done["error"]) == ("error", "executable file not found in $PATH")


async def test_a_task_killed_by_a_signal_failed(scripted_server, work, state):
    async with conversation(scripted_server, work) as conv:
        task = await start(scripted_server, conv, "kill -TERM $$")
        done = await wait(scripted_server, conv, task)
    assert (done["status"], done["return_code"]) == ("failed", -15)


# ---------------------------------------------------------------------------------------------
# get_task_status, get_task_output


@pytest.mark.parametrize("tool", ["get_task_status", "get_task_output", "cancel_background_task", "wait_for_task"])
async def test_an_unknown_task_is_not_found(scripted_server, work, state, tool):
    async with conversation(scripted_server, work) as conv:
        [result] = await turn(scripted_server, conv, call(tool, task_id="deadbeef"))
    assert result == {"error": True, "message": "Task not found: deadbeef",
                      "suggestion": "Use list_background_tasks() to see all tasks"}


async def test_a_task_id_is_found_whatever_its_case_and_spaces(scripted_server, work, state):
    async with conversation(scripted_server, work) as conv:
        task = await start(scripted_server, conv, "true")
        [status] = await turn(scripted_server, conv, call("get_task_status", task_id=f" {task.upper()} "))
    assert status["task_id"] == task


async def test_tail_lines_zero_or_less_returns_the_whole_log(scripted_server, work, state):
    async with conversation(scripted_server, work) as conv:
        task = await start(scripted_server, conv, "seq 1 120")
        await wait(scripted_server, conv, task)
        default, two, whole, negative = await turn(
            scripted_server, conv, call("get_task_output", task_id=task), call("get_task_output", task_id=task,
                                                                               tail_lines=2),
            call("get_task_output", task_id=task, tail_lines=0), call("get_task_output", task_id=task, tail_lines=-1))
    numbers = [f"{n}\n" for n in range(1, 121)]
    assert default["output"] == "".join(numbers[-50:])
    assert two == {"success": True, "task_id": task, "status": "completed", "output": "119\n120\n",
                   "output_file": str(state / f"{task}.log"), "total_lines": 120}
    assert whole["output"] == negative["output"] == "".join(numbers)


async def test_output_of_a_running_task_and_a_last_line_without_newline(scripted_server, work, state):
    async with conversation(scripted_server, work) as conv:
        task = await start(scripted_server, conv, "printf 'a\\nb\\nc'; until [ -e go ]; do sleep 0.02; done")
        await until(lambda: (state / f"{task}.log").read_bytes() == b"a\nb\nc", "the output")
        [out] = await turn(scripted_server, conv, call("get_task_output", task_id=task, tail_lines=2))
        assert (out["status"], out["output"], out["total_lines"]) == ("running", "b\nc", 3)
        (work / "go").touch()
        await wait(scripted_server, conv, task)


async def test_colours_and_invalid_utf8_do_not_break_the_output(scripted_server, work, state):
    """The reference read logs as text: a byte that is not UTF-8 made the task `error` (notes §2.7)."""
    async with conversation(scripted_server, work) as conv:
        task = await start(scripted_server, conv, r"printf '\033[31mred\033[0m \377 end\n'")
        done = await wait(scripted_server, conv, task)
    assert done["status"] == "completed"
    assert done["output"] == "red \ufffd end\n"


async def test_a_long_log_keeps_its_end_within_max_output(scripted_server, work, state):
    async with conversation(scripted_server, work, maxOutput=3000) as conv:
        task = await start(scripted_server, conv, "seq 1 5000")
        await wait(scripted_server, conv, task)
        srv = scripted_server
        srv.add_tool_calls([call("get_task_output", task_id=task, tail_lines=0)])
        srv.add_reply("ok")
        ui = RecordingUI()
        await conv.run_turn("go", ui)
        text = ui.done_calls()[0].result.text
    assert len(text) <= 3000
    output = json.loads(text)["output"]
    assert output.startswith(f"[... the start of the log is left out: the whole log is {state / (task + '.log')} ...]\n")
    assert output.endswith("\n4999\n5000\n")


# ---------------------------------------------------------------------------------------------
# list_background_tasks


async def test_the_list_is_newest_first_with_a_summary(scripted_server, work, state):
    async with conversation(scripted_server, work) as conv:
        first = await start(scripted_server, conv, "true", description="first")
        second = await start(scripted_server, conv, "exit 1", description="second")
        await wait(scripted_server, conv, first)
        await wait(scripted_server, conv, second)
        third = await start(scripted_server, conv, "until [ -e go ]; do sleep 0.02; done", description="third")
        every, running = await turn(scripted_server, conv, call("list_background_tasks"),
                                    call("list_background_tasks", include_completed=False))
        (work / "go").touch()
        await wait(scripted_server, conv, third)
    assert [t["id"] for t in every["tasks"]] == [third, second, first]
    assert [(t["status"], t["description"], t["return_code"]) for t in every["tasks"]] == [
        ("running", "third", None), ("failed", "second", 1), ("completed", "first", 0)]
    assert every["summary"] == {"total": 3, "running": 1, "completed": 1, "failed": 1}
    assert [t["id"] for t in running["tasks"]] == [third]
    assert running["summary"] == {"total": 1, "running": 1, "completed": 0, "failed": 0}


async def test_an_empty_list(scripted_server, work, state):
    async with conversation(scripted_server, work) as conv:
        [empty] = await turn(scripted_server, conv, call("list_background_tasks"))
    assert empty == {"success": True, "tasks": [], "summary": {"total": 0, "running": 0, "completed": 0, "failed": 0}}


# ---------------------------------------------------------------------------------------------
# cancel_background_task


async def test_cancel_kills_the_whole_process_group_and_is_never_overwritten(scripted_server, work, state, mark):
    command = f"export JOB_MARK={mark}; sleep 1000 & (sleep 1000 &); touch started; wait"
    async with conversation(scripted_server, work) as conv:
        task = await start(scripted_server, conv, command)
        await until(lambda: (work / "started").exists() and len(pids_marked(mark)) >= 3, "the task and its children")
        [cancelled] = await turn(scripted_server, conv, call("cancel_background_task", task_id=task))
        assert cancelled == {"success": True, "message": f"Task {task} cancelled", "task_id": task,
                             "status": "cancelled"}
        assert marked_left(mark) == []
        again, status = await turn(scripted_server, conv, call("cancel_background_task", task_id=task),
                                   call("get_task_status", task_id=task))
    assert again == {"error": True, "message": "Task is not running (status: cancelled)"}
    assert (status["status"], status["return_code"]) == ("cancelled", -9)  # killed: not `failed`


async def test_a_finished_task_cannot_be_cancelled(scripted_server, work, state):
    async with conversation(scripted_server, work) as conv:
        task = await start(scripted_server, conv, "true")
        await wait(scripted_server, conv, task)
        [result] = await turn(scripted_server, conv, call("cancel_background_task", task_id=task))
    assert result == {"error": True, "message": "Task is not running (status: completed)"}


async def test_a_task_can_be_cancelled_right_after_it_started(work, state, mark):
    """The reference answered "Task is still starting (no PID yet). Retry cancel in a moment."
    in a window after the start (notes §2.7); mm's supervisor kills a command by its id, at
    once: the cancel follows the start with nothing in between."""
    from mm.tools.base import ToolContext
    from mm.tools.tasks import tools

    found = {t.name: t for t in tools(None, os.environ, work)}
    ctx = ToolContext(cwd=work)
    try:
        started = json.loads((await found["start_background_task"].run(
            {"command": f"export JOB_MARK={mark}; sleep 1000", "description": "", "working_directory": ""}, ctx)).text)
        cancelled = json.loads((await found["cancel_background_task"].run({"task_id": started["task_id"]}, ctx)).text)
    finally:
        await found["start_background_task"].close()
    assert cancelled == {"success": True, "message": f"Task {started['task_id']} cancelled",
                         "task_id": started["task_id"], "status": "cancelled"}
    assert marked_left(mark) == []


async def test_what_a_task_leaves_in_the_background_stops_with_it(scripted_server, work, state, mark):
    """A task is its process group: when its command ends, the jobs it started end too (the
    reference's tasks left them running, unseen, after mnemo exited)."""
    async with conversation(scripted_server, work) as conv:
        task = await start(scripted_server, conv, f"export JOB_MARK={mark}; nohup sleep 1000 >/dev/null 2>&1 & echo left")
        done = await wait(scripted_server, conv, task)
        assert done["status"] == "completed"
        assert marked_left(mark) == []


# ---------------------------------------------------------------------------------------------
# wait_for_task


async def test_wait_times_out_and_the_task_goes_on(scripted_server, work, state):
    async with conversation(scripted_server, work) as conv:
        task = await start(scripted_server, conv, "until [ -e go ]; do sleep 0.02; done")
        timed_out = await wait(scripted_server, conv, task, seconds=0.5)
        assert timed_out == {"error": True, "message": "Timeout after 0.5 seconds", "task_id": task,
                             "status": "running",
                             "suggestion": f'Task still running. Use get_task_status(task_id="{task}") to check later.'}
        (work / "go").touch()
        assert (await wait(scripted_server, conv, task))["status"] == "completed"


async def test_wait_with_a_negative_timeout_is_refused(scripted_server, work, state):
    async with conversation(scripted_server, work) as conv:
        task = await start(scripted_server, conv, "true")
        result = await wait(scripted_server, conv, task, seconds=-1)
    assert result == {"error": True, "message": "timeout_seconds must be 0 or more (got -1)"}


async def test_cancelling_the_turn_stops_the_wait_not_the_task(scripted_server, work, state, mark):
    async with conversation(scripted_server, work) as conv:
        task = await start(scripted_server, conv, f"export JOB_MARK={mark}; until [ -e go ]; do sleep 0.02; done")
        scripted_server.add_tool_calls([call("wait_for_task", task_id=task)])
        ui = RecordingUI()
        waiting = asyncio.ensure_future(conv.run_turn("go", ui))
        await until(lambda: any(type(e).__name__ == "ToolCallRunning" for e in ui.events), "the wait")
        conv.cancel()
        done = await asyncio.wait_for(waiting, STEP)
        assert done.stop_reason == "cancelled"
        assert parsed(ui.done_calls()[0].result.text) == {
            "error": True, "message": "The wait was cancelled with the turn; the task goes on running.",
            "task_id": task, "status": "running"}
        assert pids_marked(mark)
        (work / "go").touch()
        assert (await wait(scripted_server, conv, task))["status"] == "completed"


# ---------------------------------------------------------------------------------------------
# clear_completed_tasks


async def test_clear_drops_finished_tasks_and_their_logs(scripted_server, work, state):
    async with conversation(scripted_server, work) as conv:
        done = await start(scripted_server, conv, "true")
        failed = await start(scripted_server, conv, "exit 2")
        await wait(scripted_server, conv, done)
        await wait(scripted_server, conv, failed)
        running = await start(scripted_server, conv, "until [ -e go ]; do sleep 0.02; done")
        cleared, listed, gone = await turn(scripted_server, conv, call("clear_completed_tasks"),
                                           call("list_background_tasks"), call("get_task_status", task_id=done))
        assert cleared == {"success": True, "message": "Removed 2 completed tasks", "removed_count": 2}
        assert [t["id"] for t in listed["tasks"]] == [running]
        assert gone["message"] == f"Task not found: {done}"
        assert sorted(p.name for p in state.iterdir()) == [f"{running}.log"]
        (work / "go").touch()
        await wait(scripted_server, conv, running)


# ---------------------------------------------------------------------------------------------
# the working directory (checked like a write) and the logs' folder


async def test_a_relative_working_directory_is_the_conversation_s(scripted_server, work, state):
    """The reference resolved it against its server's own directory (notes §2: a gotcha)."""
    (work / "sub").mkdir()
    async with conversation(scripted_server, work) as conv:
        task = await start(scripted_server, conv, "pwd", working_directory="sub")
        assert (await wait(scripted_server, conv, task))["output"] == f"{work / 'sub'}\n"


async def test_a_working_directory_under_home_is_expanded(scripted_server, work, state, monkeypatch):
    monkeypatch.setenv("HOME", str(work))
    (work / "proj").mkdir()
    async with conversation(scripted_server, work) as conv:
        task = await start(scripted_server, conv, "pwd", working_directory="~/proj")
        assert (await wait(scripted_server, conv, task))["output"] == f"{work / 'proj'}\n"


async def test_a_missing_working_directory_or_a_file(scripted_server, work, state):
    (work / "file").write_text("x")
    async with conversation(scripted_server, work) as conv:
        missing, file = await turn(scripted_server, conv,
                                   call("start_background_task", command="touch ran", working_directory="nope"),
                                   call("start_background_task", command="touch ran", working_directory="file"))
    assert missing == {"error": True, "message": f"Working directory does not exist: {work / 'nope'}"}
    # the reference checked only that the path existed: the task then failed to start (notes §2.7)
    assert file == {"error": True, "message": f"Working directory is not a directory: {work / 'file'}"}
    assert not (work / "ran").exists()


async def test_a_protected_working_directory_is_refused_before_anything_runs(scripted_server, work, state):
    (work / "etc-link").symlink_to("/etc")
    sentinel = work / "ran"
    async with conversation(scripted_server, work) as conv:
        etc, link, root = await turn(
            scripted_server, conv, call("start_background_task", command=f"touch {sentinel}", working_directory="/etc"),
            call("start_background_task", command=f"touch {sentinel}", working_directory="etc-link"),
            call("start_background_task", command=f"touch {sentinel}", working_directory="/"))
    assert etc == {"error": True, "message": PROTECTED, "blocked": True, "working_directory": "/etc"}
    assert link == {"error": True, "message": PROTECTED, "blocked": True,
                    "working_directory": str(work / "etc-link")}
    assert root["message"] == ("Refusing to run a background task with its working directory inside a protected "
                               "system location. Refusing to write at the filesystem root '/'.")
    assert not sentinel.exists()
    assert not state.exists()  # not even a log


def test_the_logs_folder_follows_xdg_state_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert tasks_dir({"XDG_STATE_HOME": str(tmp_path / "s")}) == tmp_path / "s" / "mm" / "tasks"
    assert tasks_dir({}) == tmp_path / ".local" / "state" / "mm" / "tasks"
    assert tasks_dir({"XDG_STATE_HOME": "relative"}) == tmp_path / ".local" / "state" / "mm" / "tasks"


async def test_logs_older_than_7_days_are_swept_at_the_first_task(scripted_server, work, state):
    state.mkdir(parents=True)
    old, recent, other = state / "0123abcd.log", state / "4567ef01.log", state / "notes.log"
    for path in (old, recent, other):
        path.write_text("x")
    eight_days, six_days = time.time() - 8 * 86400, time.time() - 6 * 86400
    os.utime(old, (eight_days, eight_days))
    os.utime(recent, (six_days, six_days))
    os.utime(other, (eight_days, eight_days))
    async with conversation(scripted_server, work) as conv:
        task = await start(scripted_server, conv, "true")
    assert sorted(p.name for p in state.iterdir()) == sorted([recent.name, other.name, f"{task}.log"])


async def test_a_log_folder_that_cannot_be_made_is_said(scripted_server, work, state):
    state.parent.mkdir(parents=True)
    state.write_text("a file where the folder should be")
    async with conversation(scripted_server, work) as conv:
        [result] = await turn(scripted_server, conv, call("start_background_task", command="touch ran"))
    assert result["error"] is True
    assert result["message"].startswith(f"The task's log could not be created in {state}: ")
    assert not (work / "ran").exists()


# ---------------------------------------------------------------------------------------------
# tasks never outlive mm


async def test_the_conversation_s_end_stops_its_tasks_and_says_which(scripted_server, work, state, mark, capfd):
    async with conversation(scripted_server, work) as conv:
        first = await start(scripted_server, conv, f"export JOB_MARK={mark}; sleep 1000 & wait", description="server")
        second = await start(scripted_server, conv, "true")
        await wait(scripted_server, conv, second)
        await until(lambda: pids_marked(mark), "the task")
    assert marked_left(mark) == []
    assert capfd.readouterr().err == f"mm: stopped the background task(s) still running: {first} (server)\n"


def test_mm_p_exits_stopping_its_tasks(scripted_server, tmp_path, mark):
    """`mm -p`: the turn starts a task and ends; mm exits, the task is stopped (the whole group)
    and the exit line says which."""
    from mm_runs import agent_file, one_shot

    work = tmp_path / "work"
    agent_file(work, "toolsets: [core, tasks]\n")
    command = f"export JOB_MARK={mark}; sleep 1000 & sleep 1000"
    scripted_server.add_tool_calls([call("start_background_task", command=command, description="two sleeps")])
    scripted_server.add_reply("Started it.")
    done = one_shot(scripted_server, work, "start it", {"XDG_STATE_HOME": str(tmp_path / "state")})
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Started it.\n"
    [log] = (tmp_path / "state" / "mm" / "tasks").iterdir()
    assert f"mm: stopped the background task(s) still running: {log.stem} (two sleeps)\n" in done.stderr
    assert marked_left(mark) == []


def test_line_mode_says_which_tasks_it_stopped_when_leaving(scripted_server, tmp_path, mark):
    from mm_runs import agent_file, line_mode

    work = tmp_path / "work"
    agent_file(work, "toolsets: [core, tasks]\n")
    scripted_server.add_tool_calls([call("start_background_task", command=f"export JOB_MARK={mark}; sleep 1000",
                                         description="the server")])
    scripted_server.add_reply("Started.")
    with line_mode(scripted_server, work, {"XDG_STATE_HOME": str(tmp_path / "state")}) as (proc, term):
        term.write("start it\r")
        term.expect("Started.")
        term.expect("›")
        assert pids_marked(mark)  # it outlives the turn
        [log] = (tmp_path / "state" / "mm" / "tasks").iterdir()
        term.write("/quit\r")
        line = term.expect_line("mm: stopped the background task(s) still running: ")
        assert line == f"mm: stopped the background task(s) still running: {log.stem} (the server)"
        assert proc.wait(30) == 0
    assert marked_left(mark) == []


def test_a_killed_mm_leaves_no_task_behind(scripted_server, tmp_path, mark):
    """SIGKILL: mm runs no code; its command supervisor kills the tasks (docs/tools-bash.md)."""
    import signal

    from mm_runs import agent_file, line_mode

    work = tmp_path / "work"
    agent_file(work, "toolsets: [core, tasks]\n")
    scripted_server.add_tool_calls([call("start_background_task",
                                         command=f"export JOB_MARK={mark}; sleep 1000 & (sleep 1000 &); wait")])
    scripted_server.add_reply("Started.")
    with line_mode(scripted_server, work, {"XDG_STATE_HOME": str(tmp_path / "state")}) as (proc, term):
        term.write("start it\r")
        term.expect("Started.")
        term.expect("›")
        deadline = time.monotonic() + STEP
        while len(pids_marked(mark)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(pids_marked(mark)) >= 3
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    assert marked_left(mark) == []


async def test_the_safety_floor_refuses_a_task_before_it_starts(scripted_server, work, state):
    """Issue 13 §6: every task's command passes the safety floor first, in every mode."""
    sentinel = work / "ran"
    async with conversation(scripted_server, work) as conv:
        wipe, obfuscated, benign = await turn(
            scripted_server, conv, call("start_background_task", command=f"touch {sentinel}; rm -rf /"),
            call("start_background_task", command=f"touch {sentinel} && \\rm -r -f \"$HOME\""),
            call("start_background_task", command="grep reboot log; echo 'rm -rf /'"))
    for refused in (wipe, obfuscated):
        assert refused["error"] is True and refused["blocked"] is True
        assert refused["message"].startswith("[safety floor: ")
        assert "nothing was run" in refused["message"]
    assert wipe["message"].startswith("[safety floor: delete_root]")
    assert obfuscated["message"].startswith("[safety floor: delete_home]")
    assert "error" not in benign
    assert not sentinel.exists()
