"""The `web_crawler` tool: a page as Markdown, behind the SSRF policy (mnemo-tools.md,
Conditional tools: web_crawler)."""

from __future__ import annotations

import math
from typing import Any

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult
from mm.tools.waiting import Cancelled, unless_cancelled
from mm.tools.web.errors import FetchError
from mm.tools.web.fetch import Fetcher
from mm.tools.web.page import CANCELLED, Options, cut_to, fetch_markdown
from mm.tools.web.ssrf import Resolver, SsrfGuard, parse_allowed, system_resolver
from mm.tools.web.urls import repair_url

NAME = "web_crawler"
DESCRIPTION = "Fetch a web page and return it as Markdown (scripts, navigation and ads removed)."
PARAMS = [Param("url", "string", "The page, e.g. https://example.org/docs (https:// is added when missing).")]
PAGE_TIMEOUT = 60.0  # seconds: WEB_CRAWL.PAGE_TIMEOUT_MS (60000)
INLINE_LIMIT = 100_000  # characters shown inline at most (mnemo-tools.md)
CHUNK_TOKENS = 1024  # RAG.CHUNK_TOKENS
CHARS_PER_TOKEN = 3  # a cautious estimate: chars/4 counts 9-45% too few tokens (DESIGN.md)
NO_CONTENT = "[web_crawler: {url} has no text content once scripts, navigation and ads are removed]"
TOO_LARGE = (
    "[web_crawler: {url} is {size:,} characters of Markdown, above the {limit:,}-character limit for an "
    "inline result, so no content is returned. It makes about {chunks} chunks of {tokens} tokens, which "
    "would be indexed for search_in_documents with the documents tool group declared (it is not here). "
    "Fetch a more specific page, or save this one to a file with fetch_content and output if that tool "
    "is declared]"
)


def chunk_count(markdown: str) -> int:
    """About how many RAG chunks of CHUNK_TOKENS tokens `markdown` (str) would make (at least 1)."""
    return max(1, math.ceil(len(markdown) / (CHUNK_TOKENS * CHARS_PER_TOKEN)))


class WebCrawler:
    """The web_crawler tool: kind `fetch`, no permission (it only reads), the SSRF guard on."""

    name = NAME
    kind: ToolKind = "fetch"
    description = DESCRIPTION
    params = PARAMS
    needs_permission = False

    def __init__(self, allowed_hosts: list[str] | None = None, resolver: Resolver = system_resolver,
                 timeout: float = PAGE_TIMEOUT, verify: Any = True, documents: Any = None):
        """`allowed_hosts` (list of str): names, `*.name`, addresses or CIDR ranges the guard lets
        through (webCrawler.allowedHosts); `resolver`: how names become addresses; `timeout` in s;
        `verify`: True (system certificate authorities) or an ssl.SSLContext; `documents`: the
        documents index (mm.tools.documents.index) a large page goes to, or None."""
        self.documents = documents
        guard = SsrfGuard(parse_allowed(allowed_hosts or []), resolver)
        self.fetcher = Fetcher(guard=guard, timeout=timeout, verify=verify)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Return the page's Markdown cut to maxOutput; above INLINE_LIMIT characters, only its size
        and chunk count — with the documents index, a page above its maxTokens is indexed and the
        reference's answer returned (JSON: chunks_indexed, next_step). Failures are
        `[web_crawler: error N (<class>) — …]` lines."""
        try:
            url = repair_url(str(args.get("url") or ""))
            page, markdown = await unless_cancelled(fetch_markdown(self.fetcher, url, Options()), ctx.cancelled)
        except FetchError as err:
            return ToolResult(err.text(NAME), failed=True)
        except Cancelled:
            return ToolResult(CANCELLED, failed=True)
        if not markdown:
            return ToolResult(NO_CONTENT.format(url=url))
        if self.documents is not None:
            from mm.tools.documents.adding import offload_page

            offloaded = await offload_page(self.documents, page.url, markdown, ctx.model_client)
            if offloaded is not None:
                import json

                return ToolResult(json.dumps(offloaded, indent=2, ensure_ascii=False))
        if len(markdown) > INLINE_LIMIT:
            return ToolResult(TOO_LARGE.format(url=url, size=len(markdown), limit=INLINE_LIMIT,
                                               chunks=chunk_count(markdown), tokens=CHUNK_TOKENS))
        return ToolResult(cut_to(markdown, ctx.settings.max_output))
