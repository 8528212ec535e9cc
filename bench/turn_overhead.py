"""Turn overhead: 200 tool round trips through mm's engine against a minimal httpx loop.

Both run in this process against the same scripted server (tests/scripted_server.py); the
baseline replays the exact request bodies mm sent, decoding each streamed chunk to the end.
Target: mm within 1.2x the loop's time. Run: python bench/turn_overhead.py [ROUND_TRIPS]
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from scripted_server import ScriptedServer  # noqa: E402


class QuietUI:
    def emit(self, event) -> None:
        pass

    async def request_permission(self, name, arguments, preview):
        return "allow_once"


def script(srv: ScriptedServer, n: int) -> None:
    for i in range(n):
        srv.add_tool_calls([{"name": "read_file", "arguments": {"path": "data.txt", "start": i + 1, "end": i + 1}}])
    srv.add_reply("done")


async def run_mm(srv: ScriptedServer, cwd: Path, n: int) -> float:
    from mm.config.load import agent_config_adapter
    from mm.run import build_conversation, make_client

    cfg = agent_config_adapter().validate_python({"maxTurns": n + 5})
    conv = build_conversation(cfg, make_client(cfg, srv.base_url, "m", "openai"), cwd)
    t0 = time.perf_counter()
    done = await conv.run_turn("read the lines", QuietUI())
    elapsed = time.perf_counter() - t0
    assert done.stop_reason == "end_turn", done
    return elapsed


async def run_baseline(srv: ScriptedServer, bodies: list[dict]) -> float:
    import httpx

    async with httpx.AsyncClient(timeout=30) as client:
        t0 = time.perf_counter()
        for body in bodies:
            async with client.stream("POST", srv.base_url + "/chat/completions", json=body) as resp:
                async for line in resp.aiter_lines():
                    if line == "data: [DONE]":
                        break
                    if line.startswith("data: "):
                        json.loads(line[6:])  # any client must at least decode the chunks
        return time.perf_counter() - t0


def one_round(cwd: Path, n: int) -> tuple[float, float]:
    """mm's time and the loop's time for n round trips, against fresh scripted servers."""
    with ScriptedServer() as srv:
        script(srv, n)
        mm_t = asyncio.run(run_mm(srv, cwd, n))
        bodies = list(srv.requests)
        script(srv, n)
        base_t = asyncio.run(run_baseline(srv, bodies))
    return mm_t, base_t


def main(n: int = 200, rounds: int = 5) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / "data.txt").write_text("".join(f"line {i}\n" for i in range(1, n + 2)))
        one_round(cwd, 10)  # warm-up: imports and first-time code paths of both sides
        times = [one_round(cwd, n) for _ in range(rounds)]
    mm_ms = statistics.median(t[0] for t in times) * 1000
    base_ms = statistics.median(t[1] for t in times) * 1000
    ratios = sorted(t[0] / t[1] for t in times)
    print(f"{n} tool round trips: mm {mm_ms:.0f} ms, httpx loop {base_ms:.0f} ms (medians of {rounds}), "
          f"ratio {statistics.median(ratios):.2f}x (per round {', '.join(f'{r:.2f}' for r in ratios)}; "
          "target <= 1.2x)")
    return {"mm_ms": mm_ms, "baseline_ms": base_ms, "ratio": statistics.median(ratios)}


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
