"""Finding, reading and validating the agent file, with errors that name file, line and key."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mm.config.schema import AgentConfig

ENV_OVERRIDES = {"MM_MODEL": "model", "MM_BASE_URL": "baseUrl", "MM_PROVIDER": "provider",
                 "MM_YOLO": "yolo"}  # MM_YOLO: set by an asking mm for the agent it starts (mm.ask)
FLAGS = {"model": "--model", "baseUrl": "--base-url", "provider": "--provider"}
AGENT_FILE_BYTES = 1 << 20  # the largest agent file read


class ConfigError(Exception):
    """The agent file is unusable; `str(err)` is one line: `<file>:<line>: <key>: <problem>`."""


@dataclass
class LoadedConfig:
    """The validated configuration and the file it came from (None: defaults)."""

    config: AgentConfig
    path: Path | None


def find_agent_file(explicit: str | None, cwd: Path) -> Path | None:
    """Return the agent file to read: `-c FILE`, `.mm/agent.yaml`, `~/.config/mm/agent.yaml`, or None.

    Raises ConfigError when an explicitly named file does not exist.
    """
    if explicit:
        path = Path(explicit).expanduser()
        if path.is_dir():
            raise ConfigError(f"{explicit}: is a directory — -c takes the agent file itself (e.g. {explicit}/agent.yaml)")
        if not path.exists():
            raise ConfigError(f"{explicit}: no such agent file")
        return path  # a named pipe or a device is refused when read (_read_yaml)
    for candidate in (cwd / ".mm" / "agent.yaml", Path.home() / ".config" / "mm" / "agent.yaml"):
        if candidate.exists() and not candidate.is_dir():
            return candidate
    return None


def load_config(explicit: str | None = None, cwd: Path | None = None,
                overrides: dict[str, Any] | None = None, env: dict[str, str] | None = None) -> LoadedConfig:
    """Read and validate the agent file, then apply environment variables and flags (flags win).

    Args: explicit — the `-c` path or None; cwd — the working directory; overrides — camelCase
    keys from command-line flags (None values ignored); env — the environment (default os.environ).
    Raises ConfigError with a one-line message naming the file, the line and the key.
    """
    cwd = cwd or Path.cwd()
    env = os.environ if env is None else env
    path = find_agent_file(explicit, cwd)
    data: dict[str, Any] = {}
    lines: dict[tuple, int] = {}
    sources: dict[str, str] = {}  # keys set by a variable or a flag, and which
    if path is not None:
        data, lines = _read_yaml(path)
    for var, key in ENV_OVERRIDES.items():
        if env.get(var):
            data[key], sources[key] = env[var], var
    for key, value in (overrides or {}).items():
        if value is not None:
            data[key], sources[key] = value, FLAGS.get(key, key)
    _read_asked_agents(data, lines, path)
    config = _validate(data, lines, path, sources)

    def where(loc: tuple) -> str:
        if loc[0] in sources:
            return sources[loc[0]]
        line = lines.get(loc)
        return f"{path}:{line}" if path is not None and line else str(path or "configuration")

    _resolve_asked_agents(config, (path.parent if path is not None else cwd).resolve())
    from mm.config.checks import check

    problem = check(config, where)
    if problem:
        raise ConfigError(problem)
    return LoadedConfig(config, path)


def _read_asked_agents(data: dict[str, Any], lines: dict[tuple, int], path: Path | None) -> None:
    """The file's shorthands of `mmConfigs` in the schema's shape: a bare string is `{config: …}`,
    a `command` string is split like a shell's. Raises ConfigError for a name that YAML did not
    read as text (`yes:`, `1:`) or a command line that cannot be split (an open quote)."""
    import shlex

    entries = data.get("mmConfigs")
    if not isinstance(entries, dict):
        return
    for name, entry in list(entries.items()):
        at = f"{path}:{lines.get(('mmConfigs', name)) or lines.get(('mmConfigs',)) or 1}" if path else "configuration"
        if not isinstance(name, str):
            import yaml

            written = next((k[1] for k in lines if len(k) == 2 and k[0] == "mmConfigs"
                            and yaml.safe_load(str(k[1])) == name), str(name))
            line = lines.get(("mmConfigs", written))
            where = f"{path}:{line}" if path and line else at
            raise ConfigError(f"{where}: mmConfigs: the agent name {written} is read by YAML as {name!r}, not as "
                              f"text — write it in quotes (\"{written}\": …)")
        if not isinstance(entry, (str, dict)):
            raise ConfigError(f"{at}: mmConfigs.{name}: an agent is its agent file (a path) or "
                              f"{{config: <agent file>}} or {{command: <command line>}} (got {entry!r})")
        if isinstance(entry, str):
            entries[name] = {"config": entry}
        elif isinstance(entry, dict) and isinstance(entry.get("command"), str):
            try:
                entries[name] = {**entry, "command": shlex.split(entry["command"])}
            except ValueError as err:
                line = lines.get(("mmConfigs", name, "command"))
                where = f"{path}:{line}" if path and line else at
                raise ConfigError(f"{where}: mmConfigs.{name}.command: {str(err).lower()} "
                                  f"(got {entry['command']!r})") from None


def _resolve_asked_agents(config: AgentConfig, base: Path) -> None:
    """`mmConfigs` agent files made absolute (relative to `base`, the directory of the agent file
    that names them)."""
    for entry in config.mmConfigs.values():
        if entry.config:
            entry.config = str(base / Path(entry.config).expanduser())


def _read_yaml(path: Path) -> tuple[dict[str, Any], dict[tuple, int]]:
    import yaml

    from mm.tools.fs import FileRefused, read_bytes

    label = str(path)
    try:  # without blocking, at most AGENT_FILE_BYTES (mm.tools.fs.read_bytes)
        text = read_bytes(path, AGENT_FILE_BYTES, label).decode("utf-8")
    except FileRefused as err:  # a named pipe, a device, too large
        raise ConfigError(str(err)) from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{label}: cannot be read: {err}") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except RecursionError:
        raise ConfigError(f"{label}: invalid YAML: an alias refers to itself, or the nesting is too deep") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f":{min(mark.line + 1, len(text.splitlines()) or 1)}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ConfigError(f"{label}{where}: invalid YAML: {problem}") from None
    if data is None:
        return {}, {}
    if not isinstance(data, dict):
        raise ConfigError(f"{label}:1: the agent file must be a mapping of keys (key: value), not a {type(data).__name__}")
    lines: dict[tuple, int] = {}
    try:
        _index_lines(node, (), lines)
    except RecursionError:
        raise ConfigError(f"{label}: invalid YAML: an alias refers to itself, or the nesting is too deep") from None
    except _Duplicate as dup:
        raise ConfigError(DUPLICATE_KEY.format(file=label, line=dup.line, key=key_text(dup.path),
                                               first=dup.first)) from None
    return data, lines


DUPLICATE_KEY = "{file}:{line}: {key}: this key is given twice (first on line {first}) — keep one of them"


class _Duplicate(Exception):
    """A key given twice in one mapping: its `path`, its `line` and the `first` one's (1-based)."""

    def __init__(self, path: tuple, line: int, first: int):
        super().__init__(path)
        self.path, self.line, self.first = path, line, first


def key_text(loc: tuple) -> str:
    """A key's place as the errors write it: `sessions.enabled`, `tools[1].name`."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".") or "(top level)"


def _index_lines(node: Any, prefix: tuple, out: dict[tuple, int], seen: set[int] | None = None) -> None:
    """Record the 1-based line of every key and list item below `node`; raise _Duplicate for a
    key given twice in one mapping (YAML would keep the last silently: docs/configuration.md §Errors).

    A node reached again through an alias is not walked twice, so nested aliases (the
    "billion laughs") cost nothing here.
    """
    import yaml

    seen = set() if seen is None else seen
    if id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        keys: dict[tuple, int] = {}
        for key_node, value_node in node.value:
            path = prefix + (key_node.value,)
            line = key_node.start_mark.line + 1
            if isinstance(key_node, yaml.ScalarNode):
                name = (key_node.tag, key_node.value)
                if name in keys:
                    raise _Duplicate(path, line, keys[name])
                keys[name] = line
            out[path] = line
            _index_lines(value_node, path, out, seen)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            out[prefix + (i,)] = item.start_mark.line + 1
            _index_lines(item, prefix + (i,), out, seen)


def _validate(data: dict[str, Any], lines: dict[tuple, int], path: Path | None,
              sources: dict[str, str]) -> AgentConfig:
    if path is None and _only_names(data):
        return AgentConfig(**data)  # the common case: no file, nothing to check (no pydantic import)
    from pydantic import ValidationError

    try:
        return agent_config_adapter().validate_python(data)
    except ValidationError as err:
        first = err.errors()[0]
        raise ConfigError(_describe(first, lines, path, sources)) from None


def agent_config_adapter() -> Any:
    """The pydantic TypeAdapter that validates an AgentConfig (its annotations resolved first)."""
    from pydantic import TypeAdapter

    from mm.config import schema

    for name, value in schema.constraint_names().items():
        setattr(schema, name, value)
    return TypeAdapter(AgentConfig)


def _only_names(data: dict[str, Any]) -> bool:
    """True when `data` holds only string model/baseUrl and a known provider (flags, environment)."""
    from typing import get_args

    from mm.config.schema import Provider

    return (all(k in ("model", "baseUrl", "provider") and isinstance(v, str) for k, v in data.items())
            and data.get("provider", "openai") in get_args(Provider))


def _describe(error: dict, lines: dict[tuple, int], path: Path | None, sources: dict[str, str]) -> str:
    loc = tuple(error["loc"])
    key = key_text(loc)
    line = None
    for n in range(len(loc), 0, -1):
        if loc[:n] in lines:
            line = lines[loc[:n]]
            break
    where = f"{path}:{line}" if path is not None and line else (str(path) if path else "configuration")
    if loc and loc[0] in sources:  # set by a flag or a variable, not by the file
        where = sources[loc[0]]
    if error["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
        problem = "unknown key" + _suggestion(loc)
    else:
        value = error.get("input")
        problem = f"{error['msg'][0].lower()}{error['msg'][1:]} (got {value!r})"
    return f"{where}: {key}: {problem}"


def _suggestion(loc: tuple) -> str:
    """` (did you mean X?)` for a misspelt key, from the fields of the dataclass that holds it."""
    import dataclasses
    import typing

    cls: Any = AgentConfig
    for part in loc[:-1]:
        if isinstance(part, int) or not dataclasses.is_dataclass(cls):
            continue
        hints = typing.get_type_hints(cls)
        cls = _dataclass_in(hints.get(part))
    if cls is None or not dataclasses.is_dataclass(cls):
        return ""
    import difflib

    names = [f.name for f in dataclasses.fields(cls)]
    close = difflib.get_close_matches(str(loc[-1]), names, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def _dataclass_in(annotation: Any) -> Any:
    """The dataclass inside `annotation` (itself, or the item of a list or dict of it), or None."""
    import dataclasses
    import typing

    if dataclasses.is_dataclass(annotation):
        return annotation
    for arg in typing.get_args(annotation):
        found = _dataclass_in(arg)
        if found is not None:
            return found
    return None
