"""Helpers for the lsp tool's tests: language server entries (jedi-language-server, pyright, the
fake server of tests/lsp_fake_server.py), a turn of lsp calls through the real engine, and the
processes of a server."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from harness import RecordingUI, make_conversation

FAKE = Path(__file__).resolve().parent / "lsp_fake_server.py"
BIN = Path(sys.executable).parent


def program(name: str) -> str | None:
    """Where the program `name` is: on the PATH, or beside this Python (the test environment's bin)."""
    found = shutil.which(name) or shutil.which(name, path=str(BIN))
    return found


def jedi_entry() -> dict[str, Any]:
    return {"name": "jedi", "command": program("jedi-language-server"), "extensions": [".py"]}


def pyright_entry() -> dict[str, Any]:
    return {"name": "pyright", "command": program("pyright-langserver"), "args": ["--stdio"], "extensions": [".py"]}


def fake_entry(tmp_path: Path, script: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
    """The fake server run with `script` (its log in tmp_path/lsp-log.jsonl unless said)."""
    script = {"log": str(tmp_path / "lsp-log.jsonl"), **script}
    path = tmp_path / "fake-script.json"
    path.write_text(json.dumps(script))
    return {"name": "fake", "command": sys.executable, "args": [str(FAKE), str(path)], "extensions": [".py"],
            "timeout": timeout}


def shop_project(root: Path, talk: str, main: str) -> None:
    """The small multi-file project of the end-to-end tests: shop/talk.py holding `talk`, and
    main.py holding `main`, which imports from it."""
    (root / "shop").mkdir()
    (root / "shop" / "__init__.py").write_text("")
    (root / "shop" / "talk.py").write_text(talk)
    (root / "main.py").write_text(main)


def logged(tmp_path: Path) -> list[dict[str, Any]]:
    """The messages the fake server received, in order."""
    log = tmp_path / "lsp-log.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def config(*entries: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"lsp": {"servers": list(entries)}, **more}


async def lsp_turn(srv: Any, conv: Any, calls: list[dict[str, Any]], ui: Any = None) -> list[Any]:
    """One turn in which the scripted model makes each lsp call of `calls` (one a request), then
    answers; returns the ToolCallDone events."""
    for n, arguments in enumerate(calls):
        srv.add_tool_calls([{"id": f"call_{len(srv.requests)}_{n}", "name": "lsp", "arguments": arguments}])
    srv.add_reply("done")
    ui = ui or RecordingUI()
    await conv.run_turn("use lsp", ui)
    return ui.done_calls()


def texts(done: list[Any]) -> list[str]:
    return [d.result.text for d in done]


def conversation(srv: Any, cwd: Path, cfg: dict[str, Any]) -> Any:
    return make_conversation(srv.base_url, cwd, cfg)


def server_pids(root: Path, needle: str) -> list[int]:
    """Live processes (zombies left out) running in `root` whose command line holds `needle`."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    continue
            if os.readlink(f"/proc/{name}/cwd") != str(root):
                continue
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if needle.encode() in f.read():
                    found.append(int(name))
        except (OSError, IndexError):
            continue
    return found
