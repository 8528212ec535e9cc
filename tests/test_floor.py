"""The safety floor beyond its table (docs/safety.md): how it reads commands, its API for other
tools (background tasks), and each weakness notes/mnemoai.md §3 lists for the reference's floor,
proved absent. Nothing here runs a command: only the floor's verdict is asserted."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings, strategies as st

from mm.tools.floor import REFUSAL, check_argv, check_command
from mm.tools.floor.walk import MAX_DEPTH


def rule(command: str, cwd: Path | str = "/tmp", **kw) -> str | None:
    """The rule name of the floor's refusal, or None."""
    refusal = check_command(command, cwd, **kw)
    return None if refusal is None else refusal.split("]", 1)[0].removeprefix("[safety floor: ")


def test_the_refusal_line():
    assert REFUSAL.format(rule="r", what="w") == "[safety floor: r] w — refused in every mode, nothing was run (docs/safety.md)"
    assert check_command("rm -rf ~", "/tmp", env={"HOME": "/home/u"}) == REFUSAL.format(
        rule="delete_home", what="rm would delete /home/u")
    assert check_command("cd /etc && echo x > hosts", "/tmp") == REFUSAL.format(
        rule="system_write", what="a redirection would write /etc/hosts, in the system folder /etc")
    assert check_command("chmod -R 777 /", "/tmp") == REFUSAL.format(
        rule="root_write", what="chmod would write the filesystem root /")
    assert check_command("mv ~ /tmp/x", "/tmp", env={"HOME": "/home/u"}) == REFUSAL.format(
        rule="delete_home", what="mv would move away /home/u")
    assert check_command("rm -rf /home", "/tmp", env={"HOME": "/home/u"}) == REFUSAL.format(
        rule="delete_home", what="rm would delete /home, which holds the home folder /home/u")


def test_look_alikes_the_reference_refused():
    """The reference searched its patterns in the raw text: `grep reboot log` was refused."""
    for command in ("grep reboot log", 'echo "rm -rf /"', "git commit -m 'reboot the parser'", "man halt",
                    "cat shutdown.txt", "ls /dev", "echo mkfs.ext4 /dev/sda", "python3 -m http.server"):
        assert rule(command) is None, command


def test_eval_variables_and_scripts_written_elsewhere(tmp_path):
    """The reference let eval, variables and scripts through (its own docstring says so)."""
    (tmp_path / "wipe.sh").write_text("#!/usr/bin/env bash\nset -e\ncd \"$1\"\nrm -rf ./*\n")
    (tmp_path / "job.py").write_text("#!/usr/bin/env python3\nimport shutil\n")
    assert rule("eval \"rm -rf $HOME\"", tmp_path) == "delete_home"
    assert rule("d=/; eval rm -rf '$d'", tmp_path) == "delete_root"
    assert rule("bash wipe.sh /", tmp_path) == "delete_root"
    assert rule("bash wipe.sh build", tmp_path) is None  # build/*: nothing the floor guards
    assert rule("./job.py /", tmp_path) is None  # not a shell script: not the shell's to read
    assert rule("echo 'rm -rf ~' > later.sh; chmod +x later.sh; ./later.sh", tmp_path) == "delete_home"


def test_relative_targets_follow_the_commands_own_directory(tmp_path):
    assert rule("echo x > hosts", "/etc") == "system_write"
    assert rule("cd /etc && cd .. && cd etc && echo x > hosts", tmp_path) == "system_write"
    assert rule("cd /etc && cd - && echo x > hosts", tmp_path) is None
    assert rule("cd /etc; cd -; echo x > hosts", tmp_path) == "system_write"  # each cd may fail
    assert rule("cd missing || exit 1; rm -rf *", tmp_path) is None  # it exits when the cd fails
    assert rule("cd missing; rm -rf *", tmp_path) == "delete_workdir"  # a failed cd leaves it here
    assert rule("set -e; cd missing; rm -rf *", tmp_path) is None
    assert rule("pushd /usr && touch x", tmp_path) == "system_write"
    assert rule("env -C /etc touch x", tmp_path) == "system_write"


def test_the_working_directories_of_execute_bash(tmp_path):
    """execute_bash moves: the conversation's folder stays guarded from wherever it is."""
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    assert rule("rm -rf ..", project / "sub") == "delete_workdir"
    assert rule("rm -rf ../..", project / "sub", workdirs=(project,)) == "delete_workdir"
    assert rule("rm -rf *", project / "sub", workdirs=(project,)) == "delete_workdir"
    assert rule("rm -rf sub", project) is None


def test_expansions_the_floor_works_out(tmp_path):
    assert rule("x=/a/b; rm -rf ${x%%/*}/") == "delete_root"
    assert rule("a[0]=/; rm -rf ${a[0]}") == "delete_root"
    assert rule("x=(build /); rm -rf ${x[@]}") == "delete_root"
    assert rule("x=/root; rm -rf ${x/root/}") == "delete_root"
    assert rule("rm -rf ${#HOME}") is None  # a number, in /tmp
    assert rule("p=foo.txt; rm -rf ${p%.txt}") is None
    assert rule("read x; rm -rf $x") == "delete_unknown"  # known only when it runs
    assert rule("read x; rm -f $x") is None  # not recursive: a file, not a tree
    assert rule("rm -rf $MM_FLOOR_NONE") is None and rule('rm -rf "$MM_FLOOR_NONE"') is None  # nothing, and ''
    assert rule("rm -rf $MM_FLOOR_NONE/") == "delete_root"
    assert rule("cat <<A\n$(rm -rf /)\nA") == "delete_root"
    assert rule("cat <<'A'\n$(rm -rf /)\nA") is None  # quoted: text, never run
    assert rule("echo $'\\162\\155' -rf / | sh") == "delete_root"
    assert rule("echo cm0gLXJmIH4= | base64 --decode | bash") == "delete_home"
    assert rule("printf '%s %s /' rm -rf | sh") == "delete_root"


def test_devices_through_links_and_nodes(tmp_path):
    os.symlink("/dev/sda", tmp_path / "disk")
    assert rule("dd if=/dev/zero of=disk", tmp_path) == "disk"
    assert rule("mkfs.ext4 disk", tmp_path) == "disk"
    assert rule("echo x > disk", tmp_path) == "device_write"
    assert rule("ln -s /dev/nvme0n1 n && wipefs -a n", tmp_path) == "disk"
    assert rule("mkfs.ext4 image.img", tmp_path) is None
    assert rule("dd if=/dev/sda of=backup.img", tmp_path) is None  # reading a disk writes nothing of it


def test_unbalanced_quotes_and_deep_shells():
    """The reference fell back to a regex on unbalanced quotes and read `sh -c` 2 deep."""
    assert rule("echo x > /etc/hosts '") == "system_write"
    assert rule('rm -rf / "') == "delete_root"
    nested = "rm -rf ~"
    for _ in range(MAX_DEPTH - 1):
        nested = "sh -c " + "'" + nested.replace("'", "'\\''") + "'"
    assert rule(nested) == "delete_home"


def test_nested_scripts_have_a_limit():
    nested = "rm -rf /tmp/x"
    for _ in range(MAX_DEPTH + 1):
        nested = "bash -c " + "'" + nested.replace("'", "'\\''") + "'"
    assert rule(nested) == "unreadable"


def test_programs_without_a_shell_are_read_as_they_are(tmp_path):
    assert check_argv(["sudo", "rm", "-rf", "/"], tmp_path).startswith("[safety floor: delete_root]")
    assert check_argv(["xargs", "rm", "-rf"], tmp_path).startswith("[safety floor: delete_unknown]")  # what it reads
    assert check_argv(["xargs", "rm", "-f"], tmp_path) is None  # not recursive
    assert check_argv(["find", "/", "-delete"], tmp_path).startswith("[safety floor: delete_root]")
    assert check_argv(["echo", "$(rm -rf /)"], tmp_path) is None  # no shell: no substitution


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("rm -f/~*$(){};|&<>'\"\\`\nabc.=!#[]:")), max_size=60))
def test_any_text_gets_a_verdict(command):
    verdict = check_command(command, "/tmp/mm-floor-none")
    assert verdict is None or verdict.startswith("[safety floor: ") and "\n" not in verdict


def test_redirections_without_a_command(tmp_path):
    """`> f` alone opens (and truncates) f, as `: > f` does: each writing operator, anywhere."""
    os.symlink("/etc/hosts", tmp_path / "hostlink")
    for op in (">", ">>", "2>", "&>", "&>>", ">|", "<>", "1<>", "9>", "1>"):
        assert rule(f"{op} /etc/hosts", tmp_path) == "system_write", op
        assert rule(f"echo x {op}/etc/hosts", tmp_path) == "system_write", op
        assert rule(f"{op} out.txt", tmp_path) is None, op
    assert rule("> hostlink", tmp_path) == "system_write"
    assert rule("while true; do > /etc/hosts; done", tmp_path) == "system_write"
    assert rule("case x in x) 2> /etc/hosts;; esac", tmp_path) == "system_write"
    assert rule("< /etc/hosts", tmp_path) is None  # reading


def test_folders_that_hold_what_the_floor_guards(tmp_path):
    """A recursive delete, move, chmod or chown of a folder holding a system folder, the home
    folder or the working directory, or of a folder directly in the root (`/home`, `/var`)."""
    for home in ("/root", "/home/u"):
        env = {"HOME": home}
        assert rule("rm -rf /home", tmp_path, env=env) == ("root_write" if home == "/root" else "delete_home")
        assert rule("rm -rf /home/*", tmp_path, env=env) == ("root_write" if home == "/root" else "delete_home")
        assert rule("chown -R nobody /home", tmp_path, env=env) == ("root_write" if home == "/root" else "delete_home")
        assert rule("chmod -R 700 ~", tmp_path, env=env) is None  # the folder itself: changed, not deleted
    assert check_command("rm -rf /var", tmp_path) == REFUSAL.format(
        rule="system_write", what="rm would delete /var, which holds the system folder /var/log")
    assert check_command("rm -rf /opt", tmp_path) == REFUSAL.format(
        rule="root_write", what="rm would delete /opt, a folder directly in the filesystem root /")
    assert check_command("chmod -R 000 /var", tmp_path) == REFUSAL.format(
        rule="system_write", what="chmod -R would change every file of /var, which holds the system folder /var/log")
    project = tmp_path / "project"
    assert rule("chmod -R 000 ..", project) == "delete_workdir"
    assert rule("chmod -R u+w .", project) is None


def test_a_move_names_what_it_moves_away(tmp_path):
    """mv's destination is written, not moved away: `mv /etc DIR` names /etc, even run in DIR."""
    assert check_command("mv /etc /tmp/x", "/tmp/x") == REFUSAL.format(
        rule="system_write", what="mv would write /etc, in the system folder /etc")
    assert rule("mv a.txt /tmp/x", "/tmp/x") is None
    assert rule("mv -t /tmp/y /tmp/x", "/tmp/x") == "delete_workdir"


def test_a_recursive_delete_must_name_its_target(tmp_path):
    """docs/safety.md §Rules: a recursive delete of a target known only when the command runs."""
    assert check_command("rm -rf $(some-tool)", tmp_path) == REFUSAL.format(
        rule="delete_unknown", what="rm would delete a path known only when it runs (a command's output, input it "
                                    "reads): the target of a recursive delete must be written out")
    assert rule('tmp=$(mktemp -d); rm -rf "$tmp"', tmp_path) == "delete_unknown"
    assert rule("xargs rm < files.txt", tmp_path) is None  # files, not trees
    assert rule("$(which rm) -rf $(some-tool)", tmp_path) == "delete_unknown"
    assert rule("f() { rm -rf \"$1\"; }", tmp_path) is None  # defined, never called here
    assert rule("f() { rm -rf \"$1\"; }; f $(some-tool)", tmp_path) == "delete_unknown"
    assert rule("source <(some-tool)", tmp_path) is None  # known only when it runs: docs/safety.md §Limits


def test_expansions_and_printers_worked_out(tmp_path):
    assert rule("x=/usr/bin; rm -rf ${x:0:4}", tmp_path) == "system_write"
    assert rule("x=abc; rm -rf /${x:5}", tmp_path) == "delete_root"  # past the end: empty
    assert rule("x=/ETC; touch ${x,,}/x", tmp_path) == "system_write"
    assert rule("rm -rf $(basename /x/ /)", tmp_path) is None  # `x`, here
    assert rule("rm -rf $(dirname $(dirname /a/b))", tmp_path) == "delete_root"
    assert rule("alias a='cd /'; a && rm -rf *", tmp_path) == "delete_root"
    assert rule("r() { r; rm -rf /; }; r", tmp_path) == "delete_root"  # read once inside itself


def test_a_known_temporary_folder(tmp_path):
    env = {"TMPDIR": "/tmp/mm-floor-t", "HOME": "/root"}
    assert rule('rm -rf "$TMPDIR/x"', tmp_path, env=env) is None
    assert rule('rm -rf "$TMPDIR"/*', tmp_path, env=env) is None
    assert rule('rm -rf "$TMPDIR/x"', tmp_path, env={"HOME": "/root"}) == "root_write"  # unset: /x
