"""Running the search program for grep_search — ripgrep, or mm's pure-Python one in its place —
as a process that the turn's cancellation and the timeout kill and that never outlives mm (it is
started by mm's command supervisor, mm.tools.supervised; docs/tools-search.md).

Two runs make a content page: `--count` over the whole search (ripgrep's parallel walk) tells
every file's number of matching lines, sorted here by path; `--json` then reads only the files the
page's matches lie in, in that order, and is stopped once the page is complete. files_with_matches
and count modes need the first run only. Each run's stderr goes to a file of its own (a shell
`exec … 2>file`), so that no message can land inside a result line.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable, Mapping

from mm.tools.search.query import Counted, Query, Row, RowSink, SearchFailed, Unavailable

RG_VARIABLE = "MM_RG"  # the ripgrep program to run (docs/tools-search.md §Which ripgrep)
WRAPPER = 'e=$1; shift; exec "$@" 2>"$e"'  # run the program, its stderr into the file $1
FAILED = "ripgrep failed"  # stderr was empty
STDERR_LIMIT = 64 * 1024  # bytes of a run's stderr read back
BATCH = 200  # files named on one command line of a content run
_answers_as_ripgrep: dict[str, bool] = {}  # program → whether `--version` said ripgrep (per process)


def find_ripgrep(env: Mapping[str, str]) -> str | None:
    """The ripgrep program to run: MM_RG when set (None when it names no executable file, so that a
    path pointing nowhere turns ripgrep off); else the `rg` of the `ripgrep` wheel installed with
    mm; else `rg` on the PATH of `env`; else None."""
    chosen = env.get(RG_VARIABLE)
    if chosen:
        return chosen if _executable(chosen) else None
    for look in (_beside_python, _from_wheel, lambda: shutil.which("rg", path=env.get("PATH"))):
        found = look()
        if found and _executable(found):
            return found
    return None


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _beside_python() -> str | None:
    """`rg` in this interpreter's scripts folder (where pip put the wheel's program)."""
    import sysconfig

    scripts = sysconfig.get_path("scripts")
    return os.path.join(scripts, "rg") if scripts else None


def _from_wheel() -> str | None:
    """`rg` as the `ripgrep` distribution's record names it (a --user or --target install)."""
    from importlib import metadata

    try:
        files = metadata.distribution("ripgrep").files or []
    except metadata.PackageNotFoundError:
        return None
    found = next((f for f in files if f.name == "rg"), None)
    return str(Path(found.locate()).resolve()) if found is not None else None


class Searcher:
    """A search program and how to run it; `ripgrep(program)` or `python_search()`."""

    def __init__(self, argv: list[str], name: str):
        self.argv, self.name = argv, name

    async def usable(self, cwd: Path) -> bool:
        """Whether the program answers `--version` as ripgrep (asked once per mm process)."""
        if self.name != "ripgrep":
            return True
        program = self.argv[0]
        if program not in _answers_as_ripgrep:
            reader = _Collect()
            try:
                code, _, _ = await run(self.argv[:1] + ["--version"], cwd, reader.feed)
            except OSError:
                code = None
            _answers_as_ripgrep[program] = code == 0 and reader.data.startswith(b"ripgrep ")
        return _answers_as_ripgrep[program]

    async def count(self, query: Query) -> Counted:
        """Every file with matches and its number of matching lines. Raises SearchFailed (a bad
        pattern: the program's message), Unavailable (the program cannot be run)."""
        argv = [*self.argv, "--count", "--null", "--with-filename"]
        argv += ["-i"] if query.case_insensitive else []
        argv += ["--glob", query.file_pattern] if query.file_pattern else []
        argv += ["-e", query.pattern, "--", query.root]
        reader = _Counts()
        code, stderr, _ = await run(argv, Path(query.cwd), reader.feed, streamed=False)
        warnings = _lines(stderr) if code is not None and code >= 2 else []  # ripgrep's own rule
        if not reader.files and code is not None and code >= 2:
            if code in (126, 127) and self.name == "ripgrep":
                raise Unavailable(stderr)
            raise SearchFailed(stderr.strip() or FAILED)
        return Counted(reader.files, warnings)

    async def rows(self, query: Query, files: list[str], sink: RowSink) -> list[str]:
        """Feed `sink` the match and context rows of `files` (absolute), in their order, until it
        says enough (the run is then stopped); returns the warnings."""
        warnings: list[str] = []
        for start in range(0, len(files), BATCH):
            argv = [*self.argv, "--json", "-j1"]
            argv += ["-i"] if query.case_insensitive else []
            argv += ["-B", str(query.before)] if query.before else []
            argv += ["-A", str(query.after)] if query.after else []
            argv += ["-e", query.pattern, "--", *files[start:start + BATCH]]
            reader = _Rows(sink)
            code, stderr, stopped = await run(argv, Path(query.cwd), reader.feed)
            warnings += _lines(stderr) if code is not None and code >= 2 else []
            if stopped or reader.enough:
                break
        return warnings


def ripgrep(program: str) -> Searcher:
    """ripgrep, without the user's ripgrep configuration file (its flags would change what mm reads)."""
    return Searcher([program, "--no-config", "--color=never"], "ripgrep")


def python_search() -> Searcher:
    """mm's pure-Python search (mm.tools.search.python_grep), run by this interpreter; `-P`: a module
    of the searched project never shadows mm's."""
    return Searcher([sys.executable, "-P", "-m", "mm.tools.search.python_grep"], "python")


async def run(argv: list[str], cwd: Path, consume: Callable[[bytes], bool],
              streamed: bool = True) -> tuple[int | None, str, bool]:
    """Run `argv` in `cwd` through mm's command supervisor and hand its output to `consume` until
    `consume` returns False. `streamed`: as it comes, through a pipe, the program being killed when
    `consume` has had enough; else from a temporary file once the program has ended (no wake-up per
    line it writes: the cheaper way when all of the output is wanted). Returns its exit code (None
    when killed), its stderr and whether `consume` stopped it. Cancelling the awaiting task kills
    it. Raises OSError when it cannot be started (mm.tools.supervised)."""
    handle, err_path = tempfile.mkstemp(prefix="mm-search-", suffix=".err")
    os.close(handle)
    try:
        if streamed:
            code, stopped = await _streamed(argv, cwd, consume, err_path)
        else:
            code, stopped = await _into_file(argv, cwd, consume, err_path)
    finally:
        stderr = _read_and_remove(err_path)
    return code, stderr, stopped


def _start(argv: list[str], cwd: Path, output: int, err_path: str):
    """The supervisor's Command running `argv`, stdout into `output`, stderr into the file `err_path`."""
    from mm.tools.process import command_environment
    from mm.tools.supervised import SUPERVISOR

    return SUPERVISOR.start(["/bin/sh", "-c", WRAPPER, "mm-search", err_path, *argv], cwd, command_environment(),
                            output)


async def _into_file(argv: list[str], cwd: Path, consume: Callable[[bytes], bool], err_path: str) -> tuple[int, bool]:
    with tempfile.TemporaryFile() as out:
        command = _start(argv, cwd, out.fileno(), err_path)
        try:
            code = await asyncio.shield(command.exited)  # a cancelled wait must leave it to be killed
        finally:
            if not command.exited.done():
                command.kill()
            command.release()
        out.seek(0)
        while chunk := out.read(1 << 20):
            if not consume(chunk):
                return code, True
    return code, False


async def _streamed(argv: list[str], cwd: Path, consume: Callable[[bytes], bool],
                    err_path: str) -> tuple[int | None, bool]:
    read_end, write_end = os.pipe()
    try:
        command = _start(argv, cwd, write_end, err_path)
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    stopped, transport = False, None
    release = asyncio.ensure_future(_release_at_exit(command))
    try:
        loop = asyncio.get_running_loop()
        stream = asyncio.StreamReader()
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream),
                                                    os.fdopen(read_end, "rb", buffering=0))
        while chunk := await stream.read(1 << 16):
            if not consume(chunk):
                stopped = True
                break
        code = None if stopped else await asyncio.shield(command.exited)
    finally:
        release.cancel()
        if not command.exited.done():
            command.kill()
        command.release()
        if transport is not None:
            transport.close()
        else:
            os.close(read_end)
    return code, stopped


async def _release_at_exit(command) -> None:
    """Once the program has exited, let the supervisor close its end of the pipe: the reader sees the end."""
    try:
        await asyncio.shield(command.exited)
    except Exception:  # it did not start, or the supervisor went away: release all the same
        pass
    command.release()


def _read_and_remove(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(STDERR_LIMIT).decode("utf-8", "replace")
    except OSError:
        return ""
    finally:
        _remove(path)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


class _Collect:
    """Keeps the output (a short one: `--version`)."""

    def __init__(self) -> None:
        self.data = b""

    def feed(self, chunk: bytes) -> bool:
        self.data += chunk
        return len(self.data) < STDERR_LIMIT


class _Counts:
    """Reads `--count --null` output: `path NUL count LF` per file (a path may hold a line feed)."""

    def __init__(self) -> None:
        self.files: list[tuple[str, int]] = []
        self.buffer = b""

    def feed(self, chunk: bytes) -> bool:
        data, at = self.buffer + chunk, 0
        while (nul := data.find(b"\0", at)) >= 0 and (end := data.find(b"\n", nul)) >= 0:
            count = data[nul + 1:end]
            if count.isdigit():
                self.files.append((os.fsdecode(data[at:nul]), int(count)))
            at = end + 1
        self.buffer = data[at:]
        return True


class _Rows:
    """Reads `--json` output, handing each match and context line to `sink`."""

    def __init__(self, sink: RowSink):
        self.sink, self.enough = sink, False
        self.buffer, self.scanned = bytearray(), 0  # what came, and how far no line end was found in it

    def feed(self, chunk: bytes) -> bool:
        self.buffer += chunk
        at = 0
        while (end := self.buffer.find(b"\n", max(at, self.scanned))) >= 0:
            row = _row(bytes(self.buffer[at:end]))
            at = end + 1
            if row is not None and not self.sink(row):
                self.enough = True
                return False
        del self.buffer[:at]
        self.scanned = len(self.buffer)
        return True


def _row(line: bytes) -> Row | None:
    """The Row of one `--json` message of type match or context; None for any other."""
    try:
        message = json.loads(line)
        if message.get("type") not in ("match", "context"):
            return None
        data = message["data"]
        text = _text(data["lines"], "replace").rstrip("\n").removesuffix("\r")
        return Row(_text(data["path"]), int(data["line_number"]), text, message["type"] == "match")
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _text(value: dict, errors: str = "surrogateescape") -> str:
    """ripgrep's {"text"} or {"bytes"} (base64, for what is not UTF-8): a path keeps its bytes
    (`errors` surrogateescape), a line reads them as U+FFFD (`errors` replace)."""
    if "text" in value:
        return value["text"]
    return base64.b64decode(value["bytes"]).decode("utf-8", errors)
