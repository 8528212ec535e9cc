"""The web tools: `fetch_content` (mm-tools.md), `web_crawler` and `web_search` (mnemo-tools.md).

Modules: `urls` (repairing the address), `robots` (robots.txt rules), `ssrf` (the address policy
of web_crawler), `fetch` (the download engine), and one module per tool. Design notes: docs/web.md.
"""
