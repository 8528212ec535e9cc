"""Tool calls of the `files` group through a real conversation and the scripted model server,
on real files (the tests of fs_read, fs_write, file_edit and read-before-write share it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness import RecordingUI, make_conversation

FILES = {"toolsets": ["files"]}


class Session:
    """One conversation with the `files` group declared (and `config`), in `cwd`."""

    def __init__(self, server: Any, cwd: Path, config: dict | None = None):
        self.server, self.cwd = server, cwd
        self.conv = make_conversation(server.base_url, cwd, {**FILES, **(config or {})})
        self.ui: RecordingUI | None = None

    async def done(self, *calls: tuple[str, dict | str], answers: list[str] | None = None) -> list[Any]:
        """Run one turn in which the model calls each (name, arguments), then answers; returns the
        ToolCallDone events, in order."""
        self.server.add_tool_calls([{"name": name, "arguments": args} for name, args in calls])
        self.server.add_reply("done")
        self.ui = RecordingUI(answers)
        await self.conv.run_turn("go", self.ui)
        return self.ui.done_calls()

    async def text(self, name: str, args: dict | str, answers: list[str] | None = None) -> str:
        """The text one call returned to the model."""
        (call,) = await self.done((name, args), answers=answers)
        return call.result.text

    async def call(self, name: str, args: dict | str, answers: list[str] | None = None) -> dict:
        """The JSON object one call returned to the model."""
        return json.loads(await self.text(name, args, answers))

    async def read(self, path: str, **args: Any) -> dict:
        return await self.call("fs_read", {"path": path, **args})

    async def write(self, path: str, command: str, **args: Any) -> dict:
        return await self.call("fs_write", {"path": path, "command": command, **args})

    async def edit(self, path: str, old: str, new: str, **args: Any) -> dict:
        return await self.call("file_edit", {"file_path": path, "old_string": old, "new_string": new, **args})


def gutter(first: int, *lines: str) -> str:
    """The Line mode's content: each line numbered as `cat -n` from `first`."""
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, first))
