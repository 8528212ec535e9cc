"""`mm -acp` start-up: spawn to the `initialize` answer and to the `session/new` answer, against a
bare agent on the same SDK.

The baseline is the smallest agent the Python SDK allows (`acp.run_agent` answering `initialize`
and `session/new`), run by the same interpreter in the same invocation, as is `python -c pass`
(the interpreter's own floor). Each process is driven as an editor does: `initialize`, its answer,
then `session/new`; both answers are timed from the spawn. Each figure is the median of N runs.
Target: `session/new` answered within 250 ms (issue 11.9; codex-acp answers in under 110 ms).
`--other SRC`: also time the mm whose package is in the folder SRC (another checkout's `src`,
its bytecode written), in the same rounds: a before/after comparison.
Run: python bench/acp_startup.py [N] [--other SRC]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from startup import compile_mm

BARE_AGENT = """
import asyncio
from acp import run_agent

class Bare:
    async def initialize(self, protocol_version, client_capabilities=None, client_info=None, **kw):
        return {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}

    async def new_session(self, cwd, mcp_servers=None, **kw):
        return {"sessionId": "s"}

asyncio.run(run_agent(Bare()))
"""
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}
TARGET_MS = 250


def answered(argv: list[str], cwd: str, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Seconds from spawn to the answer of `initialize`, and to the answer of `session/new`
    (sent once `initialize` is answered)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env)
    assert proc.stdin is not None and proc.stdout is not None
    new = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}}
    times = []
    for request in (INITIALIZE, new):
        proc.stdin.write((json.dumps(request) + "\n").encode())
        proc.stdin.flush()
        while True:
            message = json.loads(proc.stdout.readline())
            if message.get("id") == request["id"]:
                assert "result" in message, message
                break
        times.append(time.perf_counter() - t0)
    proc.stdin.close()
    proc.wait(10)
    return times[0], times[1]


def floor(cwd: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], cwd=cwd, check=False)
    return time.perf_counter() - t0


def main(n: int, other: str | None = None) -> dict[str, float]:
    compile_mm()  # mm's bytecode written, as an ordinary installation's first run does
    mm = [sys.executable, "-m", "mm", "-acp"]
    runs: dict[str, tuple[list[str], dict[str, str] | None]] = {"bare SDK agent": ([sys.executable, "-c", BARE_AGENT],
                                                                                   None), "mm -acp": (mm, None)}
    if other:
        runs[f"mm -acp of {other}"] = (mm, {**os.environ, "PYTHONPATH": other})
    with tempfile.TemporaryDirectory() as cwd:
        (Path(cwd) / ".mm").mkdir()
        (Path(cwd) / ".mm" / "agent.yaml").write_text("baseUrl: http://127.0.0.1:9/v1\nmodel: m\n")
        rounds: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
        floors = []
        for _ in range(n):
            floors.append(floor(cwd))
            for name, (argv, env) in runs.items():
                rounds[name].append(answered(argv, cwd, env))
    medians = {"floor": statistics.median(floors) * 1000}
    print(f"python -c pass: {medians['floor']:.1f} ms (the interpreter's floor); medians of {n} spawns, each driven "
          "as an editor does: initialize, its answer, then session/new")
    bare = {}
    for name, times in rounds.items():
        init, new = (statistics.median(t[i] for t in times) * 1000 for i in (0, 1))
        medians[f"{name} initialize"], medians[f"{name} session/new"] = init, new
        bare = bare or {"initialize": init, "session/new": new}
        line = f"{name:<16} → initialize {init:7.1f} ms ({init / bare['initialize']:4.2f}x)   " \
               f"→ session/new {new:7.1f} ms ({new / bare['session/new']:4.2f}x the bare SDK agent)"
        print(line + (f"  target <= {TARGET_MS} ms" if name == "mm -acp" else ""))
    return medians


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("n", nargs="?", type=int, default=10)
    parser.add_argument("--other", metavar="SRC", help="also time the mm package in this folder (PYTHONPATH)")
    options = parser.parse_args()
    main(options.n, options.other)
