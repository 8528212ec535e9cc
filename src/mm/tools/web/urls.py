"""Reading the `url` and `baseUrl` a model sends (mm-tools.md §fetch_content, fields `url` and `baseUrl`)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from mm.tools.failures import host_problem
from mm.tools.web.errors import USAGE, FetchError

EMPTY_URL = "the url is empty — give the address of the page, e.g. https://example.org/docs"
NOT_A_URL = "{url} is not a URL ({problem}) — give an address such as https://example.org/docs"
NO_HOST = "{url} names no host — give an address such as https://example.org/docs"
BAD_SCHEME = "{url}: the scheme {scheme} is not supported — only http and https"
BASE_NOT_ABSOLUTE = "baseUrl {url} is not an absolute http or https URL — give one such as https://example.org/docs/"
SCHEMES = ("http", "https")
# `https//x`, `http:/x`, `https:x`: a scheme typed without its colon or with too few slashes.
_TYPO = re.compile(r"^(https?)(//|:/|:)(?=[^/])", re.IGNORECASE)
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):(.*)$")


def repair_url(text: str) -> str:
    """Return the page address `text` (str) made absolute: no scheme → `https://`, a scheme
    typed without its colon (`https//k33g.org`) repaired (mm-tools.md §fetch_content, `url`).

    Raises FetchError (code 3, usage) for an empty or unparsable address, a scheme other than
    http or https, or an address without a host.
    """
    url = (text or "").strip()
    if not url:
        raise FetchError(USAGE, EMPTY_URL)
    url = _fix_typo(url)
    if url.startswith("//"):
        url = "https:" + url
    elif "://" not in url:
        scheme = _SCHEME.match(url)
        if scheme and not scheme.group(2).split("/")[0].isdigit():  # `mailto:x`, not `host:8080`
            raise FetchError(USAGE, BAD_SCHEME.format(url=url, scheme=scheme.group(1).lower()))
        url = "https://" + url
    return check_url(url)


def check_url(url: str) -> str:
    """Return `url` (str) when it is an absolute http(s) URL with a host and a valid port.

    Raises FetchError (code 3) otherwise. Used for the first address; a redirection target
    is checked by the engine (code 2, it is the server's doing).
    """
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 — raises ValueError for a bad port
    except ValueError as err:
        raise FetchError(USAGE, NOT_A_URL.format(url=url, problem=err)) from None
    if parts.scheme.lower() not in SCHEMES:
        raise FetchError(USAGE, BAD_SCHEME.format(url=url, scheme=parts.scheme.lower() or "(none)"))
    if not parts.hostname:
        raise FetchError(USAGE, NO_HOST.format(url=url))
    if any(c.isspace() for c in url):
        raise FetchError(USAGE, NOT_A_URL.format(url=url, problem="it contains spaces"))
    problem = host_problem(parts.hostname)  # what the socket layer's IDNA codec would refuse
    if problem is not None:
        raise FetchError(USAGE, NOT_A_URL.format(url=url, problem=problem))
    import httpx

    try:  # what the HTTP client will refuse (0177.0.0.1, a malformed IDNA name…) is refused here
        httpx.Request("GET", url)
    except (httpx.InvalidURL, ValueError, UnicodeError) as err:
        raise FetchError(USAGE, NOT_A_URL.format(url=url, problem=str(err).splitlines()[0] or "unparsable")) from None
    return url


def check_base_url(text: str) -> str:
    """Return `baseUrl` (str) when it is absolute http(s); raises FetchError (code 3) otherwise."""
    try:
        parts = urlsplit(text.strip())
    except ValueError:
        parts = None
    if parts is None or parts.scheme.lower() not in SCHEMES or not parts.netloc:
        raise FetchError(USAGE, BASE_NOT_ABSOLUTE.format(url=text))
    return text.strip()


def _fix_typo(url: str) -> str:
    """`https//x` → `https://x`, `http:/x` → `http://x`; other text unchanged."""
    if "://" in url[:9]:
        return url
    match = _TYPO.match(url)
    if not match:
        return url
    return f"{match.group(1).lower()}://{url[match.end():]}"
