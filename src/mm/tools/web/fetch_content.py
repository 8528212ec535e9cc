"""The `fetch_content` tool: a web page as Markdown, returned or saved to a file
(mm-tools.md §fetch_content)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult
from mm.tools.waiting import Cancelled, unless_cancelled
from mm.tools.web.errors import CONVERSION, USAGE, FetchError
from mm.tools.web.fetch import Fetcher
from mm.tools.web.page import CANCELLED, Options, cut_to, fetch_markdown
from mm.tools.web.urls import check_base_url, repair_url

NAME = "fetch_content"
DESCRIPTION = (
    "Download a web page and return it as Markdown (scripts, navigation and ads removed). "
    "With output, save the Markdown to that file instead of returning it."
)
PARAMS = [
    Param("url", "string", "The page, e.g. https://example.org/docs (https:// is added when missing)."),
    Param("output", "string", "File to save the Markdown to, relative to the working directory; "
          "when set, the content is not returned.", required=False, default=""),
    Param("baseUrl", "string", "Absolute URL to resolve relative links against; default: the page's URL.",
          required=False, default=""),
    Param("tables", "string", "Tables with rowspan/colspan: html (kept as HTML) or flatten (a GFM table).",
          required=False, default="html"),
    Param("strikethrough", "boolean", "Render <del>/<s> as ~~text~~.", required=False, default=False),
    Param("taskList", "boolean", "Render list checkboxes as - [ ] / - [x].", required=False, default=False),
]
TABLES = ("html", "flatten")
SAVED = ("[fetch_content: saved {lines} lines of Markdown ({size} bytes) from {url} to {file} "
         "— the content is not shown]")
NO_CONTENT = "[fetch_content: {url} has no text content once scripts, navigation and ads are removed — nothing saved]"
BAD_TABLES = 'tables is "{value}" — use html or flatten'
CANNOT_WRITE = "cannot write {file}: {why}"
CUT_HINT = "; call fetch_content with output to save the whole page to a file"


def options_from(args: dict[str, Any]) -> Options:
    """The conversion options of a call (`baseUrl`, `tables`, `strikethrough`, `taskList`).

    Raises FetchError (code 3) for an unknown `tables` value or a `baseUrl` that is not absolute.
    """
    tables = str(args.get("tables") or "html").strip().lower()
    if tables not in TABLES:
        raise FetchError(USAGE, BAD_TABLES.format(value=args.get("tables")))
    base = str(args.get("baseUrl") or "").strip()
    return Options(base_url=check_base_url(base) if base else None, tables=tables,
                   strikethrough=bool(args.get("strikethrough")), task_list=bool(args.get("taskList")))


class FetchContent:
    """The fetch_content tool: kind `fetch`; permission only when it writes a file (`output`)."""

    name = NAME
    kind: ToolKind = "fetch"
    description = DESCRIPTION
    params = PARAMS
    needs_permission = False

    def __init__(self, fetcher: Fetcher | None = None):
        """`fetcher` (Fetcher): the download engine; default: mm's limits and a fresh robots.txt cache."""
        self.fetcher = fetcher or Fetcher()

    def requires_permission(self, args: dict[str, Any], ctx: ToolContext | None = None) -> bool:
        """True when the call writes a file: asked like write_file (mm-tools.md §fetch_content, ACP)."""
        return bool(str(args.get("output") or "").strip())

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Fetch `url` and return its Markdown cut to maxOutput, or save it to `output` and return
        the confirmation line. Every failure is a `[fetch_content: error N (<class>) — …]` line."""
        output = str(args.get("output") or "").strip()
        target = Path(os.path.abspath(ctx.resolve(output))) if output else None
        locations = [target] if target is not None else []
        try:
            if target is not None:  # refused before the download, not after
                _check_output(target, output)
            url = repair_url(str(args.get("url") or ""))
            fetching = fetch_markdown(self.fetcher, url, options_from(args))
            _, markdown = await unless_cancelled(fetching, ctx.cancelled)
            if not markdown:
                return ToolResult(NO_CONTENT.format(url=url), locations=locations)
            if target is None:
                return ToolResult(cut_to(markdown, ctx.settings.max_output, CUT_HINT))
            await asyncio.to_thread(_save, target, output, markdown)
        except FetchError as err:
            return ToolResult(err.text(NAME), failed=True, locations=locations)
        except Cancelled:
            return ToolResult(CANCELLED, failed=True, locations=locations)
        size = len(markdown.encode("utf-8"))
        text = SAVED.format(lines=markdown.count("\n"), size=size, url=url, file=output)
        return ToolResult(text, locations=locations)


def _check_output(target: Path, shown: str) -> None:
    """Raise FetchError (code 1) when `target` is a path mm never writes (mm.fs.write_target)."""
    from mm.fs import FileRefused, write_target

    try:
        write_target(target, shown)
    except FileRefused as err:
        raise FetchError(CONVERSION, str(err)) from None


def _save(target: Path, shown: str, markdown: str) -> None:
    """Write `markdown` to `target` atomically (mm.fs.write_atomic: a regular file, never
    under /dev, /proc or /sys); raises FetchError (code 1) when it cannot be written."""
    from mm.fs import FileRefused, write_atomic

    try:
        if target.is_dir() or shown.endswith(("/", os.sep)):
            raise FetchError(CONVERSION, CANNOT_WRITE.format(file=shown, why="it is a directory"))
        write_atomic(target, markdown, shown)
    except FileRefused as err:
        raise FetchError(CONVERSION, str(err)) from None
    except (OSError, ValueError) as err:  # ValueError: a NUL byte in the name
        why = getattr(err, "strerror", None) or str(err)
        raise FetchError(CONVERSION, CANNOT_WRITE.format(file=shown, why=why.lower())) from None
