"""The `lsp` tool the model calls: its declaration, its arguments read and checked, its texts
(mm-tools.md §lsp). The actions themselves are in mm.tools.lsp.actions."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult
from mm.tools.lsp.servers import ServerSpec, server_for

ACTIONS = ("definition", "references", "hover", "symbols", "diagnostics", "rename")
AT_A_SYMBOL = ("definition", "references", "hover", "rename")
DESCRIPTION = (
    "Code navigation and refactoring through a language server. Actions: definition (where a symbol is "
    "defined), references (every use, the declaration included), hover (its type and documentation), "
    "symbols (the outline of a file), diagnostics (the file's errors and warnings), rename (renames a "
    "symbol in every file, on disk: give new_name; never rename with edit_file). Point at a symbol with "
    "symbol (its name as written; line narrows the search), or with line and column. "
    "Servers available: {servers}."
)
PARAMS = [
    Param("action", "string", "definition, references, hover, symbols, diagnostics or rename."),
    Param("path", "string", "File path, relative to the working directory. Its extension picks the server."),
    Param("symbol", "string", "The identifier, as written in the code. For definition, references, hover, rename.",
          required=False, default=""),
    Param("line", "integer", "1-based line. With symbol: search that line only. With column: the exact position.",
          required=False, default=0),
    Param("column", "integer", "1-based column, in characters, inside the identifier. Only needed without symbol.",
          required=False, default=0),
    Param("new_name", "string", "The new identifier, for rename.", required=False, default=""),
]
# Other spellings of an action a model may send (docs/lsp.md).
ACTION_ALIASES = {
    "goto_definition": "definition", "go_to_definition": "definition", "definitions": "definition",
    "find_definition": "definition", "reference": "references", "find_references": "references",
    "refs": "references", "symbol": "symbols", "document_symbols": "symbols", "outline": "symbols",
    "diagnostic": "diagnostics", "errors": "diagnostics", "rename_symbol": "rename",
}  # fmt: skip
NO_SERVER = '[lsp: no language server for "{path}" — configured: {servers}]'
NOT_FOUND = '[lsp: "{symbol}" not found in {path}]'
NOT_ON_LINE = '[lsp: "{symbol}" not found on line {line} of {path}]'
COLUMN_PAST = "[lsp: column {column} is past the end of line {line} ({length} characters)]"
LINE_PAST = "[lsp: line {line} is past the end of {path} ({count} lines)]"
NEEDS_SYMBOL = ('[lsp: {action} needs a symbol — call lsp again with {{"action": "{action}", "path": "{path}", '
                '"symbol": "<the identifier>"}}, or with line and column]')
COLUMN_NEEDS_LINE = "[lsp: column {column} needs a line — give line as well, or a symbol instead]"
NEEDS_NEW_NAME = ('[lsp: rename needs new_name — call lsp again with {"action": "rename", "path": …, "symbol": …, '
                  '"new_name": "<the new identifier>"}; do not use edit_file for a rename]')  # mm-tools.md §lsp
SAME_NAME = '[lsp: "{symbol}" is named {new} already — nothing to rename]'
UNREADABLE = "[lsp: {reason}]"
MISSING = "[lsp: {path} does not exist]"
FAILED = "[lsp: {server}: {action} failed: {reason}]"
REJECTED = "[rename rejected by the user]"  # mm-tools.md §lsp, ACP / window


@dataclass(frozen=True)
class Target:
    """A position in the file: 0-based line, 0-based column in characters."""

    line: int
    column: int


@dataclass
class Lsp:
    """lsp: kind `read`, `edit` for a rename, which asks permission when `yolo: false`; the servers
    (`servers`, found on the PATH at start-up) run in the project `root` with the environment `env`,
    each started on its first call (mm-tools.md §lsp)."""

    servers: list[ServerSpec]
    root: Path
    env: dict[str, str]
    name: str = "lsp"
    kind: ToolKind = "read"
    description: str = ""
    params: list[Param] = field(default_factory=lambda: list(PARAMS))
    needs_permission: bool = False
    enums: dict[str, tuple[str, ...]] = field(default_factory=lambda: {"action": ACTIONS})
    running: dict[str, Any] = field(default_factory=dict)  # mm.tools.lsp.client.LanguageServer, by name

    def __post_init__(self) -> None:
        self.description = DESCRIPTION.format(servers=self.labels())

    def labels(self) -> str:
        """`gopls (.go), pyright (.py)`: the servers and their extensions."""
        return ", ".join(spec.label() for spec in self.servers)

    def requires_permission(self, args: dict[str, Any], ctx: ToolContext | None = None) -> bool:
        """A rename changes files: asked like edit_file; navigation never is (mm-acp.md)."""
        return args.get("action") == "rename"

    def call_kind(self, args: Any) -> str:
        """The ACP kind of a call: `edit` for a rename, else `read` (mm-tools.md §lsp, ACP / window)."""
        return "edit" if isinstance(args, dict) and args.get("action") == "rename" else "read"

    def rejection(self) -> str:
        """The text a refused call returns (only a rename asks)."""
        return REJECTED

    def normalize_arguments(self, args: Any) -> Any:
        """An action in another case or spelling (`Definition`, `find-references`) as declared."""
        if isinstance(args, dict) and isinstance(args.get("action"), str):
            word = args["action"].strip().lower().replace("-", "_").replace(" ", "_")
            return {**args, "action": ACTION_ALIASES.get(word, word)}
        return args

    def title(self, args: dict[str, Any], ctx: ToolContext | None = None) -> str:
        """`lsp: definition main.go greet`, `lsp: definition main.go:9:14`, `lsp: rename main.go
        greet → hello` (mm-tools.md §lsp, Terminal display)."""
        from mm.tools.lsp.symbols import clean_symbol, rename_names

        action, where = str(args.get("action", "")), str(args.get("path", ""))
        for key in ("line", "column"):
            if isinstance(args.get(key), int) and args[key] > 0:
                where += f":{args[key]}"
        if action == "rename":
            symbol, new = rename_names(str(args.get("symbol") or ""), str(args.get("new_name") or ""))
            return " ".join(p for p in (f"lsp: {action} {where}", symbol, f"→ {new}" if new else "") if p)
        symbol = clean_symbol(str(args.get("symbol") or "")) if action in AT_A_SYMBOL else ""
        return f"lsp: {action} {where}" + (f" {symbol}" if symbol else "")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run one action on the file `path` (mm-tools.md §lsp); every failure is text, failed."""
        from mm.tools.lsp.client import Cancelled, ServerFailure, Stopped
        from mm.tools.process import CANCELLED_LINE

        action, raw = args["action"], args["path"]
        spec = server_for(self.servers, Path(raw).name)
        if spec is None:
            return ToolResult(NO_SERVER.format(path=raw, servers=self.labels()), failed=True)
        path = ctx.resolve(raw)
        prepared = await asyncio.to_thread(self._prepare, action, path, raw, args)
        if isinstance(prepared, str):
            return ToolResult(prepared, failed=True)
        from mm.tools.lsp import actions

        server = self._server(spec)
        call = actions.Call(server, path, self._shown(path), prepared["text"], prepared["lines"], ctx.cancelled, self.root)
        targets, symbol, new = prepared.get("targets", []), prepared.get("symbol", ""), prepared.get("new", "")
        started = True  # a failure to start is no death to try again after
        try:
            try:
                started = await server.ready(ctx.cancelled)
                return await actions.run(call, action, targets, symbol, new)
            except Stopped:
                if started:
                    raise
                # it died before this call, unseen yet (Server lifecycle: started again on the next call)
                await server.ready(ctx.cancelled)
                return await actions.run(call, action, targets, symbol, new)
        except Cancelled:
            return ToolResult(CANCELLED_LINE, failed=True)
        except ServerFailure as err:
            return ToolResult(FAILED.format(server=spec.name, action=action, reason=err), failed=True)

    async def close(self) -> None:
        """Stop every server started: `shutdown`, `exit`, then the process (mm leaves)."""
        servers, self.running = list(self.running.values()), {}
        await asyncio.gather(*(server.stop() for server in servers), return_exceptions=True)

    # -- inside
    def _server(self, spec: ServerSpec) -> Any:
        from mm.tools.lsp.client import LanguageServer

        if spec.name not in self.running:
            self.running[spec.name] = LanguageServer(spec, self.root, self.env)
        return self.running[spec.name]

    def _shown(self, path: Path) -> str:
        from mm.tools.lsp.answers import Paths

        return Paths(self.root).shown(path)

    def _prepare(self, action: str, path: Path, raw: str, args: dict[str, Any]) -> dict[str, Any] | str:
        """The file's text and lines, and for an action at a symbol the positions to try, the
        symbol and the new name; or the failure text."""
        from mm.fs import TextFileError, read_text
        from mm.tools.lsp.symbols import lines_of

        try:
            text = read_text(path, raw).text
        except FileNotFoundError:
            return MISSING.format(path=raw)
        except TextFileError as err:
            return UNREADABLE.format(reason=err)
        except OSError as err:
            return UNREADABLE.format(reason=f"{raw}: {(err.strerror or str(err)).lower()}")
        prepared: dict[str, Any] = {"text": text, "lines": lines_of(text)}
        if action not in AT_A_SYMBOL:
            return prepared
        targets = _targets(action, raw, prepared["lines"], args)
        if isinstance(targets, str):
            return targets
        prepared.update(targets)
        return prepared


def _targets(action: str, raw: str, lines: list[str], args: dict[str, Any]) -> dict[str, Any] | str:
    """The positions to try for `action`, the symbol and the new name (rename), or the failure."""
    from mm.tools.lsp.symbols import clean_symbol, occurrences, rename_names, word_at

    if action == "rename":
        symbol, new = rename_names(str(args.get("symbol") or ""), str(args.get("new_name") or ""))
        if not new:
            return NEEDS_NEW_NAME
        if symbol == new:
            return SAME_NAME.format(symbol=symbol, new=new)
    else:
        symbol, new = clean_symbol(str(args.get("symbol") or "")), ""
    line, column = int(args.get("line") or 0), int(args.get("column") or 0)
    if line > len(lines) or line < 0:
        return LINE_PAST.format(line=line, path=raw, count=len(lines))
    if column and line <= 0:
        return COLUMN_NEEDS_LINE.format(column=column)
    if column and not symbol:
        length = len(lines[line - 1])
        if column > length or column < 0:
            return COLUMN_PAST.format(column=column, line=line, length=length)
        return {"targets": [Target(line - 1, column - 1)], "symbol": word_at(lines[line - 1], column - 1), "new": new}
    if not symbol:
        return NEEDS_SYMBOL.format(action=action, path=raw)
    found = occurrences(lines, symbol, line - 1 if line else None)
    if not found:
        if line:
            return NOT_ON_LINE.format(symbol=symbol, line=line, path=raw)
        return NOT_FOUND.format(symbol=symbol, path=raw)
    if column:  # the occurrence under the column first
        found.sort(key=lambda o: not (o.column < column <= o.column + len(symbol)))
    return {"targets": [Target(o.line, o.column) for o in found], "symbol": symbol, "new": new}
