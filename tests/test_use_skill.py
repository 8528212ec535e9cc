"""`use_skill` of the `memory` group (mnemo-tools.md §Conditional tools; notes/mnemoai.md §2.11,
§4.5; docs/skills.md §use_skill): mm's whole skill catalogue, the reference's result format and
unknown-name text, `$ARGUMENTS` and `${SKILL_DIR}`/`${CLAUDE_SKILL_DIR}` substituted in one
word-bounded pass — through the real engine against the scripted model server. Each weakness the
notes list for the reference's use_skill has a test here saying mm does not have it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness import RecordingUI, make_conversation, write_files

MEMORY = {"toolsets": ["core", "memory"]}
RESOURCES = "(Bundled resources for this skill, if any, live in: {folder} — read reference files and run scripts there.)"


@pytest.fixture
def config_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


async def use(srv, cwd, *calls, config=None) -> list:
    conv = make_conversation(srv.base_url, cwd, config or MEMORY)
    srv.add_tool_calls([{"name": "use_skill", "arguments": a} for a in calls])
    srv.add_reply("ok")
    ui = RecordingUI()
    await conv.run_turn("go", ui)
    return ui.done_calls()


def skill(cwd: Path, rel: str, body: str, front: str = "description: A skill.") -> Path:
    write_files(cwd, {rel: f"---\n{front}\n---\n{body}"})
    return Path(os.path.abspath(cwd / rel)).parent


async def test_the_result_format(scripted_server, tmp_path, config_home):
    folder = skill(tmp_path, ".mm/skills/deploy/SKILL.md", "\n# Deploy\nRun ${SKILL_DIR}/go.sh $ARGUMENTS now.\n\n")
    (done,) = await use(scripted_server, tmp_path, {"name": "deploy", "arguments": "staging"})
    assert done.result.text == (f"# Skill: deploy\n\n# Deploy\nRun {folder}/go.sh staging now.\n\n---\n"
                                + RESOURCES.format(folder=folder))
    assert not done.result.failed
    assert done.result.preview == "(skill deploy: 7 line(s) loaded, not shown)"


async def test_the_unknown_name_text(scripted_server, tmp_path, config_home):
    skill(tmp_path, ".mm/skills/deploy/SKILL.md", "x")
    skill(tmp_path, ".mm/skills/review.md", "y")
    done = await use(scripted_server, tmp_path, {"name": "Deploy"}, {"name": " nope "})
    assert [(d.result.text, d.result.failed) for d in done] == [
        ("No skill named 'Deploy'. Available skills: deploy, review. Use the exact name shown in <available_skills>.",
         True),
        ("No skill named 'nope'. Available skills: deploy, review. Use the exact name shown in <available_skills>.",
         True)]


async def test_the_description_lists_the_skills_in_available_skills(scripted_server, tmp_path, config_home):
    """The unknown-name text points at <available_skills>: mm's tool description holds it (the
    reference's was in a system prompt block)."""
    skill(tmp_path, ".mm/skills/deploy/SKILL.md", "x", "description: Ship it.")
    skill(tmp_path, ".mm/skills/review.md", "y", "description: Read the diff.")
    tool = make_conversation(scripted_server.base_url, tmp_path, MEMORY).registry.get("use_skill")
    assert ("\n<available_skills>\n  - deploy: Ship it.\n  - review: Read the diff.\n</available_skills>"
            in tool.description)
    assert [(p.name, p.required) for p in tool.params] == [("name", True), ("arguments", False)]


async def test_every_folder_of_the_catalogue(scripted_server, tmp_path, config_home):
    skill(tmp_path, ".claude/skills/claude-one/SKILL.md", "from claude")
    skill(tmp_path, ".agents/skills/shared.md", "from agents")
    users = skill(config_home, "mm/skills/mine/SKILL.md", "mine: ${CLAUDE_SKILL_DIR}")
    done = await use(scripted_server, tmp_path, {"name": "claude-one"}, {"name": "shared"}, {"name": "mine"})
    assert "from claude" in done[0].result.text
    assert "from agents" in done[1].result.text
    assert done[1].result.text.endswith(RESOURCES.format(folder=tmp_path / ".agents" / "skills"))
    assert f"mine: {users}\n" in done[2].result.text


async def test_not_declared_without_a_skill(scripted_server, tmp_path, config_home):
    registry = make_conversation(scripted_server.base_url, tmp_path, MEMORY).registry
    assert registry.get("use_skill") is None and registry.get("memory") is not None


async def test_the_name_of_the_catalogue_is_the_front_matter_s(scripted_server, tmp_path, config_home):
    """The reference's code took the directory name while its docs said `name:`; mm has one name per
    skill, the catalogue's (the front matter's `name`, else the file or folder), as read_skill and `$name`."""
    skill(tmp_path, ".mm/skills/pdf-tools/SKILL.md", "pdf body", "name: pdf\ndescription: PDFs.")
    done = await use(scripted_server, tmp_path, {"name": "pdf"}, {"name": "pdf-tools"}, {"name": "$pdf"})
    assert done[0].result.text.startswith("# Skill: pdf\n\npdf body")
    assert done[1].result.failed
    assert not done[2].result.failed  # the `$name` notation a small model copies


# ---------------------------------------------------------------------------------------------
# substitution: one word-bounded pass (CL 1.6.0)


@pytest.mark.parametrize("body, arguments, expected", [
    ("a $ARGUMENTS b", "x y", "a x y b"),
    ("${ARGUMENTS}!", "x", "x!"),
    ("$SKILL_DIR/s.sh ${SKILL_DIR}/t.sh $CLAUDE_SKILL_DIR/u ${CLAUDE_SKILL_DIR}/v", "", "D/s.sh D/t.sh D/u D/v"),
    ("$ARGUMENTS_LIST $SKILL_DIRS $ARGUMENTSx", "x", "$ARGUMENTS_LIST $SKILL_DIRS $ARGUMENTSx\n\nARGUMENTS: x"),
    # what the arguments hold is never substituted again (the reference's sequential replace did)
    ("run $ARGUMENTS in ${SKILL_DIR}", "${SKILL_DIR} and $ARGUMENTS", "run ${SKILL_DIR} and $ARGUMENTS in D"),
    ("no variable", "", "no variable"),
    ("no variable", "file.py", "no variable\n\nARGUMENTS: file.py"),
    ("cost: $5 and $HOME", "", "cost: $5 and $HOME"),
])
async def test_substitution(scripted_server, tmp_path, config_home, body, arguments, expected):
    folder = skill(tmp_path, ".mm/skills/s/SKILL.md", body)
    (done,) = await use(scripted_server, tmp_path, {"name": "s", "arguments": arguments})
    assert done.result.text == f"# Skill: s\n\n{expected.replace('D/', f'{folder}/').replace(' D', f' {folder}')}" \
                               f"\n\n---\n{RESOURCES.format(folder=folder)}"


# ---------------------------------------------------------------------------------------------
# the reference's weaknesses


async def test_a_skill_that_became_a_named_pipe_is_not_waited_on(scripted_server, tmp_path, config_home):
    """The reference read SKILL.md whole, whatever it was."""
    skill(tmp_path, ".mm/skills/s/SKILL.md", "x")
    conv = make_conversation(scripted_server.base_url, tmp_path, MEMORY)
    path = tmp_path / ".mm" / "skills" / "s" / "SKILL.md"
    path.unlink()
    os.mkfifo(path)
    scripted_server.add_tool_calls([{"name": "use_skill", "arguments": {"name": "s"}}])
    scripted_server.add_reply("ok")
    ui = RecordingUI()
    await conv.run_turn("go", ui)
    (done,) = ui.done_calls()
    assert done.result.failed
    assert done.result.text.startswith(f"[use_skill: the skill s ({path}) cannot be read: it is a named pipe")


async def test_a_large_skill_is_cut_to_max_output(scripted_server, tmp_path, config_home):
    skill(tmp_path, ".mm/skills/big/SKILL.md", "line of text\n" * 5000)
    (done,) = await use(scripted_server, tmp_path, {"name": "big"}, config={**MEMORY, "maxOutput": 2000})
    assert len(done.result.text) <= 2000 and "[... truncated to maxOutput (2000 characters)" in done.result.text


async def test_the_result_names_no_tool_that_may_not_be_declared(scripted_server, tmp_path, config_home):
    """The reference's result sent the model to fs_read and execute_bash, declared or not."""
    skill(tmp_path, ".mm/skills/s/SKILL.md", "x")
    (done,) = await use(scripted_server, tmp_path, {"name": "s"})
    assert "fs_read" not in done.result.text and "execute_bash" not in done.result.text


async def test_read_skill_and_use_skill_say_which_to_prefer(scripted_server, tmp_path, config_home):
    skill(tmp_path, ".mm/skills/s/SKILL.md", "x")
    registry = make_conversation(scripted_server.base_url, tmp_path, MEMORY).registry
    assert registry.get("read_skill").description.endswith(
        " use_skill loads the same skills, with their $ARGUMENTS filled in.")
    assert registry.get("use_skill").description.endswith(
        " The same skills as read_skill's; prefer use_skill when the skill takes arguments.")
