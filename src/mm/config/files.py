"""The agent files: finding them, reading one into data and the line of every key, expanding
`${VAR}` in its values (docs/configuration.md §Where it is found, §Environment variables).

A file read here is a `Layer`: its data in the schema's shape (the `mmConfigs` shorthands
written out, their agent files made absolute) and the place, `<file>:<line>`, of every key and
list item, so that an error found after merging still names the file and the line it came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from mm.config.places import project_folders, user_folder

AGENT_FILE = Path(".mm") / "agent.yaml"  # a project's agent file, in a folder from the repository root down
USER_AGENT_FILE = "agent.yaml"  # the user's, in mm's configuration folder
AGENT_FILE_BYTES = 1 << 20  # the largest agent file read
ENV_OVERRIDES = {"MM_MODEL": "model", "MM_BASE_URL": "baseUrl", "MM_PROVIDER": "provider",
                 "MM_YOLO": "yolo"}  # MM_YOLO: set by an asking mm for the agent it starts (mm.ask)
VARIABLE = r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}"  # $${ is a literal ${; compiled on first use
UNSET = ("{where}: {key}: ${{{name}}} is not set — set the variable, or write a default: "
         "${{{name}:-default}}")
RECURSIVE = "{path}: invalid YAML: an alias refers to itself, or the nesting is too deep"
DUPLICATE_KEY = "{file}:{line}: {key}: this key is given twice (first on line {first}) — keep one of them"


class ConfigError(Exception):
    """The agent file is unusable; `str(err)` is one line: `<file>:<line>: <key>: <problem>`."""


@dataclass
class Layer:
    """One agent file read: `data` (a mapping), `places` (key path → `<file>:<line>`) and, per
    key path, the expressions its value was expanded from (`${VAR}`, `${VAR:-…}`)."""

    path: Path
    data: dict[str, Any]
    places: dict[tuple, str] = field(default_factory=dict)
    expanded: dict[tuple, list[str]] = field(default_factory=dict)


def agent_files(explicit: str | None, cwd: Path, env: Mapping[str, str]) -> list[Path]:
    """The agent files to read, lowest precedence first: `-c FILE` alone; else the user's
    (`$XDG_CONFIG_HOME/mm/agent.yaml`), then the nearest `.mm/agent.yaml` from `cwd` upward to the
    repository root. Raises ConfigError when an explicitly named file does not exist."""
    if explicit:
        path = Path(explicit).expanduser()
        if path.is_dir():
            raise ConfigError(f"{explicit}: is a directory — -c takes the agent file itself (e.g. {explicit}/agent.yaml)")
        if not path.exists():
            raise ConfigError(f"{explicit}: no such agent file")
        return [path]  # a named pipe or a device is refused when read (read_layer)
    found = [p for p in (user_folder(env) / USER_AGENT_FILE,) if _present(p)]
    project = next((f / AGENT_FILE for f in reversed(project_folders(cwd)) if _present(f / AGENT_FILE)), None)
    if project is not None and not any(_same(project, p) for p in found):
        found.append(project)
    return found


def _present(path: Path) -> bool:
    """A file is there (a named pipe or a device too: it is refused when read, never passed over)."""
    return path.exists() and not path.is_dir()


def _same(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def read_layer(path: Path, env: Mapping[str, str]) -> Layer:
    """Read the agent file at `path`: YAML, the line of every key, `${VAR}` expanded from `env`,
    the `mmConfigs` shorthands written out. Raises ConfigError (one line, naming file and line)."""
    data, lines = _read_yaml(path)
    layer = Layer(path, data, {loc: f"{path}:{line}" for loc, line in lines.items()})
    _expand(data, (), layer, env)
    _read_asked_agents(layer)
    return layer


def key_text(loc: tuple) -> str:
    """A key path as the messages write it: `tools[1].command`, `sessions.dir`."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".") or "(top level)"


def place_of(loc: tuple, places: Mapping[tuple, str], fallback: str) -> str:
    """The place of the nearest key of `loc` that has one (itself, else its parents), else `fallback`."""
    for n in range(len(loc), 0, -1):
        if loc[:n] in places:
            return places[loc[:n]]
    return fallback


def expand_text(text: str, env: Mapping[str, str]) -> tuple[str, list[str], str | None]:
    """`text` with `${VAR}` replaced by the variable's value and `${VAR:-default}` by the value,
    or `default` when it is unset or empty; `$${` stays a literal `${`. Returns the text, the
    expressions used (`${VAR}`, or `${VAR:-…}` when the default was taken), and the first name
    that is unset with no default (None when none is)."""
    used: list[str] = []
    unset: list[str] = []

    def value(match: re.Match) -> str:
        if match.group(0) == "$${":
            return "${"
        name, default = match.group(1), match.group(2)
        found = env.get(name)
        used.append(f"${{{name}:-…}}" if default is not None and not found else f"${{{name}}}")
        if default is not None:
            return found if found else default
        if found is None:
            unset.append(name)
            return ""
        return found

    return re.sub(VARIABLE, value, text), used, (unset[0] if unset else None)


def _expand(node: Any, loc: tuple, layer: Layer, env: Mapping[str, str], seen: set[int] | None = None) -> None:
    """Expand every string value below `node` in place (keys are left as written). A list or a
    mapping reached again through a YAML alias is not walked twice (the "billion laughs")."""
    seen = set() if seen is None else seen
    if id(node) in seen:
        return
    seen.add(id(node))
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for key, value in list(items):
        here = loc + (key,)
        if isinstance(value, str) and "${" in value:
            text, used, unset = expand_text(value, env)
            if unset is not None:
                where = place_of(here, layer.places, str(layer.path))
                raise ConfigError(UNSET.format(where=where, key=key_text(here), name=unset))
            node[key] = text
            if used:
                layer.expanded[here] = used
        elif isinstance(value, (dict, list)):
            _expand(value, here, layer, env, seen)


def _read_asked_agents(layer: Layer) -> None:
    """The file's shorthands of `mmConfigs` in the schema's shape: a bare string is `{config: …}`,
    a `command` string is split like a shell's; an agent file is made absolute (relative to the
    folder of the agent file naming it). Raises ConfigError for a name that YAML did not read as
    text (`yes:`, `1:`) or a command line that cannot be split (an open quote)."""
    import shlex

    entries, path = layer.data.get("mmConfigs"), layer.path
    if not isinstance(entries, dict):
        return
    for name, entry in list(entries.items()):
        at = place_of(("mmConfigs", name), layer.places, f"{path}:1")
        if not isinstance(name, str):
            import yaml

            written = next((k[1] for k in layer.places if len(k) == 2 and k[0] == "mmConfigs"
                            and yaml.safe_load(str(k[1])) == name), str(name))
            where = layer.places.get(("mmConfigs", written), at)
            raise ConfigError(f"{where}: mmConfigs: the agent name {written} is read by YAML as {name!r}, not as "
                              f"text — write it in quotes (\"{written}\": …)")
        if not isinstance(entry, (str, dict)):
            raise ConfigError(f"{at}: mmConfigs.{name}: an agent is its agent file (a path) or "
                              f"{{config: <agent file>}} or {{command: <command line>}} (got {entry!r})")
        if isinstance(entry, str):
            entry = entries[name] = {"config": entry}
        elif isinstance(entry.get("command"), str):
            try:
                entry = entries[name] = {**entry, "command": shlex.split(entry["command"])}
            except ValueError as err:
                where = layer.places.get(("mmConfigs", name, "command"), at)
                raise ConfigError(f"{where}: mmConfigs.{name}.command: {str(err).lower()} "
                                  f"(got {entry['command']!r})") from None
        if isinstance(entry.get("config"), str) and entry["config"]:
            entries[name] = {**entry, "config": str(path.parent.resolve() / Path(entry["config"]).expanduser())}


def _read_yaml(path: Path) -> tuple[dict[str, Any], dict[tuple, int]]:
    import yaml

    from mm.fs import FileRefused, read_bytes

    label = str(path)
    try:  # without blocking, at most AGENT_FILE_BYTES (mm.fs.read_bytes)
        text = read_bytes(path, AGENT_FILE_BYTES, label).decode("utf-8")
    except FileRefused as err:  # a named pipe, a device, too large
        raise ConfigError(str(err)) from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{label}: cannot be read: {err}") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except RecursionError:
        raise ConfigError(RECURSIVE.format(path=label)) from None
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
        raise ConfigError(RECURSIVE.format(path=label)) from None
    except _Duplicate as dup:
        raise ConfigError(DUPLICATE_KEY.format(file=label, line=dup.line, key=key_text(dup.path),
                                               first=dup.first)) from None
    return data, lines


class _Duplicate(Exception):
    """A key given twice in one mapping: its `path`, its `line` and the `first` one's (1-based)."""

    def __init__(self, path: tuple, line: int, first: int):
        super().__init__(path)
        self.path, self.line, self.first = path, line, first


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
