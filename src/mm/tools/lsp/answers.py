"""The text of each lsp answer (mm-tools.md §lsp: definition, references, hover, symbols,
diagnostics, rename). Positions come in as LSP gives them (0-based lines, UTF-16 characters) and
go out 1-based, in characters of the line."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Callable

from mm.tools.lsp.symbols import from_utf16, lines_of

LOCATION = "{path}:{line}:{column}  {source}"
REFERENCES_HEAD = "{n} reference(s):"
SYMBOL = "{indent}{kind} {name}{detail}  line {line}"
SYMBOL_DETAIL = "  [{detail}]"
NO_SYMBOLS = "no symbols in {path}"
DIAGNOSTICS_HEAD = "{n} diagnostic(s) in {path}{last}:"
DIAGNOSTIC = "{severity} {path}:{line}:{column} {message}{source}"
DIAGNOSTIC_SOURCE = " [{source}]"
CLEAN = "no diagnostics: {path} is clean{last}"
AS_LAST_PUBLISHED = " (as last published)"
RENAMED = "renamed to {new}: {edits} edit(s) in {files} file(s)"
RENAMED_FILE = "{path}: {edits} edit(s)"
SEVERITIES = {1: "error", 2: "warning", 3: "information", 4: "hint"}
SOURCE_BYTES = 16 << 20  # the largest file a location's source line is read from


class Paths:
    """How paths are said: relative inside the project `root`, absolute outside (mm-tools.md §lsp);
    and the lines of files, read once per answer."""

    def __init__(self, root: Path, known: dict[str, str] | None = None):
        self.root = root
        self.real_root = os.path.realpath(root)
        self._lines: dict[str, list[str] | None] = {k: lines_of(v) for k, v in (known or {}).items()}

    def shown(self, path: Path) -> str:
        """`path` relative to the project when inside it, else absolute."""
        for base, target in ((str(self.root), str(path)), (self.real_root, os.path.realpath(path))):
            relative = os.path.relpath(target, base)
            if relative != ".." and not relative.startswith(".." + os.sep):
                return relative
        return str(path)

    def lines(self, path: Path) -> list[str] | None:
        """The lines of the text file `path` (None when it cannot be read as text)."""
        key = str(path)
        if key not in self._lines:
            from mm.fs import read_bytes

            try:
                self._lines[key] = lines_of(read_bytes(path, SOURCE_BYTES).decode("utf-8", "replace").lstrip("\ufeff"))
            except (OSError, ValueError):
                self._lines[key] = None
        return self._lines[key]

    def column(self, path: Path, line: int, units: int) -> int:
        """The 1-based character column of UTF-16 offset `units` on 0-based `line` of `path`."""
        lines = self.lines(path)
        if lines is None or line >= len(lines):
            return units + 1
        return from_utf16(lines[line], units) + 1


def locations(result: Any) -> list[tuple[str, Any]]:
    """(uri, range) of each location of a definition or references answer: a Location, a list of
    Location or LocationLink (its target selection), or None."""
    if result is None:
        return []
    items = result if isinstance(result, (list, tuple)) else [result]
    found = []
    for item in items:
        if hasattr(item, "target_uri"):
            found.append((item.target_uri, item.target_selection_range or item.target_range))
        elif hasattr(item, "uri"):
            found.append((item.uri, item.range))
    return found


def locations_text(found: list[tuple[str, Any]], paths: Paths, path_of: Callable[[str], Path | None]) -> list[str]:
    """One LOCATION line per location, sorted by path then position, duplicates removed."""
    rows = set()
    for uri, where in found:
        path = path_of(uri)
        shown = paths.shown(path) if path is not None else uri
        line = where.start.line
        column = paths.column(path, line, where.start.character) if path is not None else where.start.character + 1
        rows.add((shown, line + 1, column, str(path) if path is not None else None))
    out = []
    for shown, line, column, key in sorted(rows):
        lines = paths.lines(Path(key)) if key else None
        source = lines[line - 1].strip() if lines is not None and line - 1 < len(lines) else ""
        out.append(LOCATION.format(path=shown, line=line, column=column, source=source).rstrip())
    return out


def hover_text(result: Any) -> str:
    """The hover's text as the server sent it: Markdown or plain text, a marked string's code in
    a fenced block, several joined by a blank line; "" when there is none."""
    if result is None:
        return ""
    contents = result.contents
    items = contents if isinstance(contents, (list, tuple)) else [contents]
    parts = []
    for item in items:
        if isinstance(item, str):
            parts.append(item)
        elif getattr(item, "language", None) is not None:
            parts.append(f"```{item.language}\n{item.value}\n```")
        else:
            parts.append(getattr(item, "value", "") or "")
    return "\n\n".join(p.strip("\n") for p in parts if p.strip())


def symbols_text(result: Any) -> list[str]:
    """One SYMBOL line per symbol, children indented two spaces (DocumentSymbol), or the flat
    list of SymbolInformation, in the server's order."""
    out: list[str] = []

    def add(symbol: Any, depth: int) -> None:
        where = getattr(symbol, "selection_range", None) or symbol.location.range
        detail = " ".join((getattr(symbol, "detail", None) or "").split())
        out.append(SYMBOL.format(indent="  " * depth, kind=kind_name(symbol.kind), name=symbol.name,
                                 detail=SYMBOL_DETAIL.format(detail=detail) if detail else "",
                                 line=where.start.line + 1))
        for child in getattr(symbol, "children", None) or []:
            add(child, depth + 1)

    for symbol in result or []:
        add(symbol, 0)
    return out


def kind_name(kind: Any) -> str:
    """A SymbolKind as words: `function`, `enum member`, `type parameter`."""
    name = getattr(kind, "name", None) or str(kind)
    return re.sub(r"(?<!^)(?=[A-Z])", " ", name).lower()


def diagnostics_text(found: list[Any], shown: str, lines: list[str], last: bool) -> str:
    """DIAGNOSTICS_HEAD and one DIAGNOSTIC line per finding (sorted by position), or CLEAN;
    `last`: the file did not change since the server published them (AS_LAST_PUBLISHED)."""
    note = AS_LAST_PUBLISHED if last else ""
    if not found:
        return CLEAN.format(path=shown, last=note)
    rows = [DIAGNOSTICS_HEAD.format(n=len(found), path=shown, last=note)]
    for d in sorted(found, key=lambda d: (d.range.start.line, d.range.start.character)):
        line = d.range.start.line
        column = from_utf16(lines[line], d.range.start.character) + 1 if line < len(lines) else d.range.start.character + 1
        severity = SEVERITIES.get(int(d.severity), "error") if d.severity is not None else "error"
        source = DIAGNOSTIC_SOURCE.format(source=d.source) if d.source else ""
        rows.append(DIAGNOSTIC.format(severity=severity, path=shown, line=line + 1, column=column,
                                      message=" ".join(str(d.message).split()), source=source))
    return "\n".join(rows)


def renamed_text(new: str, files: list[Any]) -> str:
    """RENAMED, then one RENAMED_FILE line per file (mm.tools.lsp.edits.FileEdit)."""
    rows = [RENAMED.format(new=new, edits=sum(f.edits for f in files), files=len(files))]
    rows += [RENAMED_FILE.format(path=f.shown, edits=f.edits) for f in files]
    return "\n".join(rows)
