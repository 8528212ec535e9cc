"""Skills where other agents keep them (issue 11 point 7; docs/skills.md §Where skills are):
skillsDir, then .agents/skills, .claude/skills and the user's ~/.config/mm/skills, first wins; the
frontmatter's `name`; a shadowed skill said once — through build_registry, a real `mm -p` and a
real `mm -acp` with two sessions."""

import os
from pathlib import Path

from harness import write_files
from test_acp_logs import Agent
from test_oneshot_e2e import run_mm

from mm.config.load import agent_config_adapter
from mm.skills import SHADOWED_BY, catalogue_of, skill_directories
from mm.tools.registry import build_registry


def skill(description: str, name: str | None = None) -> str:
    return "---\n" + (f"name: {name}\n" if name else "") + f"description: {description}\n---\nBody.\n"


FOLDERS = {".mm/skills": "project", ".agents/skills": "agents", ".claude/skills": "claude",
           "config/mm/skills": "user"}


def layout(cwd: Path) -> dict[str, str]:
    """`deploy` in all four folders, one skill of each folder's own, `review` in the last three."""
    files = {}
    for folder, who in FOLDERS.items():
        files[f"{folder}/deploy.md"] = skill(f"deploy, from {who}")
        files[f"{folder}/{who}-only/SKILL.md"] = skill(f"only in {who}")
        if who != "project":
            files[f"{folder}/review.md"] = skill(f"review, from {who}")
    write_files(cwd, files)
    return files


def registry(cwd: Path, config: dict | None = None, env: dict | None = None):
    env = {"XDG_CONFIG_HOME": str(cwd / "config"), "HOME": str(cwd / "home")} if env is None else env
    return build_registry(agent_config_adapter().validate_python(config or {}), env=env, cwd=cwd)


def test_the_four_folders_in_order_of_precedence(tmp_path, capfd):
    layout(tmp_path)
    found = {s.name: (s.description, s.path) for s in catalogue_of(registry(tmp_path))}
    assert sorted(found) == ["agents-only", "claude-only", "deploy", "project-only", "review", "user-only"]
    assert found["deploy"] == ("deploy, from project", tmp_path / ".mm/skills/deploy.md")
    assert found["review"] == ("review, from agents", tmp_path / ".agents/skills/review.md")
    assert found["user-only"][1] == tmp_path / "config/mm/skills/user-only/SKILL.md"
    said = capfd.readouterr().err.splitlines()
    winner = {"deploy": tmp_path / ".mm/skills/deploy.md", "review": tmp_path / ".agents/skills/review.md"}
    assert said == [SHADOWED_BY.format(name=name, path=tmp_path / folder / f"{name}.md", winner=winner[name])
                    for name, folder in [("deploy", ".agents/skills"), ("deploy", ".claude/skills"),
                                         ("review", ".claude/skills"), ("deploy", "config/mm/skills"),
                                         ("review", "config/mm/skills")]]  # folder by folder
    assert said[0] == (f'[warning: the skill "deploy" ({tmp_path}/.agents/skills/deploy.md) is not used: '
                       f"{tmp_path}/.mm/skills/deploy.md has the same name and comes first]")
    registry(tmp_path)  # built again (an ACP session): said once per process
    assert capfd.readouterr().err == ""
    (tmp_path / ".mm/skills/deploy.md").unlink()
    assert {s.name: s.description for s in catalogue_of(registry(tmp_path))}["deploy"] == "deploy, from agents"


def test_skills_dir_first_and_off_for_every_folder(tmp_path):
    layout(tmp_path)
    write_files(tmp_path, {"docs/skills/deploy.md": skill("deploy, from docs")})
    found = {s.name: s.description for s in catalogue_of(registry(tmp_path, {"skillsDir": "docs/skills"}))}
    assert found["deploy"] == "deploy, from docs" and "project-only" not in found  # .mm/skills is not looked at
    for off in ("", None):
        assert "read_skill" not in registry(tmp_path, {"skillsDir": off}).names


def test_where_the_user_folder_is(tmp_path):
    home = tmp_path / "home"
    assert skill_directories(".mm/skills", tmp_path, {"HOME": str(home)}) == [
        tmp_path / ".mm/skills", tmp_path / ".agents/skills", tmp_path / ".claude/skills",
        home / ".config/mm/skills"]
    assert skill_directories(".mm/skills", tmp_path, {"HOME": str(home), "XDG_CONFIG_HOME": "relative"})[-1] == \
        home / ".config/mm/skills"  # the XDG rule: a relative value is ignored
    assert skill_directories(".mm/skills", tmp_path, {"XDG_CONFIG_HOME": "/x"})[-1] == Path("/x/mm/skills")
    assert skill_directories(".claude/skills", tmp_path, {"HOME": str(home)}) == [  # named twice: once
        tmp_path / ".claude/skills", tmp_path / ".agents/skills", home / ".config/mm/skills"]


def test_the_frontmatter_name_is_the_skill_name(tmp_path, capfd):
    write_files(tmp_path, {
        ".claude/skills/pdf-tools/SKILL.md": skill("Work with PDF files.", name="pdf"),
        ".claude/skills/Odd File Name.md": skill("Named in the file.", name="odd"),
        ".claude/skills/bad.md": skill("x", name="two words"),
        ".claude/skills/number.md": "---\nname: 12\n---\nx\n",
        ".claude/skills/a-first.md": skill("the first of two", name="twin"),
        ".claude/skills/b-second.md": skill("the second of two", name="twin"),
    })
    found = {s.name: s.description for s in catalogue_of(registry(tmp_path))}
    assert found == {"pdf": "Work with PDF files.", "odd": "Named in the file.", "twin": "the first of two"}
    err = capfd.readouterr().err
    folder = tmp_path / ".claude/skills"
    assert (f"[warning: skill file {folder}/bad.md skipped: the name 'two words' is not letters, digits, _, - or . "
            "(64 at most, not starting with . or -)]") in err
    assert f"[warning: skill file {folder}/number.md skipped: its name is not text]" in err
    assert SHADOWED_BY.format(name="twin", path=folder / "b-second.md", winner=folder / "a-first.md") in err


def test_oneshot_finds_them_and_says_the_shadowed_once(scripted_server, tmp_path):
    layout(tmp_path)
    scripted_server.add_tool_calls([{"name": "read_skill", "arguments": {"name": "review"}}])
    scripted_server.add_reply("done")
    proc = run_mm(["-p", "$review the diff", "--base-url", scripted_server.base_url, "--model", "m"], tmp_path,
                  {"XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert proc.returncode == 0, proc.stderr
    shadowed = SHADOWED_BY.format(name="review", path=tmp_path / ".claude/skills/review.md",
                                  winner=tmp_path / ".agents/skills/review.md")
    assert proc.stderr.count(shadowed) == 1
    tool = [m for m in scripted_server.requests[1]["messages"] if m["role"] == "tool"][0]
    assert tool["content"] == skill("review, from agents")


def test_acp_sessions_find_them_and_the_log_says_the_shadowed_once(scripted_server, tmp_path):
    cwd = Path(os.path.realpath(tmp_path))
    layout(cwd)
    (cwd / "home").mkdir()
    write_files(cwd, {"home/.config/mm/skills/user-only.md": skill("in the user's folder")})  # XDG_CONFIG_HOME's
    agent = Agent(cwd, scripted_server, {})
    agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    commands = []
    for _ in range(2):
        answer, _ = agent.call("session/new", {"cwd": str(cwd), "mcpServers": []})
        _, updates = agent.call("session/prompt", {"sessionId": answer["result"]["sessionId"],
                                                   "prompt": [{"type": "text", "text": "/help"}]})
        commands.append(updates)
    err = agent.stderr()
    shadowed = SHADOWED_BY.format(name="deploy", path=cwd / ".claude/skills/deploy.md",
                                  winner=cwd / ".mm/skills/deploy.md")
    assert err.count(shadowed) == 1  # the start-up banner's tools and two sessions: once
    (help_text,) = [u["params"]["update"]["content"]["text"] for u in commands[1]
                    if u.get("method") == "session/update"
                    and u["params"]["update"]["sessionUpdate"] == "agent_message_chunk"]
    for name in ("deploy", "review", "agents-only", "claude-only", "project-only"):
        assert f"/{name} " in help_text
    assert "in the user's folder" in help_text
