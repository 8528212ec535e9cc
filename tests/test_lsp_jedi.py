"""The lsp tool end to end with jedi-language-server on a small multi-file Python project, through
the real engine and the scripted model server (issue 12 §3; mm-tools.md §lsp)."""

from __future__ import annotations

import os
import signal

import pytest

from harness import RecordingUI
from lsp_helpers import config, conversation, jedi_entry, lsp_turn, program, server_pids, shop_project, texts

pytestmark = pytest.mark.skipif(program("jedi-language-server") is None, reason="jedi-language-server is not installed")

GREET = '''def greet(name):
    """Say hello to name."""
    return "hello " + name


class Greeter:
    def __init__(self, who):
        self.who = who

    def run(self):
        return greet(self.who)
'''
MAIN = '''from shop.talk import Greeter, greet

# greet is called below
print(greet("ana"))
print(Greeter("bo").run())
'''


async def test_definition_references_hover_symbols(scripted_server, tmp_path):
    shop_project(tmp_path, GREET, MAIN)
    conv = conversation(scripted_server, tmp_path, config(jedi_entry()))
    done = await lsp_turn(scripted_server, conv, [
        {"action": "definition", "path": "main.py", "symbol": "greet"},
        {"action": "definition", "path": "main.py", "line": 5, "column": 8},
        {"action": "references", "path": "shop/talk.py", "symbol": "greet"},
        {"action": "hover", "path": "main.py", "symbol": "greet", "line": 4},
        {"action": "symbols", "path": "shop/talk.py"},
    ])
    await conv.close()
    assert texts(done) == [
        "shop/talk.py:1:5  def greet(name):",
        "shop/talk.py:6:7  class Greeter:",
        "4 reference(s):\nmain.py:1:32  from shop.talk import Greeter, greet\nmain.py:4:7  print(greet(\"ana\"))\n"
        "shop/talk.py:1:5  def greet(name):\nshop/talk.py:11:16  return greet(self.who)",
        "def greet(name)\n---\nSay hello to name.\nFull name: shop.talk.greet",
        "function greet  [def greet]  line 1\nclass Greeter  [class Greeter]  line 6\n"
        "  method __init__  [def __init__]  line 7\n  property who  [self.who = who]  line 8\n"
        "  method run  [def run]  line 10",
    ]
    assert done[0].result.locations == [tmp_path / "shop" / "talk.py"]


async def test_diagnostics_after_an_edit(scripted_server, tmp_path):
    shop_project(tmp_path, GREET, MAIN)
    conv = conversation(scripted_server, tmp_path, config(jedi_entry()))
    scripted_server.add_tool_calls([{"id": "d1", "name": "lsp", "arguments": {"action": "diagnostics", "path": "main.py"}}])
    scripted_server.add_tool_calls([{"id": "e1", "name": "edit_file", "arguments": {"path": "main.py", "edits": [
        {"old": 'print(greet("ana"))', "new": 'print(greet("ana")'}]}}])
    scripted_server.add_tool_calls([{"id": "d2", "name": "lsp", "arguments": {"action": "diagnostics", "path": "main.py"}}])
    scripted_server.add_tool_calls([{"id": "d3", "name": "lsp", "arguments": {"action": "diagnostics", "path": "main.py"}}])
    scripted_server.add_reply("done")
    ui = RecordingUI()
    await conv.run_turn("check", ui)
    await conv.close()
    first, edited, after, again = texts(ui.done_calls())
    assert first == "no diagnostics: main.py is clean"
    assert not ui.done_calls()[1].result.failed
    lines = after.splitlines()
    assert lines[0] == "1 diagnostic(s) in main.py:" and len(lines) == 2
    assert lines[1].startswith("error main.py:4:1 SyntaxError: ") and lines[1].endswith("[compile]")
    assert again == after.replace("main.py:\n", "main.py (as last published):\n", 1)
    assert ui.turn_done().recap.lsp_calls == 3 and ui.turn_done().recap.file_ops == 1


async def test_rename_across_files_on_disk(scripted_server, tmp_path):
    shop_project(tmp_path, GREET, MAIN)
    conv = conversation(scripted_server, tmp_path, config(jedi_entry()))
    done = await lsp_turn(scripted_server, conv, [
        {"action": "rename", "path": "main.py", "symbol": "greet", "new_name": "salute"},
        {"action": "definition", "path": "main.py", "symbol": "salute"},
    ])
    await conv.close()
    renamed, definition = texts(done)
    assert renamed.splitlines()[0].startswith("renamed to salute: ")
    assert renamed.splitlines()[0].endswith(" edit(s) in 2 file(s)")
    assert [ln.split(":")[0] for ln in renamed.splitlines()[1:]] == ["main.py", "shop/talk.py"]
    assert (tmp_path / "main.py").read_text() == MAIN.replace('greet("', 'salute("').replace(", greet\n", ", salute\n")
    assert (tmp_path / "shop" / "talk.py").read_text() == GREET.replace("greet(", "salute(")
    assert definition == "shop/talk.py:1:5  def salute(name):"  # the server was told the new contents


async def test_a_server_killed_between_two_calls(scripted_server, tmp_path):
    shop_project(tmp_path, GREET, MAIN)
    conv = conversation(scripted_server, tmp_path, config(jedi_entry()))
    first = await lsp_turn(scripted_server, conv, [{"action": "definition", "path": "main.py", "symbol": "Greeter"}])
    [pid] = server_pids(tmp_path, "jedi-language-server")
    os.kill(pid, signal.SIGKILL)
    second = await lsp_turn(scripted_server, conv, [{"action": "definition", "path": "main.py", "symbol": "Greeter"}])
    [again] = server_pids(tmp_path, "jedi-language-server")
    await conv.close()
    assert texts(first) == texts(second) == ["shop/talk.py:6:7  class Greeter:"]
    assert again != pid
    assert server_pids(tmp_path, "jedi-language-server") == []


async def test_utf16_columns_with_combining_characters(scripted_server, tmp_path):
    shop_project(tmp_path, GREET, MAIN)
    (tmp_path / "main.py").write_text(MAIN + 'label = "e\u0301te\u0301" + greet("c\u0327a")\n')
    conv = conversation(scripted_server, tmp_path, config(jedi_entry()))
    done = await lsp_turn(scripted_server, conv, [
        {"action": "references", "path": "shop/talk.py", "symbol": "greet", "line": 1},
        {"action": "definition", "path": "main.py", "line": 6, "column": 21},
    ])
    await conv.close()
    assert 'main.py:6:19  label = "e\u0301te\u0301" + greet("c\u0327a")' in texts(done)[0].splitlines()
    assert texts(done)[1] == "shop/talk.py:1:5  def greet(name):"


async def test_a_rename_jedi_would_misplace_after_an_emoji_is_refused(scripted_server, tmp_path):
    """jedi-language-server counts columns in code points, not UTF-16: after an emoji its edits
    fall one character early. mm refuses such an edit rather than write it (docs/lsp.md)."""
    shop_project(tmp_path, GREET, MAIN)
    only = 'from shop.talk import greet as g\n\nmark = "\U0001F600" + g("x")\n'
    (tmp_path / "main.py").write_text(only)
    conv = conversation(scripted_server, tmp_path, config(jedi_entry()))
    done = await lsp_turn(scripted_server, conv, [{"action": "rename", "path": "main.py", "symbol": "g", "line": 3,
                                                    "new_name": "hello"}])
    await conv.close()
    assert texts(done) == ['[lsp: jedi: rename failed: an edit of main.py on line 3 does not fall on "g" (the server '
                           'may count columns in another unit than UTF-16) — nothing was changed]']
    assert (tmp_path / "main.py").read_text() == only
