"""SIGKILL trials of `mm -p` during commands and writes: no process left, no unreadable file.

Run: .venv/bin/python bench/kill_trials.py [trials]   (default 100)

Each trial runs `mm -p` in a folder of its own against the scripted model server
(tests/scripted_server.py). The model's calls start jobs in every way a shell leaves them behind
(`nohup … &`, `setsid`, `setsid -f`, `(set -m; … &)`, a program's own `setpgid`, a double fork
with a cleared environment), write and edit files (write_file, edit_file, 160 KiB each) and run a
command; sessions are saved. mm is SIGKILLed at a random instant between its first request to the
model and its end: once the model received its n-th request (n drawn from 1…6), after a random
delay of up to half a second (a run not killed is checked too). The trial then waits until no
process it started is left (up to LEFT_WAIT seconds) and counts:

- processes left: those carrying the trial's mark, in their environment (`KILL_TRIAL=<mark>`,
  inherited from mm) or in their command line (`exec -a <mark>` for the job that clears its
  environment) — mm's command supervisor included;
- unreadable files: a written file whose content is not one of the contents mm wrote (a partial
  write), and a session file that does not load;
- temporary files left by a write the kill interrupted (not read as the file; counted apart).

Prints the counts and where the kills landed (how many requests the model had received). Exit
status 1 when a process was left or a file is unreadable.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
LEFT_WAIT = 10.0  # seconds a killed trial's processes have to go
WRITTEN = 160 * 1024  # bytes of each file the model writes (a call's arguments stay under 256 KB)
STEPS = 6  # requests to the model in a whole run
MAX_DELAY = 0.5  # seconds after a request within which a kill lands (a command runs 0.3-0.5 s)
STDERR = subprocess.DEVNULL  # where mm's messages go (a file while debugging)


def written(mark: str) -> dict[str, str]:
    """The content of each file the model writes."""
    return {"first.txt": "".join(f"{mark} first {i:07d}\n" for i in range(WRITTEN // 32)),
            "second.txt": "".join(f"{mark} second {i:06d}\n" for i in range(WRITTEN // 32))}


def contents(mark: str) -> dict[str, set[str]]:
    """The contents each written file may have: any state mm wrote, never a partial one."""
    files = written(mark)
    edited = files["first.txt"].replace(f"{mark} first 0000000\n", f"{mark} edited\n", 1)
    return {"first.txt": {files["first.txt"], edited}, "second.txt": {files["second.txt"]}}


def jobs_command(mark: str) -> str:
    """A command that leaves jobs behind in every way a shell can, then runs a while."""
    return (
        "nohup sleep 1000 >/dev/null 2>&1 & "
        "sleep 1000 & "
        "setsid sleep 1000 & "
        "setsid -f sleep 1000; "
        "(set -m; sleep 1000 &); "
        "python3 -c 'import os, time; os.setpgid(0, 0); time.sleep(1000)' & "
        f"env -i setsid bash -c '(exec -a {mark} sleep 1000) &'; "
        "echo started; sleep 0.3"
    )


def script(server, mark: str) -> None:
    """The model's side of one run: STEPS responses."""
    files = written(mark)
    server.add_tool_calls([{"name": "bash", "arguments": {"command": jobs_command(mark)}}])
    server.add_tool_calls([{"name": "write_file", "arguments": {"path": "first.txt", "content": files["first.txt"]}}])
    server.add_tool_calls([{"name": "bash", "arguments": {
        "command": "for i in $(seq 1 200); do echo line $i; done; sleep 0.3 & wait"}}])
    server.add_tool_calls([{"name": "write_file", "arguments": {"path": "second.txt", "content": files["second.txt"]}}])
    server.add_tool_calls([{"name": "edit_file", "arguments": {"path": "first.txt", "edits": [
        {"old": f"{mark} first 0000000\n", "new": f"{mark} edited\n"}]}}])
    server.add_reply("done")


def start_mm(folder: Path, base_url: str, mark: str) -> subprocess.Popen:
    (folder / ".mm").mkdir(parents=True, exist_ok=True)
    (folder / ".mm" / "agent.yaml").write_text("sessions:\n  enabled: true\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")}
    env.update({"HOME": str(folder), "KILL_TRIAL": mark, "PYTHONPATH": str(ROOT / "src")})
    return subprocess.Popen([sys.executable, "-m", "mm", "-p", "make the files", "--base-url", base_url,
                             "--model", "m"], cwd=folder, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=STDERR)


def unreadable(folder: Path, mark: str) -> tuple[list[str], int]:
    """The files of a trial that hold a partial state, and the number of temporary files left."""
    from mm.sessions.load import SessionError, load_session, session_paths

    bad = []
    for name, options in contents(mark).items():
        path = folder / name
        if path.exists() and path.read_text() not in options:
            bad.append(f"{name}: {path.stat().st_size} bytes, not a state mm wrote")
    sessions = folder / ".mm" / "sessions"
    for path in session_paths(sessions) if sessions.is_dir() else []:
        try:
            load_session(path)
        except SessionError as err:
            bad.append(f"{path.name}: {err}")
    temps = [p for p in folder.rglob("*.tmp")]
    return bad, len(temps)


def run_to_the_end(folder: Path) -> list[int]:
    """Run mm once, not killed; returns the processes left once it exited."""
    from harness import kill_marked, marked_left
    from scripted_server import ScriptedServer

    mark = f"killtrial-{os.getpid()}-whole"
    with ScriptedServer() as server:
        script(server, mark)
        proc = start_mm(folder, server.base_url, mark)
        try:
            proc.wait(120)
            return marked_left(mark, LEFT_WAIT)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            kill_marked(mark)


def random_instant(rng: random.Random) -> tuple[int, float]:
    """When to kill: once the model has received request n (1…STEPS, each as likely), after a
    delay of up to MAX_DELAY s, shorter ones likelier (the writes take milliseconds)."""
    return rng.randint(1, STEPS), MAX_DELAY * rng.random() ** 2


def run_trials(trials: int, directory: Path, seed: int = 1, instants: list[tuple[int, float]] | None = None) -> dict:
    """Run `trials` killed runs in sub-folders of `directory`, each killed at `random_instant()`
    or at the given `instants` (request number, delay in seconds: one per trial); returns the
    counts (module docstring) and where the kills landed."""
    from harness import kill_marked, marked_left
    from scripted_server import ScriptedServer

    rng = random.Random(seed)
    report = {"trials": trials, "left": [], "unreadable": [], "temp_files": 0, "landed": [0] * (STEPS + 1),
              "left_at_exit": run_to_the_end(directory / "whole")}
    for k in range(trials):
        mark = f"killtrial-{os.getpid()}-{k:04d}"
        folder = directory / f"trial-{k}"
        step, delay = instants[k] if instants is not None else random_instant(rng)
        with ScriptedServer() as server:
            script(server, mark)
            proc = start_mm(folder, server.base_url, mark)
            try:
                while len(server.requests) < step and proc.poll() is None:
                    time.sleep(0.002)
                time.sleep(delay)
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                report["landed"][len(server.requests)] += 1
                report["left"] += [(k, pid, _describe(pid)) for pid in marked_left(mark, LEFT_WAIT)]
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                kill_marked(mark)
        bad, temps = unreadable(folder, mark)
        report["unreadable"] += [f"trial {k}: {b}" for b in bad]
        report["temp_files"] += temps
    return report


def _describe(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "(gone)"


def main() -> None:
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    with tempfile.TemporaryDirectory() as tmp:
        began = time.perf_counter()
        report = run_trials(trials, Path(tmp))
        took = time.perf_counter() - began
    print(f"{trials} SIGKILLs of mm -p in {took:.0f} s: "
          f"{len(report['left'])} process(es) left, {len(report['unreadable'])} unreadable file(s), "
          f"{report['temp_files']} temporary file(s) of interrupted writes left; "
          f"{len(report['left_at_exit'])} process(es) left by a run not killed")
    print("  kills after N model requests (1, 3: during a command; 2, 4, 5: a write; 6: the answer, mm's exit):",
          {n: c for n, c in enumerate(report["landed"]) if c})
    for k, pid, what in report["left"]:
        print(f"  left by trial {k}: {pid} {what}")
    for problem in report["unreadable"]:
        print("  unreadable:", problem)
    sys.exit(1 if report["left"] or report["unreadable"] or report["left_at_exit"] else 0)


if __name__ == "__main__":
    main()
