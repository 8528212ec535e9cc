"""shared/cases/html: each page's bytes through decode_html + html_to_markdown, checked against
the case's `expect` (the fetch_content tool runs the same cases over loopback)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness import SHARED
from mm.webmd import decode_html, detect_encoding, html_to_markdown

CASES = sorted((SHARED / "cases" / "html").glob("*.json"))
ORIGIN = "http://127.0.0.1:8080"
# The tool's fixed message for a page with nothing left (mm-tools.md §fetch_content); at this
# layer the conversion returns "".
NO_CONTENT = "has no text content once scripts, navigation and ads are removed"


def _fill(value):
    if isinstance(value, str):
        return value.replace("{origin}", ORIGIN)
    if isinstance(value, list):
        return [_fill(v) for v in value]
    return value


def _convert(case: dict) -> str:
    body = (SHARED / "cases" / "html" / case["page_file"]).read_bytes()
    headers = {k.lower(): v for k, v in case.get("response_headers", {}).items()}
    args = case.get("fetch_arguments", {})
    text = decode_html(body, headers.get("content-type"))
    return html_to_markdown(
        text, base_url=args.get("baseUrl") or ORIGIN + case["served_at"],
        tables=args.get("tables", "html"), strikethrough=args.get("strikethrough", False),
        task_list=args.get("taskList", False))


def _check(markdown: str, expect: dict) -> None:
    expect = {k: _fill(v) for k, v in expect.items()}
    if "equals" in expect:
        assert NO_CONTENT in expect["equals"], "only the no-content message is expected whole"
        assert markdown == ""
        return
    if "starts_with" in expect:
        assert markdown.startswith(expect["starts_with"]), markdown
    for text in expect.get("contains", []):
        assert text in markdown, f"{text!r} missing from:\n{markdown}"
    for text in expect.get("not_contains", []):
        assert text not in markdown, f"{text!r} present in:\n{markdown}"
    for pattern in expect.get("regex", []):
        assert re.search(pattern, markdown), f"/{pattern}/ not found in:\n{markdown}"
    position = 0
    for text in expect.get("in_order", []):
        found = markdown.find(text, position)
        assert found >= 0, f"{text!r} not found after offset {position} in:\n{markdown}"
        position = found + len(text)
    if expect.get("ends_with_single_newline"):
        assert markdown.endswith("\n") and not markdown.endswith("\n\n")


@pytest.mark.parametrize("case_file", CASES, ids=[p.stem for p in CASES])
def test_html_case(case_file: Path) -> None:
    case = json.loads(case_file.read_text())
    _check(_convert(case), case["expect"])


ENCODING_CASES = [p for p in CASES if "page_encoding" in json.loads(p.read_text())]


@pytest.mark.parametrize("case_file", ENCODING_CASES, ids=[p.stem for p in ENCODING_CASES])
def test_declared_page_encoding(case_file: Path) -> None:
    """Where a case names its page's encoding, detection finds that encoding."""
    case = json.loads(case_file.read_text())
    body = (SHARED / "cases" / "html" / case["page_file"]).read_bytes()
    found = detect_encoding(body, case["response_headers"].get("Content-Type"))
    expected = {"windows-1252": "cp1252", "gbk": "gb18030", "utf-8": "utf-8"}[case["page_encoding"]]
    assert found == expected
