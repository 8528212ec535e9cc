"""`mm -acp` start-up: spawn to the `initialize` answer, against a bare agent on the same SDK.

The baseline is the smallest agent the Python SDK allows (`acp.run_agent` answering
`initialize`), run by the same interpreter in the same invocation: both pay for importing the
SDK, so the ratio is what mm itself adds (its modules, the agent file, the stdout guard). Each
figure is the median of N runs; a second `session/new` figure shows the first session's cost.
Run: python bench/acp_startup.py [N]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BARE_AGENT = """
import asyncio
from acp import run_agent

class Bare:
    async def initialize(self, protocol_version, client_capabilities=None, client_info=None, **kw):
        return {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}

asyncio.run(run_agent(Bare()))
"""
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}


def answered(argv: list[str], cwd: str, session: bool = False) -> float:
    """Seconds from spawn to the answer of `initialize` (then of `session/new` when `session`)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    if session:
        new = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}}
        proc.stdin.write((json.dumps(new) + "\n").encode())
    proc.stdin.flush()
    wanted = 2 if session else 1
    while True:
        message = json.loads(proc.stdout.readline())
        if message.get("id") == wanted:
            break
    elapsed = time.perf_counter() - t0
    proc.stdin.close()
    proc.wait(10)
    return elapsed


def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as cwd:
        (Path(cwd) / ".mm").mkdir()
        (Path(cwd) / ".mm" / "agent.yaml").write_text("baseUrl: http://127.0.0.1:9/v1\nmodel: m\n")
        bare = [sys.executable, "-c", BARE_AGENT]
        mm = [sys.executable, "-m", "mm", "-acp"]
        answered(mm, cwd)  # bytecode written, as an ordinary installation's first run does
        rounds = {"bare": [], "mm": [], "mm+session": []}
        for _ in range(n):
            rounds["bare"].append(answered(bare, cwd))
            rounds["mm"].append(answered(mm, cwd))
            rounds["mm+session"].append(answered(mm, cwd, session=True))
        base = statistics.median(rounds["bare"])
        for name, times in rounds.items():
            median = statistics.median(times)
            print(f"{name:>11}: {median * 1000:7.1f} ms (median of {n})  {median / base:4.2f}x the bare SDK agent")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
