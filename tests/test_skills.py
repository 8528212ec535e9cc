"""Skills: the catalogue, the read_skill tool and the $name notation (mm-tools.md §read_skill,
mm-acp.md §Skills as commands, docs/skills.md). Real files, the scripted server, a real `mm -p`."""

import os
import subprocess
import sys

import pytest

from harness import RecordingUI, make_conversation, write_files
from test_oneshot_e2e import run_mm, tool_results

from mm.config.load import ConfigError, agent_config_adapter, load_config
from mm.config.schema import DEFAULT_SYSTEM_PROMPT
from mm.skills import (NO_DESCRIPTION, SYSTEM_PROMPT_NOTE, Skill, advertised_skills, catalogue_of, load_catalogue,
                       resolve_skill_notation, rewrite_skill_command, shadowed_line, shadowed_skills)
from mm.tools.read_skill import ReadSkill
from mm.tools.registry import build_registry
from mm.ui.render import call_header

GREETINGS = ("---\nname: greetings\ndescription: Greet somebody with a festive message.\n---\n"
             "Greet the person named in the input, festively. SKILL-BODY-GREETINGS\n")
BG_JOBS = "# Background jobs\n\nStart, wait on and stop a long-running job. SKILL-BODY-BG\n"
HEAD = ("Read a skill: a written procedure for a kind of task. Call it with the skill's name before doing "
        "a task a skill covers, or when the user names one as $name, then follow what it says. The skills:")
NOTE = ('[mm: "$greetings" names the skill greetings — call read_skill with {"name": "greetings"} first, '
        "then follow it; the rest of the message is its input]")


def skills_in(tmp_path, files, where=".mm/skills"):
    write_files(tmp_path, {f"{where}/{rel}": text for rel, text in files.items()})
    return tmp_path / where


def registry_for(tmp_path, config=None):
    return build_registry(agent_config_adapter().validate_python(config or {}), env={"HOME": str(tmp_path / "home")},
                          cwd=tmp_path)


def catalogue(tmp_path):
    return catalogue_of(registry_for(tmp_path))


# -- the catalogue

def test_flat_file_and_directory_skills_sorted_by_name_flat_file_wins(tmp_path):
    directory = skills_in(tmp_path, {"greetings.md": GREETINGS, "bg-jobs/SKILL.md": BG_JOBS,
                                     "greetings/SKILL.md": "---\ndescription: the directory one\n---\n",
                                     "empty-dir/README.md": "not a skill", "notes.txt": "not a skill",
                                     ".hidden.md": "---\ndescription: hidden\n---\n",
                                     ".git/SKILL.md": "hidden too"})
    found = load_catalogue(directory)
    assert found == [
        Skill("bg-jobs", "Background jobs", directory / "bg-jobs" / "SKILL.md"),
        Skill("greetings", "Greet somebody with a festive message.", directory / "greetings.md"),
    ]


def test_description_without_frontmatter_or_description_is_the_first_body_line(tmp_path):
    directory = skills_in(tmp_path, {
        "a.md": "\n\n## Release checklist  \nbody\n",
        "b.md": "---\nname: other\nargument_hint: x\n---\n\nFirst line of b.\nsecond\n",
        "c.md": "",
        "d.md": "---\ndescription: '  '\n---\n",
        "e.md": "---\ndescription: >\n  Folded over\n  two lines.\n---\nbody\n",
        "f.md": "---\ndescription: " + "x" * 300 + "\n---\n",
        "g.md": "\ufeff---\r\ndescription: CRLF and a BOM\r\n---\r\nbody\r\n",
        "h.md": "---\n---\nEmpty frontmatter.\n",
    })
    described = {s.name: s.description for s in load_catalogue(directory)}
    assert described == {"a": "Release checklist", "other": "First line of b.", "c": NO_DESCRIPTION,
                         "d": NO_DESCRIPTION, "e": "Folded over two lines.", "f": "x" * 199 + "…",
                         "g": "CRLF and a BOM", "h": "Empty frontmatter."}
    assert NO_DESCRIPTION == "(no description)"


def test_bad_files_are_skipped_and_said(tmp_path):
    directory = skills_in(tmp_path, {
        "good.md": GREETINGS,
        "yaml.md": "---\ndescription: [unclosed\n---\nbody\n",
        "open.md": "---\ndescription: never closed\n",
        "list.md": "---\n- a\n- b\n---\n",
        "number.md": "---\ndescription: [1, 2]\n---\n",
        "-dash.md": "x\n",
        "two words.md": "x\n",
    })
    (directory / "latin1.md").write_bytes(b"caf\xe9\n")
    said = []
    assert [s.name for s in load_catalogue(directory, warn=said.append)] == ["greetings"]  # good.md's own name
    d = directory
    assert said == [
        f"[warning: skill file {d}/-dash.md skipped: the name '-dash' is not letters, digits, _, - or . "
        "(64 at most, not starting with . or -)]",
        f"[warning: skill file {d}/latin1.md skipped: it is not UTF-8 text]",
        f"[warning: skill file {d}/list.md skipped: its frontmatter is not a mapping of keys (key: value)]",
        f"[warning: skill file {d}/number.md skipped: its description is not text]",
        f"[warning: skill file {d}/open.md skipped: its frontmatter has no closing --- line]",
        f"[warning: skill file {d}/two words.md skipped: the name 'two words' is not letters, digits, _, - or . "
        "(64 at most, not starting with . or -)]",
        f"[warning: skill file {d}/yaml.md skipped: its frontmatter is not valid YAML: expected ',' or ']', "
        "but got '<stream end>' (line 3)]",
    ]
    assert load_catalogue(directory) == load_catalogue(directory, warn=said.append)[:1]  # silent by default


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_skipped(tmp_path):
    directory = skills_in(tmp_path, {"locked.md": GREETINGS, "open.md": GREETINGS})
    (directory / "locked.md").chmod(0)
    said = []
    assert [s.name for s in load_catalogue(directory, warn=said.append)] == ["open"]
    assert said == [f"[warning: skill file {directory}/locked.md skipped: it cannot be read: permission denied]"]


def test_empty_or_missing_directory_declares_no_tool(tmp_path):
    assert load_catalogue(tmp_path / "nowhere") == []
    (tmp_path / ".mm" / "skills").mkdir(parents=True)
    assert load_catalogue(tmp_path / ".mm" / "skills") == []
    assert "read_skill" not in registry_for(tmp_path).names
    (tmp_path / ".mm" / "skills" / "bad.md").write_text("---\nx: [\n---\n")
    assert "read_skill" not in registry_for(tmp_path).names  # only a skipped file
    (tmp_path / ".mm" / "skills" / "greetings.md").write_text(GREETINGS)
    assert "read_skill" in registry_for(tmp_path).names
    assert "read_skill" not in build_registry(agent_config_adapter().validate_python({}), env={}).names  # no cwd


def test_skills_dir_key_relative_absolute_and_off(tmp_path):
    skills_in(tmp_path, {"greetings.md": GREETINGS}, where="docs/skills")
    assert "read_skill" not in registry_for(tmp_path).names  # the default is .mm/skills
    assert [s.name for s in catalogue_of(registry_for(tmp_path, {"skillsDir": "docs/skills"}))] == ["greetings"]
    absolute = str(tmp_path / "docs" / "skills")
    assert "read_skill" in registry_for(tmp_path / "elsewhere", {"skillsDir": absolute}).names
    skills_in(tmp_path, {"greetings.md": GREETINGS})
    for off in ("", None):
        assert "read_skill" not in registry_for(tmp_path, {"skillsDir": off}).names


def test_skills_dir_in_the_agent_file_and_its_errors(tmp_path):
    agent = tmp_path / "agent.yaml"
    agent.write_text("skillsDir: docs/skills\n")
    assert load_config(str(agent), tmp_path, env={}).config.skillsDir == "docs/skills"
    agent.write_text("model: m\nskillsDir: 3\n")
    with pytest.raises(ConfigError) as err:
        load_config(str(agent), tmp_path, env={})
    assert str(err.value) == f"{agent}:2: skillsDir: input should be a valid string (got 3)"
    agent.write_text("tools:\n  - name: read_skill\n    command: [echo]\n")
    with pytest.raises(ConfigError) as err:
        load_config(str(agent), tmp_path, env={})
    assert str(err.value) == f"{agent}:2: tools[0]: name 'read_skill' is a built-in tool — choose another name"


def test_reading_the_catalogue_imports_yaml_only_for_frontmatter(tmp_path):
    skills_in(tmp_path, {"plain.md": BG_JOBS})
    code = ("import sys; from pathlib import Path; from mm.skills import load_catalogue; "
            "load_catalogue(Path('.mm/skills')); print('yaml' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout == "False\n"


# -- the read_skill tool

def test_description_lists_the_catalogue_sorted_by_name(tmp_path):
    skills_in(tmp_path, {"greetings.md": GREETINGS, "bg-jobs/SKILL.md": BG_JOBS})
    tool = registry_for(tmp_path).get("read_skill")
    assert tool.description == (HEAD + "\n  bg-jobs — Background jobs\n"
                                "  greetings — Greet somebody with a festive message.")
    assert (tool.kind, tool.needs_permission) == ("read", False)
    (schema,) = [s for s in registry_for(tmp_path).schemas() if s["function"]["name"] == "read_skill"]
    assert schema["function"]["parameters"] == {
        "type": "object", "required": ["name"],
        "properties": {"name": {"type": "string",
                                "description": "Skill name, exactly as listed in the tool description."}}}
    assert tool.title({"name": "greetings"}) == "read_skill: greetings"


async def test_output_is_the_whole_file_and_no_permission_is_asked(scripted_server, tmp_path):
    skills_in(tmp_path, {"greetings.md": GREETINGS, "bg-jobs/SKILL.md": BG_JOBS})
    scripted_server.add_tool_calls([{"id": "r1", "name": "read_skill", "arguments": {"name": "greetings"}},
                                    {"id": "r2", "name": "read_skill", "arguments": {"name": "bg-jobs"}}])
    scripted_server.add_reply("Happy holidays, Bob!")
    conv = make_conversation(scripted_server.base_url, tmp_path, {"yolo": False})
    ui = RecordingUI()
    done = await conv.run_turn("greet Bob", ui)
    assert done.stop_reason == "end_turn"
    assert ui.asked == []  # kind read: never a permission, even with yolo false
    assert tool_results(scripted_server.requests[1]) == {"r1": GREETINGS, "r2": BG_JOBS}
    first, second = ui.done_calls()
    assert not first.result.failed
    assert first.result.preview == "(skill greetings: 5 line(s) read, not shown)"
    assert first.result.locations == [tmp_path / ".mm" / "skills" / "greetings.md"]
    assert done.recap.skills == 2 and done.recap.file_ops == 0


async def test_output_is_truncated_to_max_output(scripted_server, tmp_path):
    body = "".join(f"step {i}: do the thing number {i}\n" for i in range(100))
    skills_in(tmp_path, {"long.md": body})
    scripted_server.add_tool_calls([{"id": "r", "name": "read_skill", "arguments": {"name": "long"}}])
    scripted_server.add_reply("ok")
    conv = make_conversation(scripted_server.base_url, tmp_path, {"maxOutput": 300})
    await conv.run_turn("go", RecordingUI())
    text = tool_results(scripted_server.requests[1])["r"]
    assert len(text) <= 300
    head, marker = text.rsplit("\n", 1)[0], text.rsplit("\n", 1)[1]
    shown = len(head) + 1
    assert body.startswith(head + "\n")
    assert marker == (f"[... truncated to maxOutput (300 characters): {shown} of the skill's {len(body)} "
                      "characters shown ...]")


async def test_unknown_name_and_path_safety(scripted_server, tmp_path):
    skills_in(tmp_path, {"greetings.md": GREETINGS, "bg-jobs/SKILL.md": BG_JOBS})
    (tmp_path / ".mm" / "secret.md").write_text("SECRET\n")
    asked = ["x", "../etc/passwd", "../secret", "../../.mm/skills/greetings", "$greetings", "greetings.md",
             "bg-jobs/SKILL.md"]
    scripted_server.add_tool_calls([{"id": f"c{i}", "name": "read_skill", "arguments": {"name": name}}
                                    for i, name in enumerate(asked)])
    scripted_server.add_reply("ok")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    await conv.run_turn("go", RecordingUI())
    results = tool_results(scripted_server.requests[1])
    unknown = 'No skill named "{}". Available skills: bg-jobs, greetings'
    assert results == {"c0": unknown.format("x"), "c1": unknown.format("passwd"), "c2": unknown.format("secret"),
                       "c3": GREETINGS, "c4": GREETINGS, "c5": GREETINGS, "c6": unknown.format("SKILL")}


async def test_a_skill_gone_since_the_start_is_said(scripted_server, tmp_path):
    directory = skills_in(tmp_path, {"greetings.md": GREETINGS})
    scripted_server.add_tool_calls([{"id": "r", "name": "read_skill", "arguments": {"name": "greetings"}}])
    scripted_server.add_reply("ok")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    (directory / "greetings.md").unlink()
    ui = RecordingUI()
    await conv.run_turn("go", ui)
    (call,) = ui.done_calls()
    assert call.result.failed
    assert call.result.text == (f"[read_skill: the skill greetings ({directory}/greetings.md) cannot be read: "
                                "no such file or directory]")


def test_oneshot_shows_the_header_not_the_skill(scripted_server, tmp_path):
    skills_in(tmp_path, {"greetings.md": GREETINGS})
    scripted_server.add_tool_calls([{"id": "r", "name": "read_skill", "arguments": {"name": "greetings"}}])
    scripted_server.add_reply("Happy holidays, Bob!")
    proc = run_mm(["-p", "greet Bob", "--base-url", scripted_server.base_url, "--model", "m"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Happy holidays, Bob!\n"
    assert proc.stderr == ("📖 read_skill: greetings\n   (skill greetings: 5 line(s) read, not shown)\n"
                           "⚙ 0 command(s) · 📝 0 file op(s) · 📖 1 skill(s)\n")
    assert tool_results(scripted_server.requests[1]) == {"r": GREETINGS}  # the model gets it all


def test_oneshot_says_the_skipped_files(scripted_server, tmp_path):
    directory = skills_in(tmp_path, {"greetings.md": GREETINGS, "open.md": "---\nx: 1\n"})
    scripted_server.add_reply("ok")
    proc = run_mm(["-p", "hi", "--base-url", scripted_server.base_url, "--model", "m"], tmp_path)
    assert proc.stderr.startswith(
        f"[warning: skill file {directory}/open.md skipped: its frontmatter has no closing --- line]\n")


def test_terminal_header():
    assert call_header("read_skill", {"name": "greetings"}) == "📖 read_skill: greetings"
    assert call_header("read_skill", {"name": "a\x1b[2Jb"}) == "📖 read_skill: a^[[2Jb"


# -- the $name notation

def test_notation_appends_one_note_per_skill_named(tmp_path):
    skills_in(tmp_path, {"greetings.md": GREETINGS, "bg.md": "x\n", "bg-jobs.md": "y\n"})
    cat = catalogue(tmp_path)
    bg_note = NOTE.replace("greetings", "bg")
    jobs_note = NOTE.replace("greetings", "bg-jobs")
    assert resolve_skill_notation("$greetings Bob", cat) == "$greetings Bob\n" + NOTE
    assert resolve_skill_notation("please $greetings Bob, then $bg-jobs. And $greetings again.", cat) == (
        "please $greetings Bob, then $bg-jobs. And $greetings again.\n" + NOTE + "\n" + jobs_note)
    assert resolve_skill_notation("($bg)", cat) == "($bg)\n" + bg_note
    once = resolve_skill_notation("$greetings Bob", cat)
    assert resolve_skill_notation(once, cat) == once  # resolving twice adds nothing
    for untouched in ("$frobnicate now", "it costs $5", "a$greetings", "$$greetings", "$greetings_x",
                      "$greetings-x", "$greetings.md", "$Greetings", "greetings", "/greetings Bob"):
        assert resolve_skill_notation(untouched, cat) is untouched
    assert resolve_skill_notation("$greetings", []) == "$greetings"


def test_commands_shadowing_and_rewriting(tmp_path):
    skills_in(tmp_path, {"greetings.md": GREETINGS, "compact.md": "---\ndescription: shadow\n---\n",
                         "new/SKILL.md": "shadow\n"})
    cat = catalogue(tmp_path)
    assert [s.name for s in shadowed_skills(cat)] == ["compact", "new"]
    assert [s.name for s in advertised_skills(cat)] == ["greetings"]
    directory = tmp_path / ".mm" / "skills"
    assert shadowed_line(cat[0]) == (f'the skill "compact" ({directory}/compact.md) is not offered as /compact: '
                                     "mm's own /compact command wins")
    assert rewrite_skill_command("/greetings the team", cat) == "$greetings the team"
    assert rewrite_skill_command("  /greetings\nline two ", cat) == "$greetings\nline two"
    assert rewrite_skill_command("/greetings", cat) == "$greetings"
    for untouched in ("/frobnicate now", "/compact", "/new", "say /greetings", "$greetings x", "/"):
        assert rewrite_skill_command(untouched, cat) == untouched
    assert "compact" in [s.name for s in cat]  # still readable with read_skill


def test_oneshot_prompt_carries_the_note_not_the_body(scripted_server, tmp_path):
    skills_in(tmp_path, {"greetings.md": GREETINGS})
    scripted_server.add_reply("ok")
    proc = run_mm(["-p", "$greetings the team", "--base-url", scripted_server.base_url, "--model", "m"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    (request,) = scripted_server.requests
    system, user = request["messages"]
    assert user == {"role": "user", "content": "$greetings the team\n" + NOTE}
    assert "SKILL-BODY-GREETINGS" not in str(request["messages"])
    assert system["content"] == DEFAULT_SYSTEM_PROMPT + "\n" + SYSTEM_PROMPT_NOTE
    assert "read_skill" in [t["function"]["name"] for t in request["tools"]]


async def test_notation_through_a_conversation_and_no_skills_no_change(scripted_server, tmp_path):
    skills_in(tmp_path, {"greetings.md": GREETINGS})
    scripted_server.add_reply("ok")
    scripted_server.add_reply("ok2")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    await conv.run_turn(resolve_skill_notation("$greetings Bob", catalogue_of(conv.registry)), RecordingUI())
    await conv.run_turn(resolve_skill_notation("$frobnicate now", catalogue_of(conv.registry)), RecordingUI())
    first, second = scripted_server.requests
    assert first["messages"][-1]["content"] == "$greetings Bob\n" + NOTE
    assert second["messages"][-1]["content"] == "$frobnicate now"
    assert "SKILL-BODY-GREETINGS" not in str(second["messages"])

    elsewhere = tmp_path / "no-skills"
    elsewhere.mkdir()
    scripted_server.add_reply("ok3")
    conv = make_conversation(scripted_server.base_url, elsewhere)
    assert catalogue_of(conv.registry) == []
    await conv.run_turn(resolve_skill_notation("$greetings Bob", catalogue_of(conv.registry)), RecordingUI())
    request = scripted_server.requests[2]
    assert request["messages"][0]["content"] == DEFAULT_SYSTEM_PROMPT
    assert request["messages"][-1]["content"] == "$greetings Bob"
    assert "read_skill" not in [t["function"]["name"] for t in request["tools"]]
