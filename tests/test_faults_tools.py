"""The fault suite, tools (issue 10, "What must hold"): every declared tool's arguments fuzzed through
the engine's real call path (mm.engine.toolrun.run_call, the tools themselves, real files, FIFOs
and device nodes made in the test's folder, a loopback web server).

Each call must end (no hang), raise nothing, stay within maxOutput, fail with a first line that
says what is wrong (never the generic `[error: <tool> failed: <Type>: …]` of a tool bug), and
touch no file outside the test's folder. Paths are made only inside the test's folder (relative,
`~` with HOME there, or absolute under it); URLs only name 127.0.0.1 or names refused before any
lookup; commands only run `printf`. Hypothesis runs a fixed number of examples, derandomized.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shlex
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mm.config.load import agent_config_adapter
from mm.engine.loops import LoopDetector
from mm.engine.toolrun import Permissions, run_call
from mm.llm.types import ToolCall
from mm.tools.base import Settings, ToolContext
from mm.tools.registry import build_registry

MAX_OUTPUT = 2000
FS_READ_TOKENS = 300  # fs_read's cap here (files.docMaxTokens): it replaces maxOutput for that tool
FS_READ_CHARS = FS_READ_TOKENS * 16 + 2000  # what its JSON may hold at most: escapes, the other fields
CALL_TIMEOUT = 60.0  # seconds: a hang, not a speed limit
# A fixed, short run: 25 derandomized examples per tool (FAULT_EXAMPLES=500 for a longer hunt).
FAULTS = settings(max_examples=int(os.environ.get("FAULT_EXAMPLES", "25")), deadline=None, derandomize=True,
                  database=None, suppress_health_check=list(HealthCheck))
GENERIC_FAILURE = "[error: {tool} failed:"
# The nodes of the test's folder, by name in the working directory.
NODES = ("fifo", "null-device", "zero-device", "dir", "file.txt", "link-fifo", "link-zero", "link-dir",
         "link-dangling", "link-loop")


class FuzzUI:
    """A front end that answers every question (ask_user) and permission, and keeps nothing."""

    def emit(self, event) -> None:
        pass

    async def request_permission(self, name, arguments, preview):
        return "allow_once"

    async def ask_user(self, questions):
        return ["an answer"] * len(questions)


class World:
    """The test's folder: a working directory full of awkward nodes, the tools, a loopback site."""

    def __init__(self, root: Path, web):
        self.root = root
        self.cwd = root / "w" / "cwd"
        self.cwd.mkdir(parents=True)
        (root / "home").mkdir()
        _make_nodes(self.cwd)
        skills = self.cwd / ".mm" / "skills"
        skills.mkdir(parents=True)
        (skills / "demo.md").write_text("---\nname: demo\ndescription: A demo skill.\n---\nSay hi.\n")
        (skills / "fifo.md").symlink_to(self.cwd / "fifo")
        web.page("/page.html", "<h1>Title</h1><p>Some text.</p>")
        web.page("/search", json.dumps({"web": {"results": [{"title": "t", "url": "https://example.org/",
                                                              "description": "d"}]}}),
                 headers={"Content-Type": "application/json"})
        self.origin = web.origin
        config = agent_config_adapter().validate_python({
            "fetchContentTool": True, "saveAnswerTool": True, "maxOutput": MAX_OUTPUT, "bashTimeout": 5,
            "webCrawler": {"enabled": True, "allowedHosts": ["127.0.0.1", "localhost"]},
            "webSearch": {"enabled": True, "apiKey": "k", "endpoint": web.origin + "/search"},
            "sessions": {"enabled": True, "autoSearchMemory": True},
            "toolsets": ["core", "files", "vision"], "files": {"docMaxTokens": FS_READ_TOKENS},
            "visionModel": "m",  # describe_image asks the loopback site, which sees no image
            "mmConfigs": {"helper": {"command": [str(root / "no-such-agent")]}},
            "tools": [{"name": "echo_args", "command": ["printf", "%s|", "{{text}}", "{{count}}"],
                       "parameters": {"text": {"type": "string"},
                                      "count": {"type": "integer", "optional": True}}}],
        })
        self.registry = build_registry(config, env={}, cwd=self.cwd)
        from mm.llm.client import ChatClient  # unload_model asks the loopback site, a server it cannot unload from

        self.model_client = ChatClient(web.origin + "/v1", "m", provider="llamacpp")

    def context(self) -> ToolContext:
        settings_ = Settings(max_output=MAX_OUTPUT, bash_timeout=5, watchdog_timeout=10)
        return ToolContext(cwd=self.cwd, settings=settings_, interaction=FuzzUI(),
                           message_text="The answer to save.", previous_answer="An earlier answer.",
                           model_client=self.model_client)

    def release_fifos(self) -> None:
        """Open every FIFO of the folder at both ends without blocking: a reader or writer stuck
        in an open (a hang this suite reports) is let go, so the process can end."""
        for path in self.root.rglob("*"):
            if path.is_fifo():
                for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_WRONLY | os.O_NONBLOCK):
                    try:
                        os.close(os.open(path, flags))
                    except OSError:
                        pass


def _make_nodes(cwd: Path) -> None:
    """FIFOs, character devices (null and zero: never a block device), a directory, a file and
    symlinks to each, all inside `cwd`."""
    os.mkfifo(cwd / "fifo")
    os.mknod(cwd / "null-device", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    os.mknod(cwd / "zero-device", stat.S_IFCHR | 0o666, os.makedev(1, 5))
    (cwd / "dir").mkdir()
    (cwd / "dir" / "inner.txt").write_text("inside\n")
    (cwd / "file.txt").write_text("line one\nline two\n")
    for link, target in (("link-fifo", "fifo"), ("link-zero", "zero-device"), ("link-dir", "dir"),
                         ("link-dangling", "missing"), ("link-loop", "link-loop")):
        (cwd / link).symlink_to(target)
    # images for describe_image: a real one, and ones that lead to a FIFO and a device
    (cwd / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    (cwd / "pic-fifo.png").symlink_to("fifo")
    (cwd / "pic-zero.jpg").symlink_to("zero-device")


def snapshot(folder: Path, skip: Path) -> dict[str, tuple]:
    """Every entry under `folder` but `skip`: kind, size and modification time, links unfollowed."""
    seen: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        here = Path(dirpath)
        if here == skip or skip in here.parents:
            dirnames[:] = []
            continue
        dirnames[:] = [d for d in dirnames if here / d != skip]
        for name in dirnames + filenames:
            st_ = os.lstat(here / name)
            seen[str(here / name)] = (stat.S_IFMT(st_.st_mode), st_.st_size, st_.st_mtime_ns)
    return seen


@pytest.fixture
def world(tmp_path, web, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    outside = tmp_path.parent
    before = snapshot(outside, tmp_path)
    made = World(tmp_path, web)
    yield made
    made.release_fifos()
    assert snapshot(outside, tmp_path) == before, "a file outside the test's folder changed"


# -- the values ----------------------------------------------------------------------------------------

def _huge(n: int) -> str:
    return ("0123456789abcdef" * (n // 16 + 1))[:n]


NAME_TEXT = st.text(st.characters(blacklist_characters="/", blacklist_categories=("Cs",)), max_size=20)
NAMES = st.one_of(st.sampled_from(NODES + ("new.txt", "dir/new.txt", ".", "..", "", " ", "a" * 300, "x\0y",
                                           "caf\udce9.txt", "bad\ud800.txt", "dir/", "file.txt/x")),
                  NAME_TEXT.map(lambda s: "_" + s[1:] if s.startswith("~") else s))


@st.composite
def paths(draw) -> str:
    """A path that, whatever it names, stays inside the test's folder."""
    prefix = draw(st.sampled_from(["", "./", "../", "../../", "dir/", "link-dir/", "~/", "~nosuchuser/", "ABS"]))
    name = draw(NAMES)
    if prefix == "../../" and name == "..":  # the working directory is two levels down: no further up
        name = "up"
    if prefix == "ABS":
        return "{root}/w/cwd/" + name  # filled in with the test's folder by `fill`
    return prefix + name


def mostly(good: st.SearchStrategy, other: st.SearchStrategy, odds: int = 5) -> st.SearchStrategy:
    """`good` `odds` times in `odds + 1`, else `other`."""
    return st.integers(0, odds).flatmap(lambda i: other if i == 0 else good)


NOT_TEXT = st.one_of(st.none(), st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(),
                                                                                  max_size=3))
# Addresses that name 127.0.0.1 (the test's site) or that are refused before any name is looked up:
# never free text, a boolean or a number, which would become a host name to resolve.
URLS = st.one_of(
    st.sampled_from(["", " ", "http://", "ftp://127.0.0.1/", "javascript:alert(1)", "http://127.0.0.1:0/",
                     "http://127.0.0.1:99999/", "http://" + "a" * 64 + ".invalid/", "http://a..b/", "http://xn--a/",
                     "http://bad host/", "http://127.0.0.1\0/", "http://[::1/", "//127.0.0.1:1/x",
                     "{origin}/page.html", "{origin}/missing", "{origin}/" + "p" * 5000, "127.0.0.1:1/x"]),
    st.text(max_size=30).map(lambda s: "{origin}/" + s),
)
STRINGS = st.one_of(st.just(""), st.just("   "), st.text(max_size=40), st.just("nul\0byte"),
                    st.just("lone \ud800 surrogate"), st.just("line\u2028sep\u2029par\u0085nel"),
                    st.integers(1, 150_000).map(_huge))
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=10**30),
                    st.floats(allow_nan=True, allow_infinity=True), STRINGS)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                        st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                      max_leaves=8)
BY_TYPE = {  # mostly values of the declared type, sometimes anything
    "string": mostly(STRINGS, VALUES),
    "integer": mostly(st.one_of(st.integers(-5, 10**6), st.integers(), st.integers().map(str)), VALUES),
    "number": mostly(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers()), VALUES),
    "boolean": mostly(st.one_of(st.booleans(), st.sampled_from(["true", "False", "yes", ""])), VALUES),
    "array": mostly(st.lists(STRINGS, max_size=4), VALUES),
    "object": mostly(st.dictionaries(st.text(max_size=8), STRINGS, max_size=4), VALUES),
}


def commands() -> st.SearchStrategy:
    """Shell commands that only print (shlex-quoted payloads), or values that are no command."""
    payload = st.one_of(st.text(max_size=50), st.just("nul\0byte"), st.integers(1, 200_000).map(_huge))
    return mostly(st.one_of(payload.map(lambda p: "printf %s " + shlex.quote(p)),
                            st.sampled_from(["", "   ", "printf 'a\\0b'", "exit 3", "printf x; exit 200"])),
                  st.one_of(st.integers(), NOT_TEXT))


def edits() -> st.SearchStrategy:
    edit = st.fixed_dictionaries({"old": st.one_of(st.just("line one"), SCALARS), "new": SCALARS})
    return st.one_of(st.lists(edit, max_size=3), VALUES)


def questions() -> st.SearchStrategy:
    question = st.fixed_dictionaries({"question": STRINGS}, optional={
        "type": st.one_of(st.sampled_from(["text", "choice", "multi", "yesno"]), SCALARS),
        "options": st.one_of(st.lists(STRINGS, max_size=5), VALUES)})
    return st.one_of(st.lists(question, max_size=5), question, VALUES)


FIELD_VALUES = {
    "path": mostly(paths(), NOT_TEXT), "output": mostly(paths(), NOT_TEXT), "file_path": mostly(paths(), NOT_TEXT),
    "mode": st.one_of(st.sampled_from(["Line", "Search", "Directory", "CSV", "JSON", "JSONL", "PDF", "DOCX", "line",
                                       "Text"]), STRINGS),
    "pattern": st.one_of(st.sampled_from(["line", "one", "", ".*"]), STRINGS),
    "old_str": st.one_of(st.just("line one"), STRINGS), "old_string": st.one_of(st.just("line one"), STRINGS),
    "url": mostly(URLS, NOT_TEXT), "baseUrl": mostly(URLS, NOT_TEXT, 1), "command": commands(), "edits": edits(), "questions": questions(),
    "name": st.one_of(st.sampled_from(["demo", "fifo", "../demo", "nope", ""]), STRINGS),
    "agent": st.one_of(st.sampled_from(["helper", "nobody"]), STRINGS),
    "image_path": mostly(st.one_of(st.sampled_from(["pic.png", "pic-fifo.png", "pic-zero.jpg", "dir"]), paths()),
                         NOT_TEXT),
}


TOOL_FIELD_VALUES = {  # a name two tools use for different things
    ("fs_write", "command"): st.one_of(st.sampled_from(["create", "str_replace", "insert", "append", "Create",
                                                        "delete"]), STRINGS),
}


@st.composite
def arguments(draw, tool) -> dict | object:
    """Arguments for `tool`: each parameter given or not, hostile values, unknown keys; or no object."""
    if draw(st.integers(0, 15)) == 0:
        return draw(VALUES)
    args = {}
    for param in tool.params:
        if draw(st.integers(0, 1 if not param.required else 15)) > 0:
            values = TOOL_FIELD_VALUES.get((tool.name, param.name), FIELD_VALUES.get(param.name))
            args[param.name] = draw(values if values is not None else BY_TYPE.get(param.type, VALUES))
    if draw(st.integers(0, 11)) == 0:
        args[draw(st.text(max_size=10))] = draw(VALUES)
    return args


def fill(value, world: World):
    """`value` with the placeholders of the test's folder and site filled in."""
    if isinstance(value, str):
        return value.replace("{root}", str(world.root)).replace("{origin}", world.origin)
    if isinstance(value, list):
        return [fill(v, world) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, world) for k, v in value.items()}
    return value


# -- the checks ----------------------------------------------------------------------------------------

async def call_tool(world: World, name: str, args) -> tuple[str, bool]:
    """Run one call through the engine's path; returns the tool result's text and whether it failed."""
    raw = json.dumps(args, ensure_ascii=False, default=str) if not isinstance(args, str) else args
    call = ToolCall("call_fuzz", name, args if isinstance(args, dict) else None, raw,
                    None if isinstance(args, dict) else "they are not an object")
    outcome = await asyncio.wait_for(
        run_call(call, world.registry, world.context(), FuzzUI(), Permissions(), True, LoopDetector()),
        CALL_TIMEOUT)
    return outcome.result.text, outcome.result.failed


def check_result(name: str, args, text: str, failed: bool) -> None:
    where = f"{name}({str(args)[:300]!r})"
    assert isinstance(text, str), where
    limit = FS_READ_CHARS if name == "fs_read" else MAX_OUTPUT
    assert len(text) <= limit, f"{where}: {len(text)} characters, over maxOutput (fs_read: its cap)"
    assert not text.startswith(GENERIC_FAILURE.format(tool=name)), f"{where}: a Python exception: {text[:300]}"
    assert "Traceback (most recent call last)" not in text, where
    if failed:  # a message says what is wrong on its first line; a command's output ends with its exit line
        first, last = text.split("\n", 1)[0].strip(), text.rstrip("\n").rsplit("\n", 1)[-1]
        said = len(first) >= 10 or (last.startswith("[") and last.endswith("]"))
        assert said, f"{where}: no line says what is wrong: {text[:300]!r}"


TOOL_NAMES = ["bash", "read_skill", "read_file", "write_file", "edit_file", "fetch_content", "web_crawler",
              "web_search", "search_memory", "ask_user", "save_answer", "ask_agent", "unload_model", "echo_args", "fs_read", "fs_write",
              "file_edit", "describe_image"]


def test_every_tool_is_fuzzed(world):
    assert sorted(world.registry.names) == sorted(TOOL_NAMES)


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_hostile_arguments_never_escape(world, name):
    tool = world.registry.get(name)

    @FAULTS
    @given(args=arguments(tool))
    def run(args):
        args = fill(args, world)
        text, failed = asyncio.run(call_tool(world, name, args))
        check_result(name, args, text, failed)

    try:
        run()
    finally:
        world.release_fifos()


# -- the faults the trial found, one by one -------------------------------------------------------------

PATH_TOOLS = [("read_file", {}), ("write_file", {"content": "x"}), ("edit_file", {"edits": [{"old": "a", "new": "b"}]}),
              ("save_answer", {}), ("fs_read", {}), ("fs_write", {"command": "create", "file_text": "x"}),
              ("file_edit", {"old_string": "a", "new_string": "b"})]


@pytest.mark.parametrize("name, extra", PATH_TOOLS + [("fetch_content", {"url": "{origin}/page.html"})])
@pytest.mark.parametrize("path, words", [
    ("a\0b.txt", "contains a NUL byte"),
    ("n" * 300 + ".txt", "a name in it is 304 bytes long, more than the 255 bytes a file name may have"),
    ("d/" * 2100 + "x", "more than the 4095 bytes a path may have"),
    ("~nosuchuser/notes.txt", "it starts with ~nosuchuser, but that home directory is unknown"),
])
async def test_a_path_no_file_can_have_is_a_sentence_about_the_argument(world, name, extra, path, words):
    param = {"fetch_content": "output", "file_edit": "file_path"}.get(name, "path")
    args = fill({param: path, **extra}, world)
    text, failed = await call_tool(world, name, args)
    assert failed and text.startswith(f"[{name}: {param}: ") and words in text, text
    assert "Error" not in text and "Errno" not in text


async def test_lone_surrogates_are_repaired_before_any_tool_runs(world, web):
    text, failed = await call_tool(world, "write_file", {"path": "bad\ud800.txt", "content": "a\udc00b"})
    assert not failed and (world.cwd / "bad\ufffd.txt").read_text() == "a\ufffdb"
    text, failed = await call_tool(world, "web_search", {"query": "lone \ud800 surrogate"})
    assert not failed and text.startswith('Web results for "lone \ufffd surrogate":')
    assert "q=lone+%EF%BF%BD+surrogate" in web.seen[-1].path


async def test_a_home_directory_that_cannot_be_found_is_said(world, monkeypatch):
    monkeypatch.delenv("HOME")
    monkeypatch.setenv("USER", "nosuchuser")
    text, failed = await call_tool(world, "read_file", {"path": "~nosuchuser/x"})
    assert failed and text.startswith("[read_file: path: it starts with ~nosuchuser, but that home directory is "
                                      "unknown — give an absolute path"), text


async def test_a_nul_byte_in_a_command_is_a_sentence(world):
    text, failed = await call_tool(world, "bash", {"command": "printf 'a\0b'"})  # bash's own sentence (tools/process.py)
    assert failed and text == ("[error: bash cannot be started: the command holds a null character or an unpaired "
                               "surrogate, which no program can be given]"), text
    text, failed = await call_tool(world, "echo_args", {"text": "a\0b"})  # a declared tool: the same sentence
    assert failed and text == ("[error: printf cannot be started: the command holds a null character or an unpaired "
                               "surrogate, which no program can be given]"), text


@pytest.mark.parametrize("name", ["fetch_content", "web_crawler"])
@pytest.mark.parametrize("host", ["a" * 64 + ".example", "a..example", ".example"])
async def test_a_host_name_the_idna_codec_refuses_is_a_usage_error(world, name, host):
    text, failed = await call_tool(world, name, {"url": f"http://{host}/page"})
    assert failed and text.startswith(f"[{name}: error 3 (usage) — http://{host}/page is not a URL (its host name "
                                      "is not a valid internet name: each part between dots must have 1 to 63 "
                                      "characters)"), text


@pytest.mark.parametrize("name, args", [
    ("read_file", {"path": "file.txt", "start": _huge(120_000)}),
    ("read_file", {"path": "file.txt", _huge(120_000): 1}),
    ("write_file", {"path": "f.txt", "content": "x", "mode": [_huge(120_000)]}),
    ("echo_args", {"text": "x", "count": _huge(120_000)}),
    ("web_search", {"query": "q", "num_results": _huge(120_000)}),
])
async def test_an_invalid_call_quoting_a_huge_argument_stays_within_max_output(world, name, args):
    text, failed = await call_tool(world, name, args)
    assert failed and f"[{name}: invalid call, nothing was run — " in text and len(text) <= MAX_OUTPUT
    assert "characters in all)" in text and "Expected: " in text and "[... truncated" not in text


async def test_unreadable_arguments_of_120_kb_stay_within_max_output(world):
    call = ToolCall("c1", "read_file", None, '{"path": "' + _huge(120_000), "they end inside a string")
    outcome = await run_call(call, world.registry, world.context(), FuzzUI(), Permissions(), True, LoopDetector())
    assert outcome.result.failed and len(outcome.result.text) <= MAX_OUTPUT
    assert outcome.result.text.startswith("[read_file: invalid call, nothing was run — the arguments are not a JSON")


async def test_every_result_is_held_to_max_output_with_a_marker(world):
    (world.cwd / "big.txt").write_text("word " * 10_000)
    text, failed = await call_tool(world, "echo_args", {"text": _huge(100_000)})
    assert not failed and len(text) <= MAX_OUTPUT
    text, failed = await call_tool(world, "search_memory", {"query": "word"})
    assert len(text) <= MAX_OUTPUT


# -- the one place: Python's exceptions, as real operations raise them, in words -----------------------

def raised(operation) -> BaseException:
    try:
        operation()
    except Exception as err:  # noqa: BLE001 - the exception itself is the subject
        return err
    raise AssertionError("it did not raise")


@pytest.mark.parametrize("operation, args, text", [
    (lambda: os.stat("a\0b"), {"path": "a\0b"},
     "[t: path: contains a NUL byte (\\u0000), which no file name, command or address can hold — send it without "
     "that character]"),
    (lambda: os.stat("/" + "n" * 300), {"path": "/" + "n" * 300},
     "[t: path: a name in it is 300 bytes long, more than the 255 bytes a file name may have — use a shorter name]"),
    (lambda: Path("~nosuchuser/x").expanduser(), {"path": "~nosuchuser/x"},
     "[t: path: it starts with ~nosuchuser, but that home directory is unknown — give an absolute path, or one "
     "relative to the working directory]"),
    (lambda: ("a" * 70 + ".org").encode("idna"), {"url": "http://" + "a" * 70 + ".org/"},
     "[t: url: its host name is not a valid internet name: each part between dots must have 1 to 63 characters]"),
    (lambda: os.fsencode("\ud800"), {"query": "\ud800"},
     "[t: query: it holds text that is not valid Unicode (a lone surrogate) — send it as UTF-8 text]"),
    (lambda: os.stat("a\0b"), {"edits": [{"old": "x", "new": "a\0b"}]},
     "[t: edits: contains a NUL byte (\\u0000), which no file name, command or address can hold — send it "
     "without that character]"),
    (lambda: os.stat("a\0b"), {}, "[t: contains a NUL byte (\\u0000), which no file name, command or address "
                                  "can hold — send it without that character]"),
])
def test_failure_text_names_the_argument(operation, args, text):
    from mm.tools.failures import failure_text

    assert failure_text("t", args, raised(operation)) == text


def test_failure_text_for_other_os_errors_and_for_bugs(tmp_path):
    from mm.tools.failures import failure_text

    where = str(tmp_path)
    assert failure_text("t", {}, raised(lambda: open(where, "w"))) == f"[t: is a directory: {where}]"
    assert failure_text("t", {}, raised(lambda: 1 / 0)) == "[error: t failed: ZeroDivisionError: division by zero]"


def test_home_unset_is_said(monkeypatch):
    from mm.tools.failures import home_problem

    monkeypatch.delenv("HOME", raising=False)
    assert home_problem("~/notes.txt") == ("it starts with ~, but that home directory is unknown (HOME is not set) "
                                           "— give an absolute path, or one relative to the working directory")


def test_a_120_kb_argument_through_mm_p_gives_a_result_within_max_output(scripted_server, tmp_path):
    from test_oneshot_e2e import run_mm, tool_results

    (tmp_path / ".mm").mkdir()
    (tmp_path / ".mm" / "agent.yaml").write_text("maxOutput: 3000\n")
    (tmp_path / "notes.txt").write_text("a note\n")
    start = "".join(random.Random(7).choices("0123456789abcdef", k=120_000))  # no pattern: not a runaway call
    scripted_server.add_tool_calls([{"id": "c1", "name": "read_file", "arguments": {"path": "notes.txt", "start": start}},
                                    {"id": "c2", "name": "write_file", "arguments": {"path": "a\0b", "content": "x"}}])
    scripted_server.add_reply("done")
    proc = run_mm(["-p", "go", "--base-url", scripted_server.base_url, "--model", "m"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    results = tool_results(scripted_server.requests[1])
    assert len(results["c1"]) <= 3000 and results["c1"].startswith("[read_file: invalid call, nothing was run — start: ")
    assert "… (120002 characters in all) is not an integer" in results["c1"] and "Expected: path (string)" in results["c1"]
    assert results["c2"].startswith("[write_file: path: contains a NUL byte")
