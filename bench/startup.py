"""Start-up: `mm --version` and `mm -p` up to its first request, against `python -c pass`.

Each figure is the median of N runs, measured in this same invocation with the same virtual
environment's interpreter; targets: --version within 2.5x the floor, first request within 150 ms.
Run: python bench/startup.py [N]
"""

from __future__ import annotations

import http.server
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def timed(argv: list[str], cwd: str) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)  # stdin: `mm -p` reads what is piped to it (docs/scripting.md)
    return time.perf_counter() - t0


class FirstRequest(http.server.BaseHTTPRequestHandler):
    arrived: list[float] = []

    def do_POST(self):  # noqa: N802
        FirstRequest.arrived.append(time.perf_counter())
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = b'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


MINIMAL_CLIENT = """
import asyncio, httpx, sys
async def main():
    async with httpx.AsyncClient(verify=False) as client:
        await client.post(sys.argv[1] + "/chat/completions", json={"messages": []})
asyncio.run(main())
"""


def first_request(argv: list[str], cwd: str) -> float:
    FirstRequest.arrived.clear()
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)  # stdin: `mm -p` reads what is piped to it (docs/scripting.md)
    return FirstRequest.arrived[0] - t0


def compile_mm() -> None:
    """Write mm's bytecode first, as any ordinary run does; this machine's environment sets
    PYTHONDONTWRITEBYTECODE, which would leave mm compiling its sources at every start
    (the libraries' bytecode was written when pip installed them)."""
    import compileall

    import mm

    compileall.compile_dir(str(Path(mm.__file__).parent), quiet=1)


def main(n: int = 20) -> dict[str, float]:
    compile_mm()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FirstRequest)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}/v1"
    with tempfile.TemporaryDirectory() as cwd:
        os.environ["HOME"] = cwd
        floor = statistics.median(timed([sys.executable, "-c", "pass"], cwd) for _ in range(n))
        version = statistics.median(timed([str(BIN / "mm"), "--version"], cwd) for _ in range(n))
        mm_p = [str(BIN / "mm"), "-p", "hi", "--base-url", url, "--model", "m"]
        first = statistics.median(first_request(mm_p, cwd) for _ in range(n))
        minimal = statistics.median(first_request([sys.executable, "-c", MINIMAL_CLIENT, url], cwd)
                                    for _ in range(n))
    srv.shutdown()
    print(f"python -c pass            {floor * 1000:7.1f} ms  (floor)")
    print(f"mm --version              {version * 1000:7.1f} ms  {version / floor:4.2f}x floor  (target <= 2.5x)")
    print(f"minimal asyncio+httpx client → first request {minimal * 1000:7.1f} ms  (the libraries' own floor)")
    print(f"mm -p → first request     {first * 1000:7.1f} ms  {first / floor:4.2f}x floor, "
          f"{first / minimal:4.2f}x the minimal client  (target <= 150 ms)")
    return {"floor_ms": floor * 1000, "version_ms": version * 1000, "first_request_ms": first * 1000,
            "minimal_client_ms": minimal * 1000}


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
