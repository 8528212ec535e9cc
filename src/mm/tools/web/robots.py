"""robots.txt rules and their cache (mm-tools.md §fetch_content, robots.txt; RFC 9309).

The matching (groups, longest match, Allow on a tie, `*` and `$`) is protego's; the fetch-level
rules are here: a 4xx file allows everything, a 5xx or unreachable one forbids everything,
answers are kept 24 h per origin (notes/deps.md §3).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import urlsplit

PRODUCT_TOKEN = "mm"  # mm-tools.md §fetch_content: the `mm` group, else `*`
TTL = 24 * 3600.0  # seconds a robots.txt answer is kept (RFC 9309 §2.4)
MAX_BYTES = 500 * 1024  # RFC 9309 §2.5: parse at least 500 KiB; the rest is ignored
MAX_REDIRECTS = 5  # RFC 9309 §2.3.1.2: follow at least five; beyond, the file is unavailable
BOM = "\ufeff"
FORBIDDEN = "robots.txt of {origin} forbids {url}"
UNREADABLE = "robots.txt of {origin} cannot be read ({why}): every page of the site is forbidden"
SERVER_ERROR = "HTTP status {status}"


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of `url` (str), lower case, default port left out: the cache key."""
    parts = urlsplit(url)
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}" if port in (None, default) else f"{scheme}://{host}:{port}"


@dataclass
class Rules:
    """What one robots.txt says: a parsed file, everything allowed, or everything forbidden.

    `parser` is a protego.Protego (None: no rule, everything allowed unless `unreadable`).
    `unreadable` (str) is why the file could not be read: then every page is forbidden.
    """

    parser: Any = None
    unreadable: str | None = None

    def refusal(self, url: str, origin: str, token: str = PRODUCT_TOKEN) -> str | None:
        """The reason `url` (str) may not be fetched, or None when it may."""
        if self.unreadable is not None:
            return UNREADABLE.format(origin=origin, why=self.unreadable)
        if self.parser is not None and not self.parser.can_fetch(url, token):
            return FORBIDDEN.format(origin=origin, url=url)
        return None

    @property
    def cacheable(self) -> bool:
        """A file read, or a 4xx: kept 24 h. A 5xx or an unreachable file is asked again next time."""
        return self.unreadable is None


def rules_from_answer(status: int | None, body: bytes, why: str = "") -> Rules:
    """The rules for a robots.txt answer (RFC 9309 §2.3.1).

    `status` (int) is the final HTTP status, None when the file could not be fetched (`why`
    says why). 2xx: the body, UTF-8, byte-order mark dropped; 3xx left after the redirections
    and 4xx: everything allowed; 5xx and no answer: everything forbidden.
    """
    if status is None:
        return Rules(unreadable=why or "no answer")
    if status >= 500:
        return Rules(unreadable=SERVER_ERROR.format(status=status))
    if not 200 <= status < 300:
        return Rules()
    from protego import Protego  # on first use (start-up time)

    text = body[:MAX_BYTES].decode("utf-8", errors="replace").removeprefix(BOM)
    return Rules(parser=Protego.parse(text))


@dataclass
class RobotsCache:
    """robots.txt rules per origin, each kept `ttl` seconds (mm-tools.md: cached 24 h per origin)."""

    ttl: float = TTL
    clock: Callable[[], float] = time.monotonic
    _rules: dict[str, tuple[float, Rules]] = field(default_factory=dict)

    def get(self, origin: str) -> Rules | None:
        """The rules kept for `origin` (str), or None when absent or older than `ttl`."""
        kept = self._rules.get(origin)
        if kept is None or self.clock() - kept[0] > self.ttl:
            self._rules.pop(origin, None)
            return None
        return kept[1]

    def put(self, origin: str, rules: Rules) -> None:
        """Keep `rules` for `origin` when they may be cached (see Rules.cacheable)."""
        if rules.cacheable:
            self._rules[origin] = (self.clock(), rules)
