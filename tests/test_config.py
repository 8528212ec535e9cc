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


# ---------------------------------------------------------------------------------------------
# The user's file and the project's, merged (docs/configuration.md §Where it is found)


def repo_with_layers(tmp_path: Path, user: str, project: str) -> tuple[Path, dict[str, str]]:
    """A repository (`.git` at its root) whose root holds `.mm/agent.yaml` = `project`, a user
    file = `user` under XDG_CONFIG_HOME; returns a folder two levels down, and the environment."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(root, project)
    write(tmp_path / "xdg", user, "mm/agent.yaml")
    deep = root / "src" / "pkg"
    deep.mkdir(parents=True)
    return deep, {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}


def test_the_project_file_is_found_from_a_subfolder_and_merged_over_the_user_file(tmp_path):
    user = ("model: user-model\nbashTimeout: 7\nsessions:\n  enabled: true\n  dir: /user/sessions\n"
            "webCrawler:\n  allowedHosts: [a.corp, b.corp]\ntools:\n  - {name: one, command: [echo, '1']}\n"
            "  - {name: two, command: [echo, '2']}\n")
    project = ("bashTimeout: 9\nsessions:\n  dir: .mm/s\nwebCrawler:\n  allowedHosts: [c.corp]\n"
               "tools:\n  - {name: three, command: [echo, '3']}\n")
    deep, env = repo_with_layers(tmp_path, user, project)
    loaded = load_config(cwd=deep, env=env)
    cfg = loaded.config
    assert loaded.files == [tmp_path / "xdg/mm/agent.yaml", tmp_path / "repo/.mm/agent.yaml"]
    assert cfg.model == "user-model" and cfg.bashTimeout == 9  # key by key
    assert (cfg.sessions.enabled, cfg.sessions.dir) == (True, ".mm/s")  # a block merged
    assert cfg.webCrawler.allowedHosts == ["c.corp"]  # a list replaced
    assert [t.name for t in cfg.tools] == ["three"]
    assert loaded.origin(("model",)) == f"{tmp_path}/xdg/mm/agent.yaml:1"
    assert loaded.origin(("sessions", "dir")) == f"{tmp_path}/repo/.mm/agent.yaml:3"
    assert loaded.origin(("sessions", "enabled")) == f"{tmp_path}/xdg/mm/agent.yaml:4"
    assert loaded.origin(("maxTurns",)) == "default"


def test_an_error_names_the_file_the_value_came_from(tmp_path):
    deep, env = repo_with_layers(tmp_path, "model: m\nmaxTurns: lots\n", "yolo: false\n")
    with pytest.raises(ConfigError) as info:
        load_config(cwd=deep, env=env)
    assert str(info.value).startswith(f"{tmp_path}/xdg/mm/agent.yaml:2: maxTurns: ")
    deep, env = repo_with_layers(tmp_path / "b", "tools:\n  - {name: ok, command: [ls]}\n",
                                 "model: m\n\ntools:\n  - {name: bad, command: []}\n")
    with pytest.raises(ConfigError) as info:
        load_config(cwd=deep, env=env)
    assert str(info.value).startswith(f"{tmp_path}/b/repo/.mm/agent.yaml:4: tools[0].command: ")
    # the user's value replaced by the project's is not checked any more
    deep, env = repo_with_layers(tmp_path / "c", "maxTurns: lots\n", "maxTurns: 3\n")
    assert load_config(cwd=deep, env=env).config.maxTurns == 3


def test_the_search_stops_at_the_repository_root_and_is_the_folder_alone_outside_one(tmp_path):
    write(tmp_path, "model: above-the-repository\n")
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    (root / ".git").write_text("gitdir: /elsewhere\n")  # a worktree's .git is a file
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert load_config(cwd=root / "sub", env=env).config.model is None
    plain = tmp_path / "plain" / "sub"
    plain.mkdir(parents=True)
    write(tmp_path / "plain", "model: in-the-parent\n")
    assert load_config(cwd=plain, env=env).config.model is None  # no repository: the folder alone
    write(plain, "model: here\n")
    assert load_config(cwd=plain, env=env).config.model == "here"


def test_the_nearest_project_file_wins_and_xdg_config_home_is_honoured(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(root, "model: root\nbashTimeout: 5\n")
    write(root / "pkg", "model: pkg\n")
    assert load_config(cwd=root / "pkg", env={}).config.bashTimeout == 30  # the nearest file only
    assert load_config(cwd=root / "pkg", env={}).config.model == "pkg"
    write(tmp_path / "home", "maxTurns: 4\n", ".config/mm/agent.yaml")
    write(tmp_path / "xdg", "maxTurns: 6\n", "mm/agent.yaml")
    assert load_config(cwd=root, env={}).config.maxTurns == 4  # XDG_CONFIG_HOME unset: ~/.config
    assert load_config(cwd=root, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")}).config.maxTurns == 6
    assert load_config(cwd=root, env={"XDG_CONFIG_HOME": "relative/xdg"}).config.maxTurns == 4  # XDG: ignored


def test_dash_c_reads_its_file_alone(tmp_path):
    deep, env = repo_with_layers(tmp_path, "model: user\nmaxTurns: 4\n", "bashTimeout: 9\n")
    explicit = write(tmp_path, "model: explicit\n", "other.yaml")
    loaded = load_config(str(explicit), cwd=deep, env=env)
    assert (loaded.config.model, loaded.config.maxTurns, loaded.config.bashTimeout) == ("explicit", 40, 30.0)
    assert loaded.files == [explicit]


def test_asked_agent_files_are_relative_to_the_file_naming_them(tmp_path):
    deep, env = repo_with_layers(tmp_path, "mmConfigs:\n  mine: agents/mine.yaml\n  both: {command: 'x --y'}\n",
                                 "mmConfigs:\n  ours: agents/ours.yaml\n  both: agents/both.yaml\n")
    for name in ("xdg/mm/agents/mine.yaml", "repo/.mm/agents/ours.yaml", "repo/.mm/agents/both.yaml"):
        write(tmp_path, "model: x\n", name)
    agents = load_config(cwd=deep, env=env).config.mmConfigs
    assert agents["mine"].config == str(tmp_path / "xdg/mm/agents/mine.yaml")
    assert agents["ours"].config == str(tmp_path / "repo/.mm/agents/ours.yaml")
    assert (agents["both"].config, agents["both"].command) == (str(tmp_path / "repo/.mm/agents/both.yaml"), None)


# ---------------------------------------------------------------------------------------------
# ${VAR} in values, and the OpenAI SDK's variables (docs/configuration.md §Environment variables)


def test_variables_are_expanded_in_every_string_value(tmp_path):
    write(tmp_path, "apiKey: ${KEY}\nbaseUrl: http://${HOST:-127.0.0.1}:${PORT:-8080}/v1\nmaxTurns: ${TURNS:-12}\n"
                    "systemPrompt: 'cost $5, ${WHO}, literal $${KEY} and $KEY'\n"
                    "tools:\n  - {name: t, command: [echo, '${WHO}', '{{x}}'], parameters: {x: {type: string}}}\n")
    env = {"KEY": "sk-secret", "PORT": "", "WHO": "me"}
    loaded = load_config(cwd=tmp_path, env=env)
    cfg = loaded.config
    assert cfg.apiKey == "sk-secret"
    assert cfg.baseUrl == "http://127.0.0.1:8080/v1"  # unset or empty: the default
    assert cfg.maxTurns == 12
    assert cfg.systemPrompt == "cost $5, me, literal ${KEY} and $KEY"
    assert cfg.tools[0].command == ["echo", "me", "{{x}}"]
    assert loaded.expanded[("baseUrl",)] == ["${HOST:-…}", "${PORT:-…}"]
    assert loaded.expanded[("apiKey",)] == ["${KEY}"]


def test_a_variable_set_empty_is_empty(tmp_path):
    write(tmp_path, "systemPrompt: 'a${EMPTY}b'\n")
    assert load_config(cwd=tmp_path, env={"EMPTY": ""}).config.systemPrompt == "ab"


def test_an_unset_variable_without_default_names_file_line_and_key(tmp_path):
    msg = error_of(tmp_path, "model: m\napiKey: ${OPENAI_API_KEY}\n")
    assert msg == (f"{tmp_path}/.mm/agent.yaml:2: apiKey: ${{OPENAI_API_KEY}} is not set — set the variable, "
                   "or write a default: ${OPENAI_API_KEY:-default}")
    msg = error_of(tmp_path, "tools:\n  - name: t\n    command:\n      - echo\n      - ${NOPE}\n")
    assert msg.startswith(f"{tmp_path}/.mm/agent.yaml:5: tools[0].command[1]: ${{NOPE}} is not set")


def test_expansion_walks_aliases_once(tmp_path):
    levels = ['a: &a ["${X}","${X}","${X}","${X}","${X}","${X}","${X}","${X}","${X}"]']
    for i, name in enumerate("bcdefghi"):
        levels.append(f"{name}: &{name} [" + ",".join([f"*{'abcdefghi'[i]}"] * 9) + "]")
    write(tmp_path, "\n".join(levels) + "\n")
    with pytest.raises(ConfigError, match="agent.yaml:1: a: unknown key"):
        load_config(cwd=tmp_path, env={"X": "y"})


@pytest.mark.parametrize("file,env,flags,expected", [
    ("", {"OPENAI_BASE_URL": "http://openai-base/v1"}, {}, ("http://openai-base/v1", "OPENAI_BASE_URL")),
    ("", {"OPENAI_API_BASE": "http://api-base/v1"}, {}, ("http://api-base/v1", "OPENAI_API_BASE")),
    ("", {"OPENAI_BASE_URL": "http://a/v1", "OPENAI_API_BASE": "http://b/v1"}, {}, ("http://a/v1", "OPENAI_BASE_URL")),
    ("baseUrl: http://file/v1\n", {"OPENAI_BASE_URL": "http://a/v1"}, {}, ("http://file/v1", None)),
    ("", {"OPENAI_BASE_URL": "http://a/v1", "MM_BASE_URL": "http://mm/v1"}, {}, ("http://mm/v1", "MM_BASE_URL")),
    ("", {"OPENAI_BASE_URL": "http://a/v1"}, {"baseUrl": "http://flag/v1"}, ("http://flag/v1", "--base-url")),
    ("provider: ollama\n", {"OPENAI_BASE_URL": "http://a/v1"}, {}, (None, None)),  # the provider names the server
    ("", {"OPENAI_BASE_URL": "http://a/v1"}, {"provider": "llamacpp"}, (None, None)),
    ("", {"OPENAI_BASE_URL": "http://a/v1", "MM_PROVIDER": "lmstudio"}, {}, (None, None)),
])
def test_openai_base_url_when_nothing_else_names_the_server(tmp_path, monkeypatch, file, env, flags, expected):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    if file:
        write(tmp_path, file)
    loaded = load_config(cwd=tmp_path, env=env, overrides=flags)
    assert (loaded.config.baseUrl, loaded.sources.get("baseUrl")) == expected


def test_openai_api_key_when_the_file_sets_none(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    env = {"OPENAI_API_KEY": "sk-env"}
    loaded = load_config(cwd=tmp_path, env=env)
    assert (loaded.config.apiKey, loaded.origin(("apiKey",))) == ("sk-env", "OPENAI_API_KEY")
    write(tmp_path, "apiKey: sk-file\n")
    assert load_config(cwd=tmp_path, env=env).config.apiKey == "sk-file"


def test_a_bad_openai_base_url_is_named_as_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    with pytest.raises(ConfigError, match=r"^OPENAI_BASE_URL: baseUrl: 'api.example.com/v1' must start with http://"):
        load_config(cwd=tmp_path, env={"OPENAI_BASE_URL": "api.example.com/v1"})


def test_a_gguf_model_keeps_the_embedded_engine(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF")
    cfg = load_config(cwd=tmp_path, env={"OPENAI_BASE_URL": "http://a/v1", "MM_MODEL": str(model)}).config
    assert cfg.baseUrl is None


def test_self_referencing_blocks_in_both_files_are_merged_in_bounded_steps(tmp_path):
    deep, env = repo_with_layers(tmp_path, "sessions: &s {enabled: true, more: *s}\n", "sessions: &p {more: *p}\n")
    with pytest.raises(ConfigError, match=r"repo/\.mm/agent\.yaml:1: sessions\.more: unknown key"):
        load_config(cwd=deep, env=env)
