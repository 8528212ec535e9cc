"""From a downloaded page to Markdown, shared by fetch_content and web_crawler
(mm-tools.md §fetch_content: Encoding, Conversion, Result, `maxOutput`)."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass

from mm.tools.web.errors import CONVERSION, FetchError
from mm.tools.web.fetch import Fetcher, Page

CANCELLED = "[error: cancelled]"  # as bash (mm-tools.md §bash, Cancellation)
UNDECODABLE = "{url} cannot be decoded: {why}"
UNCONVERTIBLE = "{url} cannot be converted to Markdown: {why}"
CUT = ("[... truncated to maxOutput ({limit} characters): {shown} of {total} characters shown"
       "{hint} ...]")


@dataclass(frozen=True)
class Options:
    """Conversion options, the fields of fetch_content: `base_url` (None: the page's final URL),
    `tables` ("html" or "flatten"), `strikethrough`, `task_list`."""

    base_url: str | None = None
    tables: str = "html"
    strikethrough: bool = False
    task_list: bool = False


async def fetch_markdown(fetcher: Fetcher, url: str, options: Options) -> tuple[Page, str]:
    """Download `url` (str) with `fetcher` and return the page and its Markdown ("" when no text
    content is left). Raises FetchError: the fetch's own, or code 1 when the page cannot be
    decoded or converted.

    The page is decoded and converted in a thread, off the event loop, so that the turn's
    cancellation stays prompt (issue 10 §9): when this coroutine is cancelled, the conversion is
    told to stop (mm.webmd.cancel) and its thread ends at its next check."""
    page = await fetcher.fetch(url)
    stop = threading.Event()
    try:
        return page, await asyncio.to_thread(_convert, page, options, stop)
    finally:
        stop.set()


def _convert(page: Page, options: Options, stop: threading.Event) -> str:
    """The Markdown of `page` ("" when no text is left); raises FetchError (code 1), or
    mm.webmd.ConversionCancelled once `stop` is set (nobody waits for the result then)."""
    from mm.webmd import decode_html, html_to_markdown  # on first use (start-up time)

    try:
        html = decode_html(page.body, page.content_type)
    except (UnicodeError, LookupError, ValueError) as err:
        raise FetchError(CONVERSION, UNDECODABLE.format(url=page.url, why=err)) from None
    try:
        markdown = html_to_markdown(html, base_url=options.base_url or page.url, tables=options.tables,
                                    strikethrough=options.strikethrough, task_list=options.task_list,
                                    cancelled=stop)
    except (ValueError, TypeError, RuntimeError, RecursionError) as err:
        raise FetchError(CONVERSION, UNCONVERTIBLE.format(url=page.url, why=err)) from None
    return markdown if markdown.strip() else ""


def cut_to(text: str, limit: int, hint: str = "") -> str:
    """`text` (str) within `limit` characters (mm.tools.truncate.cut_to), the CUT marker ending
    with `hint` (str)."""
    from mm.tools.truncate import cut_to as cut

    big = "9" * len(str(len(text)))
    return cut(text, limit, lambda shown: CUT.format(limit=limit, shown=big if shown == len(text) else shown,
                                                     total=len(text), hint=hint))


