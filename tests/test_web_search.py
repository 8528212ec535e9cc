"""web_search against a loopback endpoint: Brave's parameters and clamps, the results list,
failures (mnemo-tools.md, web_search); and how the web tools are switched on (docs/web.md)."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from harness import RecordingUI, make_conversation
from mm.config.load import agent_config_adapter
from mm.tools.base import Settings, ToolContext
from mm.tools.registry import build_registry
from mm.tools.web.web_search import WebSearch

ANSWER = {"type": "search", "query": {"original": "mm agent"}, "web": {"type": "search", "results": [
    {"title": "mm &amp; <strong>agents</strong>", "url": "https://example.org/mm",
     "description": "A <strong>local</strong> coding agent.", "age": "2 days ago"},
    {"title": "Second", "url": "https://example.org/2", "description": ""},
]}}
JSON = {"Content-Type": "application/json"}


async def search(web, tmp_path: Path, args: dict, answer=ANSWER, status: int = 200, max_output: int = 12000):
    web.page("/res/v1/web/search", json.dumps(answer) if not isinstance(answer, str) else answer,
             status=status, headers=JSON)
    tool = WebSearch(api_key="KEY-1", endpoint=web.origin + "/res/v1/web/search")
    return await tool.run(args, ToolContext(cwd=tmp_path, settings=Settings(max_output=max_output)))


def sent(web) -> dict[str, str]:
    (seen,) = web.seen
    return {k: v[0] for k, v in parse_qs(urlsplit(seen.path).query).items()}


async def test_default_parameters(web, tmp_path):
    await search(web, tmp_path, {"query": "mm agent"})
    assert sent(web) == {"q": "mm agent", "search_lang": "en", "count": "10", "safesearch": "off"}
    headers = web.seen[0].headers
    assert headers["X-Subscription-Token"] == "KEY-1" and headers["Accept"] == "application/json"
    assert headers["User-Agent"].startswith("mm/")


@pytest.mark.parametrize("given, count", [(0, "1"), (-3, "1"), (1, "1"), (7, "7"), (20, "20"), (50, "20")])
async def test_num_results_clamped(web, tmp_path, given, count):
    await search(web, tmp_path, {"query": "q", "num_results": given})
    assert sent(web)["count"] == count


@pytest.mark.parametrize("given, value", [("pd", "pd"), ("PW", "pw"), ("pm", "pm"), ("py", "py"),
                                          ("2026-01-01to2026-02-01", "2026-01-01to2026-02-01")])
async def test_freshness_sent(web, tmp_path, given, value):
    await search(web, tmp_path, {"query": "q", "freshness": given})
    assert sent(web)["freshness"] == value


async def test_bad_freshness_refused_before_sending(web, tmp_path):
    result = await search(web, tmp_path, {"query": "q", "freshness": "lastweek"})
    assert result.failed and result.text == ('[web_search: freshness "lastweek" is not pd, pw, pm, py or a '
                                             'YYYY-MM-DDtoYYYY-MM-DD range — nothing was searched]')
    assert web.seen == []


async def test_optional_parameters_only_when_given(web, tmp_path):
    await search(web, tmp_path, {"query": "q", "search_lang": "fr", "country": "fr", "ui_lang": "fr-FR",
                                 "freshness": ""})
    assert sent(web) == {"q": "q", "search_lang": "fr", "count": "10", "safesearch": "off",
                         "country": "fr", "ui_lang": "fr-FR"}


async def test_results_as_a_compact_list(web, tmp_path):
    result = await search(web, tmp_path, {"query": "mm agent"})
    assert not result.failed
    assert result.text == ('Web results for "mm agent":\n'
                           "1. [mm & agents](https://example.org/mm)\n"
                           "   A local coding agent. 2 days ago\n"
                           "2. [Second](https://example.org/2)")


async def test_results_cut_to_max_output(web, tmp_path):
    many = {"type": "search", "web": {"results": [{"title": f"T{i}", "url": f"https://e.org/{i}",
                                                   "description": "word " * 40} for i in range(20)]}}
    result = await search(web, tmp_path, {"query": "q"}, answer=many, max_output=500)
    assert len(result.text) <= 500 and "truncated to maxOutput" in result.text


async def test_no_results(web, tmp_path):
    result = await search(web, tmp_path, {"query": "zzz"}, answer={"type": "search", "query": {"original": "zzz"}})
    assert result.text == 'No web results for "zzz".' and not result.failed


async def test_empty_query(web, tmp_path):
    result = await search(web, tmp_path, {"query": "  "})
    assert result.text == "[web_search: the query is empty — give the words to search for]" and web.seen == []


async def test_http_error(web, tmp_path):
    answer = {"type": "ErrorResponse", "error": {"status": 422, "detail": "The token is invalid."}}
    result = await search(web, tmp_path, {"query": "q"}, answer=answer, status=401)
    assert result.failed and result.text == "[web_search: the search service answered HTTP 401: The token is invalid.]"


async def test_not_json(web, tmp_path):
    result = await search(web, tmp_path, {"query": "q"}, answer="<html>proxy page</html>")
    assert result.failed and result.text == ("[web_search: the search service's answer holds no search results "
                                             "(not Brave's JSON)]")


async def test_unreachable_endpoint(tmp_path):
    from web_server import WebServer

    with WebServer() as gone:
        endpoint = gone.origin + "/search"
    result = await WebSearch("k", endpoint).run({"query": "q"}, ToolContext(cwd=tmp_path))
    assert result.failed and result.text.startswith(f"[web_search: cannot reach {endpoint[7:-7]}: ")


# -- switching the web tools on (agent file and environment)

def names(config: dict, env: dict) -> list[str]:
    cfg = agent_config_adapter().validate_python({"bashTool": False, "editTools": False, "askUserTool": False, "unloadModels": False,
                                                  **config})
    return build_registry(cfg, env).names


@pytest.mark.parametrize("config, env, expected", [
    ({}, {}, []),
    ({"fetchContentTool": True}, {}, ["fetch_content"]),
    ({}, {"ENABLE_WEB_CRAWL": "1"}, ["web_crawler"]),
    ({}, {"ENABLE_WEB_CRAWL": "TRUE"}, ["web_crawler"]),
    ({}, {"ENABLE_WEB_CRAWL": "0"}, []),
    ({"webCrawler": {"enabled": False}}, {"ENABLE_WEB_CRAWL": "1"}, []),
    ({"webCrawler": {"enabled": True, "allowedHosts": ["10.0.0.0/8"]}}, {}, ["web_crawler"]),
    ({}, {"ENABLE_WEB_SEARCH": "true"}, []),
    ({}, {"ENABLE_WEB_SEARCH": "true", "BRAVE_API_KEY": "k"}, ["web_search"]),
    ({"webSearch": {"enabled": True}}, {}, []),
    ({"webSearch": {"enabled": True, "apiKey": "k"}}, {}, ["web_search"]),
    ({"webSearch": {"enabled": False}}, {"ENABLE_WEB_SEARCH": "yes", "BRAVE_API_KEY": "k"}, []),
    ({"fetchContentTool": True}, {"ENABLE_WEB_CRAWL": "on", "ENABLE_WEB_SEARCH": "1", "BRAVE_API_KEY": "k"},
     ["fetch_content", "web_crawler", "web_search"]),
])
def test_switches(config, env, expected):
    assert names(config, env) == expected


def test_unknown_web_key_is_refused():
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        agent_config_adapter().validate_python({"webCrawler": {"allowedHost": ["x"]}})


async def test_search_through_a_conversation(scripted_server, web, tmp_path):
    web.page("/s", json.dumps(ANSWER), headers=JSON)
    config = {"bashTool": False, "editTools": False, "askUserTool": False, "unloadModels": False, "webSearch": {"enabled": True, "apiKey": "K",
                                                                    "endpoint": web.origin + "/s"}}
    scripted_server.add_tool_calls([{"id": "c1", "name": "web_search", "arguments": {"query": "mm agent"}}])
    scripted_server.add_reply("found")
    conv = make_conversation(scripted_server.base_url, tmp_path, config)
    await conv.run_turn("search", RecordingUI())
    tools = [t["function"]["name"] for t in scripted_server.requests[0]["tools"]]
    assert tools == ["web_search"]
    tool_message = scripted_server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["content"].startswith('Web results for "mm agent":')


def test_titles_cannot_close_the_link_and_bad_items_are_skipped():
    from mm.tools.web.web_search import results_text

    text = results_text("q", {"web": {"results": [
        {"title": "a](javascript:alert(1)) [b", "url": "https://x/y"}, {"title": None, "url": None}, {},
        {"title": ["a"], "url": "https://z"}]}})
    assert text.splitlines()[1:] == ["1. [a\\](javascript:alert(1)) \\[b](https://x/y)", "2. [https://z](https://z)"]
    assert results_text("q", {"web": {"results": "nope"}}) == 'No web results for "q".'
