"""Every case of tests/cases/bash/ run against the real `bash` tool (cases/README.md §bash/)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from mm.tools.base import Settings, ToolContext
from mm.tools.bash import Bash
from harness import CASES_DIR




CASES = sorted((CASES_DIR / "bash").glob("*.json"))


def pids_matching(pattern: str) -> list[int]:
    """Pids of live processes whose command line matches `pattern` (as `pgrep -f`)."""
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return [int(p) for p in found.stdout.split()]


def kill_jobs(pattern: str) -> None:
    """Kill the process groups of the processes matching `pattern`, by their ids."""
    for pid in pids_matching(pattern):
        try:
            os.killpg(os.getpgid(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.parametrize("case_file", CASES, ids=lambda p: p.stem)
async def test_bash_case(case_file: Path, tmp_path: Path) -> None:
    case = json.loads(case_file.read_text())
    expect = case["expect"]
    config = case.get("config", {})
    settings = Settings(
        max_output=config.get("maxOutput", Settings.max_output),
        bash_timeout=case["timeout"] if case["timeout"] is not None else 30.0,
    )
    ctx = ToolContext(cwd=tmp_path, settings=settings)
    still_running = expect.get("still_running_after_return", {}).get("pattern")
    try:
        began = time.monotonic()
        result = await Bash().run({"command": case["command"]}, ctx)
        elapsed = time.monotonic() - began
        if still_running:
            assert pids_matching(still_running), "the background job was killed"
    finally:
        if still_running:
            kill_jobs(still_running)

    out = result.text
    trimmed = out.rstrip("\n")
    assert elapsed < expect["max_seconds"], f"hang: {elapsed:.1f}s"
    for s in expect.get("output_contains", []):
        assert s in out
    for s in expect.get("output_not_contains", []):
        assert s not in out
    if "output_starts_with" in expect:
        assert out.startswith(expect["output_starts_with"])
    if "output_ends_with" in expect:
        assert trimmed.endswith(expect["output_ends_with"]), trimmed[-200:]
    if "max_output_chars" in expect:
        assert len(out) <= expect["max_output_chars"]
    if "no_process_left_running" in expect:
        pattern = expect["no_process_left_running"]["pattern"]
        await asyncio.sleep(1)
        left = pids_matching(pattern)
        kill_jobs(pattern)
        assert not left, f"still running: {pattern}"
