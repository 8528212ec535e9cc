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
