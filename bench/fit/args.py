"""Benchmark argument repair on realistic mistakes (issue 9, point 1's argument half and point 5).

Run: .venv/bin/python bench/fit/args.py [--per-form N] [--seed S] [--show-refused]

Prints, per form, how many argument strings parsed to the intended arguments (correct), to
different ones (wrong: must never happen), were refused although fixable, or crashed; forms
marked "(refuse)" must be refused (their correct column counts refusals). Targets: at least 97% of
the fixable cases correct, 0 wrong, every must-refuse case refused.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.fit.argcases import SEED, Judge, generate, table  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-form", type=int, default=30)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--show-refused", action="store_true", help="list why fixable cases were refused")
    opts = parser.parse_args()
    t0 = time.perf_counter()
    cases = generate(opts.per_form, opts.seed)
    judge = Judge()
    verdicts = [judge(case) for case in cases]
    print(table(cases, verdicts))
    print(f"\n{len(cases)} cases (seed {opts.seed}, {opts.per_form} per form) in {time.perf_counter() - t0:.1f} s")
    if opts.show_refused:
        why = Counter((c.form.name, v.error[:160]) for c, v in zip(cases, verdicts)
                      if v.outcome in ("refused", "wrong", "crashed") and c.form.fixable
                      or v.outcome != "correct" and not c.form.fixable)
        for (form, error), n in why.most_common():
            print(f"- {form} ×{n}: {error}")


if __name__ == "__main__":
    main()
