"""The safety floor's path policy for writes (docs/safety.md §Path policy; notes/mnemoai.md §3).

A write is refused at the filesystem root (`/` itself and a file directly in it) and in the
system folders (SYSTEM_FOLDERS), whether the path names one as written, through one of its
symlinks, or once resolved. Standard library only, nothing imported: mm.fs (every file mm
writes) and the command floor (shell redirections, operands of writing commands) both use it.
"""

from __future__ import annotations

import os
from typing import Iterator, Mapping

# /dev, /proc and /sys first: mm.fs names them "a folder of the system's devices and processes".
DEVICE_FOLDERS = ("/dev", "/proc", "/sys")
SYSTEM_FOLDERS = DEVICE_FOLDERS + (
    "/etc", "/bin", "/sbin", "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/var/log", "/var/run",
    "/var/db", "/var/lib", "/run", "/System", "/Library", "/private/etc", "/private/var/db", "/private/var/log",
    "/private/var/run",
)  # fmt: skip
ROOT = "/"
MAX_LINKS = 40  # symlinks followed, as the kernel's limit


def protected_folder(path: str) -> str | None:
    """The protected place the absolute, normalised `path` (str) lies in: "/" for the root itself
    and a file directly in it, else the system folder (SYSTEM_FOLDERS) it is or lies under, else
    None. A folder directly in the root (`/tmp`, `/home`) is not protected itself."""
    if path == ROOT or os.path.dirname(path) == ROOT and not _is_dir(path):
        return ROOT
    return next((root for root in SYSTEM_FOLDERS if path == root or path.startswith(root + "/")), None)


def _is_dir(path: str) -> bool:
    try:
        return os.path.isdir(path)
    except (OSError, ValueError):
        return False


def chain(path: str, cwd: str | None = None, links: Mapping[str, str] | None = None) -> Iterator[str]:
    """Every path `path` leads through: itself made absolute (against `cwd`, default the process's),
    then each symlink's target (its folder resolved), then where it all resolves to. `links`
    (absolute link → target) are symlinks a command makes before it writes, looked at before the
    disk's."""
    links = links or {}
    base = cwd if cwd is not None else os.getcwd()
    current = absolute(path, base)
    yield current
    for _ in range(MAX_LINKS):
        here = os.path.join(resolve(os.path.dirname(current), links), os.path.basename(current))
        yield here
        target = _readlink(here, links)
        if target is None:
            break
        current = absolute(target, os.path.dirname(here))
        yield current
    yield resolve(current, links)


def absolute(path: str, cwd: str) -> str:
    """`path` made absolute against `cwd` and normalised, `..` collapsed as written (POSIX's
    leading `//` too: it names the root on Linux)."""
    joined = os.path.normpath(os.path.join(cwd, path))
    return "/" + joined.lstrip("/") if joined.startswith("//") else joined


def resolve(path: str, links: Mapping[str, str] | None = None) -> str:
    """`path` (absolute) with every symlink resolved, `links` (absolute link → target) first."""
    if not links:
        return os.path.realpath(path)
    parts = [p for p in path.split("/") if p]
    done = ROOT
    for hops in range(MAX_LINKS * 4):
        if not parts:
            return done
        here = os.path.normpath(os.path.join(done, parts.pop(0)))
        target = _readlink(here, links)
        if target is None:
            done = here
            continue
        parts = [p for p in target.split("/") if p] + parts
        done = ROOT if target.startswith("/") else done
    return os.path.normpath(os.path.join(done, *parts))


def _readlink(path: str, links: Mapping[str, str]) -> str | None:
    if path in links:
        return links[path]
    try:
        return os.readlink(path)
    except (OSError, ValueError):  # not a link, not there, a NUL byte
        return None


def refused_step(path: str, cwd: str | None = None, links: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """The first path of `chain(path, cwd, links)` in a protected place, with that place
    (protected_folder), or None when a write to `path` is allowed by the path policy."""
    for step in chain(path, cwd, links):
        root = protected_folder(step)
        if root is not None:
            return step, root
    return None
