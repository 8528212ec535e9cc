"""The lsp tool with python-lsp-server (pylsp), whose `initialize` answer pygls can read only with
cattrs < 25 (notes/deps.md §6; the pin is in pyproject.toml, docs/lsp.md). Skipped where pylsp is
not installed."""

from __future__ import annotations

import pytest

from lsp_helpers import config, conversation, lsp_turn, program, texts

pytestmark = pytest.mark.skipif(program("pylsp") is None, reason="python-lsp-server is not installed")

TALK = 'def greet(name):\n    return "hello " + name\n'
MAIN = 'from talk import greet\n\nprint(greet("ana"))\n'


async def test_navigation_and_rename(scripted_server, tmp_path):
    (tmp_path / "talk.py").write_text(TALK)
    (tmp_path / "main.py").write_text(MAIN)
    entry = {"name": "pylsp", "command": program("pylsp"), "extensions": [".py"]}
    conv = conversation(scripted_server, tmp_path, config(entry))
    done = await lsp_turn(scripted_server, conv, [
        {"action": "definition", "path": "main.py", "symbol": "greet", "line": 3},
        {"action": "references", "path": "talk.py", "symbol": "greet"},
        {"action": "rename", "path": "talk.py", "symbol": "greet", "new_name": "salute"},
    ])
    await conv.close()
    definition, references, renamed = texts(done)
    assert definition == "talk.py:1:5  def greet(name):"
    assert references.splitlines()[0] == "3 reference(s):"
    assert renamed.startswith("renamed to salute: ")
    assert (tmp_path / "talk.py").read_text() == TALK.replace("greet", "salute")
    assert (tmp_path / "main.py").read_text() == MAIN.replace("greet", "salute")
