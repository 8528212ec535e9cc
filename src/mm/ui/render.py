"""Terminal text for tool calls, shared by the terminal front ends (mm-tools.md, "Terminal display")."""

from __future__ import annotations

from typing import Any

FILE_TOOLS = frozenset({"read_file", "write_file", "edit_file"})
NO_OUTPUT = "(no output)"


def call_header(name: str, arguments: dict[str, Any], declared: bool = False) -> str:
    """The line shown before a call runs: `🛠️  bash: <command>`, `📝 edit_file: <path>`, `🧰 <name>: …`."""
    if name == "bash":
        return f"🛠️  bash: {arguments.get('command', '')}"
    if name in FILE_TOOLS:
        path = arguments.get("path", "")
        extra = ""
        if name == "read_file" and (arguments.get("start") or arguments.get("end")):
            extra = f" (lines {arguments.get('start') or 1}-{arguments.get('end') or 'end'})"
        return f"📝 {name}: {path}{extra}"
    if declared:
        argv = arguments.get("__argv__")
        return f"🧰 {name}: {argv if argv else _compact(arguments)}"
    return f"🧰 {name}: {_compact(arguments)}"


def preview(text: str, lines: int, dim: bool) -> str:
    """Up to `lines` lines of `text`, indented (and dimmed when `dim`), or `(no output)`."""
    shown = [ln for ln in text.rstrip("\n").split("\n")] if text.strip() else []
    if not shown:
        out = [NO_OUTPUT]
    else:
        out = shown[:lines]
        if len(shown) > lines:
            out.append(f"… ({len(shown) - lines} more line(s))")
    body = "\n".join("   " + ln for ln in out)
    return f"\x1b[2m{body}\x1b[0m" if dim else body


def _compact(arguments: dict[str, Any]) -> str:
    import json

    text = json.dumps(arguments, ensure_ascii=False)
    return text if len(text) <= 200 else text[:199] + "…"
