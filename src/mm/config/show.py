"""`mm config`: the configuration mm runs with, each value with the place that decided it
(docs/configuration.md §mm config).

The output is YAML an agent file can take: every key of the schema with its value, and a
comment naming where the value came from — `<file>:<line>`, a variable (`OPENAI_BASE_URL`,
`MM_MODEL`), a flag (`--model`) or `default`; a value expanded from `${VAR}` names the variables.
Secrets (`apiKey`, `webSearch.apiKey`, `visionModel.apiKey`, the values of an MCP server's `env`
and `headers`) are never printed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from mm.config.load import LoadedConfig

TITLE = "# mm configuration for {cwd}"
FILES = "# agent files, the later over the earlier: {files}"
NO_FILES = "# agent files: none (the defaults)"
INSTRUCTIONS = "# {line}"
HIDDEN = "********"  # a secret's value
SECRETS = {("apiKey",), ("webSearch", "apiKey"), ("visionModel", "apiKey")}
COMMENT_COLUMN = 40


def config_text(loaded: LoadedConfig, cwd: Path) -> str:
    """The text `mm config` prints for `loaded` (mm.config.load.LoadedConfig) in `cwd`."""
    from mm.config.places import tilde
    from mm.instructions import read_instructions

    lines = [TITLE.format(cwd=tilde(cwd))]
    lines.append(FILES.format(files=", ".join(tilde(p.resolve()) for p in loaded.files)) if loaded.files else NO_FILES)
    said = read_instructions(cwd, loaded.config.instructions.maxTokens).lines()
    lines += [INSTRUCTIONS.format(line=line) for line in said]
    lines.append("")
    lines += _block(loaded, loaded.config, (), "")
    return "\n".join(lines) + "\n"


def _block(loaded: LoadedConfig, block: Any, loc: tuple, indent: str) -> list[str]:
    """The lines of a dataclass `block` at key path `loc`: a nested block as its key and its own
    keys below; any other value dumped as YAML, its origin on its first line."""
    lines: list[str] = []
    for f in dataclasses.fields(block):
        here, value = loc + (f.name,), getattr(block, f.name)
        if dataclasses.is_dataclass(value):
            lines.append(f"{indent}{f.name}:")  # its keys say where each comes from
            lines += _block(loaded, value, here, indent + "  ")
            continue
        if here in SECRETS and value:
            value = HIDDEN
        elif here == ("mcpServers",):
            value = {name: _server_shown(entry) for name, entry in value.items()}
        dumped = _dump({f.name: _plain(value)}).splitlines()
        lines.append(_commented(indent + dumped[0], _origin(loaded, here)))
        lines += [indent + rest for rest in dumped[1:]]
    return lines


def _server_shown(entry: Any) -> dict[str, Any]:
    """An MCP server's entry with the values of its `env` and `headers` hidden (tokens, mostly:
    docs/mcp.md), their names shown."""
    shown = _plain(entry)
    for key in ("env", "headers"):
        shown[key] = {name: HIDDEN for name in shown[key]}
    return shown


def _origin(loaded: LoadedConfig, loc: tuple) -> str:
    origin = loaded.origin(loc)
    expressions = loaded.expanded.get(loc)
    if expressions and loc[0] not in loaded.sources:
        origin += " from " + ", ".join(dict.fromkeys(expressions))
    if loc in SECRETS and origin != "default":
        origin += " (hidden)"
    return origin


def _commented(line: str, origin: str) -> str:
    return f"{line.ljust(COMMENT_COLUMN - 1)} # {origin}" if origin else line


def _plain(value: Any) -> Any:
    """`value` as plain data (dataclasses inside lists and maps, as `tools:` and `mmConfigs:`)."""
    if dataclasses.is_dataclass(value):
        return {k: _plain(v) for k, v in dataclasses.asdict(value).items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _dump(data: dict) -> str:
    """`data` as block YAML, a text of several lines as a literal block (`|`)."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper: Any, value: str) -> Any:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)

    Dumper.add_representer(str, text)
    return yaml.dump(data, Dumper=Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000)


def show_config(loaded: LoadedConfig, cwd: Path) -> int:
    """Print `mm config`'s text on stdout; returns 0."""
    import sys

    from mm.llm.types import fix_surrogates

    sys.stdout.write(fix_surrogates(config_text(loaded, cwd)))
    return 0
