"""Terminal text for tool calls, shared by the terminal front ends (mm-tools.md, "Terminal display")."""

from __future__ import annotations

from typing import Any

from mm.text import cut

# Control characters shown in caret notation (ESC as ^[), so output cannot drive the terminal.
_VISIBLE = {c: f"^{chr(c + 64)}" for c in range(32) if chr(c) not in "\t\n"} | {127: "^?"}
WEB_TOOLS = frozenset({"fetch_content", "web_crawler"})
NO_OUTPUT = "(no output)"
PREVIEW_WIDTH = 200  # characters of one preview line (a line of base64 is not to fill the screen)
PLAN_LINES = 40  # lines of a todo list's checklist shown at least, whatever previewLines says (docs/tools-todo.md)


def call_header(name: str, arguments: Any, title: str | None = None) -> str:
    """The line shown for a call: `🛠️  bash: <command>`, `📝 edit_file: <path>` (`📝 fs_read: <path> (<mode>)`),
    `🌐 fetch_content: <url>` (`→ <file>` with output), `📖 read_skill: <name>`, `🧹 unload_model: <model>`,
    `🔎 lsp: <action> <path> <symbol>`, or `🧰 <name>: …`.

    `title` is the tool's own (a declared tool's `<name>: <argv>`); a call that could not run
    (unknown tool, invalid arguments) shows its input as sent (mm-tools.md §Declared tools).
    """
    return _header(name, arguments, title).translate(_VISIBLE)


def _header(name: str, arguments: Any, title: str | None) -> str:
    args = arguments if isinstance(arguments, dict) else {}
    if name == "bash" and "command" in args:
        return f"🛠️  bash: {args['command']}"
    from mm.tools.base import PATH_ARGUMENT

    key = PATH_ARGUMENT.get(name) if name != "save_answer" else None
    if key is not None and key in args:
        extra = ""
        if name == "read_file" and (args.get("start") or args.get("end")):
            extra = f" (lines {args.get('start') or 1}-{args.get('end') or 'end'})"
        elif name in ("fs_read", "fs_write") and (args.get("mode") or args.get("command")):
            extra = f" ({args.get('mode') or args.get('command')})"
        return f"📝 {name}: {args[key]}{extra}"
    if name in WEB_TOOLS and "url" in args:
        target = f" → {args['output']}" if name == "fetch_content" and args.get("output") else ""
        return f"🌐 {name}: {args['url']}{target}"
    if name in ("web_search", "search_memory") and "query" in args:
        return f'🔎 {name}: "{args["query"]}"'
    if name == "ask_user" and isinstance(args.get("questions"), list):
        return f"❓ ask_user: {len(args['questions'])} question(s)"
    if name == "read_skill" and "name" in args:
        return f"📖 read_skill: {args['name']}"
    if name == "lsp" and title:
        return f"🔎 {title}"
    if name == "save_answer" and title:
        return f"💾 {title}"
    if name == "ask_agent" and title:
        return f"🗣 {title}"
    if name == "unload_model" and title:
        return f"🧹 {title}"
    if title:
        return f"🧰 {title}"
    return f"🧰 {name}: {_compact(arguments)}"


def visible(text: str) -> str:
    """`text` with its control characters (tab and newline kept) in caret notation, ESC as `^[`,
    so what a tool or a file holds cannot drive the terminal."""
    return text.translate(_VISIBLE)


def shown_output(result: Any, streamed: bool = True) -> str:
    """What a terminal echoes of a tool result: its `summary` when the output already streamed
    (`streamed`: an asked agent's answer), its `preview`, else its text; for a file change, the
    headline and the changed lines only, so the change is what `previewLines` shows."""
    if streamed and getattr(result, "summary", None) is not None:
        return result.summary
    if result.preview is not None:
        return result.preview
    if result.change is None or result.failed:
        return result.text
    head, *rows = result.text.split("\n")
    return "\n".join([head] + [r for r in rows if r[:1] in "+-" and r])


def preview_lines(result: Any, lines: int) -> int:
    """How many lines of `result`'s preview a terminal shows: `lines` (previewLines), at least
    PLAN_LINES for a plan (a todo list is shown whole)."""
    return lines if getattr(result, "plan", None) is None else max(lines, PLAN_LINES)


def preview(text: str, lines: int, dim: bool) -> str:
    """Up to `lines` lines of `text`, each cut at PREVIEW_WIDTH characters, indented (and dimmed
    when `dim`), or `(no output)`."""
    shown = [_cut(ln) for ln in text.rstrip("\n").split("\n")] if text.strip() else []
    if not shown:
        out = [NO_OUTPUT]
    else:
        out = shown[:lines]
        if len(shown) > lines:
            out.append(f"… ({len(shown) - lines} more line(s))")
    body = "\n".join("   " + ln for ln in out).translate(_VISIBLE)
    return f"\x1b[2m{body}\x1b[0m" if dim else body


def _cut(line: str) -> str:
    return cut(line, PREVIEW_WIDTH)


def _compact(arguments: dict[str, Any]) -> str:
    import json

    return cut(json.dumps(arguments, ensure_ascii=False), 200)
