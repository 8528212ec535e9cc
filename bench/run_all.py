"""Run every benchmark of bench/ in one invocation and print their figures.

Run: python bench/run_all.py   (with the project's virtual environment's interpreter)
"""

from __future__ import annotations

import runpy
from pathlib import Path

HERE = Path(__file__).resolve().parent

for name in ("startup", "turn_overhead", "edit_file"):
    print(f"== {name}")
    module = runpy.run_path(str(HERE / f"{name}.py"))
    module["main"]()
    print()
