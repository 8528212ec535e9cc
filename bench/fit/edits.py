"""The edit_file mutation benchmark (issue 9, point 1): every case of kinds.py through the real
tool on a real file, tallied per kind as correct, wrong, refused although fixable, or crashed.

Run: python bench/fit/edits.py [--per-kind N] [--seed S] [--show KIND]
Prints a Markdown table (the README's) and the totals; --show prints the wrong cases of a kind
(a substring of its name) with the file before, the call, and what came out.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from edit_cases import EditCase  # noqa: E402
from kinds import generate  # noqa: E402

from mm.tools.base import Settings, ToolContext  # noqa: E402
from mm.tools.edit import EditFile  # noqa: E402

OUTCOMES = ("correct", "wrong", "refused", "crashed")


@dataclass
class Outcome:
    """What came of one case: its verdict, the file after, and the tool's text."""

    case: EditCase
    verdict: str
    after: str
    text: str


async def run_case(case: EditCase, folder: Path) -> Outcome:
    """Write the case's file in `folder`, call edit_file once, and judge the result."""
    path = folder / ("target" + case.suffix)
    path.write_bytes(case.file.encode("utf-8"))
    ctx = ToolContext(cwd=folder, settings=Settings(max_output=4000))
    args = {"path": path.name, "edits": [{"old": case.old, "new": case.new}]}
    try:
        result = await EditFile().run(args, ctx)
    except Exception as err:  # noqa: BLE001 - a crash is one of the outcomes counted
        return Outcome(case, "crashed", case.file, f"{type(err).__name__}: {err}")
    after = path.read_bytes().decode("utf-8")
    if case.expected is None:
        verdict = "correct" if after == case.file and result.failed else "wrong"
    elif after == case.expected:
        verdict = "correct"
    elif after == case.file and result.failed:
        verdict = "refused"
    else:
        verdict = "wrong"
    return Outcome(case, verdict, after, result.text)


async def run_all(cases: list[EditCase]) -> list[Outcome]:
    """Every case in its own temporary folder."""
    out = []
    with tempfile.TemporaryDirectory(prefix="mm-fit-") as tmp:
        for n, case in enumerate(cases):
            folder = Path(tmp) / str(n)
            folder.mkdir()
            out.append(await run_case(case, folder))
    return out


def table(outcomes: list[Outcome]) -> str:
    """The Markdown table: one row per kind, then the totals of fixable and must-refuse cases."""
    by_kind: dict[str, Counter] = defaultdict(Counter)
    for o in outcomes:
        by_kind[o.case.kind][o.verdict] += 1
    rows = ["| kind | cases | correct | wrong | refused although fixable | crashed |", "|---|---|---|---|---|---|"]
    for kind, c in by_kind.items():
        rows.append(f"| {kind} | {sum(c.values())} | {c['correct']} | {c['wrong']} | "
                    f"{c['refused'] if 'refuse)' not in kind else '—'} | {c['crashed']} |")
    fixable = [o for o in outcomes if o.case.expected is not None]
    refuse = [o for o in outcomes if o.case.expected is None]
    fc, rc = Counter(o.verdict for o in fixable), Counter(o.verdict for o in refuse)
    share = 100 * fc["correct"] / max(1, len(fixable))
    rows.append(f"| **fixable, all kinds** | {len(fixable)} | {fc['correct']} ({share:.1f}%) | {fc['wrong']} | "
                f"{fc['refused']} | {fc['crashed']} |")
    rows.append(f"| **must refuse, all kinds** | {len(refuse)} | {rc['correct']} refused | {rc['wrong']} | — | "
                f"{rc['crashed']} |")
    return "\n".join(rows)


def show(outcomes: list[Outcome], kind: str, verdicts: tuple[str, ...] = ("wrong", "crashed", "refused")) -> None:
    """Print the failing cases of the kinds whose name holds `kind`."""
    for o in outcomes:
        if kind in o.case.kind and o.verdict in verdicts:
            c = o.case
            print(f"=== {o.verdict}: {c.kind} · {c.source} · {c.change}")
            print(f"old: {c.old!r}\nnew: {c.new!r}")
            if c.expected is not None and o.after != c.file:
                import difflib
                print("".join(difflib.unified_diff(c.expected.splitlines(True), o.after.splitlines(True),
                                                   "expected", "got", n=1)))
            print(o.text[:1500])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-kind", type=int, default=30)
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--python-files", type=int, default=40)
    parser.add_argument("--show", default=None)
    args = parser.parse_args()
    cases = generate(args.seed, args.per_kind, args.python_files)
    outcomes = asyncio.run(run_all(cases))
    print(table(outcomes))
    if args.show is not None:
        show(outcomes, args.show)


if __name__ == "__main__":
    main()
