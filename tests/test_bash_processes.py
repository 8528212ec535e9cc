"""What becomes of the processes a command starts (docs/tools-bash.md §No command outlives mm):
on timeout and cancellation every one dies, however it detached; a background job outlives its
call but not mm; a job writing after its call returned cannot fill the disk; a supervisor that
dies is replaced. Real commands through the real `bash` tool and command supervisor."""

from __future__ import annotations

import asyncio
import os
import signal
import tempfile
from pathlib import Path

import pytest

from harness import marked_left, pids_marked
from mm.tools.base import Settings, ToolContext
from mm.tools.bash import Bash
from mm.tools.declared import declared_tool_from_entry
from mm.tools.process import LOST_LINE
from mm.tools.supervised import Supervisor
from mm.tools.supervisor import TAG


def detaching_jobs(mark: str) -> str:
    """A command that leaves a job in every way a shell can, each carrying `mark`."""
    return (
        f"export JOB_MARK={mark}; "
        "sleep 1000 & "
        "nohup sleep 1000 >/dev/null 2>&1 & "
        "setsid sleep 1000 & "
        "setsid -f sleep 1000; "
        "(set -m; sleep 1000 &); "
        "(sleep 1000 &); "
        "python3 -c 'import os, time; os.setpgid(0, 0); open(\"setpgid-ran\", \"w\").close(); time.sleep(1000)' & "
        "until [ -e setpgid-ran ]; do sleep 0.02; done; "
    )


def context(cwd: Path, timeout: float = 30) -> ToolContext:
    return ToolContext(cwd=cwd, settings=Settings(bash_timeout=timeout))


async def appears(path: Path) -> None:
    while not path.exists():
        await asyncio.sleep(0.02)


async def test_every_detached_job_dies_on_timeout(tmp_path, mark):
    result = await Bash().run({"command": detaching_jobs(mark) + "touch started; sleep 1000"},
                              context(tmp_path, timeout=3))
    assert (tmp_path / "started").exists(), result.text
    assert result.text == "[error: 3s timeout exceeded]"
    assert marked_left(mark) == []


async def test_every_detached_job_dies_on_cancel(tmp_path, mark):
    ctx = context(tmp_path)
    call = asyncio.ensure_future(Bash().run({"command": detaching_jobs(mark) + "touch started; sleep 1000"}, ctx))
    await asyncio.wait_for(appears(tmp_path / "started"), 60)
    assert len(pids_marked(mark)) >= 8  # the shell and its seven jobs run
    ctx.cancelled.set()
    result = await call
    assert result.text == "[error: cancelled]"
    assert marked_left(mark) == []


async def test_every_detached_job_dies_when_the_awaiting_task_is_cancelled(tmp_path, mark):
    call = asyncio.ensure_future(Bash().run({"command": detaching_jobs(mark) + "touch started; sleep 1000"},
                                            context(tmp_path)))
    await asyncio.wait_for(appears(tmp_path / "started"), 60)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert marked_left(mark) == []


async def test_a_declared_tool_s_detached_jobs_die_on_timeout(tmp_path, mark):
    tool = declared_tool_from_entry({"name": "jobs", "command": ["bash", "-c", "{{script}}"], "timeout": 3,
                                     "parameters": {"script": {"type": "string"}}})
    result = await tool.run({"script": detaching_jobs(mark) + "sleep 1000"}, context(tmp_path))
    assert result.text == "[error: 3s timeout exceeded]"
    assert marked_left(mark) == []


async def test_background_jobs_outlive_their_call(tmp_path, mark):
    result = await Bash().run({"command": detaching_jobs(mark) + "echo started"}, context(tmp_path))
    assert result.text == "started\n"
    await asyncio.sleep(0.5)
    assert len(pids_marked(mark)) == 7  # the reference: the job keeps running — that is usually the point


async def test_a_job_that_clears_its_environment_and_double_forks_survives_cancel_not_the_supervisor(tmp_path, mark):
    """The documented limit: such a job carries no tag and is no longer under the command, so a
    cancel misses it; the supervisor's tree still holds it, and it dies when mm ends."""
    supervisor = Supervisor()
    try:
        with tempfile.TemporaryFile() as out:
            script = f"env -i setsid bash -c '(exec -a {mark} sleep 1000) &'; touch started; sleep 1000"
            command = supervisor.start(["bash", "-c", script], tmp_path, dict(os.environ), out.fileno())
            await asyncio.wait_for(appears(tmp_path / "started"), 60)
            command.kill()
            assert await asyncio.wait_for(command.exited, 60) == -signal.SIGKILL
            command.release()
        assert len(pids_marked(mark)) == 1
    finally:
        supervisor.close()
    assert marked_left(mark) == []


async def test_closing_the_supervisor_kills_every_job_left(tmp_path, mark):
    supervisor = Supervisor()
    try:
        with tempfile.TemporaryFile() as out:
            script = detaching_jobs(mark) + "echo started"
            command = supervisor.start(["bash", "-c", script], tmp_path, dict(os.environ), out.fileno())
            assert await asyncio.wait_for(command.exited, 60) == 0
            command.release()
        assert len(pids_marked(mark)) == 7
    finally:
        supervisor.close()
    assert marked_left(mark) == []


async def test_commands_carry_their_tag(tmp_path):
    first = await Bash().run({"command": f"printenv {TAG}"}, context(tmp_path))
    second = await Bash().run({"command": f"printenv {TAG}"}, context(tmp_path))
    supervisor_pid, _, number = first.text.strip().partition("-")
    assert supervisor_pid.isdigit() and number.isdigit()
    assert second.text.strip() == f"{supervisor_pid}-{int(number) + 1}"


async def test_a_detached_writer_cannot_fill_the_disk_through_the_output_file(tmp_path, mark):
    """A job writes 96 MiB into the call's output after the call returned: the file is emptied
    as it goes (never holding half of it) and stays small (append mode: no sparse growth)."""
    writer = ("import sys, time\nchunk = 'x' * 65535 + '\\n'\n"
              "for i in range(1536):\n    sys.stdout.write(chunk); sys.stdout.flush(); time.sleep(0.001)\n")
    (tmp_path / "writer.py").write_text(writer)
    result = await Bash().run({"command": f"(exec -a {mark} python3 writer.py) & echo returned"}, context(tmp_path))
    assert result.text == "returned\n"
    peak_blocks = peak_size = 0
    while not (pids := pids_marked(mark)):
        await asyncio.sleep(0.02)
    while True:
        try:
            st = os.stat(f"/proc/{pids[0]}/fd/1")
        except OSError:  # the writer has finished
            break
        peak_blocks, peak_size = max(peak_blocks, st.st_blocks * 512), max(peak_size, st.st_size)
        await asyncio.sleep(0.01)
    assert 0 < peak_blocks < 48 * 2**20
    assert peak_size < 48 * 2**20


async def test_a_command_running_when_the_supervisor_dies_ends_with_a_line(tmp_path, mark):
    supervisor = Supervisor()
    try:
        with tempfile.TemporaryFile() as out:
            command = supervisor.start(["bash", "-c", f"export JOB_MARK={mark}; sleep 1000"], tmp_path,
                                             dict(os.environ), out.fileno())
            os.kill(supervisor._process.pid, signal.SIGKILL)  # noqa: SLF001 — the process the test kills
            with pytest.raises(OSError, match="supervisor stopped"):
                await asyncio.wait_for(command.exited, 60)
    finally:
        supervisor.close()


async def test_the_bash_tool_reports_a_lost_supervisor_and_starts_a_new_one(tmp_path, mark):
    from mm.tools.supervised import SUPERVISOR

    ctx = context(tmp_path)
    call = asyncio.ensure_future(Bash().run({"command": f"export JOB_MARK={mark}; touch started; sleep 1000"}, ctx))
    await asyncio.wait_for(appears(tmp_path / "started"), 60)
    os.kill(SUPERVISOR._process.pid, signal.SIGKILL)  # noqa: SLF001 — the process the test kills
    result = await call
    assert result.text == LOST_LINE and result.failed
    again = await Bash().run({"command": "echo again"}, ctx)
    assert again.text == "again\n"


async def test_a_working_directory_that_no_longer_exists(tmp_path):
    gone = tmp_path / "gone"
    result = await Bash().run({"command": "pwd"}, context(gone))
    assert result.text == f"[error: bash cannot be started: the working directory {gone} does not exist]"
    tool = declared_tool_from_entry({"name": "where", "command": ["pwd"]})
    result = await tool.run({}, context(gone))
    assert result.text == f"[error: pwd cannot be started: the working directory {gone} does not exist]"


async def test_a_command_no_program_can_be_given(tmp_path):
    result = await Bash().run({"command": "echo a\0b"}, context(tmp_path))
    assert result.text == ("[error: bash cannot be started: the command holds a null character or an unpaired "
                           "surrogate, which no program can be given]")
