"""tests/cases/html: each page's bytes through decode_html + html_to_markdown, checked against
the case's `expect` (the fetch_content tool runs the same cases over loopback)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import CASES_DIR, check_text_expectations, fill_origin
from mm.webmd import decode_html, detect_encoding, html_to_markdown

CASES = sorted((CASES_DIR / "html").glob("*.json"))
ORIGIN = "http://127.0.0.1:8080"
# The tool's fixed message for a page with nothing left (mm-tools.md §fetch_content); at this
# layer the conversion returns "".
NO_CONTENT = "has no text content once scripts, navigation and ads are removed"


def _convert(case: dict) -> str:
    body = (CASES_DIR / "html" / case["page_file"]).read_bytes()
    headers = {k.lower(): v for k, v in case.get("response_headers", {}).items()}
    args = case.get("fetch_arguments", {})
    text = decode_html(body, headers.get("content-type"))
    return html_to_markdown(
        text, base_url=args.get("baseUrl") or ORIGIN + case["served_at"],
        tables=args.get("tables", "html"), strikethrough=args.get("strikethrough", False),
        task_list=args.get("taskList", False))


def _check(markdown: str, expect: dict) -> None:
    expect = {k: fill_origin(v, ORIGIN) for k, v in expect.items()}
    if "equals" in expect:
        assert NO_CONTENT in expect["equals"], "only the no-content message is expected whole"
        assert markdown == ""
        return
    check_text_expectations(markdown, expect)


@pytest.mark.parametrize("case_file", CASES, ids=[p.stem for p in CASES])
def test_html_case(case_file: Path) -> None:
    case = json.loads(case_file.read_text())
    _check(_convert(case), case["expect"])


ENCODING_CASES = [p for p in CASES if "page_encoding" in json.loads(p.read_text())]


@pytest.mark.parametrize("case_file", ENCODING_CASES, ids=[p.stem for p in ENCODING_CASES])
def test_declared_page_encoding(case_file: Path) -> None:
    """Where a case names its page's encoding, detection finds that encoding."""
    case = json.loads(case_file.read_text())
    body = (CASES_DIR / "html" / case["page_file"]).read_bytes()
    found = detect_encoding(body, case["response_headers"].get("Content-Type"))
    expected = {"windows-1252": "cp1252", "gbk": "gb18030", "utf-8": "utf-8"}[case["page_encoding"]]
    assert found == expected
