"""The safety floor's path policy for writes (docs/safety.md §Path policy; notes/mnemoai.md §3):
the filesystem root and the system folders are refused to every writer — as written, through a
symlink, resolved — in every mode; elsewhere, outside the working directory too, writes go on.

`write_target` only looks (it touches nothing), so it is given real system paths. The writing
tools are never: they run in `mm -p` inside a private mount namespace where /etc is a copy in the
test's folder and /boot, /usr/src and /var/log are empty tmpfs mounts — a write the policy let
through would land there, not in the system.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mm.protected_paths import SYSTEM_FOLDERS, protected_folder, refused_step
from mm.fs import AT_ROOT, IN_SYSTEM_FOLDER, PROTECTED_LINK, PROTECTED_PATH, FileRefused, write_target

REFUSED = [("/etc/mm-floor.txt", "/etc"), ("/usr/local/bin/mm-floor", "/usr"), ("/var/log/mm-floor.log", "/var/log"),
           ("/boot/mm-floor", "/boot"), ("/bin/mm-floor", "/bin"), ("/sbin/mm-floor", "/sbin"),
           ("/lib/mm-floor.so", "/lib"), ("/run/mm-floor", "/run"), ("/var/lib/dpkg/mm-floor", "/var/lib"),
           ("//etc/mm-floor", "/etc"), ("/etc/../etc/mm-floor", "/etc"), ("/tmp/../usr/mm-floor", "/usr"),
           ("/etc", "/etc"), ("/usr/lib/../../etc/hosts", "/etc"), ("/Library/mm-floor", "/Library"),
           ("/private/etc/mm-floor", "/private/etc")]


@pytest.mark.parametrize("path,root", REFUSED)
def test_system_folders_are_refused_as_written(path, root):
    with pytest.raises(FileRefused) as refused:
        write_target(path)
    assert str(refused.value) == PROTECTED_PATH.format(path=path, where=IN_SYSTEM_FOLDER.format(root=root))


@pytest.mark.parametrize("path", ["/mm-floor.txt", "//mm-floor.txt", "/tmp/../mm-floor.txt"])
def test_a_file_directly_in_the_root_is_refused(path):
    with pytest.raises(FileRefused) as refused:
        write_target(path)
    assert str(refused.value) == PROTECTED_PATH.format(path=path, where=AT_ROOT)


def test_symlinks_are_followed_and_named(tmp_path):
    os.symlink("/etc", tmp_path / "etc_dir")
    os.symlink(tmp_path / "hop", tmp_path / "chain")
    os.symlink("/usr/lib/mm-floor", tmp_path / "hop")
    os.symlink("../../../../../../../../../../boot", tmp_path / "relative")
    cases = {tmp_path / "etc_dir" / "passwd": ("/etc/passwd", "/etc"), tmp_path / "chain": ("/usr/lib/mm-floor", "/usr"),
             tmp_path / "relative" / "x": ("/boot/x", "/boot")}
    for path, (target, root) in cases.items():
        with pytest.raises(FileRefused) as refused:
            write_target(path)
        assert str(refused.value) == PROTECTED_LINK.format(path=path, target=target,
                                                           where=IN_SYSTEM_FOLDER.format(root=root))


def test_elsewhere_writes_stay_allowed(tmp_path):
    allowed = [tmp_path / "x.txt", Path("/tmp/mm-floor-none/x"), Path("/var/tmp/mm-floor-none"),
               Path.home() / "mm-floor-none" / "x", Path("/opt/mm-floor-none/x"), Path("/home/mm-floor-none"),
               Path("/usrx/mm-floor"), Path("/etcetera/mm-floor"), Path("/private/var/folders/mm")]
    for path in allowed:
        assert write_target(path) == Path(os.path.realpath(path))
    assert protected_folder("/tmp") is None and protected_folder("/") == "/"
    assert all(protected_folder(root + "/x") == root for root in SYSTEM_FOLDERS)
    assert refused_step("hosts", "/etc") == ("/etc/hosts", "/etc")  # relative to a working directory


def _sandbox_available() -> str | None:
    if not shutil.which("unshare") or os.geteuid() != 0:
        return "needs unshare and root (a private mount namespace)"
    probe = subprocess.run(["unshare", "--mount", "--", "sh", "-c", "mount -t tmpfs mm /usr/src"],
                           capture_output=True, text=True)
    return None if probe.returncode == 0 else f"no private mount namespace here: {probe.stderr.strip()}"


def test_every_writer_refuses_in_every_mode_in_a_sandbox(scripted_server, tmp_path):
    unavailable = _sandbox_available()
    if unavailable:
        pytest.skip(unavailable)
    etc_copy = tmp_path / "etc-copy"
    shutil.copytree("/etc", etc_copy, symlinks=True)
    before = sorted(p.name for p in etc_copy.iterdir())
    hosts_before = (etc_copy / "hosts").read_bytes()
    ws = tmp_path / "ws"
    (ws / ".mm").mkdir(parents=True)
    (ws / ".mm" / "agent.yaml").write_text("yolo: true\nfetchContentTool: true\nsaveAnswerTool: true\n")
    os.symlink("/etc", ws / "etclink")
    calls = [
        {"id": "w_etc", "name": "write_file", "arguments": {"path": "/etc/mm-floor.txt", "content": "x"}},
        {"id": "w_link", "name": "write_file", "arguments": {"path": "etclink/mm-floor.txt", "content": "x"}},
        {"id": "w_usr", "name": "write_file", "arguments": {"path": "//usr/src/mm-floor.txt", "content": "x"}},
        {"id": "e_hosts", "name": "edit_file", "arguments": {"path": "/etc/hosts",
                                                              "edits": [{"old": "localhost", "new": "pwned"}]}},
        {"id": "s_boot", "name": "save_answer", "arguments": {"path": "/boot/answer.md"}},
        {"id": "f_log", "name": "fetch_content", "arguments": {"url": "https://example.org",
                                                                "output": "/var/log/page.md"}},
        {"id": "w_ok", "name": "write_file", "arguments": {"path": str(tmp_path / "outside" / "ok.txt"),
                                                            "content": "fine\n"}},
    ]
    scripted_server.add_tool_calls(calls, content="An answer to save.")
    scripted_server.add_reply("done")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(ws)}
    script = (f"mount --bind {etc_copy} /etc && mount -t tmpfs mm /boot && mount -t tmpfs mm /usr/src && "
              "mount -t tmpfs mm /var/log && \"$@\"; status=$?; ls -A /boot /usr/src /var/log; exit $status")
    proc = subprocess.run(["unshare", "--mount", "--", "sh", "-c", script, "sh", sys.executable, "-m", "mm", "-p", "go",
                           "--base-url", scripted_server.base_url, "--model", "m"], cwd=ws, env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("/boot:\n\n/usr/src:\n\n/var/log:\n")  # nothing was written in the tmpfs mounts
    assert sorted(p.name for p in etc_copy.iterdir()) == before and (etc_copy / "hosts").read_bytes() == hosts_before
    results = {m["tool_call_id"]: m["content"] for m in scripted_server.requests[1]["messages"] if m["role"] == "tool"}
    etc = IN_SYSTEM_FOLDER.format(root="/etc")
    assert results["w_etc"] == PROTECTED_PATH.format(path="/etc/mm-floor.txt", where=etc) + "; nothing was written"
    assert results["w_link"] == PROTECTED_LINK.format(path="etclink/mm-floor.txt", target="/etc/mm-floor.txt",
                                                      where=etc) + "; nothing was written"
    assert results["w_usr"] == PROTECTED_PATH.format(path="//usr/src/mm-floor.txt",
                                                     where=IN_SYSTEM_FOLDER.format(root="/usr")) + "; nothing was written"
    assert results["e_hosts"] == PROTECTED_PATH.format(path="/etc/hosts", where=etc) + "; nothing was written"
    assert results["s_boot"] == "[save_answer: " + PROTECTED_PATH.format(
        path="/boot/answer.md", where=IN_SYSTEM_FOLDER.format(root="/boot")) + "; nothing was written]"
    assert results["f_log"] == "[fetch_content: error 1 (conversion) — " + PROTECTED_PATH.format(
        path="/var/log/page.md", where=IN_SYSTEM_FOLDER.format(root="/var/log")) + "]"
    assert results["w_ok"].startswith(f"{tmp_path / 'outside' / 'ok.txt'}: created · 1 line")
    assert (tmp_path / "outside" / "ok.txt").read_text() == "fine\n"
    assert all("\n" not in text for key, text in results.items() if key != "w_ok")
    json.dumps(results)
