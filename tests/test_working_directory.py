"""mm started in a folder that no longer exists (`mkdir d; cd d; rmdir ../d; mm -p hi`): one line
and exit 2 in every front end, not a traceback (issue 10 §7). Real processes whose working
directory is removed just before mm starts."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from harness import read_until
from mm.cli import NO_WORKING_DIRECTORY
from test_line_mode_terminal import spawn_on_terminal

# `cd` into the folder, remove it, then start mm there
IN_REMOVED_FOLDER = 'cd "$1" && rmdir "$1" && shift && exec "$@"'


def mm_in_removed_folder(tmp_path, *args: str) -> subprocess.CompletedProcess:
    gone = tmp_path / "gone"
    gone.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(tmp_path)}
    return subprocess.run(["bash", "-c", IN_REMOVED_FOLDER, "_", str(gone), sys.executable, "-m", "mm", *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args", [["-p", "hi"], [], ["-acp"], ["--ask", "helper", "hi"],
                                  ["-p", "hi", "--base-url", "http://127.0.0.1:9/v1"]],
                         ids=["oneshot", "line-mode-piped", "acp", "ask", "oneshot-with-server"])
def test_a_removed_working_directory_is_one_line_and_exit_2(tmp_path, args):
    proc = mm_in_removed_folder(tmp_path, *args)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", NO_WORKING_DIRECTORY + "\n")


def test_line_mode_on_a_terminal(tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    proc, fd = spawn_on_terminal(["bash", "-c", IN_REMOVED_FOLDER, "_", str(gone), sys.executable, "-m", "mm"],
                                 tmp_path)
    try:
        seen = read_until(fd, b"start mm again")
        assert proc.wait(30) == 2
        assert NO_WORKING_DIRECTORY.encode() in seen and b"Traceback" not in seen
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        os.close(fd)


def test_the_version_needs_no_working_directory(tmp_path):
    proc = mm_in_removed_folder(tmp_path, "--version")
    assert proc.returncode == 0 and proc.stdout.startswith("mm v")
