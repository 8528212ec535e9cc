"""The edit_file tool: matching `old` in three passes, re-indenting `new`, applying edits
(mm-tools.md §edit_file)."""

from mm.tools.edit.tool import EditFile

__all__ = ["EditFile"]
