"""No command outlives mm (issue 10 §8; docs/tools-bash.md §No command outlives mm): `mm -p`
against the scripted model server runs a command that leaves jobs in every way a shell can; they
keep running while mm runs, and die when mm ends — SIGKILLed included. Then bench/kill_trials.py
with a handful of kills at fixed instants: no process left, no unreadable file."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
from pathlib import Path

from harness import marked_left, pids_marked
from test_line_mode_signals import until

BENCH = Path(__file__).resolve().parents[1] / "bench"


def every_kind_of_job(mark: str) -> str:
    """Jobs that keep the output file, leave the process group, the session, or the environment."""
    return (
        "sleep 1000 & "
        "nohup sleep 1000 & "
        "setsid sleep 1000 & "
        "setsid -f sleep 1000; "
        "(set -m; sleep 1000 &); "
        "python3 -c 'import os, time; os.setpgid(0, 0); open(\"setpgid-ran\", \"w\").close(); time.sleep(1000)' & "
        f"env -i setsid bash -c '(exec -a {mark} sleep 1000) &'; "
        "until [ -e setpgid-ran ]; do sleep 0.02; done; "
    )


def start_mm(cwd: Path, base_url: str, mark: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")}
    env.update({"HOME": str(cwd), "JOB_MARK": mark})
    return subprocess.Popen([sys.executable, "-m", "mm", "-p", "start the jobs", "--base-url", base_url,
                             "--model", "m"], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_sigkill_of_mm_during_a_command_kills_every_job(scripted_server, tmp_path, mark):
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {
        "command": every_kind_of_job(mark) + "touch started; sleep 1000"}}])
    proc = start_mm(tmp_path, scripted_server.base_url, mark)
    try:
        assert until(lambda: (tmp_path / "started").exists(), 60), proc.stderr
        assert len(pids_marked(mark)) >= 9  # mm, its supervisor, the shell, seven jobs
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        assert marked_left(mark) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def test_jobs_run_while_mm_runs_and_die_when_it_exits(scripted_server, tmp_path, mark):
    jobs = every_kind_of_job(mark) + "echo started"
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": jobs}}])
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": "touch waiting; exec sleep 1000"}}])
    proc = start_mm(tmp_path, scripted_server.base_url, mark)
    try:
        assert until(lambda: (tmp_path / "waiting").exists(), 60), proc.stderr
        assert len(pids_marked(mark)) == 10  # mm, its supervisor, the seven jobs, the second command
        proc.send_signal(signal.SIGINT)  # the turn is cancelled, mm exits
        assert proc.wait(60) == 130
        assert marked_left(mark) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def test_kill_trials(tmp_path):
    """bench/kill_trials.py, six kills at fixed instants: during both commands, a write, the
    edit, the answer (after the model's n-th request, then a delay in seconds)."""
    spec = importlib.util.spec_from_file_location("kill_trials", BENCH / "kill_trials.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    instants = [(1, 0.25), (2, 0.0), (3, 0.1), (4, 0.005), (5, 0.0), (6, 0.0)]
    report = bench.run_trials(len(instants), tmp_path, instants=instants)
    assert report["left_at_exit"] == []
    assert report["left"] == []
    assert report["unreadable"] == []
