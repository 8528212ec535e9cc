"""The agent files, `${VAR}` and the OpenAI SDK's variables through `mm -p` and `mm config`, against
the scripted model server: what reaches the request (the Authorization header read on the
server's side), and what `mm config` prints (docs/configuration.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mm.config.files import UNSET


def run_mm(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MM_", "OPENAI_", "XDG_"))}
    base["HOME"] = str(cwd)
    return subprocess.run([sys.executable, "-m", "mm", *args], cwd=cwd, env=base | (env or {}), capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def layered(tmp_path: Path, user: str, project: str) -> tuple[Path, dict[str, str]]:
    """A user file under XDG_CONFIG_HOME and a repository whose root holds `.mm/agent.yaml`;
    returns a folder two levels below the root, and the environment."""
    write(tmp_path / "xdg" / "mm" / "agent.yaml", user)
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    write(tmp_path / "repo" / ".mm" / "agent.yaml", project)
    deep = tmp_path / "repo" / "src" / "pkg"
    deep.mkdir(parents=True)
    return deep, {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}


def test_an_api_key_from_a_variable_reaches_the_server(scripted_server, tmp_path):
    write(tmp_path / ".mm" / "agent.yaml", f"baseUrl: {scripted_server.base_url}\nmodel: m\napiKey: ${{MY_KEY}}\n")
    scripted_server.add_reply("ok")
    proc = run_mm(["-p", "hi"], tmp_path, {"MY_KEY": "sk-from-the-environment"})
    assert proc.returncode == 0, proc.stderr
    assert scripted_server.request_headers[0]["authorization"] == "Bearer sk-from-the-environment"


def test_the_openai_variables_alone_find_the_server_and_send_the_key(scripted_server, tmp_path):
    scripted_server.add_reply("ok")
    proc = run_mm(["-p", "hi"], tmp_path, {"OPENAI_BASE_URL": scripted_server.base_url, "OPENAI_API_KEY": "sk-openai"})
    assert proc.returncode == 0, proc.stderr
    assert scripted_server.request_headers[0]["authorization"] == "Bearer sk-openai"
    assert scripted_server.requests[0]["model"] == "m"  # the server's first model: nothing named one
    assert proc.stdout == "ok\n"


def test_openai_api_base_and_a_file_key_that_wins(scripted_server, tmp_path):
    write(tmp_path / ".mm" / "agent.yaml", "model: m\napiKey: sk-file\n")
    scripted_server.add_reply("ok")
    proc = run_mm(["-p", "hi"], tmp_path, {"OPENAI_API_BASE": scripted_server.base_url, "OPENAI_API_KEY": "sk-env"})
    assert proc.returncode == 0, proc.stderr
    assert scripted_server.request_headers[0]["authorization"] == "Bearer sk-file"


def test_without_a_key_no_authorization_is_sent(scripted_server, tmp_path):
    scripted_server.add_reply("ok")
    proc = run_mm(["-p", "hi", "--base-url", scripted_server.base_url, "--model", "m"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "authorization" not in scripted_server.request_headers[0]


def test_a_project_file_in_a_parent_folder_is_merged_over_the_user_file(scripted_server, tmp_path):
    user = f"baseUrl: {scripted_server.base_url}\nmodel: user-model\napiKey: ${{TEAM_KEY:-sk-default}}\n"
    project = "model: project-model\nsystemPrompt: You are the PROJECT prompt.\n"
    deep, env = layered(tmp_path, user, project)
    scripted_server.models = ["user-model", "project-model"]
    scripted_server.add_reply("ok")
    proc = run_mm(["-p", "hi"], deep, env)
    assert proc.returncode == 0, proc.stderr
    request = scripted_server.requests[0]
    assert request["model"] == "project-model"
    assert request["messages"][0]["content"] == "You are the PROJECT prompt."
    assert scripted_server.request_headers[0]["authorization"] == "Bearer sk-default"


def test_an_unset_variable_stops_mm_before_any_request(scripted_server, tmp_path):
    agent = write(tmp_path / ".mm" / "agent.yaml", f"baseUrl: {scripted_server.base_url}\n\napiKey: ${{NOT_SET}}\n")
    proc = run_mm(["-p", "hi"], tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "mm: " + UNSET.format(where=f"{agent}:3", key="apiKey", name="NOT_SET") + "\n"
    assert scripted_server.requests == []


def test_an_error_in_the_user_file_names_it_from_a_subfolder(tmp_path):
    deep, env = layered(tmp_path, "model: m\nmaxTurns: many\n", "yolo: false\n")
    proc = run_mm(["-p", "hi"], deep, env)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"mm: {tmp_path}/xdg/mm/agent.yaml:2: maxTurns: ")
    assert proc.stderr.count("\n") == 1


def origins(text: str) -> dict[str, tuple[str, str]]:
    """The `key: value  # origin` lines of `mm config`: (value, origin) by key path
    (`sessions.dir`)."""
    found, block = {}, ""
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if " # " not in line:
            block = line.rstrip(":") if not line.startswith((" ", "-")) else block
            continue
        head, origin = line.rsplit(" # ", 1)
        key, value = head.split(":", 1)
        name = f"{block}.{key.strip()}" if key.startswith(" ") else key.strip()
        found[name] = (value.strip(), origin)
    return found


def test_mm_config_prints_each_value_with_where_it_came_from(tmp_path):
    user = "model: user-model\napiKey: ${TEAM_KEY}\nsessions:\n  enabled: true\n"
    project = "bashTimeout: 9\nsessions:\n  dir: .mm/s\nsystemPrompt: |\n  Line one.\n  Line two.\n"
    deep, env = layered(tmp_path, user, project)
    write(tmp_path / "repo" / "AGENTS.md", "Root rule.\n")
    env |= {"TEAM_KEY": "sk-very-secret", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "MM_YOLO": "false",
            "HOME": str(tmp_path / "home")}
    proc = run_mm(["config", "--provider", "llamacpp"], deep, env)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "sk-very-secret" not in out and "sk-very-secret" not in proc.stderr
    user_file, project_file = f"{tmp_path}/xdg/mm/agent.yaml", f"{tmp_path}/repo/.mm/agent.yaml"
    assert out.splitlines()[:3] == [f"# mm configuration for {deep}",
                                    f"# agent files, the later over the earlier: {user_file}, {project_file}",
                                    "# instructions: ../../AGENTS.md"]
    found = origins(out)
    assert found["model"] == ("user-model", f"{user_file}:1")
    assert found["apiKey"] == ("'********'", f"{user_file}:2 from ${{TEAM_KEY}} (hidden)")
    assert found["bashTimeout"] == ("9.0", f"{project_file}:1")
    assert found["provider"] == ("llamacpp", "--provider")
    assert found["baseUrl"] == ("null", "default")  # --provider names the server: OPENAI_BASE_URL is not used
    assert found["yolo"] == ("false", "MM_YOLO")
    assert found["sessions.enabled"] == ("true", f"{user_file}:4")
    assert found["sessions.dir"] == (".mm/s", f"{project_file}:3")
    assert found["maxTurns"] == ("40", "default")
    assert f"systemPrompt: |" in out and "\n  Line one.\n  Line two.\n" in out
    import yaml

    assert yaml.safe_load(out)["sessions"] == {"enabled": True, "dir": ".mm/s", "autoSearchMemory": False,
                                               "searchMemory": True}


def test_mm_config_names_an_openai_variable_and_refuses_other_flags(tmp_path):
    proc = run_mm(["config"], tmp_path, {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert proc.returncode == 0, proc.stderr
    assert origins(proc.stdout)["baseUrl"] == ("http://127.0.0.1:9/v1", "OPENAI_BASE_URL")
    assert "# agent files: none (the defaults)" in proc.stdout
    proc = run_mm(["config", "-p", "hi"], tmp_path)
    assert (proc.returncode, proc.stderr) == (2, "mm: config takes only -c, --model, --base-url and --provider\n")
    write(tmp_path / ".mm" / "agent.yaml", "bashTimout: 3\n")
    proc = run_mm(["config"], tmp_path)
    assert proc.returncode == 2 and "agent.yaml:1: bashTimout: unknown key (did you mean bashTimeout?)" in proc.stderr
