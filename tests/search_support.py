"""What the search tests share: a call of glob_search or grep_search through a real conversation
against the scripted model server, either searcher, and stand-ins for ripgrep made by the test."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from harness import RecordingUI, make_conversation

SEARCHERS = ["ripgrep", "python"]


@pytest.fixture(params=SEARCHERS)
def searcher(request, monkeypatch, tmp_path_factory):
    """Each test twice: with the ripgrep wheel's rg, and with MM_RG pointing nowhere, which makes
    grep_search use its pure-Python search (docs/tools-search.md §Which ripgrep)."""
    if request.param == "python":
        monkeypatch.setenv("MM_RG", str(tmp_path_factory.mktemp("no-rg") / "nowhere" / "rg"))
    else:
        monkeypatch.delenv("MM_RG", raising=False)
    return request.param


async def call(server, cwd: Path, name: str, args: dict, config: dict | None = None, conv=None):
    """Run one turn in which the model calls `name` with `args`; returns the call's result (and the
    conversation's history holds it, as the model reads it)."""
    server.add_tool_calls([{"id": "s1", "name": name, "arguments": args}])
    server.add_reply("done")
    if conv is None:
        conv = make_conversation(server.base_url, cwd, {"toolsets": ["search"], **(config or {})})
    ui = RecordingUI()
    done = await conv.run_turn("search", ui)
    assert done.stop_reason != "error", done.error
    (result,) = [c.result for c in ui.done_calls()]
    assert {"role": "tool", "tool_call_id": "s1", "content": result.text} in conv.history
    return result


async def grep(server, cwd: Path, config: dict | None = None, **args):
    return await call(server, cwd, "grep_search", args, config)


async def glob(server, cwd: Path, config: dict | None = None, **args):
    return await call(server, cwd, "glob_search", args, config)


def tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Write `files` (path relative to `root` → text or bytes) under `root`; returns `root`."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


def fake_ripgrep(folder: Path, body: str) -> Path:
    """A program standing in for ripgrep: it answers `--version` as ripgrep does, then runs the
    shell `body` with the arguments it was given (for what real ripgrep cannot be made to do on
    purpose: hang, fail, warn)."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "rg"
    program.write_text('#!/bin/sh\nif [ "$1" = --version ]; then echo "ripgrep 14.1.0"; exit 0; fi\n' + body + "\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return program


def lines(text: str) -> list[str]:
    return text.split("\n")


def environment_without_mm() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MM_")}
