"""The download engine of the web tools (mm-tools.md §fetch_content: Request, robots.txt,
Accepted types, Failure).

One GET per address, redirections followed by hand (each target checked against robots.txt
and, for web_crawler, the SSRF guard before it is requested), one deadline for the whole fetch,
the body streamed and refused past the size limit.
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, AsyncIterator
from urllib.parse import urljoin, urlsplit

import httpx

import mm
from mm.tools.web import robots as robots_txt
from mm.tools.web.errors import CONVERSION, INPUT, USAGE, FetchError
from mm.tools.web.robots import RobotsCache, origin_of, rules_from_answer
from mm.tools.web.ssrf import SsrfGuard
from mm.tools.web.urls import NOT_A_URL, check_url

USER_AGENT = f"mm/{mm.__version__}"  # mm-tools.md §fetch_content, Request
MAX_REDIRECTS = 10
TIMEOUT = 30.0  # seconds for the whole fetch, robots.txt included
MAX_BYTES = 5 * 1024 * 1024
ACCEPTED = ("text/html", "application/xhtml+xml")
REDIRECTS = frozenset({301, 302, 303, 307, 308})
ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1"
# WHATWG MIME sniffing, "HTML" patterns: each followed by a space or `>` (tag-terminating byte).
SNIFF_TAGS = (b"<!doctype html", b"<html", b"<head", b"<script", b"<iframe", b"<h1", b"<div", b"<font",
              b"<table", b"<a", b"<style", b"<title", b"<b", b"<body", b"<br", b"<p", b"<!--")
SNIFF_BYTES = 1024

UNREACHABLE = "cannot reach {host}: {why}"
TIMED_OUT = "{url} did not answer completely within {seconds:g} s"
HTTP_STATUS = "{url} answered HTTP {status}{phrase}"
TOO_MANY_REDIRECTS = "more than {limit} redirections (the next one was to {url})"
BAD_REDIRECT = "{url} redirects to {target}, which is not an http or https address"
NOT_HTML = "{url} is not an HTML page (Content-Type: {type})"
NOT_HTML_SNIFFED = "{url} is not an HTML page (no Content-Type, and the content does not look like HTML)"
TOO_LARGE = "{url} is larger than 5 MiB"


@dataclass
class Page:
    """A downloaded page: its final `url` (after redirections), `body` bytes, `content_type` header."""

    url: str
    body: bytes
    content_type: str | None


def looks_like_html(body: bytes) -> bool:
    """True when `body` starts like an HTML document (WHATWG MIME sniffing, HTML patterns), or is
    XML whose first KiB holds an `<html` element (XHTML)."""
    head = body[:SNIFF_BYTES].lstrip(b"\xef\xbb\xbf").lstrip(b" \t\r\n\x0c").lower()
    for tag in SNIFF_TAGS:
        if head.startswith(tag) and head[len(tag):len(tag) + 1] in (b" ", b">", b"\t", b"\n", b"\r", b"\x0c"):
            return True
    return head.startswith(b"<?xml") and b"<html" in head


@dataclass
class Fetcher:
    """Downloads HTML pages; one instance per tool, so the robots.txt cache lives with the tool.

    `guard` (SsrfGuard or None) is web_crawler's address policy; `timeout` is in seconds;
    `verify` is httpx's: True (the system's certificate authorities) or an ssl.SSLContext.
    """

    robots: RobotsCache = field(default_factory=RobotsCache)
    guard: SsrfGuard | None = None
    timeout: float = TIMEOUT
    max_bytes: int = MAX_BYTES
    max_redirects: int = MAX_REDIRECTS
    user_agent: str = USER_AGENT
    verify: Any = True

    async def fetch(self, url: str) -> Page:
        """Download the HTML page at `url` (str, absolute http(s)) and return it.

        Raises FetchError: code 2 for an unreachable host, a timeout, a status ≥ 300 after the
        redirections, too many redirections, robots.txt (or the SSRF guard) refusing an address;
        code 1 for a page that is not HTML or is larger than 5 MiB.
        """
        try:
            async with asyncio.timeout(self.timeout):
                async with self._client() as client:
                    return await self._follow(client, url)
        except (TimeoutError, httpx.TimeoutException):
            raise FetchError(INPUT, TIMED_OUT.format(url=url, seconds=self.timeout)) from None

    def _client(self) -> httpx.AsyncClient:
        # With the guard, no proxy (it would resolve the name itself) and no kept connection
        # (a connection to one address must not serve another name).
        guarded = self.guard is not None
        limits = httpx.Limits(max_keepalive_connections=0) if guarded else httpx.Limits()
        return httpx.AsyncClient(follow_redirects=False, timeout=self.timeout + 5, trust_env=not guarded,
                                 limits=limits, verify=self.verify, event_hooks={"response": [_take_location]})

    async def _follow(self, client: httpx.AsyncClient, url: str) -> Page:
        current = url
        for hop in range(self.max_redirects + 1):
            address = await self._address(current)
            await self._check_robots(client, current, address)
            async with self._get(client, current, address) as response:
                target = response.extensions.get(LOCATION) if response.status_code in REDIRECTS else None
                if target is None:
                    return await self._page(current, response)
            if hop == self.max_redirects:
                break
            current = _redirect_target(current, target)
        not_followed = urljoin(current, target.strip())
        raise FetchError(INPUT, TOO_MANY_REDIRECTS.format(limit=self.max_redirects, url=not_followed))

    async def _page(self, url: str, response: httpx.Response) -> Page:
        if response.status_code >= 300:
            phrase = f" {response.reason_phrase}" if response.reason_phrase else ""
            raise FetchError(INPUT, HTTP_STATUS.format(url=url, status=response.status_code, phrase=phrase))
        content_type = (response.headers.get("content-type") or "").strip() or None
        media = (content_type or "").split(";")[0].strip().lower()
        if content_type is not None and media not in ACCEPTED:
            raise FetchError(CONVERSION, NOT_HTML.format(url=url, type=media or content_type))
        body = await self._read(response, url, self.max_bytes, refuse=True)
        if content_type is None and not looks_like_html(body):
            raise FetchError(CONVERSION, NOT_HTML_SNIFFED.format(url=url))
        return Page(url, body, content_type)

    async def _read(self, response: httpx.Response, url: str, limit: int, refuse: bool) -> bytes:
        """The body, at most `limit` bytes: past it, FetchError (code 1) when `refuse`, else cut."""
        declared = response.headers.get("content-length", "")
        if refuse and declared.isdigit() and int(declared) > limit:
            raise FetchError(CONVERSION, TOO_LARGE.format(url=url))
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > limit:
                if refuse:
                    raise FetchError(CONVERSION, TOO_LARGE.format(url=url))
                return bytes(body[:limit])
        return bytes(body)

    async def _address(self, url: str) -> str | None:
        """The checked address to connect to (web_crawler), or None (fetch_content: any)."""
        if self.guard is None:
            return None
        parts = httpx.URL(url)
        return await self.guard.address_for(parts.raw_host.decode("ascii"), parts.port or _port(parts.scheme))

    @asynccontextmanager
    async def _get(self, client: httpx.AsyncClient, url: str, address: str | None) -> AsyncIterator[httpx.Response]:
        """GET `url`, connecting to `address` when given (Host header and SNI keep the name)."""
        headers = {"User-Agent": self.user_agent, "Accept": ACCEPT}
        extensions: dict = {}
        target = httpx.URL(url)
        if address is not None:
            headers["Host"] = target.netloc.decode("ascii")
            if target.scheme == "https":
                extensions["sni_hostname"] = target.raw_host.decode("ascii")
            target = target.copy_with(host=address)
        try:
            request = client.build_request("GET", target, headers=headers, extensions=extensions)
        except (httpx.InvalidURL, ValueError, UnicodeError) as err:  # a malformed IDNA name, say
            raise FetchError(USAGE, NOT_A_URL.format(url=url, problem=_why(err))) from None
        try:
            response = await client.send(request, stream=True)
        except httpx.TimeoutException:
            raise
        except (httpx.HTTPError, httpx.InvalidURL, OSError) as err:
            raise FetchError(INPUT, UNREACHABLE.format(host=urlsplit(url).netloc, why=_why(err))) from None
        try:
            yield response
        except httpx.TimeoutException:
            raise
        except httpx.HTTPError as err:
            raise FetchError(INPUT, UNREACHABLE.format(host=urlsplit(url).netloc, why=_why(err))) from None
        finally:
            await response.aclose()

    async def _check_robots(self, client: httpx.AsyncClient, url: str, address: str | None) -> None:
        """Raise FetchError (code 2) when robots.txt of `url`'s origin forbids it (read if not cached)."""
        origin = origin_of(url)
        rules = self.robots.get(origin)
        if rules is None:
            rules = await self._read_robots(client, origin, address)
            self.robots.put(origin, rules)
        reason = rules.refusal(url, origin)
        if reason is not None:
            raise FetchError(INPUT, reason)

    async def _read_robots(self, client: httpx.AsyncClient, origin: str, address: str | None):
        """The rules of `origin`'s robots.txt, following up to 5 redirections (RFC 9309 §2.3.1.2)."""
        url = origin + "/robots.txt"
        try:
            for _ in range(robots_txt.MAX_REDIRECTS + 1):
                async with self._get(client, url, address) as response:
                    status = response.status_code
                    location = response.extensions.get(LOCATION) if status in REDIRECTS else None
                    if location is None:
                        ok = 200 <= status < 300
                        body = await self._read(response, url, robots_txt.MAX_BYTES, refuse=False) if ok else b""
                        return rules_from_answer(status, body)
                url = _redirect_target(url, location)
                address = await self._address(url)
        except FetchError as err:
            return rules_from_answer(None, b"", err.reason)
        return rules_from_answer(404, b"")  # too many redirections: unavailable, as a 4xx


LOCATION = "mm.location"  # where _take_location keeps a redirection's Location


async def _take_location(response: httpx.Response) -> None:
    """Move a redirection's `Location` out of the headers before httpx reads it.

    httpx parses it even when it follows no redirection, and a `javascript:` or malformed one
    would fail there as "cannot reach"; mm checks every target itself (`_redirect_target`).
    """
    location = response.headers.get("location")
    if location is not None and response.status_code in REDIRECTS:
        response.extensions[LOCATION] = location
        del response.headers["location"]


def _redirect_target(current: str, location: str) -> str:
    target = urljoin(current, location.strip()).replace(" ", "%20")  # as browsers do
    try:
        return check_url(target)
    except FetchError:
        raise FetchError(INPUT, BAD_REDIRECT.format(url=current, target=target)) from None


def _port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def _why(err: Exception) -> str:
    """A short reason for an httpx or socket error: its message, else its class name."""
    text = str(err).strip() or type(err).__name__
    return text.splitlines()[0][:300]
