"""web_crawler's SSRF policy against real loopback servers: private addresses refused, names
resolved once and the checked address connected to, redirection targets checked, allowed
hosts and ranges (mnemo-tools.md, web_crawler; docs/web.md)."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from mm.tools.base import Settings, ToolContext
from mm.tools.web.ssrf import blocked_kind
from mm.tools.web.web_crawler import INLINE_LIMIT, WebCrawler

PAGE = "<html><body><main><h1>Intranet</h1><p>PAGE-OK</p></main></body></html>"
REFUSED = "[web_crawler: error 2 (input) — {host} is {what} ({ip}): web_crawler does not fetch"


def resolver_to(*addresses: str, calls: list | None = None):
    """A resolver hook answering `addresses` for any name (and recording the names asked)."""
    async def resolve(host: str, port: int) -> list[str]:
        if calls is not None:
            calls.append(host)
        return list(addresses)
    return resolve


async def crawl(url: str, tmp_path: Path, max_output: int = 200_000, **tool_args):
    ctx = ToolContext(cwd=tmp_path, settings=Settings(max_output=max_output))
    return await WebCrawler(**tool_args).run({"url": url}, ctx)


@pytest.mark.parametrize("address, kind", [
    ("127.0.0.1", "a loopback address"), ("::1", "a loopback address"),
    ("10.1.2.3", "a private address"), ("172.16.0.1", "a private address"), ("192.168.1.1", "a private address"),
    ("fc00::1", "a private address"),
    ("169.254.169.254", "a cloud metadata address"), ("fd00:ec2::254", "a cloud metadata address"),
    ("169.254.1.1", "a link-local address"), ("fe80::1", "a link-local address"),
    ("100.64.0.1", "a carrier-grade NAT (CGNAT) address"),
    ("224.0.0.1", "a multicast address"), ("ff02::1", "a multicast address"),
    ("0.0.0.0", "an unspecified address"), ("::", "an unspecified address"),
    ("::ffff:127.0.0.1", "a loopback address"), ("64:ff9b::a00:1", "a private address"),
    ("2002:7f00:1::", "a loopback address"), ("240.0.0.1", "a private address"),
    ("8.8.8.8", None), ("1.1.1.1", None), ("2606:4700::1111", None),
])
def test_blocked_kinds(address, kind):
    assert blocked_kind(ipaddress.ip_address(address)) == kind


async def test_loopback_literal_refused_before_any_request(web, tmp_path):
    web.page("/p", PAGE)
    result = await crawl(f"{web.origin}/p", tmp_path)
    assert result.failed and result.text.startswith(REFUSED.format(host="127.0.0.1", what="a loopback address",
                                                                   ip="127.0.0.1"))
    assert "webCrawler.allowedHosts" in result.text and web.seen == []


async def test_localhost_refused(web, tmp_path):
    web.page("/p", PAGE)
    result = await crawl(f"http://localhost:{web.port}/p", tmp_path)
    assert result.failed and result.text.startswith("[web_crawler: error 2 (input) — localhost is a loopback address")
    assert web.seen == []


async def test_metadata_and_ipv6_literals_refused(tmp_path):
    meta = await crawl("http://169.254.169.254/latest/meta-data/", tmp_path)
    assert meta.text.startswith(REFUSED.format(host="169.254.169.254", what="a cloud metadata address",
                                               ip="169.254.169.254"))
    six = await crawl("http://[::1]:9/", tmp_path)
    assert six.text.startswith(REFUSED.format(host="::1", what="a loopback address", ip="::1"))


async def test_name_resolving_to_a_private_address_refused(web, tmp_path):
    web.page("/p", PAGE)
    result = await crawl(f"http://intranet.test:{web.port}/p", tmp_path, resolver=resolver_to("127.0.0.1"))
    assert result.text.startswith(REFUSED.format(host="intranet.test", what="a loopback address", ip="127.0.0.1"))
    assert web.seen == []


async def test_any_private_answer_refuses_the_name(tmp_path):
    result = await crawl("http://mixed.test/p", tmp_path, resolver=resolver_to("93.184.216.34", "10.0.0.5"))
    assert result.text.startswith(REFUSED.format(host="mixed.test", what="a private address", ip="10.0.0.5"))


@pytest.mark.parametrize("allowed", [["127.0.0.0/8"], ["intranet.test"], ["*.test"], ["127.0.0.1"]])
async def test_allowed_hosts_reach_the_intranet(web, tmp_path, allowed):
    web.page("/p", PAGE)
    calls: list[str] = []
    result = await crawl(f"http://intranet.test:{web.port}/p", tmp_path, allowed_hosts=allowed,
                         resolver=resolver_to("127.0.0.1", calls=calls))
    assert not result.failed and result.text == "# Intranet\n\nPAGE-OK\n"
    # The name is not in any DNS: the connection went to the checked address, the name kept in Host.
    assert web.seen_for("/p")[0].headers["Host"] == f"intranet.test:{web.port}"
    assert web.seen_for("/robots.txt")[0].headers["Host"] == f"intranet.test:{web.port}"
    assert calls == ["intranet.test"]  # resolved once: robots.txt and the page use the same address


async def test_redirect_from_an_allowed_host_to_a_private_address(web, tmp_path):
    web.redirect("/go", f"http://127.0.0.1:{web.port}/secret")
    web.redirect("/go-local", f"http://localhost:{web.port}/secret")
    web.page("/secret", PAGE)
    for path, host in (("/go", "127.0.0.1"), ("/go-local", "localhost")):
        result = await crawl(f"http://public.test:{web.port}{path}", tmp_path, allowed_hosts=["public.test"],
                             resolver=resolver_to("127.0.0.1"))
        assert result.failed
        assert result.text.startswith(f"[web_crawler: error 2 (input) — {host} is a loopback address")
    assert web.requested("/go") and web.requested("/go-local") and not web.requested("/secret")


async def test_redirect_target_name_checked_with_the_resolver(web, tmp_path):
    web.redirect("/go", f"http://evil.test:{web.port}/secret")
    web.page("/secret", PAGE)
    answers = {"public.test": ["127.0.0.1"], "evil.test": ["10.9.9.9"]}

    async def resolve(host: str, port: int) -> list[str]:
        return answers[host]

    result = await crawl(f"http://public.test:{web.port}/go", tmp_path, allowed_hosts=["public.test"],
                         resolver=resolve)
    assert result.text.startswith(REFUSED.format(host="evil.test", what="a private address", ip="10.9.9.9"))
    assert not web.requested("/secret")


async def test_unresolvable_name(tmp_path):
    async def fail(host: str, port: int) -> list[str]:
        raise OSError(-2, "Name or service not known")

    result = await crawl("http://nowhere.test/p", tmp_path, resolver=fail)
    assert result.text == "[web_crawler: error 2 (input) — cannot resolve nowhere.test: Name or service not known]"


async def test_robots_still_apply(web, tmp_path):
    web.robots("User-agent: *\nDisallow: /p\n")
    web.page("/p", PAGE)
    result = await crawl(f"{web.origin}/p", tmp_path, allowed_hosts=["127.0.0.1"])
    assert result.text == f"[web_crawler: error 2 (input) — robots.txt of {web.origin} forbids {web.origin}/p]"


async def test_large_page_gives_no_content(web, tmp_path):
    web.page("/big", "<main>" + "<p>word " * 30_000 + "</main>")
    result = await crawl(f"{web.origin}/big", tmp_path, allowed_hosts=["127.0.0.0/8"])
    assert not result.failed and "PAGE" not in result.text and "word word" not in result.text
    assert f"above the {INLINE_LIMIT:,}-character limit" in result.text
    assert "chunks of 1024 tokens" in result.text and "search_in_documents" in result.text
    assert "search_in_documents with the documents tool group declared (it is not here)" in result.text


async def test_page_within_the_inline_limit_is_cut_to_max_output(web, tmp_path):
    web.page("/mid", "<main>" + "".join(f"<p>Line {i}</p>" for i in range(2000)) + "</main>")
    result = await crawl(f"{web.origin}/mid", tmp_path, max_output=1000, allowed_hosts=["127.0.0.0/8"])
    assert len(result.text) <= 1000 and result.text.startswith("Line 0\n") and "truncated to maxOutput" in result.text


async def test_fetch_content_is_not_guarded(web, tmp_path):
    from mm.tools.web.fetch_content import FetchContent

    web.page("/p", PAGE)
    result = await FetchContent().run({"url": f"{web.origin}/p"}, ToolContext(cwd=tmp_path))
    assert result.text == "# Intranet\n\nPAGE-OK\n"


# -- HTTPS: the connection goes to the checked address, the certificate is checked for the name

@pytest.fixture(scope="module")
def certificates(tmp_path_factory):
    """A test CA and two server certificates signed by it, for secure.test and other.test (openssl)."""
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make test certificates")
    d = tmp_path_factory.mktemp("tls")

    def sh(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)

    sh("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
       "-subj", "/CN=mm test CA")
    for name in ("secure.test", "other.test"):
        (d / f"{name}.ext").write_text(f"subjectAltName=DNS:{name}\nbasicConstraints=CA:FALSE\n")
        sh("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
           "-subj", f"/CN={name}")
        sh("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
           "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext")
    return d


def _client_context(certificates: Path):
    import ssl

    return ssl.create_default_context(cafile=str(certificates / "ca.pem"))


@pytest.mark.parametrize("served_as, ok", [("secure.test", True), ("other.test", False)])
async def test_https_pinned_address_keeps_the_name(certificates, tmp_path, served_as, ok):
    from web_server import WebServer

    tls = (str(certificates / f"{served_as}.pem"), str(certificates / f"{served_as}.key"))
    with WebServer(tls=tls) as secure:
        secure.page("/p", PAGE)
        result = await crawl(f"https://secure.test:{secure.port}/p", tmp_path, allowed_hosts=["127.0.0.0/8"],
                             resolver=resolver_to("127.0.0.1"), verify=_client_context(certificates))
    assert "secure.test" in secure.server_names  # SNI carries the name, not the address
    if ok:
        assert result.text == "# Intranet\n\nPAGE-OK\n"
        assert secure.seen_for("/p")[0].headers["Host"] == f"secure.test:{secure.port}"
    else:  # a certificate for another name is refused: checked against the name asked for
        assert result.failed and "cannot reach secure.test" in result.text and not secure.requested("/p")
