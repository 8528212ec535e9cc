"""The `bash` tool beyond the shared cases: cancellation, signals, truncation, empty output
(mm-tools.md §bash; decisions in docs/tools-bash.md)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from mm.tools.base import Settings, ToolContext
from harness import assert_none_left, pids_matching
from mm.tools.bash import Bash
from mm.tools.process import format_seconds




async def wait_for_file(path: Path) -> None:
    """Wait until `path` exists (the command has started)."""
    while not path.exists():
        await asyncio.sleep(0.02)


def context(tmp_path: Path, *, timeout: float = 10, max_output: int = 20000) -> ToolContext:
    return ToolContext(cwd=tmp_path, settings=Settings(max_output=max_output, bash_timeout=timeout))


async def run(command: str, ctx: ToolContext):
    return await Bash().run({"command": command}, ctx)


def test_declaration() -> None:
    tool = Bash()
    assert (tool.name, tool.kind, tool.needs_permission) == ("bash", "execute", True)
    assert [(p.name, p.type, p.required) for p in tool.params] == [("command", "string", True)]
    assert tool.params[0].description == "The shell command to run."


async def test_empty_output_is_empty_text(tmp_path: Path) -> None:
    result = await run("true", context(tmp_path))
    assert (result.text, result.failed) == ("", False)


async def test_runs_in_the_working_directory(tmp_path: Path) -> None:
    result = await run("pwd", context(tmp_path))
    assert result.text == f"{tmp_path}\n"


async def test_no_stdin(tmp_path: Path) -> None:
    result = await run("cat; echo after-cat", context(tmp_path))
    assert result.text == "after-cat\n"


async def test_exit_line_after_output_without_newline(tmp_path: Path) -> None:
    result = await run("printf abc; exit 1", context(tmp_path))
    assert result.text == "abc\n[exit code: exit status 1]"
    assert result.failed


async def test_exit_code_alone(tmp_path: Path) -> None:
    result = await run("exit 2", context(tmp_path))
    assert result.text == "[exit code: exit status 2]"


async def test_shell_killed_by_a_signal(tmp_path: Path) -> None:
    result = await run("echo before; kill -9 $$", context(tmp_path))
    assert result.text == "before\n[exit code: signal: killed]"
    assert result.failed


async def test_invalid_utf8_does_not_break(tmp_path: Path) -> None:
    result = await run(r"printf 'a\xffb\n'", context(tmp_path))
    assert result.text == "a\ufffdb\n"


async def test_fractional_timeout_line(tmp_path: Path) -> None:
    result = await run("sleep 7303", context(tmp_path, timeout=0.5))
    assert result.text == "[error: 0.5s timeout exceeded]"
    assert result.failed
    await assert_none_left("sleep 7303")


def test_format_seconds() -> None:
    assert [format_seconds(s) for s in (30, 30.0, 2, 1.5, 0.25)] == ["30s", "30s", "2s", "1.5s", "0.25s"]


async def test_cancel_event_kills_the_group(tmp_path: Path) -> None:
    ctx = context(tmp_path, timeout=60)
    task = asyncio.ensure_future(run("touch started; echo begun; (sleep 7301 | cat)", ctx))
    await wait_for_file(tmp_path / "started")
    ctx.cancelled.set()
    result = await task
    assert result.text.endswith("[error: cancelled]")
    assert result.failed
    await assert_none_left("sleep 7301")


async def test_already_cancelled_runs_nothing(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    ctx.cancelled.set()
    result = await run("touch ran", ctx)
    assert result.text == "[error: cancelled]"
    assert not (tmp_path / "ran").exists()


async def test_cancelled_task_kills_the_group_and_reraises(tmp_path: Path) -> None:
    task = asyncio.ensure_future(run("touch started; sleep 7302", context(tmp_path, timeout=60)))
    await wait_for_file(tmp_path / "started")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await assert_none_left("sleep 7302")


async def test_nohup_background_job_keeps_running(tmp_path: Path) -> None:
    try:
        result = await run("nohup sleep 7304 > /dev/null 2>&1 & echo started", context(tmp_path))
        assert result.text == "started\n"
        assert pids_matching("sleep 7304")
    finally:
        for pid in pids_matching("sleep 7304"):
            os.kill(pid, signal.SIGKILL)


async def test_max_output_keeps_both_ends_and_the_exit_line(tmp_path: Path) -> None:
    result = await run("seq 1 100000; exit 4", context(tmp_path, max_output=500))
    out = result.text
    assert len(out) <= 500
    assert out.startswith("1\n2\n3\n")
    assert "characters omitted: the output is longer than maxOutput (500) ...]" in out
    assert out.endswith("\n100000\n[exit code: exit status 4]")


async def test_output_at_the_limit_is_untouched(tmp_path: Path) -> None:
    result = await run("printf '%.0sx' $(seq 1 50)", context(tmp_path, max_output=50))
    assert result.text == "x" * 50


async def test_huge_output_cut_to_max_output_keeps_the_too_large_marker_and_the_true_count(tmp_path):
    ctx = ToolContext(cwd=tmp_path, settings=Settings(max_output=600))
    result = await Bash().run({"command": "seq 1 2000000"}, ctx)
    lines = result.text.splitlines()
    assert lines[0] == "1" and lines[-1] == "2000000" and len(result.text) <= 600
    marker = lines.index("[... output too large to read back in full ...]")
    omitted = int(lines[marker + 1].split("[... ")[1].split(" characters omitted")[0])
    shown = len(result.text) - len(lines[marker]) - len(lines[marker + 1]) - 2
    assert abs(omitted + shown - 14_888_896) < 100  # `seq 1 2000000` writes 14,888,896 bytes


async def test_a_flood_of_output_is_stopped_before_it_fills_the_disk(tmp_path):
    result = await Bash().run({"command": "yes"}, context(tmp_path, timeout=60, max_output=500))
    assert result.failed
    assert result.text.endswith("[error: the command wrote more than 256 MiB of output — stopped]")
    await assert_none_left("^yes$")
