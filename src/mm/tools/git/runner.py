"""Running git for the git tools: through mm's command supervisor like every command (a session
of its own, killed on timeout or cancellation, never outliving mm), stdout and stderr apart, in
the conversation's working directory (docs/tools-git.md)."""

from __future__ import annotations

import asyncio
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

GIT_TIMEOUT = 60.0  # seconds (notes §2.9: "Execution has a 60 s timeout")
QUERY_TIMEOUT = 10.0  # seconds, for the questions the tools ask git themselves
STDERR_BYTES = 1024 * 1024
# `sh -c` runs git with its stderr into a file of its own: the supervisor merges what the leader writes.
APART = 'e=$1; shift; exec git "$@" 2>"$e"'


@dataclass
class GitRun:
    """How one git command ended: its stdout and stderr (decoded, invalid UTF-8 replaced), its
    exit code (None when it did not exit by itself), and whether it timed out or was cancelled."""

    stdout: str
    stderr: str
    code: int | None
    timed_out: bool = False
    cancelled: bool = False

    @property
    def ok(self) -> bool:
        return self.code == 0


def git_found() -> bool:
    """Whether a `git` program is on the PATH commands get."""
    return shutil.which("git") is not None


async def run_git(args: list[str], cwd: Path, cancelled: asyncio.Event, timeout: float = GIT_TIMEOUT) -> GitRun:
    """Run `git <args>` in `cwd` (non-interactive: mm.tools.process.NON_INTERACTIVE) until it
    exits, `timeout` seconds pass or `cancelled` is set. Raises OSError when it cannot be started."""
    from mm.tools.process import run_process

    with tempfile.TemporaryDirectory(prefix="mm-git-") as folder:
        errors = Path(folder) / "stderr"
        outcome = await run_process(["sh", "-c", APART, "git", str(errors), *args], cwd=cwd, timeout=timeout,
                                    cancelled=cancelled)
        try:
            with open(errors, "rb") as f:
                stderr = f.read(STDERR_BYTES).decode("utf-8", errors="replace")
        except OSError:
            stderr = ""
    code = outcome.returncode if not (outcome.timed_out or outcome.cancelled) else None
    return GitRun(outcome.output, stderr, code, outcome.timed_out, outcome.cancelled)


async def query(args: list[str], cwd: Path, cancelled: asyncio.Event) -> str | None:
    """The stdout of a read-only `git <args>` the tools ask themselves, or None when it failed."""
    try:
        done = await run_git(args, cwd, cancelled, QUERY_TIMEOUT)
    except OSError:
        return None
    return done.stdout if done.ok else None


@dataclass
class Status:
    """What `git status --porcelain=v2 --branch` says: the branch (None when detached), its upstream,
    how far ahead and behind it is, and the changed files as `git status --short` shows them."""

    branch: str | None
    upstream: str | None
    ahead: int
    behind: int
    changes: list[str]
    initial: bool = False  # no commit yet


def parse_status(text: str) -> Status:
    """Read porcelain v2 output (headers `# branch.*`, then one line per changed file)."""
    branch = upstream = None
    ahead = behind = 0
    initial = False
    changes = []
    for line in text.splitlines():
        if line.startswith("# branch.head "):
            head = line[len("# branch.head "):]
            branch = None if head == "(detached)" else head
        elif line.startswith("# branch.oid "):
            initial = line.endswith("(initial)")
        elif line.startswith("# branch.upstream "):
            upstream = line[len("# branch.upstream "):]
        elif line.startswith("# branch.ab "):
            found = re.fullmatch(r"# branch\.ab \+(\d+) -(\d+)", line)
            if found:
                ahead, behind = int(found.group(1)), int(found.group(2))
        elif line[:2] in ("1 ", "2 ", "u "):
            fields = line.split(" ", 8 if line[0] == "1" else 9 if line[0] == "2" else 10)
            path = fields[-1].split("\t")[0]
            changes.append(f"{fields[1].replace('.', ' ')} {path}")
        elif line[:2] in ("? ", "! "):
            changes.append(f"{line[0] * 2} {line[2:]}")
    return Status(branch, upstream, ahead, behind, changes, initial)


async def read_status(cwd: Path, cancelled: asyncio.Event) -> Status | None:
    """The repository's status, or None when `cwd` is not in a git repository (or git failed)."""
    text = await query(["status", "--porcelain=v2", "--branch"], cwd, cancelled)
    return None if text is None else parse_status(text)


async def head_is_pushed(cwd: Path, cancelled: asyncio.Event) -> bool:
    """Whether the last commit is on a remote already: some remote-tracking branch contains it
    (whatever the remote's name). When git cannot say, it is taken as pushed (notes §2.9)."""
    text = await query(["branch", "--remotes", "--contains", "HEAD"], cwd, cancelled)
    return True if text is None else bool(text.strip())

