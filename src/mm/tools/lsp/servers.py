"""The language servers of `lsp.servers`, and which of them can run (mm-tools.md §lsp)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

NOT_FOUND = "[warning: lsp server {name} ({command}) not found on the PATH — skipped]"  # mm-tools.md §lsp
NONE_FOUND = "lsp: no server of lsp.servers is on the PATH — the lsp tool is not declared"  # in the banner
# The languageId sent with didOpen, by extension; another extension sends itself without its dot.
LANGUAGE_IDS = {
    ".py": "python", ".pyi": "python", ".go": "go", ".rs": "rust", ".js": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".jsx": "javascriptreact", ".ts": "typescript", ".mts": "typescript",
    ".cts": "typescript", ".tsx": "typescriptreact", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp",
    ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".java": "java", ".kt": "kotlin", ".rb": "ruby",
    ".php": "php", ".cs": "csharp", ".swift": "swift", ".lua": "lua", ".sh": "shellscript",
    ".bash": "shellscript", ".zig": "zig", ".ex": "elixir", ".exs": "elixir", ".hs": "haskell",
    ".ml": "ocaml", ".scala": "scala", ".dart": "dart", ".md": "markdown", ".json": "json",
    ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".html": "html", ".css": "css", ".vue": "vue",
}  # fmt: skip


@dataclass(frozen=True)
class ServerSpec:
    """One configured language server: its `name`, the `command` found on the PATH (`program`:
    where), its `args`, the file-name endings it serves (`extensions`, lower case, with their
    dot), and the seconds it has for each answer (`timeout`)."""

    name: str
    command: str
    program: str
    args: tuple[str, ...]
    extensions: tuple[str, ...]
    timeout: float = 60.0

    def label(self) -> str:
        """`gopls (.go)`, `pyright (.py, .pyi)`: the server as the description and messages name it."""
        return f"{self.name} ({', '.join(self.extensions)})"


def extension(text: str) -> str:
    """An `extensions` entry as compared: lower case, one leading dot (`py`, `*.py` and `.PY`
    are `.py`)."""
    return "." + text.strip().lstrip("*").lstrip(".").lower()


def found_servers(entries: Iterable[Any], env: Mapping[str, str]) -> tuple[list[ServerSpec], list[str]]:
    """The entries (mm.config.schema.LspServerEntry) whose command `env`'s PATH holds, as
    ServerSpec, and a NOT_FOUND line for each other one."""
    servers, skipped = [], []
    for entry in entries:
        program = shutil.which(entry.command, path=env.get("PATH"))
        if program is None:
            skipped.append(NOT_FOUND.format(name=entry.name, command=entry.command))
            continue
        endings = tuple(dict.fromkeys(extension(e) for e in entry.extensions if e.strip().strip("*.")))
        servers.append(ServerSpec(entry.name, entry.command, program, tuple(entry.args), endings, entry.timeout))
    return servers, skipped


def server_for(servers: list[ServerSpec], name: str) -> ServerSpec | None:
    """The first server whose longest matching extension ends the file name `name`, or None."""
    lowered = name.lower()
    best: tuple[int, int, ServerSpec] | None = None
    for rank, spec in enumerate(servers):
        for ending in spec.extensions:
            if lowered.endswith(ending) and (best is None or (len(ending), -rank) > best[:2]):
                best = (len(ending), -rank, spec)
    return best[2] if best else None


def language_id(name: str) -> str:
    """The languageId of a file called `name` (LANGUAGE_IDS; else its extension without the dot)."""
    dot = name.rfind(".")
    suffix = name[dot:].lower() if dot > 0 else ""
    return LANGUAGE_IDS.get(suffix, suffix.lstrip(".") or "plaintext")


def banner_note(config: Any, names: list[str]) -> str:
    """` · NONE_FOUND` when `config.lsp.servers` names servers but the declared tools (`names`)
    hold no `lsp`, else "" (mm-tools.md §lsp: the banner says so)."""
    return f" · {NONE_FOUND}" if config.lsp.servers and "lsp" not in names else ""
