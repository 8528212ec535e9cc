"""Where nothing is ever written: the root and the system directories (notes/mnemoai.md §3, Path
policy for writes). Used for a background task's working directory and the files git_safe is told
to write (`archive -o`, `clone <dir>`…), checked like a write.

STAND-IN: issue 13 §5 gives the safety floor (branch `safety`) the path policy for every tool that
writes; when it is merged, `write_refusal` should call it, and this module go.
"""

from __future__ import annotations

import os

PROTECTED = ("/etc", "/bin", "/sbin", "/usr", "/lib", "/lib64", "/boot", "/dev", "/proc", "/sys", "/var/log",
             "/var/run", "/var/db", "/run", "/System", "/Library", "/private/etc", "/private/var/db",
             "/private/var/log")
AT_ROOT = "Refusing to write at the filesystem root '/'."
UNDER_PROTECTED = ("Refusing to write under the protected system directory '{directory}'. Writes are allowed in "
                   "your home, project, temp, and app directories.")


def write_refusal(path: str) -> str | None:
    """Why nothing may be written at `path` (str, absolute or relative to the process's working
    directory, `~` expanded), or None. Checked as written and once resolved (symlinks followed,
    `..` collapsed), so a link into /etc is refused too. An empty path is None (the tool's own
    validation says what is wrong with it)."""
    if not path:
        return None
    written = os.path.abspath(os.path.expanduser(path))
    for candidate in (written, os.path.realpath(written)):
        if candidate == "/":
            return AT_ROOT
        for directory in PROTECTED:
            if candidate == directory or candidate.startswith(directory + "/"):
                return UNDER_PROTECTED.format(directory=directory)
    return None
