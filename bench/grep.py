"""grep_search against plain ripgrep on a generated tree of 50,000 files, in the same run.

Run: .venv/bin/python bench/grep.py [files [rounds]] [--tree DIR]   (default 50000 7)

Generates a source-like tree (500 folders of 100 files, ~1.2 KB each, a word that matches in one
file of twenty, a `.gitignore` and hidden folders as in a project), then times, in alternation,
each mode of the tool (its whole work: finding ripgrep, two runs for a content page, sorting by
path, paging, formatting) and the plain `rg` command that answers the same question (`rg -l`,
`rg --count`, `rg -n`), each reading all of rg's output. Prints the median and the fastest of each
and the median of the rounds' ratios (target, the brief: within 1.2x); and the processor time
each took (ripgrep's, read from the process that reaped it: this process for plain rg, mm's
command supervisor for the tool; plus the tool's own Python), which a busy machine does not skew.
Plain rg is timed twice: as a child of this process, and in a session of its own — as mm's command
supervisor starts every command, so that none outlives mm. On a machine with more runnable
threads than cores, Linux's scheduler (autogroup: one share per session) gives a new session
less time than a session that was there already, which the second baseline shows apart.
Last, one content search by the pure-Python search (MM_RG pointing nowhere), for information.

Run with `--tree DIR` to generate the tree in DIR once and reuse it.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mm.tools.base import Settings, ToolContext
from mm.tools.search.grep_tool import GrepSearch
from mm.tools.search.ripgrep import find_ripgrep

WORDS = ("def class return import from self value list dict config error request response server client token "
         "model window cache thread queue lock commit branch merge review build deploy test assert").split()
PATTERN = r"needle_\d+"
MODES = {"files_with_matches": ["-l"], "count": ["--count"], "content": ["-n"]}


def generate(root: Path, files: int) -> None:
    rng = random.Random(7)
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    per_folder = 100
    for n in range(files):
        folder = root / f"pkg{n // per_folder // 50:02}" / f"mod{n // per_folder:03}"
        if n % per_folder == 0:
            folder.mkdir(parents=True, exist_ok=True)
        lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9))) for _ in range(30)]
        if n % 20 == 0:
            lines[rng.randrange(30)] += f" needle_{n}"
        suffix = ".log" if n % 97 == 0 else ".py"
        (folder / f"file{n % per_folder:03}{suffix}").write_text("\n".join(lines) + "\n")
    for hidden in (".cache", ".venv"):
        (root / hidden).mkdir()
        (root / hidden / "x.py").write_text("needle_0\n")


def children_cpu(pid: int) -> float:
    """Processor seconds of the children `pid` has reaped (/proc/PID/stat: cutime + cstime)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def supervisor_pid() -> int:
    """mm's command supervisor: the child of this process running supervisor.py."""
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                parent = int(f.read().rsplit(b")", 1)[1].split()[1])
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmdline = f.read()
        except (OSError, ValueError, IndexError):
            continue
        if parent == os.getpid() and b"supervisor.py" in cmdline:
            return int(name)
    raise RuntimeError("no command supervisor")


def plain_rg(program: str, root: Path, flags: list[str], own_session: bool = False) -> tuple[float, float]:
    """(wall seconds, processor seconds) of `rg FLAGS PATTERN ROOT`, its output read whole;
    `own_session`: started in a session of its own, as mm's command supervisor starts every command."""
    cpu, began = children_cpu(os.getpid()), time.perf_counter()
    done = subprocess.run([program, *flags, PATTERN, str(root)], stdin=subprocess.DEVNULL, capture_output=True,
                          start_new_session=own_session)
    took = time.perf_counter() - began
    assert done.returncode == 0 and done.stdout, done.stderr
    return took, children_cpu(os.getpid()) - cpu


async def tool(search: GrepSearch, root: Path, mode: str, supervisor: int | None = None) -> tuple[float, float]:
    """(wall seconds, processor seconds: the tool's Python and the programs it ran) of one call."""
    ctx = ToolContext(cwd=root, settings=Settings(max_output=12000))
    cpu = (children_cpu(supervisor) if supervisor else 0.0) + time.process_time()
    began = time.perf_counter()
    result = await search.run({"pattern": PATTERN, "output_mode": mode}, ctx)
    took = time.perf_counter() - began
    assert not result.failed and result.text.startswith("pkg"), result.text[:300]
    await asyncio.sleep(0.05)  # the supervisor reaps what was killed (a content page stops its second run)
    used = (children_cpu(supervisor) if supervisor else 0.0) + time.process_time() - cpu
    return took, used


async def measure(root: Path, rounds: int) -> None:
    program = find_ripgrep(os.environ)
    assert program, "no ripgrep: install mm's dependencies"
    print(f"ripgrep: {program}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    search = GrepSearch(os.environ)
    await tool(search, root, "count")  # finds ripgrep, starts mm's command supervisor, warms the cache
    supervisor = supervisor_pid()
    plain_rg(program, root, ["-l"])
    for mode, flags in MODES.items():
        ours, theirs, apart = [], [], []
        for _ in range(rounds):
            theirs.append(plain_rg(program, root, flags))
            ours.append(await tool(search, root, mode, supervisor))
            apart.append(plain_rg(program, root, flags, own_session=True))
        wall = [statistics.median(t for t, _ in times) for times in (ours, theirs, apart)]
        ratio = [statistics.median(a[0] / b[0] for a, b in zip(ours, base)) for base in (theirs, apart)]
        cpu = statistics.median(c for _, c in ours), statistics.median(c for _, c in theirs)
        print(f"{mode:>18}: grep_search {wall[0] * 1000:5.0f} ms | rg {' '.join(flags):7} {wall[1] * 1000:5.0f} ms: "
              f"{ratio[0]:.2f}x | rg in a session of its own {wall[2] * 1000:5.0f} ms: {ratio[1]:.2f}x | "
              f"processor {cpu[0] * 1000:4.0f} ms vs {cpu[1] * 1000:4.0f} ms: {cpu[0] / cpu[1]:.2f}x")
    python = GrepSearch({"MM_RG": str(root / "nowhere")})
    took, _ = await tool(python, root, "content")
    print(f"pure-Python search (no ripgrep), content mode, once: {took:.2f} s")


def main(argv: list[str]) -> None:
    tree = argv[argv.index("--tree") + 1] if "--tree" in argv else None
    numbers = [int(a) for a in argv if a.isdigit()]
    files, rounds = (numbers + [50_000, 7][len(numbers):])[:2]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tree or tmp)
        if not tree or not (root / ".gitignore").exists():
            root.mkdir(parents=True, exist_ok=True)
            began = time.perf_counter()
            generate(root, files)
            print(f"{files} files generated in {time.perf_counter() - began:.1f} s")
        asyncio.run(measure(root, rounds))


if __name__ == "__main__":
    main(sys.argv[1:])
