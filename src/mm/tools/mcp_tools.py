"""MCP servers' tools as mm tools (docs/mcp.md §Tools): their names, schemas, kinds, permission,
and their results as text for the model. A conversation's McpTools gives its registry the tools
of the servers ready at each model request (mm.tools.registry.Registry.refresh).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import Any

from mm.mcp.connection import READY, CallProblem, Connection
from mm.tools.base import Param, ToolContext, ToolKind, ToolResult

NAME_LIMIT = 64  # characters of a function name (OpenAI: ^[a-zA-Z0-9_-]{1,64}$)
DESCRIPTION_LIMIT = 2000  # characters of a server's tool description declared to the model
TOOL_FAILED = "[error: {tool}: {text}]"
TOOL_FAILED_SILENTLY = "[error: {tool}: the MCP server reported a failure without a message]"
IMAGE = "[image: {mime}, {size} bytes — not shown: mm gives the model text only]"
AUDIO = "[audio: {mime}, {size} bytes — not shown: mm gives the model text only]"
RESOURCE_LINK = "[resource: {uri}{name}]"
BLOB = "[resource: {uri}, {mime}, {size} bytes of binary data — not shown]"
SIMPLE_TYPES = ("string", "integer", "number", "boolean", "array", "object")
_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]")


class McpTools:
    """The tools of `connections` (this conversation's servers, in configuration order) for one
    registry: each named once, for good — its own name, `<server>_<name>` when that is taken
    (docs/mcp.md §Tool names). The tools of a server join once it is ready, and leave when it stops."""

    def __init__(self, connections: list[Connection]):
        self.connections = connections
        self._named: dict[tuple[int, str], McpTool] = {}

    def current(self, taken: set[str]) -> list["McpTool"]:
        """The tools of the servers ready now; `taken`: the names of the registry's own tools.
        A server not started yet (no event loop before) starts now."""
        used = set(taken) | {t.name for t in self._named.values()}
        out = []
        for connection in self.connections:
            connection.ensure_started()
            if connection.state != READY:
                continue
            for listed in connection.tools:
                key = (id(connection), listed.name)
                tool = self._named.get(key)
                if tool is None:
                    tool = self._named[key] = mcp_tool(connection, listed, _free_name(connection, listed.name, used))
                    used.add(tool.name)
                out.append(tool)
        return out

    def declared(self) -> dict[Connection, list[str]]:
        """The names each server's tools are declared under, so far."""
        names: dict[Connection, list[str]] = {}
        for tool in self._named.values():
            names.setdefault(tool.connection, []).append(tool.name)
        return names

    async def settled(self) -> None:
        """Wait until no server is starting any more (each gives up after its startupTimeout)."""
        for connection in self.connections:
            connection.ensure_started()
        await asyncio.gather(*(c.settled.wait() for c in self.connections))


@dataclass
class McpTool:
    """One tool of an MCP server, declared as `name` (mm.tools.base.Tool); `tool_name` is the
    server's own. Permission: asked like bash when `yolo: false` (`needs_permission`), and always
    with the entry's `permissions: ask` (`always_asks`) — never for a tool of its `allow`."""

    name: str
    connection: Connection
    tool_name: str
    description: str
    input_schema: dict[str, Any]
    params: list[Param]
    enums: dict[str, list[Any]] = field(default_factory=dict)
    kind: ToolKind = "other"
    needs_permission: bool = True
    always_asks: bool = False
    extra_keys: bool = False  # the schema lets any other key through (mm.tools.coerce)

    def schema(self) -> dict[str, Any]:
        """The OpenAI `tools[]` entry: the server's description and input schema (its titles left
        out: they cost tokens and tell the model nothing the names do not)."""
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": declared_schema(self.input_schema)}}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Call the tool on its server (its `timeout` bounds the call; the turn's cancellation
        stops it) and return its result as text (result_text)."""
        from mm.tools.process import CANCELLED_LINE
        from mm.tools.waiting import Cancelled, unless_cancelled

        try:
            result = await unless_cancelled(self.connection.call(self.tool_name, args, self.name), ctx.cancelled)
        except Cancelled:
            return ToolResult(CANCELLED_LINE, failed=True)
        except CallProblem as err:
            return ToolResult(str(err), failed=True)
        text = result_text(result)
        if result.is_error:
            return ToolResult(TOOL_FAILED.format(tool=self.name, text=text) if text.strip() else
                              TOOL_FAILED_SILENTLY.format(tool=self.name), failed=True)
        return ToolResult(text)


def mcp_tool(connection: Connection, listed: Any, name: str) -> McpTool:
    """The McpTool of a tool the server listed (the SDK's Tool), declared as `name`."""
    spec = connection.spec
    schema = listed.input_schema if isinstance(listed.input_schema, dict) else {}
    params, enums, extra = params_of(schema)
    description = (listed.description or listed.title or "").strip()
    if len(description) > DESCRIPTION_LIMIT:
        description = description[:DESCRIPTION_LIMIT - 1] + "…"
    allowed = bool({listed.name, name} & set(spec.allow))
    return McpTool(name=name, connection=connection, tool_name=listed.name, description=description,
                   input_schema=schema, params=params, enums=enums, kind=kind_of(listed.annotations),
                   needs_permission=not allowed, always_asks=spec.asks and not allowed, extra_keys=extra)


def kind_of(annotations: Any) -> ToolKind:
    """The ACP kind of a tool by its annotations (mm-acp.md §Tool kinds): `read` when
    readOnlyHint is true, `edit` when destructiveHint is true, else `other`."""
    if annotations is not None and getattr(annotations, "read_only_hint", None) is True:
        return "read"
    if annotations is not None and getattr(annotations, "destructive_hint", None) is True:
        return "edit"
    return "other"


def params_of(schema: dict[str, Any]) -> tuple[list[Param], dict[str, list[Any]], bool]:
    """The parameters of an input schema, for mm's argument coercion (mm.tools.coerce): each
    top-level property with its type (the first that is not null of a list; `any` when it gives
    none), description, whether it is required, its default and its `enum`; and whether other
    keys are let through (no property declared, or `additionalProperties` true or a schema)."""
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    params, enums = [], {}
    for pname, prop in props.items():
        prop = prop if isinstance(prop, dict) else {}
        ptype = prop.get("type")
        if isinstance(ptype, list):
            ptype = next((t for t in ptype if t != "null"), None)
        ptype = ptype if ptype in SIMPLE_TYPES else "any"
        items = prop.get("items") if ptype == "array" and isinstance(prop.get("items"), dict) else None
        params.append(Param(str(pname), ptype, str(prop.get("description") or ""), required=pname in required,
                            default=prop.get("default"), items=items))
        if isinstance(prop.get("enum"), list) and prop["enum"] and ptype in ("string", "integer", "number"):
            enums[str(pname)] = list(prop["enum"])
    extra = schema.get("additionalProperties")
    return params, enums, not props or extra is True or isinstance(extra, dict)


def declared_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The input schema as declared: an object, its `title` and `$schema`, and those of its
    properties, left out."""
    out = {k: v for k, v in schema.items() if k not in ("title", "$schema")}
    out["type"] = "object"
    props = out.get("properties")
    if isinstance(props, dict):
        out["properties"] = {name: ({k: v for k, v in p.items() if k != "title"} if isinstance(p, dict) else p)
                             for name, p in props.items()}
    else:
        out["properties"] = {}
    return out


def result_text(result: Any) -> str:
    """A CallToolResult as text: its text blocks, a note for each image, sound or binary
    resource (IMAGE, AUDIO, BLOB), a line for a resource link; the structured content as JSON
    when there is nothing else."""
    parts = [_block_text(block) for block in result.content or []]
    if not parts and result.structured_content is not None:
        parts = [json.dumps(result.structured_content, ensure_ascii=False)]
    return "\n".join(parts)


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return block.text
    if kind in ("image", "audio"):
        return (IMAGE if kind == "image" else AUDIO).format(mime=block.mime_type, size=_decoded_size(block.data))
    if kind == "resource_link":
        return RESOURCE_LINK.format(uri=block.uri, name=f" ({block.name})" if block.name else "")
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if text is not None:
            return text
        return BLOB.format(uri=resource.uri, mime=resource.mime_type or "unknown type",
                           size=_decoded_size(getattr(resource, "blob", "")))
    return f"[{kind or 'unknown'} content — not shown]"


def _decoded_size(data: str) -> int:
    """Bytes of base64 `data` once decoded."""
    data = (data or "").strip()
    return max(len(data) * 3 // 4 - data[-2:].count("="), 0)


def _free_name(connection: Connection, name: str, used: set[str]) -> str:
    """`name` made a function name (letters, digits, _ and -, NAME_LIMIT at most), or
    `<server>_<name>` when that is taken, then `<server>_<name>_2`, `_3`…"""
    own = _fit(name)
    if own and own not in used:
        return own
    prefixed = _fit(f"{connection.spec.name}_{name}")
    n = 1
    candidate = prefixed
    while candidate in used:
        n += 1
        suffix = f"_{n}"
        candidate = prefixed[:NAME_LIMIT - len(suffix)] + suffix
    return candidate


def _fit(name: str) -> str:
    return _NOT_NAME.sub("_", name)[:NAME_LIMIT]
