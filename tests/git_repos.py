"""Real git repositories in a test's folder, for the git tools' tests: a repository with one
commit on `main`, a bare remote, clones. Git is run with the test's own (empty) global
configuration and no system one, so nothing of the machine's settings reaches a test."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness import RecordingUI, make_conversation

GIT = {"toolsets": ["core", "git"]}


@pytest.fixture(autouse=True)
def own_git_config(tmp_path, monkeypatch):
    """Git (the test's and mm's commands) reads an empty global configuration of the test's own."""
    config = tmp_path / "gitconfig"
    config.write_text("[init]\n\tdefaultBranch = main\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
                 "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(name, raising=False)


def git(cwd: Path, *args: str, check: bool = True) -> str:
    """Run `git <args>` in `cwd` for the test; its stdout."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    if check and done.returncode:
        raise AssertionError(f"git {' '.join(args)}: {done.stderr}")
    return done.stdout


def identify(repo: Path) -> None:
    git(repo, "config", "user.name", "Test")
    git(repo, "config", "user.email", "test@example.com")


def new_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    """A repository at `path` on `main`, with `files` (default a.txt) in one commit `init`."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    identify(path)
    for name, text in (files or {"a.txt": "a\n"}).items():
        (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "init")
    return path


def bare_remote(repo: Path, path: Path, name: str = "origin") -> Path:
    """A bare repository at `path`, added to `repo` as remote `name`, with `main` pushed and tracked."""
    git(path.parent, "init", "-q", "--bare", str(path))
    git(repo, "remote", "add", name, str(path))
    git(repo, "push", "-q", "-u", name, "main")
    return path


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


class AskingUI(RecordingUI):
    """A front end that can ask the user (it has ask_user, as line mode and editors do); its
    permission answers come from the list, as RecordingUI's."""

    async def ask_user(self, questions):
        return "declined"


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


async def results(srv, cwd: Path, *calls: dict, ui: RecordingUI | None = None, conv=None, **config) -> list:
    """The answers (JSON parsed, else the text) to `calls` made in one turn, in `cwd`."""
    conv = conv or make_conversation(srv.base_url, cwd, GIT | config)
    srv.add_tool_calls(list(calls))
    srv.add_reply("ok")
    ui = ui if ui is not None else AskingUI()
    await conv.run_turn("go", ui)
    out = []
    for done in ui.done_calls():
        try:
            out.append(json.loads(done.result.text))
        except ValueError:
            out.append(done.result.text)
    return out
