"""Benchmark edit_file on a 10,000-line file: exact pass, indent pass, closest-region refusal.

Run: .venv/bin/python bench/edit_file.py [repetitions]

Prints milliseconds per call (median and best of the repetitions) and the ratio to a
baseline measured in the same run: reading the file, one str.replace, and writing it back
atomically — the least any edit can cost. Targets (the brief): exact ~<10 ms, indent ~<50 ms,
closest-region refusal ~<100 ms.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mm.tools.base import ToolContext
from mm.tools.edit import EditFile
from mm.fs import write_atomic

LINES = 10_000


def build_file(path: Path) -> None:
    """Write a 10,000-line, 4-space-indented Python file of small functions."""
    rows = []
    i = 0
    while len(rows) < LINES:
        rows += [
            f"def func_{i}(x):",
            f"    value_{i} = x * {i}",
            f"    if value_{i} > {i}:",
            f"        return value_{i} - 1",
            f"    return value_{i} + 1",
            "",
        ]
        i += 1
    path.write_text("\n".join(rows[:LINES]) + "\n")


def baseline(path: Path) -> None:
    """The least an edit costs: read, replace once, write atomically."""
    text = path.read_text()
    write_atomic(path, text.replace("    value_900 = x * 900", "    value_900 = x * 900", 1))


async def timed(label: str, call, reps: int, base: float | None) -> float:
    """Run `call` (async, no argument) `reps` times; print and return the median in ms."""
    times = []
    for k in range(reps):
        t0 = time.perf_counter()
        await call(k)
        times.append((time.perf_counter() - t0) * 1000)
    med = statistics.median(times)
    ratio = f"  ×{med / base:.1f} baseline" if base else ""
    print(f"{label:<40} {med:7.2f} ms/call (best {min(times):.2f}){ratio}")
    return med


async def main(reps: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = root / "big.py"
        build_file(path)
        ctx = ToolContext(cwd=root)
        tool = EditFile()

        async def run(args):
            result = await tool.run({"path": "big.py", **args}, ctx)
            return result

        async def base_call(_k):
            baseline(path)

        base = await timed("baseline: read + replace + atomic write", base_call, reps, None)

        async def exact_dry(_k):
            r = await run({"edits": [{"old": "    value_800 = x * 800", "new": "    value_800 = x * 8000"}],
                           "dry_run": True})
            assert not r.failed, r.text

        async def exact_write(k):
            a, b = "    value_800 = x * 800", "    value_800 = x * 8000"
            old, new = (a, b) if k % 2 == 0 else (b, a)
            r = await run({"edits": [{"old": old, "new": new}]})
            assert not r.failed, r.text

        async def indent_dry(_k):
            old = "\tif value_1200 > 1200:\n\t\treturn value_1200 - 1"
            new = "\tif value_1200 > 1200:\n\t\treturn value_1200 - 2"
            r = await run({"edits": [{"old": old, "new": new}], "dry_run": True})
            assert not r.failed and "matched ignoring whitespace" in r.text, r.text

        async def closest(_k):
            old = "def func_1500(x):\n    value_1500 = x * 9\n    if value_1500 > 1500:\n        return value_1500 - 1"
            r = await run({"edits": [{"old": old, "new": "x"}]})
            assert r.failed and "the closest the file comes to it" in r.text, r.text

        await timed("exact pass (dry run)", exact_dry, reps, base)
        await timed("exact pass (written)", exact_write, reps, base)
        await timed("indent pass (dry run)", indent_dry, reps, base)
        await timed("closest-region refusal", closest, reps, base)
        await occurrences(root, max(3, reps // 5))


async def occurrences(root: Path, reps: int) -> None:
    """An old found N times (the ambiguity refusal) in a file of N such lines, for N = 10,000,
    100,000 and 400,000: the time per occurrence must stay flat (issue 10, point 9: 100,000
    took 75 s). Baseline: counting the occurrences with str.count in the same file."""
    ctx = ToolContext(cwd=root)
    for n in (10_000, 100_000, 400_000):
        path = root / f"many_{n}.txt"
        path.write_text("    x = 1\n" * n)

        async def count(_k, path=path):
            path.read_text().count("x = 1")

        async def refuse(_k, name=path.name):
            r = await EditFile().run({"path": name, "edits": [{"old": "x = 1", "new": "y"}]}, ctx)
            assert r.failed and f"appears {n} times" in r.text, r.text

        base = await timed(f"{n:>7} occurrences: str.count", count, reps, None)
        med = await timed(f"{n:>7} occurrences: ambiguity refusal", refuse, reps, base)
        print(f"{'':<40} {1000 * med / n:7.4f} µs per occurrence")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20))
