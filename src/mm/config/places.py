"""Where mm looks for the user's and the project's files: the user's configuration folder
(XDG) and the repository a working directory belongs to (docs/configuration.md §Where it is found).

Only paths are computed here, with a few `stat` calls: nothing is read, nothing is imported.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

REPOSITORY_MARK = ".git"  # a folder (a clone) or a file (a worktree, a submodule)


def config_home(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CONFIG_HOME`, or `~/.config` when it is unset, empty or relative (the XDG Base
    Directory specification ignores a relative value). `env`: default os.environ."""
    return _xdg("XDG_CONFIG_HOME", (".config",), env)


def state_home(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_STATE_HOME`, or `~/.local/state` when it is unset, empty or relative (the XDG Base
    Directory specification). `env`: default os.environ."""
    return _xdg("XDG_STATE_HOME", (".local", "state"), env)


def _xdg(variable: str, default: tuple[str, ...], env: Mapping[str, str] | None) -> Path:
    """The folder the XDG `variable` names when it is absolute, else `default` under the home."""
    env = os.environ if env is None else env
    value = env.get(variable, "")
    return Path(value) if value and os.path.isabs(value) else Path.home().joinpath(*default)


def user_folder(env: Mapping[str, str] | None = None) -> Path:
    """mm's folder in the user's configuration: `$XDG_CONFIG_HOME/mm` (default `~/.config/mm`)."""
    return config_home(env) / "mm"


def repository_root(cwd: Path) -> Path | None:
    """The nearest folder from `cwd` upward (itself included) that holds `.git`, or None."""
    here = Path(os.path.abspath(cwd))
    for folder in (here, *here.parents):
        try:
            if os.path.lexists(folder / REPOSITORY_MARK):
                return folder
        except OSError:  # a folder that cannot be looked into ends the search
            return None
    return None


def project_folders(cwd: Path) -> list[Path]:
    """The folders from the repository root down to `cwd`, root first; just `cwd` outside a
    repository (as Codex reads AGENTS.md files)."""
    here = Path(os.path.abspath(cwd))
    root = repository_root(here)
    if root is None:
        return [here]
    folders = [here]
    while folders[-1] != root:
        folders.append(folders[-1].parent)
    return folders[::-1]


def tilde(path: Path) -> str:
    """`path` with the home folder written `~` (`~/.config/mm/AGENTS.md`), else as it is."""
    home, text = str(Path.home()), str(path)
    if home not in ("", "/") and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home):]
    return text
