"""The agent file: discovery, overrides, and one-line errors naming file, line and key."""

from pathlib import Path

import pytest

from mm.config.load import ConfigError, load_config


def write(tmp_path: Path, text: str, name: str = ".mm/agent.yaml") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def error_of(tmp_path: Path, text: str) -> str:
    write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, env={})
    return str(info.value)


def test_defaults_without_a_file(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    loaded = load_config(cwd=tmp_path, env={})
    assert loaded.path is None
    cfg = loaded.config
    assert (cfg.yolo, cfg.bashTool, cfg.editTools, cfg.bashTimeout) == (True, True, True, 30.0)
    assert cfg.sessions.dir == ".mm/sessions"


def test_project_file_wins_over_home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    write(home, "model: from-home\n", ".config/mm/agent.yaml")
    assert load_config(cwd=tmp_path, env={}).config.model == "from-home"
    write(tmp_path, "model: from-project\n")
    assert load_config(cwd=tmp_path, env={}).config.model == "from-project"
    explicit = write(tmp_path, "model: explicit\n", "other.yaml")
    assert load_config(str(explicit), cwd=tmp_path, env={}).config.model == "explicit"


def test_flags_beat_environment_beat_file(tmp_path):
    write(tmp_path, "model: file\nbaseUrl: http://file/v1\nprovider: ollama\n")
    env = {"MM_MODEL": "env", "MM_BASE_URL": "http://env/v1", "MM_PROVIDER": "llamacpp"}
    cfg = load_config(cwd=tmp_path, env=env).config
    assert (cfg.model, cfg.baseUrl, cfg.provider) == ("env", "http://env/v1", "llamacpp")
    cfg = load_config(cwd=tmp_path, env=env, overrides={"model": "flag", "baseUrl": None}).config
    assert (cfg.model, cfg.baseUrl) == ("flag", "http://env/v1")


def test_unknown_key_names_file_line_and_suggestion(tmp_path):
    msg = error_of(tmp_path, "model: x\nbashTimout: 3\n")
    assert msg == f"{tmp_path}/.mm/agent.yaml:2: bashTimout: unknown key (did you mean bashTimeout?)"


def test_nested_unknown_key(tmp_path):
    msg = error_of(tmp_path, "sessions:\n  enabled: true\n  dri: x\n")
    assert msg.endswith(".mm/agent.yaml:3: sessions.dri: unknown key (did you mean dir?)")


def test_wrong_type_names_line_key_and_value(tmp_path):
    msg = error_of(tmp_path, "yolo: true\nmaxOutput: lots\n")
    assert ".mm/agent.yaml:2: maxOutput: " in msg and "'lots'" in msg
    assert "\n" not in msg


def test_bad_value(tmp_path):
    msg = error_of(tmp_path, "bashTimeout: -1\n")
    assert ".mm/agent.yaml:1: bashTimeout: input should be greater than 0" in msg
    msg = error_of(tmp_path, "provider: llama\n")
    assert ".mm/agent.yaml:1: provider: " in msg and "'llama'" in msg


def test_list_item_error_points_at_item(tmp_path):
    msg = error_of(tmp_path, "tools:\n  - name: ok\n    command: [echo]\n  - name: bad\n    command: []\n")
    assert ".mm/agent.yaml:5: tools[1].command: " in msg


def test_invalid_yaml_and_not_a_mapping(tmp_path):
    assert ".mm/agent.yaml:2: invalid YAML" in error_of(tmp_path, "model: x\nyolo: [true\n")
    assert "must be a mapping" in error_of(tmp_path, "- a\n- b\n")


def test_empty_file_is_defaults(tmp_path):
    write(tmp_path, "# nothing yet\n")
    assert load_config(cwd=tmp_path, env={}).config.maxTurns == 40


def test_missing_explicit_file(tmp_path):
    with pytest.raises(ConfigError, match="no such agent file"):
        load_config(str(tmp_path / "nope.yaml"), cwd=tmp_path, env={})


def test_declared_tool_that_cannot_work(tmp_path):
    msg = error_of(tmp_path, "tools:\n  - name: greet\n    command: [echo, '{{who}}']\n")
    assert msg.endswith(".mm/agent.yaml:2: tools[0]: tool greet: {{who}} in command is not a parameter")


def test_no_file_and_flags_only_skips_validation_but_checks_provider(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    cfg = load_config(cwd=tmp_path, env={}, overrides={"model": "m", "provider": "ollama"}).config
    assert (cfg.model, cfg.provider) == ("m", "ollama")
    with pytest.raises(ConfigError, match="provider"):
        load_config(cwd=tmp_path, env={}, overrides={"provider": "olama"})


@pytest.mark.parametrize("url,problem", [
    ("127.0.0.1:8080/v1", "must start with http:// or https://"),
    ("ftp://host/v1", "must start with http:// or https://"),
    ("http://", "must start with http:// or https://"),
    ("http://127.0.0.1:99999/v1", "is not a URL (Port out of range 0-65535)"),
    ("http://[::1/v1", "is not a URL"),
    ("http://127.0.0.1:8080/v1\n", "holds a space or a control character"),
    (" http://127.0.0.1:8080/v1", "holds a space or a control character"),
    ("http://127.0.0.1:8080/v1?x=1#f", "must not have a query or a fragment"),
    ("http://", "e.g. http://127.0.0.1:8080/v1"),
])
def test_base_url_from_a_flag_must_be_a_server_url(tmp_path, monkeypatch, url, problem):
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, env={}, overrides={"baseUrl": url})
    assert str(info.value).startswith("--base-url: baseUrl: ") and problem in str(info.value)


def test_base_url_in_the_file_names_its_line(tmp_path):
    msg = error_of(tmp_path, "yolo: true\nbaseUrl: localhost:8080\n")
    assert msg.endswith("agent.yaml:2: baseUrl: 'localhost:8080' must start with http:// or https:// and name a "
                        "host, e.g. http://localhost:8080")


def test_missing_gguf_file_is_a_configuration_error(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, env={"MM_MODEL": "/nonexistent.gguf"})
    assert str(info.value) == ("MM_MODEL: model: the model file /nonexistent.gguf does not exist — give the path "
                               "of a .gguf file")


@pytest.mark.parametrize("tools,problem", [
    ("  - {name: bash, command: [ls]}\n", "tools[0]: name 'bash' is a built-in tool — choose another name"),
    ("  - {name: g, command: [ls]}\n  - {name: g, command: [ls]}\n", "tools[1]: name 'g' is declared twice"),
    ("  - {name: 'bad name!', command: [ls]}\n", "tools[0]: name 'bad name!' must be letters, digits, _ or -"),
])
def test_declared_tool_names(tmp_path, tools, problem):
    assert problem in error_of(tmp_path, "tools:\n" + tools)


def test_self_referencing_alias(tmp_path):
    assert error_of(tmp_path, "a: &a [*a]\n").endswith("agent.yaml:1: a: unknown key")
    assert "tools[0]: input should be a dictionary" in error_of(tmp_path, "tools: &a [*a]\n")


def test_openai_provider_needs_a_base_url(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ConfigError, match=r"^--provider: provider: openai has no usual address — set baseUrl"):
        load_config(cwd=tmp_path, env={}, overrides={"provider": "openai"})


def test_bad_provider_flag_is_named_as_the_flag(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ConfigError, match=r"^--provider: provider: "):
        load_config(cwd=tmp_path, env={}, overrides={"provider": "nope"})


def test_dash_c_on_a_directory(tmp_path):
    with pytest.raises(ConfigError, match="is a directory — -c takes the agent file itself"):
        load_config(str(tmp_path), cwd=tmp_path, env={})


def test_nested_aliases_cost_nothing(tmp_path):
    levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        levels.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    msg = error_of(tmp_path, "\n".join(levels) + "\n")
    assert msg.endswith("agent.yaml:1: a: unknown key")
