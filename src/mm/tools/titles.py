"""What a tool call is called: `bash: <command>`, `read_file: <path>` (mm-acp.md §Tool kinds:
titles), for the editor's display, a replayed session and an asked agent's context alike."""

from __future__ import annotations

import json
import re
from typing import Any

from mm.text import cut
from mm.tools.base import PATH_ARGUMENT

# The argument a tool's title shows after `<tool>: `.
TITLE_ARGUMENT = {"bash": "command", "read_skill": "name", "fetch_content": "url", "web_crawler": "url",
                  "web_search": "query", "search_memory": "query", "ask_agent": "agent", "ask_user_question": "question",
                  **PATH_ARGUMENT}
TITLE_LIMIT = 200  # characters of a title


def tool_title(name: str, arguments: Any, title: str | None = None) -> str:
    """`bash: <command>`, `read_file: <path>`, … — or the tool's own `title` (a declared tool's
    `<name>: <argv>`); other tools show their arguments as compact JSON."""
    if title:
        return _one_line(title)
    args = arguments if isinstance(arguments, dict) else {}
    if name == "ask_user" and (isinstance(args.get("questions"), (list, dict)) or "question" in args):
        questions = args.get("questions")
        return f"ask_user: {len(questions) if isinstance(questions, list) else 1} question(s)"
    key = TITLE_ARGUMENT.get(name)
    if key and isinstance(args.get(key), (str, int, float)):
        return _one_line(f"{name}: {args[key]}")
    if not args:
        return name
    return _one_line(f"{name}: {json.dumps(args, ensure_ascii=False)}")


def stored_arguments(raw: Any) -> Any:
    """A recorded call's `function.arguments`: the JSON text parsed, else the text as it is."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw if raw is not None else {}


def _one_line(text: str) -> str:
    """`text` with its line breaks made spaces (a title is one line), cut at TITLE_LIMIT."""
    return cut(re.sub(r"\s*[\r\n]+\s*", " ", text).strip(), TITLE_LIMIT)
