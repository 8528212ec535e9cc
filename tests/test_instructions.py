"""Project instructions (AGENTS.md, CLAUDE.md) in the system prompt: which files, in which order,
the cap, and files that cannot be read (docs/configuration.md §Project instructions). The front
ends (`-p`, line mode, ACP) are in tests/test_instructions_e2e.py."""

import os
import threading
from pathlib import Path

import pytest

from mm.engine.tokens import count_text
from mm.instructions import (CUT_LINE, CUT_NOTE, FILE_HEADER, HEADER, READ_LINE, SKIPPED, read_instructions,
                             with_instructions)


def project(tmp_path: Path, files: dict[str, str]) -> tuple[Path, dict[str, str]]:
    """A repository at tmp/repo (`.git` there) with `files` (paths relative to tmp/, `user/` for
    the user's folder); returns tmp/repo/pkg/sub and the environment naming the user's folder."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "pkg" / "sub").mkdir(parents=True)
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path / "repo" / "pkg" / "sub", {"XDG_CONFIG_HOME": str(tmp_path / "user")}


def section(*files: tuple[str, str]) -> str:
    return "\n\n".join([HEADER] + [f"{FILE_HEADER.format(name=n)}\n{t}" for n, t in files])


def test_the_user_file_then_each_folder_from_the_root_down(tmp_path):
    cwd, env = project(tmp_path, {"user/mm/AGENTS.md": "User rule.\n", "repo/AGENTS.md": "Root rule.\n",
                                  "repo/pkg/sub/AGENTS.md": "Sub rule.\n", "AGENTS.md": "Above the root.\n"})
    found = read_instructions(cwd, 2000, env)
    user = f"{tmp_path}/user/mm/AGENTS.md"
    assert found.files == [user, "../../AGENTS.md", "AGENTS.md"]
    assert found.text == section((user, "User rule."), ("../../AGENTS.md", "Root rule."), ("AGENTS.md", "Sub rule."))
    assert found.lines() == [READ_LINE.format(files=f"{user}, ../../AGENTS.md, AGENTS.md")]
    assert with_instructions("Base prompt.\n", found) == f"Base prompt.\n\n{found.text}"


def test_claude_md_only_where_a_folder_has_no_agents_md(tmp_path):
    cwd, env = project(tmp_path, {"repo/AGENTS.md": "Root agents.", "repo/CLAUDE.md": "Root claude.",
                                  "repo/pkg/CLAUDE.md": "Pkg claude."})
    assert read_instructions(cwd, 2000, env).text == section(("../../AGENTS.md", "Root agents."),
                                                             ("../CLAUDE.md", "Pkg claude."))


def test_outside_a_repository_only_the_working_directory(tmp_path):
    (tmp_path / "AGENTS.md").write_text("Parent.")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "AGENTS.md").write_text("Here.")
    assert read_instructions(tmp_path / "work", 2000, {"XDG_CONFIG_HOME": str(tmp_path / "none")}).files == ["AGENTS.md"]


def test_empty_files_a_file_reached_twice_and_a_cap_of_zero(tmp_path):
    cwd, env = project(tmp_path, {"repo/AGENTS.md": "\n  \n", "repo/pkg/AGENTS.md": "Pkg."})
    os.symlink(tmp_path / "repo/pkg/AGENTS.md", cwd / "AGENTS.md")  # the same file again
    found = read_instructions(cwd, 2000, env)
    assert found.files == ["../AGENTS.md"] and found.warnings == []
    assert read_instructions(cwd, 0, env) == read_instructions(tmp_path, 0, env)
    assert read_instructions(cwd, 0, env).text == "" and read_instructions(cwd, 0, env).lines() == []


def test_a_named_pipe_is_skipped_without_waiting(tmp_path):
    cwd, env = project(tmp_path, {"repo/AGENTS.md": "Root.", "repo/pkg/sub/CLAUDE.md": "Not read: AGENTS.md is there."})
    os.mkfifo(cwd / "AGENTS.md")
    result: list = []
    reader = threading.Thread(target=lambda: result.append(read_instructions(cwd, 2000, env)), daemon=True)
    reader.start()
    reader.join(30)  # a hang, not a measure
    assert result, "reading a named pipe waited"
    found = result[0]
    assert found.files == ["../../AGENTS.md"]
    assert found.warnings == [SKIPPED.format(path="AGENTS.md", reason="it is a named pipe, not a regular file — "
                                             "mm reads and writes regular files only")]
    assert found.lines()[-1] == found.warnings[0]


def test_a_file_that_is_not_utf8_is_skipped(tmp_path):
    cwd, env = project(tmp_path, {"repo/AGENTS.md": "Root."})
    (cwd / "AGENTS.md").write_bytes(b"caf\xe9 au lait\n")
    found = read_instructions(cwd, 2000, env)
    assert found.files == ["../../AGENTS.md"]
    assert found.warnings == [SKIPPED.format(path="AGENTS.md", reason="it is not UTF-8 text")]


def test_the_cap_keeps_whole_lines_and_says_what_it_left_out(tmp_path):
    rules = "".join(f"Rule {i}: run the tests before you commit.\n" for i in range(200))
    cwd, env = project(tmp_path, {"repo/AGENTS.md": "Root rule.", "repo/pkg/AGENTS.md": rules,
                                  "repo/pkg/sub/AGENTS.md": "Sub rule."})
    found = read_instructions(cwd, 400, env)
    assert count_text(found.text) <= 400
    assert found.files == ["../../AGENTS.md", "../AGENTS.md"]
    kept = found.text.split(f"{FILE_HEADER.format(name='../AGENTS.md')}\n")[1].split("\n\n")[0]
    n = kept.count("\n") + 1
    assert kept == "".join(f"Rule {i}: run the tests before you commit.\n" for i in range(n)).rstrip("\n")
    left = f"the last {200 - n} of 200 lines of ../AGENTS.md, AGENTS.md"
    assert found.left_out == left
    assert found.text.endswith("\n\n" + CUT_NOTE.format(limit=400, left=left))
    assert found.lines() == [READ_LINE.format(files="../../AGENTS.md, ../AGENTS.md"),
                             CUT_LINE.format(limit=400, left=left)]


def test_a_cap_too_small_for_any_file(tmp_path):
    cwd, env = project(tmp_path, {"repo/AGENTS.md": "Root rule."})
    found = read_instructions(cwd, 20, env)
    assert (found.text, found.files) == ("", [])
    assert found.lines() == [CUT_LINE.format(limit=20, left="../../AGENTS.md")]


def test_the_cap_counts_the_project_token_counter_not_bytes(tmp_path):
    text = "数" * 700  # 700 characters, 2100 bytes: over 2000 bytes, under 2000 tokens
    cwd, env = project(tmp_path, {"repo/pkg/sub/AGENTS.md": text})
    found = read_instructions(cwd, 2000, env)
    assert count_text(found.text) <= 2000 and found.left_out == "" and text in found.text


@pytest.mark.parametrize("name", ["AGENTS.md", "CLAUDE.md"])
def test_a_folder_named_like_the_file_is_passed_over(tmp_path, name):
    cwd, env = project(tmp_path, {"repo/pkg/sub/CLAUDE.md": "Claude."} if name == "AGENTS.md" else {})
    (cwd / name).mkdir(exist_ok=True)
    found = read_instructions(cwd, 2000, env)
    assert found.files == (["CLAUDE.md"] if name == "AGENTS.md" else []) and found.warnings == []
