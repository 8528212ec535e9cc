"""Every case of tests/cases/edits/ run against the real edit_file tool on real files
(cases/README.md §edits/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mm.tools.base import ToolContext
from mm.tools.edit import EditFile
from harness import CASES_DIR




CASES = sorted((CASES_DIR / "edits").glob("*.json"))
KNOWN = {"outcome", "file_after", "written", "headline_contains", "headline_not_contains",
         "message_contains", "message_not_contains", "output_contains"}


def test_cases_found():
    assert len(CASES) >= 30


@pytest.mark.parametrize("case_file", CASES, ids=lambda p: p.stem)
async def test_edit_case(case_file: Path, tmp_path: Path):
    case = json.loads(case_file.read_text(encoding="utf-8"))
    expect = case["expect"]
    assert set(expect) <= KNOWN, f"unknown expectation keys: {set(expect) - KNOWN}"
    target = tmp_path / case["path"]
    if case["file"] is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(case["file"].encode("utf-8"))
        before = target.stat().st_mtime_ns

    result = await EditFile().run(case["call"], ToolContext(cwd=tmp_path))

    text = result.text
    headline = text.split("\n", 1)[0]
    if expect["outcome"] == "applied":
        assert not result.failed, text
    else:
        assert result.failed, text
        assert result.change is None
    if expect["file_after"] is None:
        assert not target.exists()
    else:
        assert target.read_bytes() == expect["file_after"].encode("utf-8")
    if expect.get("written") is False:
        assert result.change is None
        assert target.stat().st_mtime_ns == before
    elif expect["outcome"] == "applied":
        assert result.change is not None
        assert result.change.path == target
        assert result.change.old_text == case["file"]
        assert result.change.new_text == expect["file_after"]
        assert result.locations == [target]
    for fragment in expect.get("headline_contains", []):
        assert fragment in headline
    for fragment in expect.get("headline_not_contains", []):
        assert fragment not in headline
    for fragment in expect.get("message_contains", []):
        assert fragment in text
    for fragment in expect.get("message_not_contains", []):
        assert fragment not in text
    for fragment in expect.get("output_contains", []):
        assert fragment in text
