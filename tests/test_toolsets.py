"""`toolsets:` (issue 13, docs/tools.md): which tool groups are declared; `core` by default."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mm.config.load import agent_config_adapter
from mm.tools.registry import GROUPS, build_registry, core_tools


def config(**keys):
    return agent_config_adapter().validate_python(keys)


def test_core_is_the_default_and_the_same_as_before(tmp_path):
    assert config().toolsets == ["core"]
    assert build_registry(config(), {}, tmp_path).names == core_tools(config(), {}, tmp_path).names


def test_a_group_named_twice_is_declared_once(tmp_path):
    assert build_registry(config(toolsets=["core", "core"]), {}, tmp_path).names == \
        core_tools(config(), {}, tmp_path).names


def test_an_unknown_group_is_a_one_line_configuration_error(tmp_path):
    (tmp_path / "agent.yaml").write_text("model: m\ntoolsets:\n  - core\n  - nope\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "mm", "-p", "hi", "-c", "agent.yaml"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    names = ", ".join(["core", *GROUPS])
    assert done.returncode == 2
    assert done.stderr == (f"mm: {Path('agent.yaml')}:4: toolsets: 'nope' is not a tool group — the groups are: "
                           f"{names}\n")


def test_the_files_group_declares_the_reference_s_three_tools(tmp_path):
    names = build_registry(config(toolsets=["files"]), {}, tmp_path).names
    assert names == ["fs_read", "fs_write", "file_edit"]
    both = build_registry(config(toolsets=["core", "files"]), {}, tmp_path).names
    assert both == core_tools(config(), {}, tmp_path).names + ["fs_read", "fs_write", "file_edit"]


def test_two_tools_of_one_job_say_which_to_prefer_only_when_declared_together(tmp_path):
    from mm.tools.registry import PREFERENCES

    alone = {t.name: t.description for t in build_registry(config(toolsets=["files"]), {}, tmp_path).tools.values()}
    core = {t.name: t.description for t in core_tools(config(), {}, tmp_path).tools.values()}
    both = {t.name: t.description for t in build_registry(config(toolsets=["core", "files"]), {}, tmp_path).tools.values()}
    for ours, theirs, our_note, their_note in PREFERENCES:
        if ours not in both:  # a pair of other groups (read_skill, use_skill: tests/test_use_skill.py)
            continue
        assert both[ours] == core[ours] + our_note and both[theirs] == alone[theirs] + their_note
        assert "prefer" not in alone[theirs].lower() and "Prefer" not in core[ours]
    assert "Prefer edit_file" in both["file_edit"] and "Prefer it to file_edit" in both["edit_file"]


def test_the_files_keys_are_checked(tmp_path):
    from pydantic import ValidationError

    assert config().files.docMaxTokens is None and config().readBeforeWrite is False
    assert config(files={"docMaxTokens": 100}, readBeforeWrite=True).files.docMaxTokens == 100
    for bad in ({"files": {"docMaxTokens": 0}}, {"files": {"maxTokens": 5}}):
        try:
            config(**bad)
        except ValidationError:
            continue
        raise AssertionError(f"accepted: {bad}")
