"""Helpers for engine tests: a recording front end and a conversation wired to a scripted server."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mm.events import ToolCallDone, TurnDone

# The cases and real inputs the tests use, kept in the repository (tests/cases/README.md):
# a lone clone runs the whole suite.
TESTS = Path(__file__).resolve().parent
CASES_DIR = TESTS / "cases"
DATA = TESTS / "data"


def load_cases(area: str) -> list[dict]:
    """Every case of `tests/cases/<area>/`, sorted by file name."""
    return [json.loads(p.read_text()) for p in sorted((CASES_DIR / area).glob("*.json"))]


class RecordingUI:
    """A front end that keeps every event and answers permission requests from a list."""

    def __init__(self, answers: list[str] | None = None):
        self.events: list[Any] = []
        self.answers = list(answers or [])
        self.asked: list[tuple[str, dict]] = []
        self.previews: list[str] = []

    def emit(self, event: Any) -> None:
        self.events.append(event)

    async def request_permission(self, name: str, arguments: dict, preview: str) -> str:
        self.asked.append((name, arguments))
        self.previews.append(preview)
        return self.answers.pop(0) if self.answers else "reject_once"

    def done_calls(self) -> list[ToolCallDone]:
        return [e for e in self.events if isinstance(e, ToolCallDone)]

    def turn_done(self) -> TurnDone:
        return [e for e in self.events if isinstance(e, TurnDone)][-1]

    def text(self) -> str:
        from mm.events import TextChunk

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


def fill_origin(value: Any, origin: str) -> Any:
    """`value` with every `{origin}` placeholder replaced (strings, and lists of them)."""
    if isinstance(value, list):
        return [fill_origin(v, origin) for v in value]
    return value.replace("{origin}", origin) if isinstance(value, str) else value


def check_text_expectations(text: str, expect: dict) -> None:
    """The text checks of cases/README.md §Conventions: starts_with, contains, not_contains,
    regex, in_order (in that order of appearance) and ends_with_single_newline."""
    import re

    if "starts_with" in expect:
        assert text.startswith(expect["starts_with"]), text[:300]
    for part in expect.get("contains", []):
        assert part in text, f"missing {part!r} in:\n{text}"
    for part in expect.get("not_contains", []):
        assert part not in text, f"unexpected {part!r} in:\n{text}"
    for pattern in expect.get("regex", []):
        assert re.search(pattern, text), f"no match for {pattern!r} in:\n{text}"
    at = 0
    for part in expect.get("in_order", []):
        found = text.find(part, at)
        assert found >= 0, f"{part!r} missing or out of order in:\n{text}"
        at = found + len(part)
    if expect.get("ends_with_single_newline"):
        assert text.endswith("\n") and not text.endswith("\n\n")


def read_until(fd: int, needle: bytes, timeout: float = 30) -> bytes:
    """Read a terminal's output (`fd`) until `needle` shows; returns all that was read."""
    import select
    import time

    seen = b""
    deadline = time.monotonic() + timeout
    while needle not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            seen += os.read(fd, 65536)
    if needle not in seen:
        raise RuntimeError(f"{needle!r} never came: {seen[-500:]!r}")
    return seen


def pids_marked(mark: str) -> list[int]:
    """Pids of live processes (zombies left out) carrying `mark` in their command line or as the
    value of a variable of their environment (`NAME=<mark>`), this one excluded. Finds the jobs a
    command left however they detached, by a mark the test put in the command."""
    needle, value = mark.encode(), b"=" + mark.encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    continue
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{name}/environ", "rb") as f:
                environ = f.read().split(b"\0")
        except (OSError, IndexError):
            continue
        if needle in cmdline or any(entry.endswith(value) for entry in environ):
            found.append(int(name))
    return found


def kill_marked(mark: str) -> None:
    """SIGKILL every process `pids_marked(mark)` finds, by pid (a test's clean-up)."""
    import signal

    for pid in pids_marked(mark):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def marked_left(mark: str, timeout: float = 10.0) -> list[int]:
    """The processes still carrying `mark` once they had up to `timeout` seconds to go (returns
    as soon as none is left: the timeout is for a hang only)."""
    import time

    deadline = time.monotonic() + timeout
    while (left := pids_marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left
