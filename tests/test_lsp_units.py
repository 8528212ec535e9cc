"""The lsp tool's parts that need no server: symbol cleaning, occurrences, UTF-16 columns, the
servers of `lsp.servers`, the declaration, the title and kind of a call (mm-tools.md §lsp)."""

from __future__ import annotations

import os

from mm.tools.lsp.symbols import clean_symbol, from_utf16, lines_of, occurrences, rename_names, to_utf16


def test_symbols_are_cleaned():
    assert [clean_symbol(s) for s in ["Greet', ", "person.Greet", "`greet()`", "(greet)", "pkg::f", "obj->run",
                                      "  $scope ", "12", "", "Greet 1 12 Hello"]] == [
        "Greet", "Greet", "greet", "greet", "f", "run", "$scope", "", "", "Greet"]


def test_rename_names_from_one_string():
    assert rename_names("Greet 1 12 Hello", "") == ("Greet", "Hello")
    assert rename_names("person.Greet", " 'Hello', ") == ("Greet", "Hello")
    assert rename_names("Greet", "") == ("Greet", "")


def test_occurrences_code_first_comments_last_astral_after():
    lines = lines_of("# greet here\nx = greet(1)  # greet again\n\U0001F600 = 1; greet()\r\ngreeting = greet\n")
    found = [(o.line, o.column) for o in occurrences(lines, "greet")]
    assert found == [(1, 4), (3, 11), (2, 7), (0, 2), (1, 16)]
    assert [(o.line, o.column) for o in occurrences(lines, "greet", 3)] == [(3, 11)]


def test_utf16_columns():
    line = 's = "\U0001F600e\u0301" + greet()'
    at = line.index("greet")
    assert (at, to_utf16(line, at)) == (12, 13)  # the emoji is two UTF-16 units, the combining accent one
    assert from_utf16(line, 13) == 12 and from_utf16(line, 5) == 5 and from_utf16(line, 500) == len(line)
    assert from_utf16(line, 6) == 6  # inside the surrogate pair: the character after it


def test_lsp_lines_split_at_cr_lf_and_crlf_only():
    assert lines_of("a\r\nb\rc\nd\u2028e\x0cf") == ["a", "b", "c", "d\u2028e\x0cf"]


def entry(name, command, extensions, args=()):
    from mm.config.schema import LspServerEntry

    return LspServerEntry(name=name, command=command, extensions=list(extensions), args=list(args))


def test_servers_found_on_the_path_and_extensions(tmp_path):
    from mm.tools.lsp.servers import found_servers, language_id, server_for

    tool = tmp_path / "my-ls"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    servers, skipped = found_servers([entry("mine", "my-ls", ["py", "*.PYI", ".d.ts"]), entry("gone", "gone-ls", ["go"]),
                                      entry("ts", "my-ls", [".ts"])], {"PATH": str(tmp_path)})
    assert [(s.name, s.program, s.extensions) for s in servers] == [
        ("mine", str(tool), (".py", ".pyi", ".d.ts")), ("ts", str(tool), (".ts",))]
    assert skipped == ["[warning: lsp server gone (gone-ls) not found on the PATH — skipped]"]
    assert server_for(servers, "a.PY").name == "mine" and server_for(servers, "x.d.ts").name == "mine"
    assert server_for(servers, "x.ts").name == "ts" and server_for(servers, "x.md") is None
    assert servers[0].label() == "mine (.py, .pyi, .d.ts)"
    assert [language_id(n) for n in ("a.py", "b.TSX", "c.zig", "d.weird", "Makefile")] == [
        "python", "typescriptreact", "zig", "weird", "plaintext"]


def registry_for(tmp_path, servers):
    from mm.config.load import agent_config_adapter
    from mm.tools.registry import build_registry

    cfg = agent_config_adapter().validate_python({"lsp": {"servers": servers}})
    return cfg, build_registry(cfg, env={"PATH": str(tmp_path)}, cwd=tmp_path)


def test_the_tool_is_declared_only_with_a_server_found(tmp_path, capsys):
    from mm.tools.lsp.servers import banner_note

    cfg, registry = registry_for(tmp_path, [{"name": "none-here", "command": "no-ls-1", "extensions": [".py"]}])
    assert "lsp" not in registry.names
    assert banner_note(cfg, registry.names) == " · lsp: no server of lsp.servers is on the PATH — the lsp tool is not declared"
    assert "[warning: lsp server none-here (no-ls-1) not found on the PATH — skipped]" in capsys.readouterr().err
    (tmp_path / "ls").write_text("#!/bin/sh\n")
    (tmp_path / "ls").chmod(0o755)
    cfg, registry = registry_for(tmp_path, [{"name": "here", "command": "ls", "extensions": [".rs"]}])
    tool = registry.get("lsp")
    assert banner_note(cfg, registry.names) == ""
    assert tool.description.endswith("Servers available: here (.rs).")
    schema = registry.schemas()[registry.names.index("lsp")]["function"]["parameters"]
    assert list(schema["properties"]) == ["action", "path", "symbol", "line", "column", "new_name"]
    assert schema["required"] == ["action", "path"]


def test_no_lsp_key_declares_nothing_and_imports_nothing_of_it(tmp_path):
    import subprocess
    import sys

    code = ("import sys; from mm.config.schema import AgentConfig; from mm.tools.registry import build_registry; "
            "r = build_registry(AgentConfig(), cwd=None); "
            "print('lsp' in r.names, any(m.startswith(('mm.tools.lsp', 'pygls', 'lsprotocol')) for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert out.stdout.split() == ["False", "False"]


def tool(tmp_path):
    from mm.tools.lsp.servers import ServerSpec
    from mm.tools.lsp.tool import Lsp

    return Lsp([ServerSpec("gopls", "gopls", "/bin/gopls", (), (".go",))], tmp_path, dict(os.environ))


def test_title_kind_permission_and_display(tmp_path):
    from mm.acp.toolcalls import tool_kind
    from mm.tools.titles import tool_title
    from mm.ui.render import call_header

    lsp = tool(tmp_path)
    calls = [({"action": "definition", "path": "main.go", "symbol": "greet"}, "lsp: definition main.go greet"),
             ({"action": "hover", "path": "main.go", "line": 9, "column": 14}, "lsp: hover main.go:9:14"),
             ({"action": "rename", "path": "main.go", "symbol": "'greet'", "new_name": "hello"},
              "lsp: rename main.go greet → hello"),
             ({"action": "symbols", "path": "main.go", "symbol": "x"}, "lsp: symbols main.go")]
    for args, title in calls:
        assert lsp.title(args) == title
        assert call_header("lsp", args, lsp.title(args)) == f"🔎 {title}"
        assert tool_title("lsp", args, lsp.title(args)) == title
    assert [tool_kind("lsp", lsp, args) for args, _ in calls] == ["read", "read", "edit", "read"]
    assert [lsp.requires_permission(args) for args, _ in calls] == [False, False, True, False]
    assert tool_kind("lsp", None, {"action": "definition"}) == "read"


def test_actions_in_other_spellings(tmp_path):
    from mm.tools.coerce import coerce_tool_args

    lsp = tool(tmp_path)
    for sent, meant in [("Definition", "definition"), ("find-references", "references"), ("document symbols", "symbols"),
                        ("GOTO_DEFINITION", "definition")]:
        args, problem = coerce_tool_args(lsp, {"action": sent, "path": "a.go"})
        assert problem is None and args["action"] == meant
    args, problem = coerce_tool_args(lsp, {"action": "implement", "path": "a.go"})
    assert args is None
    assert "action: implement is not one of definition, references, hover, symbols, diagnostics, rename" in problem


async def test_failures_before_any_server(tmp_path):
    from mm.tools.base import ToolContext

    lsp = tool(tmp_path)
    (tmp_path / "main.go").write_text("package main\n\nfunc greet() {}\n")
    (tmp_path / "dir.go").mkdir()
    ctx = ToolContext(cwd=tmp_path)
    cases = [
        ({"action": "definition", "path": "x.md", "symbol": "a"}, '[lsp: no language server for "x.md" — configured: gopls (.go)]'),
        ({"action": "definition", "path": "main.go", "symbol": "foo"}, '[lsp: "foo" not found in main.go]'),
        ({"action": "definition", "path": "main.go", "symbol": "greet", "line": 1},
         '[lsp: "greet" not found on line 1 of main.go]'),
        ({"action": "hover", "path": "main.go", "line": 3, "column": 40},
         "[lsp: column 40 is past the end of line 3 (15 characters)]"),
        ({"action": "hover", "path": "main.go", "line": 9, "column": 1}, "[lsp: line 9 is past the end of main.go (4 lines)]"),
        ({"action": "hover", "path": "main.go", "column": 4}, "[lsp: column 4 needs a line — give line as well, or a symbol instead]"),
        ({"action": "references", "path": "main.go"}, '[lsp: references needs a symbol — call lsp again with '
         '{"action": "references", "path": "main.go", "symbol": "<the identifier>"}, or with line and column]'),
        ({"action": "symbols", "path": "gone.go"}, "[lsp: gone.go does not exist]"),
        ({"action": "symbols", "path": "dir.go"}, "[lsp: dir.go is a directory, not a file]"),
    ]
    for args, text in cases:
        args = {"symbol": "", "line": 0, "column": 0, "new_name": "", **args}
        result = await lsp.run(args, ctx)
        assert (result.text, result.failed) == (text, True)
    assert lsp.running == {}  # none of them started a server


def test_lsp_keys_are_checked(tmp_path):
    import pytest

    from mm.config.load import agent_config_adapter

    adapter = agent_config_adapter()
    with pytest.raises(Exception):
        adapter.validate_python({"lsp": {"servers": [{"name": "x", "command": "y", "extensions": []}]}})
    with pytest.raises(Exception):
        adapter.validate_python({"lsp": {"servers": [{"name": "x", "command": "y", "extensions": [".x"], "bogus": 1}]}})
    cfg = adapter.validate_python({"lsp": {"servers": [{"name": "x", "command": "y", "extensions": [".x"]}]}})
    assert (cfg.lsp.servers[0].args, cfg.lsp.servers[0].timeout) == ([], 60.0)
