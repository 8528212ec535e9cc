"""Streaming cost of `mm -p`: a text answer of 2, 8 and 32 MB in 1 KB chunks, against the
scripted server alone (issue 10.9).

For each size, the scripted server (tests/scripted_server.py, in this process) serves the same
answer twice: once read by a bare httpx loop that decodes every chunk (the baseline: the server's
and the transport's own cost), once to `mm -p` run as a subprocess with its answer on a pipe.
Printed per size: both times and the ratio mm / baseline; then the time each further MB costs
mm between two sizes (its start-up cancels out). Linear streaming keeps it flat: target, the cost
per MB from 8 to 32 MB within 1.5x the one from 2 to 8 MB. Run: python bench/stream.py [MB ...]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from scripted_server import ScriptedServer  # noqa: E402

CHUNK = 1024  # characters of text per chunk
LINE = "The quick brown fox jumps over the lazy dog; a streamed answer, line after line. "
SIZES = (2, 8, 32)  # MB


def answer_chunks(megabytes: float) -> list:
    """The SSE items of a text answer of `megabytes` MB in CHUNK-character pieces (lines of prose)."""
    text_line = (LINE * 3)[:CHUNK - 1] + "\n"
    n = max(1, int(megabytes * 1024 * 1024) // CHUNK)
    chunks: list = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}]
    chunks += [{"choices": [{"index": 0, "delta": {"content": text_line}}]}] * n
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return chunks + ["data: [DONE]"]


def baseline(srv: ScriptedServer) -> float:
    """The time a bare loop takes to read the answer, decoding every chunk."""
    import httpx

    t0 = time.perf_counter()
    with httpx.Client(timeout=120) as client:
        with client.stream("POST", srv.base_url + "/chat/completions", json={"stream": True}) as resp:
            for line in resp.iter_lines():
                if line.startswith("data: {"):
                    json.loads(line[6:])
    return time.perf_counter() - t0


def run_mm(srv: ScriptedServer, cwd: Path) -> float:
    """The wall time of `mm -p` streaming the answer to a pipe (read to its end)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(cwd)}
    args = [sys.executable, "-m", "mm", "-p", "go", "--base-url", srv.base_url, "--model", "m"]
    t0 = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=1800)
    elapsed = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stderr.decode()[-500:]
    return elapsed


def measure(srv: ScriptedServer, cwd: Path, megabytes: float) -> tuple[float, float]:
    chunks = answer_chunks(megabytes)
    srv.add_sse(chunks)
    base = baseline(srv)
    srv.add_sse(chunks)
    return run_mm(srv, cwd), base


def main(sizes: tuple[float, ...] = SIZES) -> list[float]:
    times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer() as srv:
        cwd = Path(tmp)
        start, _ = measure(srv, cwd, 0)  # start-up and one tiny answer
        print(f"mm -p start-up (one-chunk answer): {start:.2f} s")
        print(f"{'MB':>4} {'mm s':>8} {'server s':>9} {'server s/MB':>11} {'mm / server':>11}")
        for mb in sizes:
            mm_t, base_t = measure(srv, cwd, mb)
            times.append(mm_t)
            print(f"{mb:>4g} {mm_t:>8.2f} {base_t:>9.2f} {base_t / mb:>11.3f} {mm_t / base_t:>11.1f}", flush=True)
    # The time each further MB costs, between two sizes (start-up cancels out): flat when linear.
    slopes = [(times[i + 1] - times[i]) / (sizes[i + 1] - sizes[i]) for i in range(len(sizes) - 1)]
    for i, slope in enumerate(slopes):
        print(f"mm s per MB from {sizes[i]:g} to {sizes[i + 1]:g} MB: {slope:.3f}")
    if len(slopes) > 1 and slopes[0] > 0:
        print(f"last / first: {slopes[-1] / slopes[0]:.2f} (target: at most 1.5, linear)")
    return slopes


if __name__ == "__main__":
    main(tuple(float(a) for a in sys.argv[1:]) or SIZES)
