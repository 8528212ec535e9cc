"""`/memory-file`: the memory tool's MEMORY.md, shown to the user (docs/memory.md §Seeing it;
`/memory` keeps its meaning, searching past conversations: mm-tools.md §search_memory)."""

from __future__ import annotations

from typing import Any

HEAD = "{path}: {n} entr{ies}, {used}/{limit} characters"
EMPTY = "{path}: no entry yet — the model adds them with the memory tool"
OFF = "/memory-file: the memory tool is not declared — add memory to `toolsets:` in the agent file (docs/memory.md)"
CANNOT = "{path}: {reason}"


def memory_file_text(registry: Any) -> str:
    """The memory tool's file (mm.tools.registry.Registry's `memory`): HEAD then the file as it is
    on disk; EMPTY when it holds no entry; CANNOT when it cannot be read; OFF without the tool."""
    tool = registry.get("memory")
    file = getattr(tool, "file", None)
    if file is None:
        return OFF
    from mm.tools.memory.store import MemoryRefused, split_entries

    try:
        text = file.read()
    except MemoryRefused as err:
        return CANNOT.format(path=file.shown, reason=err)
    entries = split_entries(text)
    if not entries:
        return EMPTY.format(path=file.shown)
    head = HEAD.format(path=file.shown, n=len(entries), ies="y" if len(entries) == 1 else "ies",
                       used=len(text), limit=file.max_chars)
    return f"{head}\n{text.strip(chr(10))}"
