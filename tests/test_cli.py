"""`mm`'s flags and help (issue 11 point 8): `--acp`, `-v`, `mm --help`'s sections, and the shell
completion scripts of `mm --completion SHELL`, made by shtab and read by the real shells."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from acp_cases import child_env

MM = [sys.executable, "-m", "mm"]


def mm(*args: str, cwd, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*MM, *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL, env=child_env(cwd), **kwargs)


def test_help_has_examples_variables_files_and_exit_statuses(tmp_path):
    shown = mm("--help", cwd=tmp_path)
    assert shown.returncode == 0 and shown.stderr == ""
    out = shown.stdout
    for part in ("usage: mm [PROMPT] [-p [PROMPT] [--output-format FORMAT] [--json-schema FILE] | -acp | --ask AGENT PROMPT]", "mm config",
                 "-acp, --acp", "-v, --version", "--continue", "OPENAI_BASE_URL", "AGENTS.md", "--completion SHELL", "examples:\n  mm                                  line mode",
                 'mm -p "why does make test fail?"', "environment variables:\n  MM_MODEL, MM_BASE_URL, MM_PROVIDER",
                 "VISUAL, EDITOR", "configuration files:\n  .mm/agent.yaml", "~/.config/mm/agent.yaml",
                 ".mm/skills, .agents/skills, .claude/skills, ~/.config/mm/skills",
                 "exit statuses:\n  0    done\n  1    the turn failed", "130  interrupted"):
        assert part in out, part
    assert out.index("examples:") < out.index("environment variables:") < out.index("configuration files:") \
        < out.index("exit statuses:")


def test_v_is_version(tmp_path):
    long, short = mm("--version", cwd=tmp_path), mm("-v", cwd=tmp_path)
    assert long.returncode == short.returncode == 0 and long.stdout == short.stdout
    assert long.stdout.startswith("mm v") and long.stdout.endswith("\n")


def test_version_and_help_import_no_completion_library(tmp_path):
    code = ("import sys, contextlib, io\nfrom mm.cli import main\nmain(['-v'])\n"
            "print('argparse' in sys.modules, 'shtab' in sys.modules)\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    main(['--completion', 'bash'])\n"
            "print('shtab' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.stdout.splitlines()[1:] == ["False False", "True"], out.stderr


def test_double_dash_acp_serves_the_protocol(tmp_path, scripted_server):
    proc = subprocess.Popen([*MM, "--acp", "--base-url", scripted_server.base_url, "--model", "m"], cwd=tmp_path,
                            env=child_env(tmp_path), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    out, _ = proc.communicate((json.dumps(request) + "\n").encode(), timeout=60)
    assert proc.returncode == 0
    assert json.loads(out.splitlines()[0])["result"]["protocolVersion"] == 1


def test_a_shell_that_is_not_offered(tmp_path):
    out = mm("--completion", "powershell", cwd=tmp_path)
    assert out.returncode == 2 and "argument --completion: invalid choice: 'powershell'" in out.stderr


def script_for(shell: str, tmp_path) -> str:
    out = mm("--completion", shell, cwd=tmp_path)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert out.stdout.endswith("\n")  # appended to a shell's rc file, it joins no lines
    for flag in ("completion", "base-url", "acp", "resume"):  # `--flag`, or fish's `-l flag`
        assert f"--{flag}" in out.stdout or f"-l {flag}" in out.stdout, flag
    path = tmp_path / f"mm.{shell}"
    path.write_text(out.stdout)
    return str(path)


def test_bash_reads_the_script_and_completes_the_flags(tmp_path):
    path = script_for("bash", tmp_path)
    assert subprocess.run(["bash", "-n", path], capture_output=True, text=True).returncode == 0
    probe = (f"source {path}\ncomplete -p mm\n"
             "COMP_WORDS=(mm --comp); COMP_CWORD=1; COMP_LINE='mm --comp'; COMP_POINT=${#COMP_LINE}\n"
             "_shtab_mm mm --comp mm; printf '%s\\n' \"${COMPREPLY[@]}\"\n"
             "COMP_WORDS=(mm --completion ''); COMP_CWORD=2; COMP_LINE='mm --completion '; COMP_POINT=${#COMP_LINE}\n"
             "_shtab_mm mm '' --completion; printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    out = subprocess.run(["bash", "--norc", "--noprofile", "-c", probe], capture_output=True, text=True, timeout=30,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split()
    assert "_shtab_mm" in out.stdout.splitlines()[0] and lines.count("--completion") == 1
    assert sorted(set(lines) & {"bash", "zsh", "fish"}) == ["bash", "fish", "zsh"]


@pytest.mark.parametrize("shell,check", [("zsh", ["zsh", "-n"]), ("fish", ["fish", "--no-execute"])])
def test_zsh_and_fish_read_their_scripts(tmp_path, shell, check):
    path = script_for(shell, tmp_path)
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    out = subprocess.run([*check, path], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr


def test_fish_completes_the_flags(tmp_path):
    path = script_for("fish", tmp_path)
    if shutil.which("fish") is None:
        pytest.skip("fish is not installed")
    env = {k: v for k, v in os.environ.items()} | {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "c")}
    out = subprocess.run(["fish", "--no-config", "-c", f"source {path}; complete -C 'mm --compl'"],
                         capture_output=True, text=True, timeout=30, env=env)
    assert out.returncode == 0 and out.stdout.startswith("--completion"), (out.stdout, out.stderr)
