"""The text of each lsp answer, and a rename's edits on disk, with a scripted language server
(tests/lsp_fake_server.py) through the real engine (mm-tools.md §lsp)."""

from __future__ import annotations

from harness import RecordingUI
from lsp_helpers import config, conversation, fake_entry, logged, lsp_turn, texts

MOD = "def greet(name):\n    return name\n\n\nx = greet('a')  # greet again\n"
USE = "# greet is imported\nfrom mod import greet\n\nprint(greet('b'))\n"


def spot(line: int, character: int, length: int = 5) -> dict:
    return {"start": {"line": line, "character": character}, "end": {"line": line, "character": character + length}}


def edit(line: int, character: int, new: str, length: int = 5) -> dict:
    return {"range": spot(line, character, length), "newText": new}


def files(tmp_path) -> None:
    (tmp_path / "mod.py").write_text(MOD)
    (tmp_path / "use.py").write_text(USE)


async def run(scripted_server, tmp_path, script, calls, **cfg):
    conv = conversation(scripted_server, tmp_path, config(fake_entry(tmp_path, script), **cfg))
    done = await lsp_turn(scripted_server, conv, calls)
    await conv.close()
    return done


async def test_definition_sorted_without_duplicates_paths_relative_inside_absolute_outside(scripted_server, tmp_path):
    files(tmp_path)
    outside = tmp_path.parent / f"{tmp_path.name}-lib.py"
    outside.write_text("def greet(x):\n    pass\n")
    result = [{"uri": "{root}/use.py", "range": spot(3, 6)}, {"uri": "{root}/mod.py", "range": spot(4, 4)},
              {"uri": "{root}/mod.py", "range": spot(0, 4)}, {"uri": "{root}/use.py", "range": spot(3, 6)},
              {"uri": outside.as_uri(), "range": spot(0, 4)}]
    done = await run(scripted_server, tmp_path, {"answers": {"textDocument/definition": result}},
                     [{"action": "definition", "path": "use.py", "symbol": "greet"}])
    outside.unlink()
    assert texts(done) == ["\n".join([
        f"{outside}:1:5  def greet(x):", "mod.py:1:5  def greet(name):", "mod.py:5:5  x = greet('a')  # greet again",
        "use.py:4:7  print(greet('b'))"])]
    assert done[0].result.locations == [tmp_path / "use.py", tmp_path / "mod.py", outside]


async def test_references_are_counted_and_a_location_link_is_its_target(scripted_server, tmp_path):
    files(tmp_path)
    links = [{"targetUri": "{root}/mod.py", "targetRange": spot(0, 0, 16), "targetSelectionRange": spot(0, 4)}]
    refs = [{"uri": "{root}/mod.py", "range": spot(0, 4)}, {"uri": "{root}/use.py", "range": spot(1, 16)}]
    done = await run(scripted_server, tmp_path, {"answers": {"textDocument/definition": links,
                                                             "textDocument/references": refs}},
                     [{"action": "definition", "path": "use.py", "symbol": "greet"},
                      {"action": "references", "path": "mod.py", "symbol": "greet"}])
    assert texts(done) == ["mod.py:1:5  def greet(name):",
                           "2 reference(s):\nmod.py:1:5  def greet(name):\nuse.py:2:17  from mod import greet"]
    sent = [m for m in logged(tmp_path) if m.get("method") == "textDocument/references"]
    assert sent[0]["params"]["context"] == {"includeDeclaration": True}


async def test_occurrences_are_tried_code_lines_first_comment_lines_last(scripted_server, tmp_path):
    files(tmp_path)
    answer = {"3:6": [{"uri": "{root}/mod.py", "range": spot(0, 4)}]}  # only print(greet(…)) has an answer
    done = await run(scripted_server, tmp_path, {"answers_at": {"textDocument/definition": answer}},
                     [{"action": "definition", "path": "use.py", "symbol": "`greet()`,"},
                      {"action": "definition", "path": "use.py", "symbol": "mod.greet", "line": 1}])
    asked = [(m["params"]["position"]["line"], m["params"]["position"]["character"])
             for m in logged(tmp_path) if m.get("method") == "textDocument/definition"]
    assert asked == [(1, 16), (3, 6), (0, 2)]
    assert texts(done) == ["mod.py:1:5  def greet(name):",
                           "[lsp: no definition found for the symbol at use.py:1:3]"]


async def test_nothing_found_at_any_occurrence(scripted_server, tmp_path):
    files(tmp_path)
    done = await run(scripted_server, tmp_path, {}, [{"action": "hover", "path": "use.py", "symbol": "greet"},
                                                      {"action": "references", "path": "use.py", "line": 4, "column": 7}])
    assert texts(done) == ['[lsp: no hover text found for "greet" at any of its 3 occurrence(s) in use.py]',
                           "[lsp: no references found for the symbol at use.py:4:7]"]


async def test_hover_as_the_server_sent_it(scripted_server, tmp_path):
    files(tmp_path)
    marked = [{"language": "python", "value": "def greet(name)"}, "Say *hello*."]
    done = await run(scripted_server, tmp_path, {"answers_at": {"textDocument/hover": {
        "0:4": {"contents": {"kind": "markdown", "value": "```python\ndef greet(name)\n```\n---\nSays hello."}},
        "4:4": {"contents": marked}}}},
        [{"action": "hover", "path": "mod.py", "symbol": "greet", "line": 1},
         {"action": "hover", "path": "mod.py", "symbol": "greet", "line": 5}])
    assert texts(done) == ["```python\ndef greet(name)\n```\n---\nSays hello.",
                           "```python\ndef greet(name)\n```\n\nSay *hello*."]


async def test_symbols_nested_with_kind_detail_and_line(scripted_server, tmp_path):
    files(tmp_path)
    symbols = [{"name": "Greeter", "kind": 5, "range": spot(0, 0, 20), "selectionRange": spot(0, 6), "children": [
        {"name": "greet", "kind": 6, "detail": "(self,\n name)", "range": spot(1, 4), "selectionRange": spot(1, 8)},
        {"name": "ALL", "kind": 22, "range": spot(2, 4), "selectionRange": spot(2, 4)}]},
        {"name": "x", "kind": 13, "range": spot(4, 0), "selectionRange": spot(4, 0)}]
    flat = [{"name": "greet", "kind": 12, "location": {"uri": "{root}/use.py", "range": spot(1, 16)}}]
    done = await run(scripted_server, tmp_path, {"answers": {"textDocument/documentSymbol": symbols}},
                     [{"action": "symbols", "path": "mod.py"}])
    assert texts(done) == ["class Greeter  line 1\n  method greet  [(self, name)]  line 2\n  enum member ALL  line 3\n"
                           "variable x  line 5"]
    done = await run(scripted_server, tmp_path, {"answers": {"textDocument/documentSymbol": flat}},
                     [{"action": "symbols", "path": "use.py"}])
    assert texts(done) == ["function greet  line 2"]


async def test_rename_across_files_on_disk_and_the_server_told(scripted_server, tmp_path):
    files(tmp_path)
    change = {"documentChanges": [
        {"textDocument": {"uri": "{root}/use.py", "version": 1}, "edits": [edit(1, 16, "salute"), edit(3, 6, "salute")]},
        {"textDocument": {"uri": "{root}/mod.py", "version": None}, "edits": [edit(4, 4, "salute"), edit(0, 4, "salute")]}]}
    done = await run(scripted_server, tmp_path, {"answers": {"textDocument/rename": change},
                                                 "capabilities": {"textDocumentSync": {"save": {"includeText": True}}}},
                     [{"action": "rename", "path": "use.py", "symbol": "greet", "new_name": "salute"}])
    assert texts(done) == ["renamed to salute: 4 edit(s) in 2 file(s)\nmod.py: 2 edit(s)\nuse.py: 2 edit(s)"]
    assert (tmp_path / "mod.py").read_text() == MOD.replace("greet(", "salute(")
    assert (tmp_path / "use.py").read_text() == USE.replace("import greet", "import salute").replace("(greet", "(salute")
    told = [(m["method"], m["params"]["textDocument"]["uri"].rsplit("/", 1)[1], m["params"]["textDocument"].get("version"))
            for m in logged(tmp_path) if m.get("method", "").startswith("textDocument/did")]
    assert told == [("textDocument/didOpen", "use.py", 1), ("textDocument/didOpen", "mod.py", 1),
                    ("textDocument/didSave", "mod.py", None), ("textDocument/didChange", "use.py", 2),
                    ("textDocument/didSave", "use.py", None)]
    saved = [m["params"]["text"] for m in logged(tmp_path) if m.get("method") == "textDocument/didSave"]
    assert saved == [(tmp_path / "mod.py").read_text(), (tmp_path / "use.py").read_text()]


async def test_rename_with_the_changes_map_keeps_crlf_and_bom(scripted_server, tmp_path):
    (tmp_path / "mod.py").write_bytes("\ufeffdef greet():\r\n    pass\r\n".encode())
    change = {"changes": {"{root}/mod.py": [edit(0, 4, "hello")]}}
    done = await run(scripted_server, tmp_path, {"answers": {"textDocument/rename": change}},
                     [{"action": "rename", "path": "mod.py", "symbol": "greet 1 5 hello"}])
    assert texts(done) == ["renamed to hello: 1 edit(s) in 1 file(s)\nmod.py: 1 edit(s)"]
    assert (tmp_path / "mod.py").read_bytes() == "\ufeffdef hello():\r\n    pass\r\n".encode()


async def test_a_rename_that_cannot_be_applied_changes_nothing(scripted_server, tmp_path):
    files(tmp_path)
    outside = tmp_path.parent / f"{tmp_path.name}-other.py"
    outside.write_text("greet = 1\n")
    cases = {
        "the edit changes {out}, outside the project": {"changes": {
            "{root}/mod.py": [edit(0, 4, "hi")], outside.as_uri(): [edit(0, 0, "hi")]}},
        "the edit also creates, renames or deletes files, which mm does not do": {"documentChanges": [
            {"textDocument": {"uri": "{root}/mod.py", "version": None}, "edits": [edit(0, 4, "hi")]},
            {"kind": "rename", "oldUri": "{root}/mod.py", "newUri": "{root}/hi.py"}]},
        "two edits of mod.py overlap": {"changes": {"{root}/mod.py": [edit(0, 4, "hi"), edit(0, 6, "hi")]}},
        "an edit of mod.py starts or ends past its end (line 40)": {"changes": {"{root}/mod.py": [edit(39, 0, "hi")]}},
        "the edit names http://example.com/mod.py, which is not a file on this machine": {"changes": {
            "http://example.com/mod.py": [edit(0, 4, "hi")]}},
    }
    for reason, change in cases.items():
        done = await run(scripted_server, tmp_path, {"answers": {"textDocument/rename": change}},
                         [{"action": "rename", "path": "mod.py", "symbol": "greet", "new_name": "hi"}])
        expected = f"[lsp: fake: rename failed: {reason.format(out=outside)} — nothing was changed]"
        assert texts(done) == [expected]
        assert (tmp_path / "mod.py").read_text() == MOD and outside.read_text() == "greet = 1\n"
    outside.unlink()


async def test_rename_refused_by_the_user_and_its_kind(scripted_server, tmp_path):
    files(tmp_path)
    change = {"changes": {"{root}/mod.py": [edit(0, 4, "hi")]}}
    conv = conversation(scripted_server, tmp_path, config(fake_entry(tmp_path, {"answers": {
        "textDocument/rename": change}}), yolo=False))
    ui = RecordingUI(["reject_once"])
    done = await lsp_turn(scripted_server, conv, [{"action": "rename", "path": "mod.py", "symbol": "greet",
                                                    "new_name": "hi"}, {"action": "symbols", "path": "mod.py"}], ui)
    await conv.close()
    assert texts(done) == ["[rename rejected by the user]", "no symbols in mod.py"]
    assert [name for name, _ in ui.asked] == ["lsp"]  # navigation never asks
    assert (tmp_path / "mod.py").read_text() == MOD


async def test_rename_needs_a_new_name_and_another_name(scripted_server, tmp_path):
    files(tmp_path)
    done = await run(scripted_server, tmp_path, {}, [
        {"action": "rename", "path": "mod.py", "symbol": "greet"},
        {"action": "rename", "path": "mod.py", "symbol": "greet", "new_name": "'greet'"}])
    assert texts(done) == [
        '[lsp: rename needs new_name — call lsp again with {"action": "rename", "path": …, "symbol": …, '
        '"new_name": "<the new identifier>"}; do not use edit_file for a rename]',
        '[lsp: "greet" is named greet already — nothing to rename]']
    assert not [m for m in logged(tmp_path) if m.get("method") == "textDocument/rename"]
