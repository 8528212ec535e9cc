"""Every html and robots case end to end: each page served from a loopback server, fetched by
the real fetch_content tool (tests/cases/README.md §html, §robots)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import CASES_DIR, check_text_expectations, fill_origin, load_cases
from mm.tools.base import Settings, ToolContext
from mm.tools.web.fetch_content import FetchContent

HTML_CASES = load_cases("html")
ROBOTS_CASES = load_cases("robots")


async def fetch(args: dict, tmp_path: Path, max_output: int = 100_000):
    ctx = ToolContext(cwd=tmp_path, settings=Settings(max_output=max_output))
    return await FetchContent().run(args, ctx)


def check_text(text: str, expect: dict, origin: str) -> None:
    """The html-case expectations on the tool's output (README §Conventions, §html)."""
    e = {k: fill_origin(v, origin) for k, v in expect.items()}
    if "equals" in e:
        assert text.removesuffix("\n") == e["equals"]
    check_text_expectations(text, e)


def test_cases_found():
    assert len(HTML_CASES) >= 13 and len(ROBOTS_CASES) >= 9


@pytest.mark.parametrize("case", HTML_CASES, ids=lambda c: c["id"])
async def test_html_case(case: dict, web, tmp_path: Path):
    body = (CASES_DIR / "html" / case["page_file"]).read_bytes()
    web.page(case["served_at"], body, headers=case["response_headers"])
    args = {k: fill_origin(v, web.origin) for k, v in case["fetch_arguments"].items()}
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
