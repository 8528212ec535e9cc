"""Helpers for engine tests: a recording front end and a conversation wired to a scripted server."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mm.engine.events import ToolCallDone, TurnDone

# The specification folder (references, cases): $MM_SHARED, else `shared/` beside the checkout,
# where this workplace lays it for every developer and for CI. conftest.py stops the run when absent.
SHARED = Path(os.environ.get("MM_SHARED") or Path(__file__).resolve().parents[2] / "shared")


def load_cases(area: str) -> list[dict]:
    """Every case of `shared/cases/<area>/`, sorted by file name."""
    return [json.loads(p.read_text()) for p in sorted((SHARED / "cases" / area).glob("*.json"))]


class RecordingUI:
    """A front end that keeps every event and answers permission requests from a list."""

    def __init__(self, answers: list[str] | None = None):
        self.events: list[Any] = []
        self.answers = list(answers or [])
        self.asked: list[tuple[str, dict]] = []

    def emit(self, event: Any) -> None:
        self.events.append(event)

    async def request_permission(self, name: str, arguments: dict, preview: str) -> str:
        self.asked.append((name, arguments))
        return self.answers.pop(0) if self.answers else "reject_once"

    def done_calls(self) -> list[ToolCallDone]:
        return [e for e in self.events if isinstance(e, ToolCallDone)]

    def turn_done(self) -> TurnDone:
        return [e for e in self.events if isinstance(e, TurnDone)][-1]

    def text(self) -> str:
        from mm.engine.events import TextChunk

        return "".join(e.text for e in self.events if isinstance(e, TextChunk))


def make_conversation(base_url: str, cwd: Path, config: dict | None = None):
    """A real Conversation for the agent-file settings `config`, talking to `base_url`."""
    from mm.run import build_conversation, make_client

    from mm.config.load import agent_config_adapter
    cfg = agent_config_adapter().validate_python(config or {})
    return build_conversation(cfg, make_client(cfg, base_url, "m", "openai"), cwd)


def write_files(cwd: Path, files: dict[str, str]) -> None:
    for rel, content in files.items():
        path = cwd / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode())


def pids_matching(pattern: str) -> list[int]:
    """Pids of live processes whose command line matches `pattern` (as `pgrep -f`), this one excluded."""
    import subprocess

    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return [int(p) for p in found.stdout.split() if int(p) != os.getpid()]


async def assert_none_left(pattern: str) -> None:
    """One second later no process matches `pattern`; kill any that does, by pid, and fail."""
    import asyncio
    import signal

    await asyncio.sleep(1)
    left = pids_matching(pattern)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"still running: {pattern}"
