"""The safety floor's table (issue 13 point 5, docs/safety.md): ≥ 100 dangerous commands refused
with their rule and ≥ 100 look-alikes let through — by the floor itself, and through `bash`,
`execute_bash` and a declared tool, with `yolo` true and false, via the real engine and the
scripted model server.

NOTHING in the table is ever run. The floor's verdict is asserted directly; through the tools,
each row runs as `touch <sentinel>; exit 0; <row>`: the shell exits before the row, so even a
floor that let a row through would run nothing of it — the sentinel only shows whether the tool
started the shell at all (it must not for a refused row, it must for a look-alike).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from floor_table import BENIGN, DANGEROUS, workspace
from harness import RecordingUI, make_conversation
from mm.tools.floor import check_argv, check_command


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return workspace(tmp_path)


def test_the_table_is_large_enough():
    assert len(DANGEROUS) >= 100 and len(BENIGN) >= 100
    assert len({c for c, _ in DANGEROUS}) == len(DANGEROUS) and len(set(BENIGN)) == len(BENIGN)


@pytest.mark.parametrize("command,rule", DANGEROUS, ids=[f"d{i}" for i in range(len(DANGEROUS))])
def test_the_floor_refuses(ws, command, rule):
    refusal = check_command(command, ws)
    assert refusal is not None and refusal.startswith(f"[safety floor: {rule}] ")
    assert "\n" not in refusal and refusal.endswith("— refused in every mode, nothing was run (docs/safety.md)")
    assert check_command(f"touch sentinel; exit 0; {command}", ws) == refusal  # what the tools are given


@pytest.mark.parametrize("command", BENIGN, ids=[f"b{i}" for i in range(len(BENIGN))])
def test_the_floor_lets_look_alikes_through(ws, command):
    assert check_command(command, ws) is None


def test_programs_run_without_a_shell(ws):
    """A declared tool's argv is not expanded: `~` and `$HOME` are names, not the home folder."""
    assert check_argv(["rm", "-rf", "/"], ws).startswith("[safety floor: delete_root] rm would delete /")
    assert check_argv(["/bin/rm", "-r", "-f", "."], ws).startswith("[safety floor: delete_workdir]")
    assert check_argv(["mkfs.ext4", "/dev/sda"], ws).startswith("[safety floor: disk]")
    assert check_argv(["tee", "/etc/hosts"], ws).startswith("[safety floor: system_write]")
    assert check_argv(["bash", "-c", "rm -rf ~"], ws).startswith("[safety floor: delete_home]")
    assert check_argv(["rm", "-rf", "~"], ws) is None and check_argv(["rm", "-rf", "$HOME"], ws) is None
    assert check_argv(["rm", "-rf", "build"], ws) is None and check_argv(["echo", "rm -rf /"], ws) is None


DECLARED = {"name": "run_script", "description": "Run a script.", "command": ["bash", "-c", "{{script}}"],
            "parameters": {"script": {"type": "string", "description": "The script."}}}


def _rows(sentinels: Path) -> list[tuple[str, str, str | None]]:
    """(call id, prefixed command, rule or None): each dangerous row followed by a look-alike (taken
    again from the start once all were used), so that the loop detector never sees two failures in
    a row."""
    rows: list[tuple[str, str, str | None]] = []
    for i in range(max(len(DANGEROUS), len(BENIGN))):
        if i < len(DANGEROUS):
            command, rule = DANGEROUS[i]
            rows.append((f"d{i}", f"touch {sentinels / f'd{i}'}; exit 0; {command}", rule))
        rows.append((f"b{i}", f"touch {sentinels / f'b{i}'}; exit 0; {BENIGN[i % len(BENIGN)]}", None))
    return rows


@pytest.mark.parametrize("yolo", [True, False], ids=["yolo", "asked"])
@pytest.mark.parametrize("tool", ["bash", "execute_bash", "run_script"])
async def test_through_the_tools_in_every_mode(scripted_server, ws, tmp_path, tool, yolo):
    sentinels = tmp_path / "sentinels"
    sentinels.mkdir()
    rows = _rows(sentinels)
    key = "script" if tool == "run_script" else "command"
    scripted_server.add_tool_calls([{"id": cid, "name": tool, "arguments": {key: command}}
                                    for cid, command, _ in rows])
    scripted_server.add_reply("done")
    config = {"toolsets": ["core", "commands"], "yolo": yolo, "tools": [DECLARED], "maxOutput": 100000}
    conv = make_conversation(scripted_server.base_url, ws, config)
    ui = RecordingUI(["allow_once"] * len(rows))
    await conv.run_turn("run them", ui)
    results = {call.call_id: call.result for call in ui.done_calls()}
    assert len(results) == len(rows)
    for cid, command, rule in rows:
        result = results[cid]
        if rule is None:
            assert (sentinels / cid).exists(), (cid, command, result.text)
            assert not result.failed, (cid, result.text)
            continue
        assert not (sentinels / cid).exists(), (cid, command)
        refusal = check_argv(["bash", "-c", command], ws) if tool == "run_script" else check_command(command, ws)
        assert refusal is not None and refusal.startswith(f"[safety floor: {rule}] ")
        if tool == "execute_bash":
            assert json.loads(result.text) == {"error": True, "blocked": True, "message": refusal, "command": command}
        else:
            assert result.text == refusal
        assert result.failed
    # Asked only for the look-alikes: a refused call is refused, never put to the user.
    expected_asks = 0 if yolo else sum(rule is None for _, _, rule in rows)
    assert len(ui.asked) == expected_asks
    assert all(args[key].split("; exit 0; ", 1)[1] in BENIGN for _, args in ui.asked)
