"""Run every benchmark of bench/, each in its own process, and print their figures.

Run: python bench/run_all.py   (with the project's virtual environment's interpreter)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

for name in ("startup", "acp_startup", "turn_overhead", "command_overhead", "edit_file", "fit/edits", "fit/args",
             "webmd", "line_render", "line_rss", "stream"):  # memory_search, session_kill, kill_trials: minutes
    print(f"== {name}", flush=True)
    subprocess.run([sys.executable, str(HERE / f"{name}.py")], check=False)
    print(flush=True)
