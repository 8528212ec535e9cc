"""The real pages of tests/data/web-pages through decode_html + html_to_markdown: nothing
crashes, no script or style text leaks, and the words of Readability's extracted article
survive (run with `-s` to see the coverage table). Nothing is written anywhere."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
from selectolax.lexbor import LexborHTMLParser

from harness import DATA
from mm.webmd import decode_html, html_to_markdown

PAGES = sorted(p for p in (DATA / "web-pages").iterdir() if p.is_dir())
MIN_AVERAGE_COVERAGE = 0.93
LOW_COVERAGE = 0.80  # pages under it are listed in docs/webmd.md with the rule that cut them
LEAK_LINE_MIN = 25  # a script/style line this long must not appear in the Markdown
# Scripts without spaces between words: their words are counted as character bigrams.
_NO_SPACES = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_MARKDOWN_ESCAPE = re.compile(r"\\(.)")
# Code blocks and spans may quote a `<script>` tag as text (corpus page 001 does).
_CODE = re.compile(r"^(`{3,}).*?^\1|`[^`\n]*`", re.M | re.S)


def words(text: str) -> set[str]:
    """The distinct lower-case words of `text`; character bigrams for CJK and Thai runs."""
    found: set[str] = set()
    for word in re.findall(r"\w+", text.lower()):
        if _NO_SPACES.search(word):
            found.update(word[i:i + 2] for i in range(max(1, len(word) - 1)))
        else:
            found.add(word)
    return found


@cache
def markdown_of(page: Path) -> str:
    """The Markdown of a corpus page, decoded with no header as a server without one sends."""
    text = decode_html((page / "source.html").read_bytes(), None)
    return html_to_markdown(text, base_url="https://example.com/article/")


def coverage(page: Path) -> float:
    """The share of the expected article's distinct words found in the Markdown."""
    expected = words(LexborHTMLParser((page / "expected-article.html").read_text()).text(separator=" "))
    found = words(_MARKDOWN_ESCAPE.sub(r"\1", markdown_of(page)))
    return len(expected & found) / len(expected) if expected else 1.0


def script_and_style_lines(page: Path) -> list[str]:
    """The long lines of the page's `<script>` and `<style>` texts."""
    tree = LexborHTMLParser(decode_html((page / "source.html").read_bytes(), None))
    lines = []
    for node in tree.css("script, style"):
        stripped = (line.strip() for line in (node.text() or "").splitlines())
        lines += [line for line in stripped if len(line) >= LEAK_LINE_MIN]
    return lines


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_converts_without_script_or_style(page: Path) -> None:
    markdown = markdown_of(page)
    assert markdown == "" or (markdown.endswith("\n") and not markdown.endswith("\n\n"))
    lowered = _CODE.sub("", markdown).lower()
    assert "<script" not in lowered and "<style" not in lowered
    leaked = [line for line in script_and_style_lines(page) if line in markdown]
    assert not leaked, f"script/style text in the Markdown: {leaked[:3]}"


def test_article_words_survive() -> None:
    scores = {page.name: coverage(page) for page in PAGES}
    average = sum(scores.values()) / len(scores)
    print(f"\n{'page':44} coverage")
    for name, score in sorted(scores.items(), key=lambda item: item[1]):
        flag = "  < 80%" if score < LOW_COVERAGE else ""
        print(f"{name:44} {score:7.1%}{flag}")
    print(f"{'average':44} {average:7.1%}  ({len(scores)} pages)")
    assert average >= MIN_AVERAGE_COVERAGE
