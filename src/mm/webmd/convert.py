"""HTML to Markdown for fetch_content: parse, clean, convert, finish.

The page is parsed by lexbor's HTML5 parser (selectolax), cleaned by `clean.Cleaner`, converted
by html-to-markdown with the options below, then the placeholders are restored and the result
ends with exactly one newline. Source: mm-tools.md §fetch_content, rows "Conversion" to "Result".
"""

from __future__ import annotations

import re
from functools import lru_cache

from .cancel import check
from .clean import Cleaner, Options
from .depth import cap_depth
from .escape import BLOCK_CLOSE, BLOCK_OPEN, restore

TABLE_MODES = ("html", "flatten")
BAD_TABLES = "tables must be one of: html, flatten (got {value!r})"

_BLOCK = re.compile(f"^(.*?){BLOCK_OPEN}(\\d+){BLOCK_CLOSE}(.*)$", re.M)
_LIST_MARKER = re.compile(r"(?:[-*+]|\d{1,9}[.)])(?= )")
_EXTRA_BLANKS = re.compile(r"\n{3,}")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.M)


@lru_cache(maxsize=1)
def converter_options():
    """html-to-markdown's options for the reference's Markdown (built once).

    ATX headings, `-` bullets at every depth, `\\` hard breaks, backtick fences, `*` emphasis;
    no front matter, no preprocessing or hidden-content pruning of its own (the cleaner applied
    the reference's list), no escaping of its own beyond line starts (escape.py does it).
    """
    from html_to_markdown import ConversionOptions, PreprocessingOptions

    return ConversionOptions(
        heading_style="atx", bullets="-", strong_em_symbol="*", newline_style="backslash",
        code_block_style="backticks", extract_metadata=False, autolinks=True,
        expand_abbreviations=False, include_blockquote_citations=False, highlight_style="none",
        hidden_content="all", inline_data_media="alt_text_only",
        preprocessing=PreprocessingOptions(enabled=False), escape_asterisks=False,
        escape_underscores=False, escape_misc=False, escape_ascii=False,
    )


def _parse(html: str, cancelled=None):
    """The HTML5 tree (selectolax LexborHTMLParser) of `html` (str), its nesting capped first
    (depth.cap_depth: lexbor's time grows with the depth on every block start tag)."""
    from selectolax.lexbor import LexborHTMLParser  # lazy: only fetch_content needs it

    capped = cap_depth(html, cancelled)
    check(cancelled)
    return LexborHTMLParser(capped)


def _insert_blocks(markdown: str, blocks: list[str]) -> str:
    """Put each raw HTML block where its placeholder line is, with the line's prefix (a quote
    marker, or a list item's indentation) on each of its lines."""

    def place(match: re.Match) -> str:
        prefix, index, rest = match.group(1), int(match.group(2)), match.group(3)
        cont = _LIST_MARKER.sub(lambda m: " " * len(m.group()), prefix)
        lines = blocks[index].split("\n") if index < len(blocks) else [""]
        body = "\n".join([prefix + lines[0]] + [cont + line for line in lines[1:]])
        return body + (rest if rest.strip() else "")

    return _BLOCK.sub(place, markdown)


def _squeeze_blank_lines(markdown: str) -> str:
    """At most one blank line between blocks, outside fenced code (empty elements leave none)."""
    if "```" not in markdown and "~~~" not in markdown:
        return _EXTRA_BLANKS.sub("\n\n", markdown)
    parts, fence, last = [], None, 0
    for match in _FENCE.finditer(markdown):
        marker = match.group(1)
        if fence is None:
            parts.append(_EXTRA_BLANKS.sub("\n\n", markdown[last:match.start()]))
            fence, last = marker, match.start()
        elif marker[0] == fence[0] and len(marker) >= len(fence):
            parts.append(markdown[last:match.end()])
            fence, last = None, match.end()
    tail = markdown[last:]
    parts.append(tail if fence else _EXTRA_BLANKS.sub("\n\n", tail))
    return "".join(parts)


def finish(markdown: str) -> str:
    """The Markdown ending with exactly one newline, or "" when no text is left (str → str).

    Source: mm-tools.md §fetch_content, row "Result".
    """
    markdown = _squeeze_blank_lines(markdown.replace("\r\n", "\n")).strip("\n")
    return markdown.rstrip() + "\n" if markdown.strip() else ""


def html_to_markdown(html: str, *, base_url: str | None = None, tables: str = "html",
                     strikethrough: bool = False, task_list: bool = False, cancelled=None) -> str:
    """Convert a page to Markdown by the fetch_content rules.

    Args: html (str): the decoded page; base_url (str | None): absolute URL that relative links
    and image sources are resolved against (None leaves them as written); tables (str): "html"
    keeps tables with spans or a nested table as raw HTML, "flatten" copies a spanned cell into
    every slot; strikethrough (bool): `~~text~~` for del/s/strike; task_list (bool): `[ ]`/`[x]`
    for a list item starting with a checkbox; cancelled (an object with `is_set()`, e.g. a
    threading.Event, or None): set by another thread when the conversion is no longer wanted.
    Returns: the Markdown ending with exactly one newline, or "" when no text content is left.
    Raises: ValueError for an unknown `tables` value (BAD_TABLES); cancel.ConversionCancelled
    soon after `cancelled` is set.
    Source: mm-tools.md §fetch_content; the nesting cap, docs/webmd.md §Deep nesting.
    """
    if tables not in TABLE_MODES:
        raise ValueError(BAD_TABLES.format(value=tables))
    from html_to_markdown import convert

    cleaner = Cleaner(Options(base_url, tables, strikethrough, task_list), cancelled)
    cleaned = cleaner.run(_parse(html, cancelled).root)
    check(cancelled)
    markdown = convert(cleaned, converter_options()).content or ""
    check(cancelled)
    if cleaner.raw_blocks:
        markdown = _insert_blocks(markdown, cleaner.raw_blocks)
    return finish(restore(markdown))
