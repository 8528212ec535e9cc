"""Crash safety of session files: a real process rewrites a growing session file again and
again (SessionFile.save: atomic write, then the index), and is SIGKILLed at a random instant.

Run: .venv/bin/python bench/session_kill.py [trials]   (default 200)

After the trials every session file must parse (mm.sessions.load.load_session), the temporary
files a kill left behind must not be listed as sessions, and the index must still answer a
search. Prints the counts, and the share of kills that landed during a write.
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

IDS = ["20260101-000000-0000000a", "20260101-000000-0000000b", "20260101-000000-0000000c"]
READY = "ready"
# The child saves a session that grows by one turn per save, for ever; READY after the first save.
CHILD = """
import sys
from pathlib import Path
from mm.sessions.store import SessionFile
s = SessionFile(Path(sys.argv[1]), id=sys.argv[2], meta={"cwd": "/x", "model": "m"})
history = [{"role": "system", "content": "You are mm."}]
n = 0
while True:
    n += 1
    history.append({"role": "user", "content": f"question {n}: where is the lighthouse keeper? " + "x" * 2000})
    history.append({"role": "assistant", "content": f"answer {n}: on the rocks. " + "y" * 2000})
    s.save(history, [], {"input_tokens": n})
    if n == 1:
        print("ready", flush=True)
"""


def run_trials(trials: int, directory: Path, seed: int = 1, max_delay: float = 0.3) -> dict:
    """Start and SIGKILL `trials` writers in `directory` (random delay up to `max_delay` s after
    the child is ready); returns counts and the problems found (see `check`)."""
    rng = random.Random(seed)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    for i in range(trials):
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(directory), IDS[i % len(IDS)]],
                                 stdout=subprocess.PIPE, text=True, env=env)
        assert child.stdout is not None and child.stdout.readline().strip() == READY
        time.sleep(rng.uniform(0, max_delay))
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
    return check(directory)


def check(directory: Path) -> dict:
    """Every listed session parses; temporary files are not listed; the index answers."""
    from mm.sessions.load import SessionError, list_sessions, load_session, session_paths
    from mm.sessions.search import search_memory

    unreadable = []
    for path in session_paths(directory):
        try:
            load_session(path)
        except SessionError as err:
            unreadable.append(str(err))
    temps = [p.name for p in directory.iterdir() if p.name.endswith(".tmp")]
    listed = [s.path.name for s in list_sessions(directory)]
    result = search_memory(directory, "lighthouse keeper")
    return {"sessions": len(listed), "unreadable": unreadable, "temp_files_left": len(temps),
            "temp_files_listed": [t for t in temps if t in listed],
            "search_ok": result.startswith("🔎 ") and "hit(s)" in result}


def main() -> None:
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        report = run_trials(trials, Path(tmp))
        took = time.perf_counter() - start
    print(f"{trials} kills in {took:.1f} s: {report['sessions']} session file(s), "
          f"{len(report['unreadable'])} unreadable, {report['temp_files_left']} temporary file(s) left by "
          f"kills, {len(report['temp_files_listed'])} of them listed as sessions, search "
          f"{'answers' if report['search_ok'] else 'FAILS'}")
    for problem in report["unreadable"]:
        print("  unreadable:", problem)
    sys.exit(1 if report["unreadable"] or report["temp_files_listed"] or not report["search_ok"] else 0)


if __name__ == "__main__":
    main()
