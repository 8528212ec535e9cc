"""The counters shown after a turn (mm-tools.md §Counters shown after a turn)."""

from __future__ import annotations

from mm.events import Recap

FILE_TOOLS = frozenset({"read_file", "write_file", "edit_file", "fs_read", "fs_write", "file_edit"})


def count(recap: Recap, tool: str) -> None:
    """Count one tool response of `tool` in `recap`."""
    if tool == "bash":
        recap.commands += 1
    elif tool in FILE_TOOLS:
        recap.file_ops += 1
    elif tool == "read_skill":
        recap.skills += 1
    elif tool == "lsp":
        recap.lsp_calls += 1


def recap_line(recap: Recap) -> str:
    """`⚙ N command(s) · 📝 N file op(s)`, then the skill and lsp counters when not zero."""
    parts = [f"⚙ {recap.commands} command(s)", f"📝 {recap.file_ops} file op(s)"]
    if recap.skills:
        parts.append(f"📖 {recap.skills} skill(s)")
    if recap.lsp_calls:
        parts.append(f"🔎 {recap.lsp_calls} lsp call(s)")
    return " · ".join(parts)
