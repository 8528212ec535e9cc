"""A fixed subset of the argument-repair benchmark (bench/fit/args.py, issue 9): real standard-library
text in realistic calls, rendered in every form, through the real stream assembler and the real
tools' coercion. Targets: 0 wrong, 0 crashed, every must-refuse case refused, >= 97% correct."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ lives beside tests/

from bench.fit.argcases import Judge, generate  # noqa: E402
from bench.fit.argforms import FORMS  # noqa: E402

PER_FORM = 5


def test_the_subset_meets_the_targets():
    cases = generate(PER_FORM)
    judge = Judge()
    verdicts = [judge(case) for case in cases]
    assert {c.form.name for c in cases} == {f.name for f in FORMS}

    bad = [(c.form.name, v.outcome, v.error, c.text[:300]) for c, v in zip(cases, verdicts)
           if v.outcome in ("wrong", "crashed") or not c.form.fixable and v.outcome != "correct"]
    assert not bad, bad
    fixable = [v for c, v in zip(cases, verdicts) if c.form.fixable]
    correct = sum(v.outcome == "correct" for v in fixable)
    assert correct >= 0.97 * len(fixable), [(c.form.name, v.error) for c, v in zip(cases, verdicts)
                                             if v.outcome == "refused" and c.form.fixable]


def test_the_subset_is_the_start_of_the_benchmark():
    """The same seed gives the same first cases whatever the size, so the test runs the benchmark's own cases."""
    small, large = generate(2), generate(3)
    by_form = {}
    for case in large:
        by_form.setdefault(case.form.name, []).append(case.text)
    assert all(case.text in by_form[case.form.name][:2] for case in small)
