"""grep_search's search program is a real process: the timeout and the turn's cancellation kill it,
it never outlives mm, and what it says on stderr or by its exit status is read as ripgrep's
(mnemo-tools.md §Search, Limits; notes/mnemoai.md §2.5; docs/tools-search.md). Where real
ripgrep cannot be made to hang, fail or warn on purpose, MM_RG names a stand-in the test writes."""

from __future__ import annotations

import asyncio
import random
import signal
import subprocess
import sys

from harness import RecordingUI, make_conversation, marked_left, pids_marked, pids_matching
from mm.events import ToolCallStarted
from search_support import environment_without_mm, fake_ripgrep, grep, tree
from test_line_mode_signals import until

TIMED_OUT = "Search timed out after {seconds} seconds. Try narrowing your search with file_pattern."


def hanging_ripgrep(tmp_path, mark):
    """A stand-in for ripgrep that says it started, then sleeps; the sleep's length is unique."""
    seconds = random.randint(100_000, 999_999)
    program = fake_ripgrep(tmp_path / mark, f"touch {tmp_path / 'started'}; sleep {seconds}")
    return program, f"sleep {seconds}"


async def test_the_timeout_kills_the_search(scripted_server, tmp_path, monkeypatch, mark):
    program, sleeper = hanging_ripgrep(tmp_path, mark)
    monkeypatch.setenv("MM_RG", str(program))
    result = await grep(scripted_server, tmp_path, {"search": {"timeout": 1}}, pattern="x")
    assert (result.text, result.failed) == (TIMED_OUT.format(seconds=1), True)
    assert (tmp_path / "started").exists()
    assert marked_left(mark) == [] and pids_matching(sleeper) == []


async def test_the_pure_python_search_is_killed_at_the_timeout(scripted_server, tmp_path, monkeypatch, mark):
    monkeypatch.setenv("MM_RG", str(tmp_path / "nowhere"))
    tree(tmp_path, {f"d{n}/f{k}.txt": "text\n" * 100 for n in range(20) for k in range(20)})
    result = await grep(scripted_server, tmp_path, {"search": {"timeout": 0.01}}, pattern=mark)
    assert (result.text, result.failed) == (TIMED_OUT.format(seconds=0.01), True)
    assert marked_left(mark) == []


async def test_cancelling_the_turn_kills_the_search(scripted_server, tmp_path, monkeypatch, mark):
    program, sleeper = hanging_ripgrep(tmp_path, mark)
    monkeypatch.setenv("MM_RG", str(program))
    scripted_server.add_tool_calls([{"id": "g1", "name": "grep_search", "arguments": {"pattern": "x"}}])
    conv = make_conversation(scripted_server.base_url, tmp_path, {"toolsets": ["search"]})
    ui = RecordingUI()
    turn = asyncio.create_task(conv.run_turn("search", ui))
    while not (tmp_path / "started").exists():
        await asyncio.sleep(0.05)
    assert any(isinstance(e, ToolCallStarted) for e in ui.events)
    conv.cancel()
    done = await asyncio.wait_for(turn, 60)
    assert done.stop_reason == "cancelled"
    (call,) = ui.done_calls()
    assert (call.result.text, call.result.failed) == ("[error: cancelled]", True)
    assert marked_left(mark) == [] and pids_matching(sleeper) == []


def test_the_search_dies_with_mm(scripted_server, tmp_path, mark):
    """mm SIGKILLed while a search runs: its command supervisor kills the search."""
    program, sleeper = hanging_ripgrep(tmp_path, mark)
    (tmp_path / "agent.yaml").write_text("toolsets: [core, search]\n")
    scripted_server.add_tool_calls([{"name": "grep_search", "arguments": {"pattern": "x"}}])
    env = environment_without_mm() | {"HOME": str(tmp_path), "JOB_MARK": mark, "MM_RG": str(program)}
    proc = subprocess.Popen([sys.executable, "-m", "mm", "-p", "search", "-c", "agent.yaml", "--base-url",
                             scripted_server.base_url, "--model", "m"], cwd=tmp_path, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert until(lambda: (tmp_path / "started").exists(), 60), proc.stderr
        assert len(pids_marked(mark)) >= 3  # mm, its supervisor, the search
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        assert marked_left(mark) == [] and pids_matching(sleeper) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


async def test_a_program_that_is_not_ripgrep_is_not_used(scripted_server, tmp_path, monkeypatch):
    """MM_RG naming a program that does not answer `--version` as ripgrep: the pure-Python search."""
    program = tmp_path / "bin" / "rg"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'grep (GNU grep) 3.11'; exit 0; fi\n"
                       f"touch {tmp_path / 'searched-by-it'}\n")
    program.chmod(0o755)
    tree(tmp_path / "work", {"a.txt": "needle\n"})
    monkeypatch.setenv("MM_RG", str(program))
    result = await grep(scripted_server, tmp_path / "work", pattern="needle")
    assert result.text == "a.txt"
    assert not (tmp_path / "searched-by-it").exists()  # asked its version only


async def test_a_ripgrep_that_cannot_run_hands_over_to_python(scripted_server, tmp_path, monkeypatch):
    monkeypatch.setenv("MM_RG", str(fake_ripgrep(tmp_path / "bin", "echo 'rg: cannot execute' >&2; exit 126")))
    tree(tmp_path / "work", {"a.txt": "needle\n", "b.txt": "none\n"})
    assert (await grep(scripted_server, tmp_path / "work", pattern="needle")).text == "a.txt"


async def test_ripgrep_s_warnings_come_after_the_results(scripted_server, tmp_path, monkeypatch):
    """Exit status 2 with results: what ripgrep said on stderr follows them (notes §2.5, `warnings`)."""
    work = tree(tmp_path / "work", {"a.txt": "needle\n"})
    body = ("for last; do :; done; printf '%s/a.txt' \"$last\"; printf '\\000'; printf '2\\n'; "
            "echo 'rg: ./locked: Permission denied (os error 13)' >&2; exit 2")
    monkeypatch.setenv("MM_RG", str(fake_ripgrep(tmp_path / "bin", body)))
    result = await grep(scripted_server, work, pattern="needle", output_mode="count")
    assert (result.text, result.failed) == (
        "a.txt:2\ntotal_matches: 2, files_with_matches: 1\n\nWarning: rg: ./locked: Permission denied (os error 13)",
        False)


async def test_ripgrep_failing_without_results(scripted_server, tmp_path, monkeypatch):
    monkeypatch.setenv("MM_RG", str(fake_ripgrep(tmp_path / "bin", "echo 'rg: something broke' >&2; exit 2")))
    result = await grep(scripted_server, tmp_path, pattern="needle")
    assert (result.text, result.failed) == ("Search failed: rg: something broke", True)


async def test_no_install_hint_without_ripgrep(scripted_server, tmp_path, monkeypatch):
    """The reference answered "ripgrep (rg) not installed…" and searched nothing (notes §2.5)."""
    monkeypatch.setenv("MM_RG", str(tmp_path / "nowhere"))
    tree(tmp_path, {"a.py": "needle\n"})
    result = await grep(scripted_server, tmp_path, pattern="needle", output_mode="content")
    assert (result.text, result.failed) == ("a.py:1:needle", False)



async def test_a_content_page_stops_the_search_once_complete(scripted_server, tmp_path, monkeypatch, mark):
    """The run reading a content page's rows is killed once the page is complete: a stand-in that
    writes its rows, then sleeps, must not keep the call waiting (nor be left running)."""
    work = tree(tmp_path / "work", {"a.txt": "needle\n" * 5})
    seconds, target = random.randint(100_000, 999_999), work / "a.txt"
    row = '{"type":"match","data":{"path":{"text":"%s"},"lines":{"text":"needle\\n"},"line_number":%d}}'
    rows = "; ".join(f"printf '%s\\n' '{row % (target, n)}'" for n in range(1, 6))
    body = (f'case "$*" in *--count*) printf "%s\\0005\\n" "{target}";; *) {rows}; sleep {seconds};; esac')
    monkeypatch.setenv("MM_RG", str(fake_ripgrep(tmp_path / mark, body)))
    result = await grep(scripted_server, work, pattern="needle", output_mode="content", max_results=3)
    assert (result.text, result.failed) == (
        "a.txt:1:needle\na.txt:2:needle\na.txt:3:needle\n\nShowing 3 of 5 matches. Increase max_results/offset or "
        "narrow the search. Next page: offset=3.", False)
    assert marked_left(mark) == [] and pids_matching(f"sleep {seconds}") == []
