"""The path policy's refusal in the reference's words (notes/mnemoai.md §3, Path policy for
writes), for a background task's working directory and the files git_safe is told to write
(`archive -o`, `clone <dir>`…). The policy itself is the safety floor's (mm.protected_paths,
docs/safety.md §Path policy), shared with every file mm writes.
"""

from __future__ import annotations

import os

AT_ROOT = "Refusing to write at the filesystem root '/'."
UNDER_PROTECTED = ("Refusing to write under the protected system directory '{directory}'. Writes are allowed in "
                   "your home, project, temp, and app directories.")


def write_refusal(path: str) -> str | None:
    """Why nothing may be written at `path` (str, absolute or relative to the process's working
    directory, `~` expanded), or None. Checked as written, through each of its symlinks and once
    resolved (mm.protected_paths.refused_step), so a link into /etc is refused too. An empty
    path is None (the tool's own validation says what is wrong with it)."""
    from mm.protected_paths import ROOT, refused_step

    if not path:
        return None
    refused = refused_step(os.path.expanduser(path))
    if refused is None:
        return None
    _, root = refused
    return AT_ROOT if root == ROOT else UNDER_PROTECTED.format(directory=root)
