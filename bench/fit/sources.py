"""Real source files nobody on the project wrote, for the mutation benchmarks (bench/fit/).

Four-space Python comes from the running interpreter's standard library; tab-indented Go and C
and two-space JavaScript and TypeScript are kept under tests/data/fit/ with their licences
(tests/data/fit/README.md), so the benchmark and its test run in a lone clone.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "fit"
LANGUAGES = {".go": "go", ".c": "c", ".h": "c", ".js": "js", ".ts": "ts", ".py": "py"}
PY_MIN_BYTES, PY_MAX_BYTES = 4_000, 60_000


@dataclass(frozen=True)
class Source:
    """One real file: its name (for reports), language, text (LF endings) and indent unit."""

    name: str
    lang: str
    text: str
    unit: str  # "\t", "  " or "    "


def _unit(lang: str) -> str:
    return {"go": "\t", "c": "\t", "js": "  ", "ts": "  "}.get(lang, "    ")


def kept_sources() -> list[Source]:
    """Every file under tests/data/fit/ (tabs: Go and C; two spaces: JS and TS)."""
    out = []
    for path in sorted(DATA.rglob("*")):
        lang = LANGUAGES.get(path.suffix)
        if lang is None or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
        out.append(Source(f"{path.parent.name}/{path.name}", lang, text, _unit(lang)))
    return out


def stdlib_sources(count: int, seed: int) -> list[Source]:
    """`count` (int) modules of the running interpreter's standard library (four spaces), chosen
    with `seed` (int) among the top-level modules of 4–60 kB."""
    lib = Path(os.__file__).parent
    names = sorted(p.name for p in lib.glob("*.py")
                   if PY_MIN_BYTES <= p.stat().st_size <= PY_MAX_BYTES and not p.name.startswith("_"))
    rng = random.Random(seed)
    out = []
    for name in rng.sample(names, min(count, len(names))):
        try:
            text = (lib / name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if "\t" in text or "\r" in text:
            continue
        out.append(Source(f"stdlib/{name}", "py", text, "    "))
    return out
