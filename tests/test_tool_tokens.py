"""docs/tools.md against the real registry: every tool has its row with its group and the token
cost bench/tool_tokens.py measures, and the default set stays under 1,500 tokens (issue 13)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from harness import TESTS

ROOT = TESTS.parent
ROW = re.compile(r"^\| `(?P<name>[a-z_]+)` \| (?P<group>[a-z]+) \| (?P<tokens>\d+) \|", re.M)
LIMIT = 1500


def measured() -> dict:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "tool_tokens.py"), "--json"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_every_tool_has_its_row_with_the_measured_cost():
    figures = measured()
    rows = {m["name"]: (m["group"], int(m["tokens"])) for m in ROW.finditer((ROOT / "docs" / "tools.md").read_text())}
    wrong = {t["name"]: ((t["group"], t["tokens"]), rows.get(t["name"])) for t in figures["tools"]
             if rows.get(t["name"]) != (t["group"], t["tokens"])}
    assert not wrong, f"docs/tools.md differs from `python bench/tool_tokens.py` (measured, documented): {wrong}"
    assert {"fs_read", "fs_write", "file_edit", "bash", "read_file"} <= set(rows)


def test_the_default_set_stays_under_the_limit_and_is_documented():
    default = measured()["default"]
    assert default["names"] == ["bash", "read_file", "write_file", "edit_file", "ask_user", "unload_model"]
    assert default["total"] < LIMIT
    doc = (ROOT / "docs" / "tools.md").read_text()
    assert f"| system prompt (the default `systemPrompt`) | {default['system']} |" in doc
    assert f"| **total** | **{default['total']}** (the limit: 1,500) |" in doc
