"""What running a command through mm costs: the `bash` tool (command supervisor, temporary
output file, read-back, formatting) against a plain `bash -c` subprocess, in the same run.

Run: .venv/bin/python bench/command_overhead.py [calls]   (default 200)

Prints the first call (which starts mm's command supervisor), then the median and the fastest
time per call of each, and their ratios (on a busy machine the fastest tells the cost, the
median the experience). The two are measured in alternation so that a busy machine weighs on both.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

COMMAND = "echo hello"


async def plain(cwd: Path) -> float:
    began = time.perf_counter()
    proc = await asyncio.create_subprocess_exec("bash", "-c", COMMAND, cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    await proc.communicate()
    return time.perf_counter() - began


async def through_mm(cwd: Path) -> float:
    from mm.tools.base import Settings, ToolContext
    from mm.tools.bash import Bash

    began = time.perf_counter()
    result = await Bash().run({"command": COMMAND}, ToolContext(cwd=cwd, settings=Settings()))
    took = time.perf_counter() - began
    assert result.text == "hello\n", result.text
    return took


async def main(calls: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        first = await through_mm(cwd)
        mm_times, plain_times = [], []
        for _ in range(calls):
            plain_times.append(await plain(cwd))
            mm_times.append(await through_mm(cwd))
    print(f"first bash call (starts the command supervisor): {first * 1000:.1f} ms")
    for name, pick in (("median", statistics.median), ("fastest", min)):
        ours, theirs = pick(mm_times), pick(plain_times)
        print(f"per call, {name} of {calls}: bash tool {ours * 1000:.2f} ms, plain bash -c "
              f"{theirs * 1000:.2f} ms, ratio {ours / theirs:.2f}")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200))
