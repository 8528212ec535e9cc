"""Benchmark mm.webmd on the real pages of tests/data/web-pages, against markdownify, and on
deeply nested pages.

Run: .venv/bin/python bench/webmd.py [rounds]     (markdownify: the `bench` extra)

Decodes every page once, then converts the whole corpus `rounds` times (default 3) with
`mm.webmd.html_to_markdown` (parse, clean, html-to-markdown, finish) and with markdownify's
`markdownify()` on the same decoded text, in the same run. Prints the best round of each in
ms per MB of HTML, the ratio, and also the time of html-to-markdown's bare `convert` (no
cleaning) to show what the cleaning costs.

Then the deep pages (issue 10 §9; docs/webmd.md §Deep nesting): `<div>` nested 10,000, 50,000
and 200,000 deep (bare, and with text at every level), and paragraphs that each leave a `<b>`
open (2,500, 10,000 and 40,000 of them; the HTML5 parser opens every one again in each later
paragraph). Each is converted once; the time per MB must stay about flat as the page grows
(before the nesting cap, 200,000 nested `<div>` took 106 s). Nothing is written.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from mm.webmd import decode_html, html_to_markdown

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "web-pages"  # the real pages the tests use


def load_pages() -> list[str]:
    """Every corpus page decoded as fetch_content decodes it (no Content-Type header)."""
    return [decode_html((d / "source.html").read_bytes(), None)
            for d in sorted(CORPUS.iterdir()) if (d / "source.html").is_file()]


def best_round(convert, pages: list[str], rounds: int) -> float:
    """The fastest of `rounds` conversions of all `pages` with `convert` (str → str), seconds."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for page in pages:
            convert(page)
        best = min(best, time.perf_counter() - start)
    return best


def bare_convert(page: str) -> str:
    """html-to-markdown alone, with its defaults: the floor under mm.webmd."""
    from html_to_markdown import convert

    return convert(page).content or ""


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    pages = load_pages()
    megabytes = sum(len(p.encode("utf-8")) for p in pages) / 1e6
    print(f"corpus: {len(pages)} pages, {megabytes:.2f} MB of HTML (UTF-8), best of {rounds} rounds")
    mm_seconds = best_round(lambda p: html_to_markdown(p, base_url="https://example.com/"),
                            pages, rounds)
    bare_seconds = best_round(bare_convert, pages, rounds)
    rows = [("mm.webmd.html_to_markdown", mm_seconds),
            ("html-to-markdown convert (bare)", bare_seconds)]
    try:
        from markdownify import markdownify
    except ImportError:
        print("markdownify is not installed (pip install -e '.[bench]'): no baseline")
    else:
        rows.append(("markdownify (baseline)", best_round(markdownify, pages, rounds)))
    base = rows[-1][1]
    for label, seconds in rows:
        print(f"{label:<34} {seconds * 1000 / megabytes:8.1f} ms/MB   "
              f"{base / seconds:5.1f}× the baseline's speed")
    deep_pages(mm_seconds * 1000 / megabytes)


def nested_divs(depth: int, text: bool) -> str:
    """`<div>` nested `depth` deep, with a line of text at every level (`text`) or only inside."""
    opening = "".join(f"<div>level {i} " for i in range(depth)) if text else "<div>" * depth
    return f"<html><body>{opening}deep text{'</div>' * depth}</body></html>"


def left_open(paragraphs: int) -> str:
    """Paragraphs that each leave a different `<b>` open."""
    return "".join(f"<p><b class=c{i}>para {i}</p>" for i in range(paragraphs))


def deep_pages(corpus_ms_per_mb: float) -> None:
    """Convert the deep pages once each; print ms per MB and the ratio to the corpus's."""
    print(f"deep pages (ratio: ms/MB against the corpus's {corpus_ms_per_mb:.1f} ms/MB)")
    families = [(f"div nested {n:,} deep", nested_divs(n, False)) for n in (10_000, 50_000, 200_000)]
    families += [(f"div nested {n:,} deep, text", nested_divs(n, True)) for n in (10_000, 50_000, 200_000)]
    families += [(f"{n:,} paragraphs, <b> left open", left_open(n)) for n in (2_500, 10_000, 40_000)]
    for label, page in families:
        megabytes = len(page.encode("utf-8")) / 1e6
        start = time.perf_counter()
        html_to_markdown(page)
        ms_per_mb = (time.perf_counter() - start) * 1000 / megabytes
        print(f"{label:<34} {megabytes:6.2f} MB {ms_per_mb:8.1f} ms/MB   {ms_per_mb / corpus_ms_per_mb:5.1f}× the corpus")


if __name__ == "__main__":
    main()
