"""Every html and robots case end to end: each page served from a loopback server, fetched by
the real fetch_content tool (shared/cases/README.md §html, §robots)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness import SHARED, load_cases
from mm.tools.base import Settings, ToolContext
from mm.tools.web.fetch_content import FetchContent

HTML_CASES = load_cases("html")
ROBOTS_CASES = load_cases("robots")


def fill(value, origin: str):
    """`value` with every `{origin}` placeholder replaced (lists and strings)."""
    if isinstance(value, list):
        return [fill(v, origin) for v in value]
    return value.replace("{origin}", origin) if isinstance(value, str) else value


async def fetch(args: dict, tmp_path: Path, max_output: int = 100_000):
    ctx = ToolContext(cwd=tmp_path, settings=Settings(max_output=max_output))
    return await FetchContent().run(args, ctx)


def check_text(text: str, expect: dict, origin: str) -> None:
    """The html-case expectations on the tool's output (README §Conventions, §html)."""
    e = {k: fill(v, origin) for k, v in expect.items()}
    if "equals" in e:
        assert text.removesuffix("\n") == e["equals"]
    if "starts_with" in e:
        assert text.startswith(e["starts_with"]), text[:300]
    for part in e.get("contains", []):
        assert part in text, f"missing {part!r} in:\n{text}"
    for part in e.get("not_contains", []):
        assert part not in text, f"unexpected {part!r} in:\n{text}"
    for pattern in e.get("regex", []):
        assert re.search(pattern, text), f"no match for {pattern!r} in:\n{text}"
    at = 0
    for part in e.get("in_order", []):
        found = text.find(part, at)
        assert found >= 0, f"{part!r} missing or out of order in:\n{text}"
        at = found + len(part)
    if e.get("ends_with_single_newline"):
        assert text.endswith("\n") and not text.endswith("\n\n")


def test_cases_found():
    assert len(HTML_CASES) >= 13 and len(ROBOTS_CASES) >= 9


@pytest.mark.parametrize("case", HTML_CASES, ids=lambda c: c["id"])
async def test_html_case(case: dict, web, tmp_path: Path):
    body = (SHARED / "cases" / "html" / case["page_file"]).read_bytes()
    web.page(case["served_at"], body, headers=case["response_headers"])
    args = {k: fill(v, web.origin) for k, v in case["fetch_arguments"].items()}
    result = await fetch(args, tmp_path)
    check_text(result.text, case["expect"], web.origin)
    assert not result.failed


@pytest.mark.parametrize("case", ROBOTS_CASES, ids=lambda c: c["id"])
async def test_robots_case(case: dict, web, tmp_path: Path):
    status = case["robots_status"]
    if case["robots_txt"] is None or not isinstance(status, int):
        web.broken("/robots.txt")
    else:
        web.robots(case["robots_txt"], status)
    for path, target in case.get("redirects", {}).items():
        web.redirect(path, target["location"], target["status"])
        web.page(target["location"], case["page_body"])
    if case["path"] not in case.get("redirects", {}):
        web.page(case["path"], case["page_body"])
    result = await fetch({"url": web.origin + case["path"]}, tmp_path)
    expect = case["expect"]
    assert result.failed == (expect["verdict"] == "refused"), result.text
    if "result_starts_with" in expect:
        assert result.text.startswith(expect["result_starts_with"]), result.text
    for part in expect.get("result_contains", []):
        assert part in result.text
    assert web.requested(case["path"]) == expect["page_requested"]
    if "target_requested" in expect:
        targets = [t["location"] for t in case["redirects"].values()]
        assert any(web.requested(t) for t in targets) == expect["target_requested"]
    robots = web.seen_for("/robots.txt")
    assert robots and robots[0].headers["User-Agent"].startswith(expect["robots_requested_with_user_agent_prefix"])
    assert robots[0].headers["User-Agent"].startswith(case["product_token"] + "/")
