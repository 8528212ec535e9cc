"""The lsp tool against a scripted language server (tests/lsp_fake_server.py), through the real
engine and the scripted model server: what mm sends (file sync, lifecycle, server requests
answered) and how it takes each kind of answer — every failure text of mm-tools.md §lsp."""

from __future__ import annotations

import asyncio
import os
import signal

from harness import RecordingUI
from lsp_helpers import config, conversation, fake_entry, logged, lsp_turn, server_pids, texts

MOD = "def greet(name):\n    return name\n\n\nx = greet('a')\n"


def methods(tmp_path) -> list[str]:
    return [m.get("method", "(answer)") for m in logged(tmp_path)]


def location(line: int, character: int, uri: str = "{root}/mod.py") -> dict:
    return {"uri": uri, "range": {"start": {"line": line, "character": character},
                                  "end": {"line": line, "character": character + 5}}}


async def test_the_file_is_synced_before_every_request(scripted_server, tmp_path):
    (tmp_path / "mod.py").write_text(MOD)
    conv = conversation(scripted_server, tmp_path, config(fake_entry(tmp_path, {})))
    await lsp_turn(scripted_server, conv, [{"action": "symbols", "path": "mod.py"}] * 2)
    (tmp_path / "mod.py").write_text(MOD + "y = 1\n")
    await lsp_turn(scripted_server, conv, [{"action": "symbols", "path": "mod.py"}])
    await conv.close()
    log = logged(tmp_path)
    assert [m.get("method") for m in log] == [
        "initialize", "initialized", "textDocument/didOpen", "textDocument/documentSymbol",
        "textDocument/documentSymbol", "textDocument/didChange", "textDocument/documentSymbol", "shutdown", "exit"]
    opened = log[2]["params"]["textDocument"]
    assert (opened["uri"], opened["languageId"], opened["version"], opened["text"]) == (
        (tmp_path / "mod.py").as_uri(), "python", 1, MOD)
    changed = log[5]["params"]
    assert changed["textDocument"]["version"] == 2 and changed["contentChanges"] == [{"text": MOD + "y = 1\n"}]


async def test_initialize_names_the_project_and_utf16(scripted_server, tmp_path):
    (tmp_path / "mod.py").write_text(MOD)
    conv = conversation(scripted_server, tmp_path, config(fake_entry(tmp_path, {})))
    await lsp_turn(scripted_server, conv, [{"action": "symbols", "path": "mod.py"}])
    await conv.close()
    params = logged(tmp_path)[0]["params"]
    assert params["rootUri"] == tmp_path.as_uri() and params["processId"] == os.getpid()
    assert params["workspaceFolders"] == [{"uri": tmp_path.as_uri(), "name": tmp_path.name}]
    assert params["capabilities"]["general"]["positionEncodings"] == ["utf-16"]


async def test_a_server_request_is_answered(scripted_server, tmp_path):
    (tmp_path / "mod.py").write_text(MOD)
    ask = {"method": "workspace/configuration", "params": {"items": [{"section": "python"}, {"section": "x"}]}}
    conv = conversation(scripted_server, tmp_path, config(fake_entry(tmp_path, {"ask": ask})))
    await lsp_turn(scripted_server, conv, [{"action": "symbols", "path": "mod.py"}])
    await conv.close()
    answers = [m for m in logged(tmp_path) if m.get("id") == "ask-1"]
    assert answers == [{"jsonrpc": "2.0", "id": "ask-1", "result": [None, None]}]


async def test_shutdown_and_exit_when_mm_leaves_and_a_server_that_stays_is_killed(scripted_server, tmp_path):
    (tmp_path / "mod.py").write_text(MOD)
    conv = conversation(scripted_server, tmp_path, config(fake_entry(tmp_path, {"no_exit": True})))
    await lsp_turn(scripted_server, conv, [{"action": "symbols", "path": "mod.py"}])
    assert len(server_pids(tmp_path, "lsp_fake_server.py")) == 1
    await conv.close()
    assert methods(tmp_path)[-2:] == ["shutdown", "exit"]
    assert server_pids(tmp_path, "lsp_fake_server.py") == []


async def test_an_error_answer_is_said(scripted_server, tmp_path):
    (tmp_path / "mod.py").write_text(MOD)
    conv = conversation(scripted_server, tmp_path, config(fake_entry(tmp_path, {"errors": {
        "textDocument/hover": "boom: no hover today", "textDocument/documentSymbol": "cannot list"}})))
    done = await lsp_turn(scripted_server, conv, [{"action": "hover", "path": "mod.py", "symbol": "greet"},
                                                   {"action": "symbols", "path": "mod.py"}])
    await conv.close()
    assert texts(done) == ["[lsp: fake: hover failed: boom: no hover today]", "[lsp: fake: symbols failed: cannot list]"]
    hovered = [m["params"]["position"] for m in logged(tmp_path) if m.get("method") == "textDocument/hover"]
    assert hovered == [{"line": 0, "character": 4}, {"line": 4, "character": 4}]  # each occurrence tried


async def test_an_answer_that_cannot_be_read(scripted_server, tmp_path):
    (tmp_path / "mod.py").write_text(MOD)
    entry = fake_entry(tmp_path, {"answers": {"textDocument/definition": {"bogus": 1}}})
    conv = conversation(scripted_server, tmp_path, config(entry))
    done = await lsp_turn(scripted_server, conv, [{"action": "definition", "path": "mod.py", "line": 5, "column": 5}])
    await conv.close()
    assert done[0].result.text.startswith("[lsp: fake: definition failed: its answer could not be read (")


async def test_no_answer_in_time(scripted_server, tmp_path):
    (tmp_path / "mod.py").write_text(MOD)
    entry = fake_entry(tmp_path, {"silent": ["textDocument/hover"]}, timeout=0.5)
    conv = conversation(scripted_server, tmp_path, config(entry))
    done = await lsp_turn(scripted_server, conv, [{"action": "hover", "path": "mod.py", "line": 1, "column": 5}])
    await conv.close()
    assert texts(done) == ["[lsp: fake: hover failed: no answer within 0.5s]"]
    cancels = [m["params"] for m in logged(tmp_path) if m.get("method") == "$/cancelRequest"]
    assert len(cancels) == 1


async def test_a_cancelled_turn_cancels_the_request(scripted_server, tmp_path):
    from mm.tools.base import ToolContext
    from mm.tools.lsp.servers import ServerSpec
    from mm.tools.lsp.tool import Lsp

    (tmp_path / "mod.py").write_text(MOD)
    entry = fake_entry(tmp_path, {"silent": ["textDocument/hover"]})
    tool = Lsp([ServerSpec("fake", entry["command"], entry["command"], tuple(entry["args"]), (".py",))],
               tmp_path, dict(os.environ))
    ctx = ToolContext(cwd=tmp_path)
    call = asyncio.ensure_future(tool.run({"action": "hover", "path": "mod.py", "line": 1, "column": 5}, ctx))
    while "textDocument/hover" not in methods(tmp_path):
        await asyncio.sleep(0.05)
    ctx.cancelled.set()
    result = await asyncio.wait_for(call, 30)
    await tool.close()
    assert result.text == "[error: cancelled]" and result.failed
    assert "$/cancelRequest" in methods(tmp_path)


async def test_a_server_that_crashes_is_said_and_started_again(scripted_server, tmp_path):
    (tmp_path / "mod.py").write_text(MOD)
    entry = fake_entry(tmp_path, {"crash_on": "textDocument/hover", "crash_line": "panic: hover exploded"})
    conv = conversation(scripted_server, tmp_path, config(entry))
    done = await lsp_turn(scripted_server, conv, [{"action": "hover", "path": "mod.py", "line": 1, "column": 5},
                                                   {"action": "symbols", "path": "mod.py"}])
    await conv.close()
    assert texts(done) == ["[lsp: fake: hover failed: the server stopped (exit status 3): panic: hover exploded]",
                           "no symbols in mod.py"]
    assert methods(tmp_path).count("initialize") == 2  # started again for the second call


async def test_a_server_that_cannot_start(scripted_server, tmp_path):
    (tmp_path / "mod.py").write_text(MOD)
    entry = fake_entry(tmp_path, {"exit_at_once": True, "crash_line": "fatal: no python here"})
    conv = conversation(scripted_server, tmp_path, config(entry))
    done = await lsp_turn(scripted_server, conv, [{"action": "symbols", "path": "mod.py"}])
    await conv.close()
    assert texts(done) == ["[lsp: fake: symbols failed: the server stopped (exit status 1): fatal: no python here]"]


async def test_a_server_killed_between_two_calls_is_started_again(scripted_server, tmp_path):
    (tmp_path / "mod.py").write_text(MOD)
    conv = conversation(scripted_server, tmp_path, config(fake_entry(tmp_path, {})))
    await lsp_turn(scripted_server, conv, [{"action": "symbols", "path": "mod.py"}])
    [pid] = server_pids(tmp_path, "lsp_fake_server.py")
    os.kill(pid, signal.SIGKILL)
    done = await lsp_turn(scripted_server, conv, [{"action": "symbols", "path": "mod.py"}])
    [again] = server_pids(tmp_path, "lsp_fake_server.py")
    await conv.close()
    assert again != pid and texts(done) == ["no symbols in mod.py"]
    assert methods(tmp_path).count("textDocument/didOpen") == 2  # the new server is told of the file


async def test_diagnostics_published_and_as_last_published(scripted_server, tmp_path):
    (tmp_path / "mod.py").write_text(MOD)
    found = [{"range": {"start": {"line": 4, "character": 4}, "end": {"line": 4, "character": 9}},
              "severity": 2, "message": "greet is\n  old", "source": "lint"},
             {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}},
              "message": "no severity"}]
    conv = conversation(scripted_server, tmp_path, config(fake_entry(tmp_path, {"publish": found})))
    done = await lsp_turn(scripted_server, conv, [{"action": "diagnostics", "path": "mod.py"}] * 2)
    await conv.close()
    head = "2 diagnostic(s) in mod.py{}:\nerror mod.py:1:1 no severity\nwarning mod.py:5:5 greet is old [lint]"
    assert texts(done) == [head.format(""), head.format(" (as last published)")]


async def test_no_diagnostics_received(scripted_server, tmp_path):
    (tmp_path / "mod.py").write_text(MOD)
    conv = conversation(scripted_server, tmp_path, config(fake_entry(tmp_path, {})))
    done = await lsp_turn(scripted_server, conv, [{"action": "diagnostics", "path": "mod.py"}])
    await conv.close()
    assert texts(done) == ["no diagnostics received for mod.py within 3s (the server has published none for it "
                           "yet: it may still be working — call diagnostics again in a moment)"]
