"""Link and image targets (mm-tools.md §fetch_content, rows "Conversion" and field `baseUrl`).

Relative `href`/`src` values are resolved against the base URL; a `javascript:` link keeps only
its text; a `data:` image keeps only its alt text.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

from .escape import plain

# Browsers ignore ASCII whitespace and control characters around a URL and tabs/newlines in it.
_URL_JUNK = re.compile(r"[\t\n\r]")


def _clean(value: str | None) -> str:
    """An attribute URL (str | None) without surrounding blanks, tabs, newlines or placeholders."""
    return plain(_URL_JUNK.sub("", (value or "").strip(" \t\n\r\f\x00")))


def _scheme_is(url: str, scheme: str) -> bool:
    """Whether `url` (str) has the scheme `scheme` (str, lower case), in any case."""
    return url[: len(scheme) + 1].lower() == scheme + ":"


def resolve(url: str, base_url: str | None) -> str:
    """`url` (str) made absolute against `base_url` (str | None); unchanged without a base or
    when it cannot be joined."""
    if not base_url:
        return url
    try:
        return urljoin(base_url, url)
    except ValueError:
        return url


def link_target(href: str | None, base_url: str | None) -> str | None:
    """The absolute target of an `a` element, or None when the link keeps only its text
    (no `href`, or a `javascript:` one).

    Args: href (str | None): the raw attribute; base_url (str | None): the base URL.
    Source: mm-tools.md §fetch_content, row "Conversion" (`a`).
    """
    url = _clean(href)
    if href is None or _scheme_is(url, "javascript"):
        return None
    return resolve(url, base_url)


def image_source(src: str | None, base_url: str | None) -> str | None:
    """The absolute source of an `img`, or None when only its alt text is kept (no `src`, or a
    `data:` URI).

    Args: src (str | None): the raw attribute; base_url (str | None): the base URL.
    Source: mm-tools.md §fetch_content, row "Conversion" (`img`).
    """
    url = _clean(src)
    if not url or _scheme_is(url, "data"):
        return None
    return resolve(url, base_url)
