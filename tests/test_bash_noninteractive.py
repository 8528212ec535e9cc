"""Commands run non-interactively (issue 9 §6; docs/tools-bash.md §Non-interactive): editors and
pagers cannot take over, whatever the user's environment or git configuration names, and output
full of terminal control sequences reaches the model as plain text with a note. Real git in a
temporary repository, through the real `bash` tool and a declared tool."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from harness import marked_left
from mm.tools.base import Settings, ToolContext
from mm.tools.bash import Bash
from mm.tools.declared import declared_tool_from_entry
from mm.tools.process import NON_INTERACTIVE
from mm.tools.terminal_text import CONTROL_NOTE, plain_text

TIMEOUT = 20  # seconds: an editor or a pager that took over ends the call with a timeout line


@pytest.fixture
def hanging(monkeypatch, mark):
    """The mark, and the user's editor and pager variables all naming a program that waits for
    ever (`sleep 1000` run under that mark: killed after the test)."""
    wait = f"bash -c 'exec -a {mark} sleep 1000'"
    for name in ("EDITOR", "VISUAL", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "PAGER", "GIT_PAGER"):
        monkeypatch.setenv(name, wait)
    return mark, wait


@pytest.fixture
def repo(tmp_path, hanging):
    """A git repository with one commit, whose own configuration also names a waiting editor
    and pager."""
    _, wait = hanging
    for args in (["init", "-q"], ["config", "user.email", "t@example.com"], ["config", "user.name", "T"],
                 ["config", "core.editor", wait], ["config", "core.pager", wait]):
        subprocess.run(["git", *args], cwd=tmp_path, check=True)
    (tmp_path / "a.txt").write_text("one\n")
    subprocess.run(["git", "add", "a.txt"], cwd=tmp_path, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "first"], cwd=tmp_path, check=True,
                   env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    return tmp_path


def context(cwd: Path) -> ToolContext:
    return ToolContext(cwd=cwd, settings=Settings(bash_timeout=TIMEOUT))


async def test_git_commit_without_a_message_returns(repo, hanging):
    (repo / "a.txt").write_text("two\n")
    result = await Bash().run({"command": "git commit -a"}, context(repo))
    assert result.text == "Aborting commit due to empty commit message.\n[exit code: exit status 1]"
    assert marked_left(hanging[0], timeout=0) == []


@pytest.mark.skipif(shutil.which("script") is None, reason="util-linux's script gives git a terminal")
async def test_git_log_is_not_paged_even_on_a_terminal(repo, hanging):
    """git pages only to a terminal: `script` gives it one, and the pager is still `cat`."""
    result = await Bash().run({"command": "script -qec 'git log --format=%s' /dev/null"}, context(repo))
    assert result.text == "first\r\n"


async def test_a_declared_tool_runs_non_interactively_too(repo, hanging):
    (repo / "a.txt").write_text("three\n")
    tool = declared_tool_from_entry({"name": "commit", "command": ["git", "commit", "-a"]})
    result = await tool.run({}, context(repo))
    assert result.text == "Aborting commit due to empty commit message.\n[exit code: exit status 1]"
    tool = declared_tool_from_entry({"name": "log", "command": ["script", "-qec", "git log --format=%s", "/dev/null"]})
    if shutil.which("script"):
        assert (await tool.run({}, context(repo))).text == "first\r\n"


async def test_the_environment_commands_get(tmp_path, hanging):
    names = " ".join(NON_INTERACTIVE)
    result = await Bash().run({"command": f"for n in {names}; do echo \"$n=${{!n}}\"; done"}, context(tmp_path))
    assert result.text == "".join(f"{k}={v}\n" for k, v in NON_INTERACTIVE.items())
    assert NON_INTERACTIVE == {
        "GIT_EDITOR": "true", "GIT_SEQUENCE_EDITOR": "true", "EDITOR": "true", "VISUAL": "true",
        "PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb", "NO_COLOR": "1", "GIT_TERMINAL_PROMPT": "0"}


async def test_a_command_holds_no_descriptor_but_its_three(tmp_path):
    result = await Bash().run({"command": "ls /proc/$$/fd; true"}, context(tmp_path))  # the shell's
    assert result.text == "0\n1\n2\n"


async def test_no_terminal_can_be_opened(tmp_path):
    result = await Bash().run({"command": "exec 3</dev/tty"}, context(tmp_path))
    assert "No such device or address" in result.text and result.failed


COLOURED = (
    r"printf '\033[1;31merror\033[0m: \033[4mbuild\033[24m failed\n'; "
    r"printf 'Downloading   0%%\rDownloading  50%%\rDownloading 100%%\n'; "
    r"printf '\033]0;a title\007\033[2K\033[1Gstep \033[32m2\033[m of 3\n'; "
    r"printf 'crlf line\r\n'"
)


async def test_colours_and_a_progress_bar_become_plain_text_with_a_note(tmp_path):
    result = await Bash().run({"command": COLOURED}, context(tmp_path))
    assert result.text == (f"{CONTROL_NOTE}\nerror: build failed\nDownloading 100%\nstep 2 of 3\ncrlf line\r\n")


async def test_plain_output_has_no_note(tmp_path):
    result = await Bash().run({"command": r"printf 'plain\ttext\r\nsecond\n'"}, context(tmp_path))
    assert result.text == "plain\ttext\r\nsecond\n"


async def test_a_declared_tool_s_output_is_made_plain_too(tmp_path):
    tool = declared_tool_from_entry({"name": "colour", "command": ["printf", r"\033[33mwarn\033[0m\n"]})
    assert (await tool.run({}, context(tmp_path))).text == f"{CONTROL_NOTE}\nwarn\n"


@pytest.mark.parametrize("raw, plain", [
    ("\x1b[38;5;196mred\x1b[0m", "red"),
    ("\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\", "link"),  # a hyperlink keeps its text
    ("\x1b(Bcharset \x1b=keypad \x1b7saved\x1b8", "charset keypad saved"),
    ("\x1bPq#0;2;0;0;0\x1b\\after", "after"),  # a DCS string (sixel)
    ("N\bNA\bAM\bME\bE _\bu", "NAME u"),  # man's overstrike and underline
    ("a\r\r\nb", "a\nb"),
    ("10%\r\r20%\r", "20%"),
    ("end\x1b", "end"),
])
def test_plain_text(raw, plain):
    assert plain_text(raw) == (plain, True)


def test_plain_text_leaves_crlf_and_tabs_alone():
    assert plain_text("a\tb\r\nc\r\n") == ("a\tb\r\nc\r\n", False)
