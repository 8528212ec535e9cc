"""MCP servers' configuration (docs/mcp.md §Configuration): `mcpServers` in the agent file (its
errors stop mm with file and line, as every key's), a project's `.mcp.json` (found from the
repository root down; an entry that cannot be used is left out with one line, never stopping mm),
`${VAR}` in both, the agent file winning by name; and how a server's tools are declared: their
schemas, kinds, names on a clash, results as text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp_types import (CallToolResult, EmbeddedResource, ImageContent, ResourceLink, TextContent,
                       TextResourceContents, ToolAnnotations)

from mm.config.files import ConfigError
from mm.config.load import load_config
from mm.config.schema import AgentConfig, McpServerEntry
from mm.mcp.servers import (BAD_ENTRY, BOTH, EMPTY_COMMAND, NEITHER, NO_SERVERS_KEY, SSE, UNSET, WRONG_TYPE,
                            server_specs)
from mm.tools.coerce import coerce_tool_args
from mm.tools.mcp_tools import BLOB, IMAGE, declared_schema, kind_of, params_of, result_text


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def specs_of(cwd: Path, mcp_json: dict | str, config: AgentConfig | None = None, env: dict | None = None):
    write(cwd / ".mcp.json", mcp_json if isinstance(mcp_json, str) else json.dumps(mcp_json))
    return server_specs(config or AgentConfig(), cwd, env or {})


@pytest.mark.parametrize("entry, problem", [
    ("{}", NEITHER),
    ("{command: x, url: 'http://h/mcp'}", BOTH),
    ("{command: ' '}", EMPTY_COMMAND),
    ("{url: 'ftp://h/mcp'}", "url 'ftp://h/mcp' must start with http:// or https:// and name a host"),
    ("{url: 'http://h/sse', type: sse}", SSE),
    ("{command: x, type: http}", "type http does not go with command: an http server has a url"),
    ("{url: 'http://h/mcp', type: stdio}", "type stdio does not go with url: a stdio server has a command"),
    ("{command: x, type: websocket}", "type 'websocket' is not a transport mm knows: stdio (with command) or "
                                      "http (with url)"),
])
def test_agent_file_errors_name_the_file_and_line(tmp_path, entry, problem):
    path = write(tmp_path / "agent.yaml", f"model: m\nmcpServers:\n  fs: {entry}\n")
    with pytest.raises(ConfigError) as err:
        load_config(str(path), cwd=tmp_path, env={})
    assert str(err.value) == f"{path}:3: mcpServers.fs: {problem}"


def test_agent_file_keys_are_checked_and_expanded(tmp_path):
    path = write(tmp_path / "agent.yaml", "mcpServers:\n  fs: {command: x, permissions: always}\n")
    with pytest.raises(ConfigError, match=r"agent.yaml:2: mcpServers.fs.permissions: input should be 'ask'"):
        load_config(str(path), cwd=tmp_path, env={})
    write(path, "mcpServers:\n  fs:\n    command: x\n    args: ['${DIR:-/srv}']\n    env: {TOKEN: '${TOKEN}'}\n")
    with pytest.raises(ConfigError, match=r"agent.yaml:5: mcpServers.fs.env.TOKEN: \$\{TOKEN\} is not set"):
        load_config(str(path), cwd=tmp_path, env={})
    config = load_config(str(path), cwd=tmp_path, env={"TOKEN": "t0k"}).config
    (spec,), problems = server_specs(config, tmp_path, {})
    assert (spec.command, spec.args, spec.env, spec.cwd, problems) == ("x", ("/srv",), (("TOKEN", "t0k"),),
                                                                       str(tmp_path), [])


def test_a_project_server_replaces_the_users_whole(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    write(home / "mm" / "agent.yaml", "mcpServers:\n  fs: {command: x, args: [a]}\n  other: {command: y}\n")
    write(project / ".mm" / "agent.yaml", "mcpServers:\n  fs: {url: 'http://127.0.0.1:1/mcp'}\n")
    config = load_config(cwd=project, env={"XDG_CONFIG_HOME": str(home)}).config
    assert config.mcpServers == {"fs": McpServerEntry(url="http://127.0.0.1:1/mcp"),
                                 "other": McpServerEntry(command="y")}


def test_mcp_json_in_the_shape_other_tools_write(tmp_path):
    (tmp_path / ".git").mkdir()
    below = tmp_path / "src" / "pkg"
    below.mkdir(parents=True)
    specs, problems = specs_of(tmp_path, {"mcpServers": {
        "files": {"type": "stdio", "command": "npx", "args": ["-y", "server", "${HOME}"], "env": {"K": "${K:-v}"},
                  "cwd": "tools", "autoApprove": ["x"], "trust": True},  # Cline's and gemini-cli's keys: ignored
        "remote": {"httpUrl": "https://example.test/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"},
                   "timeout": 5, "allow": ["read"]},
        "off": {"command": "z", "disabled": True}}}, env={"HOME": "/home/u", "TOKEN": "abc"})
    assert problems == []
    files, remote = specs
    assert (files.name, files.command, files.args, files.env, files.cwd, files.origin) == (
        "files", "npx", ("-y", "server", "/home/u"), (("K", "v"),), str(tmp_path / "tools"), str(tmp_path / ".mcp.json"))
    assert (remote.url, remote.headers, remote.timeout, remote.allow, remote.where) == (
        "https://example.test/mcp", (("Authorization", "Bearer abc"),), 5.0, ("read",), "https://example.test/mcp")
    assert server_specs(AgentConfig(), below, {"HOME": "/h", "TOKEN": "t"})[0][0].name == "files"  # found above
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    assert server_specs(AgentConfig(), outside, {}) == ([], [])


def test_the_agent_file_wins_by_name_and_can_switch_one_off(tmp_path):
    mcp_json = {"mcpServers": {"fs": {"command": "from-json"}, "web": {"url": "http://127.0.0.1:1/mcp"}}}
    config = AgentConfig(mcpServers={"fs": McpServerEntry(command="from-agent-file"),
                                     "web": McpServerEntry(disabled=True)})
    specs, problems = specs_of(tmp_path, mcp_json, config)
    assert [(s.name, s.command, s.origin) for s in specs] == [("fs", "from-agent-file", "the agent file")]
    assert problems == []


def test_a_mcp_json_that_cannot_be_used_is_said_and_left_out(tmp_path):
    path = tmp_path / ".mcp.json"
    assert specs_of(tmp_path, "{not json") == ([], [f"{path}: not valid JSON (Expecting property name enclosed in "
                                                     "double quotes: line 1 column 2 (char 1)) — its MCP servers "
                                                     "are left out"])
    assert specs_of(tmp_path, {"servers": {}}) == ([], [NO_SERVERS_KEY.format(path=path)])
    specs, problems = specs_of(tmp_path, {"mcpServers": {
        "ok": {"command": "x"}, "list": {"command": "x", "args": "--flag"}, "sse": {"type": "sse", "url": "http://h/"},
        "var": {"url": "${NOWHERE}"}, "odd": ["x"]}})
    assert [s.name for s in specs] == ["ok"]
    assert problems == [
        BAD_ENTRY.format(path=path, name="list", problem=WRONG_TYPE.format(key="args", what="a list of strings")),
        BAD_ENTRY.format(path=path, name="sse", problem=SSE),
        BAD_ENTRY.format(path=path, name="var", problem=UNSET.format(key="url", name="NOWHERE")),
        BAD_ENTRY.format(path=path, name="odd", problem="an entry is an object: {\"command\": …} or {\"url\": …}")]
    path.unlink()
    fifo = tmp_path / ".mcp.json"
    import os

    os.mkfifo(fifo)
    specs, problems = server_specs(AgentConfig(), tmp_path, {})
    assert specs == [] and len(problems) == 1 and str(fifo) in problems[0]  # refused, never waited on


SCHEMA = {"type": "object", "title": "searchArguments", "$schema": "https://json-schema.org/draft/2020-12/schema",
          "properties": {"query": {"type": "string", "title": "Query", "description": "words"},
                         "limit": {"type": ["integer", "null"], "default": 10},
                         "mode": {"type": "string", "enum": ["fast", "deep"]},
                         "title": {"type": "string"},
                         "filters": {"type": "array", "items": {"type": "string"}},
                         "anything": {"anyOf": [{"type": "string"}, {"type": "object"}]}},
          "required": ["query"]}


class Declared:
    """A tool as mm.tools.coerce reads one: a name and what params_of made of SCHEMA."""

    def __init__(self, schema: dict):
        self.name = "search"
        self.params, self.enums, self.extra_keys = params_of(schema)


def test_schemas_are_declared_without_titles_and_coerced_like_mms():
    assert declared_schema(SCHEMA) == {"type": "object", "required": ["query"], "properties": {
        "query": {"type": "string", "description": "words"}, "limit": {"type": ["integer", "null"], "default": 10},
        "mode": {"type": "string", "enum": ["fast", "deep"]}, "title": {"type": "string"},
        "filters": {"type": "array", "items": {"type": "string"}},
        "anything": {"anyOf": [{"type": "string"}, {"type": "object"}]}}}
    assert declared_schema({}) == {"type": "object", "properties": {}}
    tool = Declared(SCHEMA)
    assert coerce_tool_args(tool, {"query": 12, "limit": "5", "filters": '["a"]', "anything": {"k": 1}}) == (
        {"query": "12", "limit": 5, "filters": ["a"], "anything": {"k": 1}}, None)
    args, problem = coerce_tool_args(tool, {"limit": "x", "mode": "slow", "qurey": "y"})
    assert args is None and problem.startswith("[search: invalid call, nothing was run — query is missing; limit: "
                                               '"x" is not an integer; mode: slow is not one of fast, deep; '
                                               '"qurey" is not a parameter of this tool.')
    free = Declared({"type": "object"})  # no property declared: the server takes what it is given
    assert coerce_tool_args(free, {"any": "thing"}) == ({"any": "thing"}, None)


def test_kinds_from_the_annotations():
    assert kind_of(None) == "other"
    assert kind_of(ToolAnnotations(readOnlyHint=True, destructiveHint=True)) == "read"
    assert kind_of(ToolAnnotations(destructiveHint=True)) == "edit"
    assert kind_of(ToolAnnotations(readOnlyHint=False)) == "other"


def test_results_as_text():
    result = CallToolResult(content=[
        TextContent(type="text", text="one"), ImageContent(type="image", data="aGVsbG8=", mime_type="image/jpeg"),
        ResourceLink(type="resource_link", uri="file:///a.txt", name="a"),
        EmbeddedResource(type="resource", resource=TextResourceContents(uri="file:///b.txt", text="bee")),
        EmbeddedResource.model_validate({"type": "resource", "resource": {"uri": "file:///c.bin", "blob": "AAAA"}})])
    assert result_text(result).split("\n") == [
        "one", IMAGE.format(mime="image/jpeg", size=5), "[resource: file:///a.txt (a)]", "bee",
        BLOB.format(uri="file:///c.bin", mime="unknown type", size=3)]
    assert result_text(CallToolResult(content=[], structured_content={"n": 1})) == '{"n": 1}'
    assert result_text(CallToolResult(content=[])) == ""


def test_names_are_function_names_prefixed_on_a_clash():
    from mm.mcp.connection import Connection
    from mm.mcp.servers import ServerSpec
    from mm.tools.mcp_tools import _free_name

    db = Connection(ServerSpec("db", "the agent file", command="x"), print)
    used = {"bash", "query", "db_query", "db_query_2"}
    assert _free_name(db, "db.schema/list", used) == "db_schema_list"
    assert _free_name(db, "bash", used) == "db_bash"
    assert _free_name(db, "query", used) == "db_query_3"
    long = "x" * 80
    assert _free_name(db, long, used) == "x" * 64
    assert _free_name(db, long, used | {"x" * 64}) == ("db_" + "x" * 80)[:64]


def test_mm_config_hides_the_values_of_env_and_headers(tmp_path):
    from mm.config.show import HIDDEN, config_text

    path = write(tmp_path / "agent.yaml", "mcpServers:\n  web:\n    url: 'http://127.0.0.1:1/mcp'\n"
                                          "    headers: {Authorization: 'Bearer ${TOKEN}'}\n"
                                          "  fs: {command: x, env: {API_KEY: s3cret}}\n")
    shown = config_text(load_config(str(path), cwd=tmp_path, env={"TOKEN": "t0k3n"}), tmp_path)
    assert "t0k3n" not in shown and "s3cret" not in shown
    assert f"Authorization: '{HIDDEN}'" in shown and f"API_KEY: '{HIDDEN}'" in shown
    assert "url: http://127.0.0.1:1/mcp" in shown


def test_a_listed_tool_as_declared():
    from mcp_types import Tool

    from mm.mcp.connection import Connection
    from mm.mcp.servers import ServerSpec
    from mm.tools.mcp_tools import DESCRIPTION_LIMIT, mcp_tool

    careful = Connection(ServerSpec("careful", "the agent file", command="x", allow=("peek",), asks=True), print)
    listed = Tool(name="peek", description="d" * 3000, input_schema={"type": "object", "properties": {}},
                  annotations=ToolAnnotations(readOnlyHint=True))
    tool = mcp_tool(careful, listed, "peek")
    assert len(tool.description) == DESCRIPTION_LIMIT and tool.description.endswith("…")
    assert (tool.kind, tool.needs_permission, tool.always_asks, tool.extra_keys) == ("read", False, False, True)
    other = mcp_tool(careful, Tool(name="poke", input_schema={"type": "object"}), "careful_poke")
    assert (other.kind, other.needs_permission, other.always_asks, other.description) == ("other", True, True, "")
    assert other.schema() == {"type": "function", "function": {
        "name": "careful_poke", "description": "", "parameters": {"type": "object", "properties": {}}}}
