"""The `web_search` tool: Brave Search results as a compact Markdown list (mnemo-tools.md,
Conditional tools: web_search)."""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import urlsplit

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult
from mm.tools.waiting import Cancelled, unless_cancelled
from mm.tools.web.fetch import USER_AGENT
from mm.tools.web.page import CANCELLED, cut_to

NAME = "web_search"
BRAVE_ENDPOINT = "https://api.search.brave.com/res/v1/web/search"
TIMEOUT = 30.0  # seconds per search
MIN_RESULTS, MAX_RESULTS = 1, 20  # mnemo-tools.md: num_results clamped to 1–20
FRESHNESS_WORDS = ("pd", "pw", "pm", "py")
FRESHNESS_RANGE = re.compile(r"^\d{4}-\d{2}-\d{2}to\d{4}-\d{2}-\d{2}$")
TAG = re.compile(r"<[^>]+>")
DESCRIPTION = "Search the web (Brave Search) and return the results: title, URL and a short description."
PARAMS = [
    Param("query", "string", "The words to search for."),
    Param("search_lang", "string", "Language of the results (e.g. en, fr).", required=False, default="en"),
    Param("num_results", "integer", "How many results, 1 to 20.", required=False, default=10),
    Param("freshness", "string", "Only recent pages: pd (day), pw (week), pm (month), py (year), or "
          "YYYY-MM-DDtoYYYY-MM-DD.", required=False, default=""),
    Param("country", "string", "Country of the results, two letters (e.g. us, fr).", required=False, default=""),
    Param("ui_lang", "string", "Language of the interface, e.g. en-US.", required=False, default=""),
]
EMPTY_QUERY = "[web_search: the query is empty — give the words to search for]"
BAD_FRESHNESS = ('[web_search: freshness "{value}" is not pd, pw, pm, py or a YYYY-MM-DDtoYYYY-MM-DD range '
                 '— nothing was searched]')
UNREACHABLE = "[web_search: cannot reach {host}: {why}]"
TIMED_OUT = "[web_search: {host} did not answer within {seconds:g} s]"
HTTP_ERROR = "[web_search: the search service answered HTTP {status}: {detail}]"
NOT_RESULTS = "[web_search: the search service's answer holds no search results (not Brave's JSON)]"
HEADER = 'Web results for "{query}":'
NO_RESULTS = 'No web results for "{query}".'
ITEM = "{n}. [{title}]({url})"
ITEM_TEXT = "   {text}"


def request_params(args: dict[str, Any]) -> dict[str, str] | str:
    """The Brave query parameters for a call, or the refusal text (str) for a bad one.

    q, search_lang (default en), count (num_results clamped to 1–20), safesearch off;
    freshness, country and ui_lang only when non-empty (mnemo-tools.md).
    """
    query = str(args.get("query") or "").strip()
    if not query:
        return EMPTY_QUERY
    try:
        count = int(args.get("num_results") if args.get("num_results") is not None else 10)
    except (TypeError, ValueError):
        count = 10
    params = {"q": query, "search_lang": str(args.get("search_lang") or "en").strip() or "en",
              "count": str(min(max(count, MIN_RESULTS), MAX_RESULTS)), "safesearch": "off"}
    freshness = str(args.get("freshness") or "").strip()
    if freshness:
        if freshness.lower() in FRESHNESS_WORDS:
            freshness = freshness.lower()
        elif not FRESHNESS_RANGE.match(freshness):
            return BAD_FRESHNESS.format(value=freshness)
        params["freshness"] = freshness
    for key in ("country", "ui_lang"):
        value = str(args.get(key) or "").strip()
        if value:
            params[key] = value
    return params


def results_text(query: str, answer: Any) -> str | None:
    """The compact Markdown list of Brave's answer (dict), or None when it is not one."""
    if not isinstance(answer, dict):
        return None
    web = answer.get("web") or {}
    results = web.get("results") if isinstance(web, dict) else None
    if results is None:
        return NO_RESULTS.format(query=query) if "type" in answer or "query" in answer else None
    lines = [HEADER.format(query=query)]
    if not isinstance(results, list):
        return NO_RESULTS.format(query=query)
    usable = [r for r in results if isinstance(r, dict) and isinstance(r.get("url"), str) and r["url"]]
    for n, item in enumerate(usable):
        title = _plain(item.get("title")) if isinstance(item.get("title"), str) else ""
        lines.append(ITEM.format(n=n + 1, title=_link_text(title or item["url"]), url=item["url"].replace(")", "%29")))
        text = " ".join(p for p in (_plain(item.get("description")), _plain(item.get("age"))) if p)
        if text:
            lines.append(ITEM_TEXT.format(text=text))
    return "\n".join(lines) if len(lines) > 1 else NO_RESULTS.format(query=query)


def _link_text(text: str) -> str:
    """`text` safe inside `[…]`: brackets and backslashes escaped, so a title cannot close the link."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _plain(value: Any) -> str:
    """Text without HTML tags or entities, on one line (Brave marks matches with <strong>)."""
    return " ".join(html.unescape(TAG.sub("", str(value or ""))).split())


class WebSearch:
    """The web_search tool: kind `fetch`, no permission (it only reads)."""

    name = NAME
    kind: ToolKind = "fetch"
    description = DESCRIPTION
    params = PARAMS
    needs_permission = False

    def __init__(self, api_key: str, endpoint: str = BRAVE_ENDPOINT, timeout: float = TIMEOUT):
        """`api_key` (str): the Brave subscription token; `endpoint` (str): the search URL; `timeout` in s."""
        self.api_key, self.endpoint, self.timeout = api_key, endpoint or BRAVE_ENDPOINT, timeout

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Search and return the results list, cut to maxOutput; a failure is one `[web_search: …]` line."""
        import httpx

        params = request_params(args)
        if isinstance(params, str):
            return ToolResult(params, failed=True)
        host = urlsplit(self.endpoint).netloc
        headers = {"Accept": "application/json", "X-Subscription-Token": self.api_key, "User-Agent": USER_AGENT}
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as client:
                asking = client.get(self.endpoint, params=params, headers=headers)
                response = await unless_cancelled(asking, ctx.cancelled)
        except Cancelled:
            return ToolResult(CANCELLED, failed=True)
        except httpx.TimeoutException:
            return ToolResult(TIMED_OUT.format(host=host, seconds=self.timeout), failed=True)
        except (httpx.HTTPError, httpx.InvalidURL, OSError, ValueError) as err:  # ValueError: a bad key or endpoint
            return ToolResult(UNREACHABLE.format(host=host, why=str(err) or type(err).__name__), failed=True)
        if response.status_code >= 300:
            return ToolResult(HTTP_ERROR.format(status=response.status_code, detail=_detail(response)), failed=True)
        try:
            text = results_text(params["q"], response.json())
        except ValueError:
            text = None
        if text is None:
            return ToolResult(NOT_RESULTS, failed=True)
        return ToolResult(cut_to(text, ctx.settings.max_output))


def _detail(response: Any) -> str:
    """The error's message from Brave's JSON (`error.detail`, `message`), else the body's start."""
    try:
        body = response.json()
        error = body.get("error") if isinstance(body, dict) else None
        found = (error or {}).get("detail") if isinstance(error, dict) else None
        found = found or (body.get("message") if isinstance(body, dict) else None)
        if found:
            return _plain(found)[:300]
    except ValueError:
        pass
    return _plain(response.text)[:300] or response.reason_phrase or "no detail"
