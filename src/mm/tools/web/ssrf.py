"""The address policy of `web_crawler` (mnemo-tools.md: "checks the URL against the SSRF policy").

A host is resolved once; every address it resolves to is checked; the connection then goes to
the checked address, with the name kept in the `Host` header and the TLS server name (SNI), so a
second DNS answer cannot send the request elsewhere (DNS rebinding). A list of allowed hosts or
CIDR ranges (agent file `webCrawler.allowedHosts`) lets a user reach an intranet on purpose.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass, field
from typing import Awaitable, Callable

from mm.tools.web.errors import INPUT, FetchError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[str]]]  # (host, port) → addresses, in order of use

METADATA = frozenset(ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254"))
CGNAT = ipaddress.ip_network("100.64.0.0/10")
NAT64 = ipaddress.ip_network("64:ff9b::/96")
REFUSED = ("{host} is {what} ({ip}): web_crawler does not fetch loopback, private, link-local, CGNAT, "
           "multicast, unspecified or cloud-metadata addresses — to reach it on purpose, add it to "
           "webCrawler.allowedHosts in the agent file")
UNRESOLVED = "cannot resolve {host}: {why}"
NO_ADDRESS = "no address"


def blocked_kind(ip: IPAddress) -> str | None:
    """What makes `ip` off limits ("a loopback address", …), or None for a public address.

    An IPv6 address that carries an IPv4 one (mapped, NAT64, 6to4, Teredo) is judged by it.
    """
    inner = _embedded_v4(ip)
    if inner is not None:
        return blocked_kind(inner)
    checks = (
        (ip in METADATA, "a cloud metadata address"),
        (ip.is_unspecified, "an unspecified address"),
        (ip.is_loopback, "a loopback address"),
        (ip.is_link_local, "a link-local address"),
        (ip.version == 4 and ip in CGNAT, "a carrier-grade NAT (CGNAT) address"),
        (ip.is_multicast, "a multicast address"),
        (ip.is_private, "a private address"),
        (ip.is_reserved or not ip.is_global, "a reserved address"),
    )
    return next((what for hit, what in checks if hit), None)


def _embedded_v4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    if ip.version == 4:
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.sixtofour is not None:
        return ip.sixtofour
    return ip.teredo[1] if ip.teredo is not None else None


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses of `host` (str) from the system resolver, in the order it gives them.

    Raises OSError (socket.gaierror) when the name does not resolve.
    """
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass
class Allowed:
    """Hosts and ranges a user allowed: `names` (exact, or `*.example.org` for its subdomains) and
    `networks` (an address or CIDR range). Built by `parse_allowed`."""

    names: set[str] = field(default_factory=set)
    suffixes: tuple[str, ...] = ()
    networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = field(default_factory=list)

    def has_name(self, host: str) -> bool:
        """True when the name `host` (str, lower case) is allowed."""
        return host in self.names or any(host.endswith(s) for s in self.suffixes)

    def has_address(self, ip: IPAddress) -> bool:
        """True when `ip` is in an allowed range."""
        return any(ip in net for net in self.networks if net.version == ip.version)


def parse_allowed(entries: list[str]) -> Allowed:
    """Read `webCrawler.allowedHosts` (list of str): an entry that parses as an address or a
    CIDR range is a range; `*.name` allows the subdomains of `name`; anything else is a host name."""
    allowed = Allowed()
    suffixes = []
    for raw in entries:
        entry = raw.strip().lower().rstrip(".")
        if not entry:
            continue
        try:
            allowed.networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            continue
        except ValueError:
            pass
        if entry.startswith("*."):
            suffixes.append(entry[1:])
        else:
            allowed.names.add(entry)
    allowed.suffixes = tuple(suffixes)
    return allowed


@dataclass
class SsrfGuard:
    """Resolves a host once and says which address to connect to, or refuses (FetchError, code 2)."""

    allowed: Allowed = field(default_factory=Allowed)
    resolver: Resolver = system_resolver

    async def address_for(self, host: str, port: int) -> str:
        """The address to connect to for `host` (str, from the URL) on `port` (int).

        Every address the name resolves to must be public, unless the name or the address is
        allowed; the first one is used. Raises FetchError (code 2, input) otherwise.
        """
        name = host.strip("[]").lower().rstrip(".")
        try:
            addresses = [ipaddress.ip_address(name)]
        except ValueError:
            addresses = await self._resolve(name, port)
        if not self.allowed.has_name(name):
            for ip in addresses:
                what = blocked_kind(ip)
                if what is not None and not self.allowed.has_address(ip):
                    raise FetchError(INPUT, REFUSED.format(host=name, what=what, ip=ip))
        return str(addresses[0])

    async def _resolve(self, name: str, port: int) -> list[IPAddress]:
        try:
            found = await self.resolver(name, port)
        except OSError as err:
            raise FetchError(INPUT, UNRESOLVED.format(host=name, why=err.strerror or err)) from None
        addresses = []
        for text in found:
            try:
                addresses.append(ipaddress.ip_address(text.split("%")[0]))
            except ValueError:
                continue
        if not addresses:
            raise FetchError(INPUT, UNRESOLVED.format(host=name, why=NO_ADDRESS))
        return addresses
