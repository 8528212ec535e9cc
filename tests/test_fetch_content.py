"""fetch_content beyond the cases: url repair, failure codes, output file, limits, robots.txt
cache, permission and display (mm-tools.md §fetch_content), against a loopback web server."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import RecordingUI, make_conversation
from mm.tools.base import Settings, ToolContext
from mm.tools.web.fetch import Fetcher
from mm.tools.web.fetch_content import FetchContent
from mm.tools.web.robots import RobotsCache
from mm.tools.web.urls import repair_url
from mm.ui.render import call_header

PAGE = "<html><body><main><h1>Title</h1><p>Hello <a href='next.html'>next</a>.</p></main></body></html>"
USAGE, INPUT, CONVERSION = ("[fetch_content: error 3 (usage) — ", "[fetch_content: error 2 (input) — ",
                            "[fetch_content: error 1 (conversion) — ")


async def run(args: dict, tmp_path: Path, tool: FetchContent | None = None, max_output: int = 12000):
    ctx = ToolContext(cwd=tmp_path, settings=Settings(max_output=max_output))
    return await (tool or FetchContent()).run(args, ctx)


def test_declaration():
    tool = FetchContent()
    assert (tool.name, tool.kind, tool.needs_permission) == ("fetch_content", "fetch", False)
    assert [p.name for p in tool.params] == ["url", "output", "baseUrl", "tables", "strikethrough", "taskList"]
    assert [p.name for p in tool.params if p.required] == ["url"]
    assert tool.requires_permission({"url": "x", "output": "a.md"}) is True
    assert tool.requires_permission({"url": "x", "output": ""}) is False
    assert tool.requires_permission({"url": "x"}) is False


@pytest.mark.parametrize("given, fixed", [
    ("k33g.org", "https://k33g.org"), ("https//k33g.org", "https://k33g.org"),
    ("http//k33g.org/a", "http://k33g.org/a"), ("  https://x.org/a?b=1 ", "https://x.org/a?b=1"),
    ("localhost:8080/x", "https://localhost:8080/x"), ("httpbin.org/get", "https://httpbin.org/get"),
])
def test_url_repair(given, fixed):
    assert repair_url(given) == fixed


async def test_repaired_url_is_fetched(web, tmp_path):
    web.page("/p.html", PAGE)
    result = await run({"url": web.origin.replace("http://", "http//") + "/p.html"}, tmp_path)
    assert result.text.startswith("# Title\n") and not result.failed


@pytest.mark.parametrize("args, reason", [
    ({"url": ""}, "the url is empty — give the address of the page, e.g. https://example.org/docs]"),
    ({"url": "ftp://x.org/f"}, "ftp://x.org/f: the scheme ftp is not supported — only http and https]"),
    ({"url": "mailto:a@b.org"}, "mailto:a@b.org: the scheme mailto is not supported — only http and https]"),
    ({"url": "http://"}, "http:// names no host — give an address such as https://example.org/docs]"),
    ({"url": "x.org", "tables": "grid"}, 'tables is "grid" — use html or flatten]'),
    ({"url": "x.org", "baseUrl": "/docs/"}, "baseUrl /docs/ is not an absolute http or https URL — "
                                            "give one such as https://example.org/docs/]"),
])
async def test_usage_errors(args, reason, tmp_path):
    result = await run(args, tmp_path)
    assert result.failed and result.text == USAGE + reason


async def test_output_saves_the_markdown(web, tmp_path):
    web.page("/p.html", PAGE)
    url = web.origin + "/p.html"
    shown = (await run({"url": url}, tmp_path)).text
    result = await run({"url": url, "output": "notes/page.md"}, tmp_path)
    saved = (tmp_path / "notes/page.md").read_text(encoding="utf-8")
    assert saved == shown
    assert result.text == (f"[fetch_content: saved {saved.count(chr(10))} lines of Markdown "
                           f"({len(saved.encode())} bytes) from {url} to notes/page.md — the content is not shown]")
    assert result.locations == [tmp_path / "notes/page.md"] and not result.failed


async def test_output_that_cannot_be_written(web, tmp_path):
    web.page("/p.html", PAGE)
    (tmp_path / "afile").write_text("x")
    result = await run({"url": web.origin + "/p.html", "output": "afile/page.md"}, tmp_path)
    assert result.failed and result.text.startswith(CONVERSION + "cannot write afile/page.md: ")


async def test_no_content_writes_no_file(web, tmp_path):
    web.page("/e.html", "<html><head><title>T</title><script>x()</script></head><body><nav>N</nav></body></html>")
    url = web.origin + "/e.html"
    result = await run({"url": url, "output": "e.md"}, tmp_path)
    assert result.text == (f"[fetch_content: {url} has no text content once scripts, navigation and ads "
                           "are removed — nothing saved]")
    assert not (tmp_path / "e.md").exists()


async def test_base_url_and_final_url(web, tmp_path):
    web.page("/docs/p.html", PAGE)
    web.redirect("/go", "/docs/p.html")
    assert f"[next]({web.origin}/docs/next.html)" in (await run({"url": web.origin + "/go"}, tmp_path)).text
    given = await run({"url": web.origin + "/go", "baseUrl": "https://mirror.example/x/"}, tmp_path)
    assert "[next](https://mirror.example/x/next.html)" in given.text


async def test_user_agent(web, tmp_path):
    web.page("/p.html", PAGE)
    await run({"url": web.origin + "/p.html"}, tmp_path)
    import mm

    assert web.seen_for("/p.html")[0].headers["User-Agent"] == f"mm/{mm.__version__}"


@pytest.mark.parametrize("headers, body, ok", [
    ({"Content-Type": "application/xhtml+xml"}, PAGE, True),
    ({}, PAGE, True),  # no Content-Type: sniffed
    ({}, "  <!DOCTYPE html><p>Sniffed text</p>", True),
    ({}, "%PDF-1.7 binary", False),
    ({"Content-Type": "application/pdf"}, PAGE, False),
    ({"Content-Type": "text/plain"}, "plain", False),
])
async def test_accepted_types(web, tmp_path, headers, body, ok):
    web.page("/t", body, headers=headers)
    result = await run({"url": web.origin + "/t"}, tmp_path)
    assert result.failed != ok, result.text
    if not ok:
        assert result.text.startswith(CONVERSION) and "is not an HTML page" in result.text


@pytest.mark.parametrize("declared", [True, False])
async def test_larger_than_5_mib(web, tmp_path, declared):
    body = b"<html><body><p>" + b"a" * (5 * 1024 * 1024) + b"</p></body></html>"
    headers = {"Content-Type": "text/html"} | ({"Content-Length": str(len(body))} if declared else {})
    web.page("/big", body, headers=headers)
    result = await run({"url": web.origin + "/big"}, tmp_path)
    assert result.text == CONVERSION + f"{web.origin}/big is larger than 5 MiB]"


@pytest.mark.parametrize("status", [404, 500, 204 + 100])
async def test_status_300_or_more(web, tmp_path, status):
    web.page("/s", PAGE, status=status)
    result = await run({"url": web.origin + "/s"}, tmp_path)
    assert result.failed and result.text.startswith(INPUT + f"{web.origin}/s answered HTTP {status}")


async def test_ten_redirections_followed_eleven_refused(web, tmp_path):
    web.page("/end", PAGE)
    for i in range(11):
        web.redirect(f"/r{i}", f"/r{i + 1}" if i < 10 else "/end")
    assert not (await run({"url": web.origin + "/r1"}, tmp_path)).failed  # r1 … r10 → end: 10
    result = await run({"url": web.origin + "/r0"}, tmp_path)
    assert result.text == INPUT + f"more than 10 redirections (the next one was to {web.origin}/end)]"
    assert len(web.seen_for("/end")) == 1


async def test_redirect_to_another_scheme(web, tmp_path):
    web.redirect("/go", "ftp://files.example/x")
    result = await run({"url": web.origin + "/go"}, tmp_path)
    assert result.text == INPUT + (f"{web.origin}/go redirects to ftp://files.example/x, "
                                   "which is not an http or https address]")


async def test_unreachable_host(tmp_path):
    from web_server import WebServer

    with WebServer() as gone:
        origin = gone.origin
    result = await run({"url": origin + "/p"}, tmp_path)
    assert result.failed and result.text.startswith(INPUT + f"robots.txt of {origin} cannot be read (cannot reach")


async def test_timeout_for_the_whole_fetch(web, tmp_path):
    web.page("/slow", PAGE, delay=3)
    tool = FetchContent(Fetcher(timeout=0.5))
    result = await run({"url": web.origin + "/slow"}, tmp_path, tool)
    assert result.text == INPUT + f"{web.origin}/slow did not answer completely within 0.5 s]"


async def test_truncated_to_max_output(web, tmp_path):
    web.page("/long", "<main>" + "".join(f"<p>Paragraph {i} with some words.</p>" for i in range(200)) + "</main>")
    result = await run({"url": web.origin + "/long"}, tmp_path, max_output=600)
    assert len(result.text) <= 600 and result.text.startswith("Paragraph 0 with some words.\n")
    assert result.text.endswith("; call fetch_content with output to save the whole page to a file ...]")


async def test_robots_cached_per_origin_for_24_hours(web, tmp_path):
    web.page("/a", PAGE)
    web.page("/b", PAGE)
    web.robots("User-agent: *\nDisallow: /b\n")
    now = [1000.0]
    tool = FetchContent(Fetcher(robots=RobotsCache(clock=lambda: now[0])))
    assert not (await run({"url": web.origin + "/a"}, tmp_path, tool)).failed
    assert (await run({"url": web.origin + "/b"}, tmp_path, tool)).failed
    assert len(web.seen_for("/robots.txt")) == 1
    now[0] += 24 * 3600 + 1
    await run({"url": web.origin + "/a"}, tmp_path, tool)
    assert len(web.seen_for("/robots.txt")) == 2


async def test_robots_server_error_is_asked_again(web, tmp_path):
    web.page("/a", PAGE)
    web.robots("", status=500)
    tool = FetchContent()
    for _ in range(2):
        result = await run({"url": web.origin + "/a"}, tmp_path, tool)
        assert result.text == INPUT + (f"robots.txt of {web.origin} cannot be read (HTTP status 500): "
                                       "every page of the site is forbidden]")
    assert len(web.seen_for("/robots.txt")) == 2 and not web.requested("/a")


async def test_robots_unreachable_forbids(web, tmp_path):
    web.page("/a", PAGE)
    web.broken("/robots.txt")
    result = await run({"url": web.origin + "/a"}, tmp_path)
    assert result.text.startswith(INPUT + f"robots.txt of {web.origin} cannot be read (cannot reach ")
    assert not web.requested("/a")


async def test_robots_redirect_followed(web, tmp_path):
    web.redirect("/robots.txt", "/real-robots.txt")
    web.page("/real-robots.txt", "User-agent: mm\nDisallow: /a\n", headers={"Content-Type": "text/plain"})
    web.page("/a", PAGE)
    result = await run({"url": web.origin + "/a"}, tmp_path)
    assert result.text == INPUT + f"robots.txt of {web.origin} forbids {web.origin}/a]"


def test_terminal_header():
    assert call_header("fetch_content", {"url": "https://x.org"}) == "🌐 fetch_content: https://x.org"
    assert call_header("fetch_content", {"url": "https://x.org", "output": "x.md"}) == \
        "🌐 fetch_content: https://x.org → x.md"
    assert call_header("web_crawler", {"url": "https://x.org"}) == "🌐 web_crawler: https://x.org"
    assert call_header("web_search", {"query": "mm agent"}) == '🔎 web_search: "mm agent"'


# -- permission, through a real conversation (scripted model on loopback)

CONFIG = {"fetchContentTool": True, "yolo": False, "bashTool": False, "editTools": False}


async def _turn(scripted_server, web, tmp_path, arguments: dict, answers: list[str]):
    web.page("/p.html", PAGE)
    arguments = {k: v.replace("{origin}", web.origin) for k, v in arguments.items()}
    scripted_server.add_tool_calls([{"id": "c1", "name": "fetch_content", "arguments": arguments}])
    scripted_server.add_reply("done")
    conv = make_conversation(scripted_server.base_url, tmp_path, CONFIG)
    ui = RecordingUI(answers)
    await conv.run_turn("fetch it", ui)
    return ui


async def test_no_permission_without_output(scripted_server, web, tmp_path):
    ui = await _turn(scripted_server, web, tmp_path, {"url": "{origin}/p.html"}, [])
    assert ui.asked == [] and ui.done_calls()[0].result.text.startswith("# Title")


async def test_permission_asked_with_output(scripted_server, web, tmp_path):
    ui = await _turn(scripted_server, web, tmp_path, {"url": "{origin}/p.html", "output": "p.md"}, ["allow_once"])
    assert [name for name, _ in ui.asked] == ["fetch_content"]
    assert (tmp_path / "p.md").read_text().startswith("# Title")
    assert ui.done_calls()[0].result.text.startswith("[fetch_content: saved ")


async def test_refused_output_writes_nothing(scripted_server, web, tmp_path):
    ui = await _turn(scripted_server, web, tmp_path, {"url": "{origin}/p.html", "output": "p.md"}, ["reject_once"])
    assert ui.done_calls()[0].result.text == "[fetch_content rejected by the user]"
    assert not (tmp_path / "p.md").exists() and not web.requested("/p.html")


async def test_cancelled_turn_stops_the_fetch(web, tmp_path):
    import asyncio

    web.page("/slow", PAGE, delay=5)
    ctx = ToolContext(cwd=tmp_path)
    call = asyncio.create_task(FetchContent().run({"url": web.origin + "/slow"}, ctx))
    await asyncio.sleep(0.3)
    ctx.cancelled.set()
    result = await asyncio.wait_for(call, 3)
    assert result.failed and result.text == "[error: cancelled]"


async def test_malformed_addresses_are_usage_errors_not_crashes(tmp_path):
    from mm.tools.web.fetch_content import FetchContent

    tool = FetchContent()
    for url in ("http://0177.0.0.1:9/ok", "http://127.000.000.001:9/ok", "http://xn--/"):
        result = await tool.run({"url": url}, ToolContext(cwd=tmp_path))
        assert result.failed and result.text.startswith("[fetch_content: error 3 (usage) — "), result.text


async def test_redirect_to_javascript_or_with_a_space(web, tmp_path):
    web.redirect("/js", "javascript:alert(1)")
    result = await run({"url": web.origin + "/js"}, tmp_path)
    assert result.text == INPUT + f"{web.origin}/js redirects to javascript:alert(1), which is not an http or https address]"
    web.page("/a%20b", PAGE)
    web.redirect("/sp", "/a b")
    assert not (await run({"url": web.origin + "/sp"}, tmp_path)).failed
