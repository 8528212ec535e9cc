"""The MCP servers configured: `mcpServers` of the agent file and of a project's `.mcp.json`, in the
shape Claude Code, Cursor and gemini-cli use (docs/mcp.md §Configuration). No SDK here: reading
the entries costs a few `stat` calls and, when there is one, the read of `.mcp.json`.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Mapping

from mm.mcp import find_mcp_json

MCP_JSON_BYTES = 1 << 20  # the largest .mcp.json read
STDIO_TYPES = ("stdio",)
HTTP_TYPES = ("http", "streamable-http", "streamableHttp")
NEITHER = "give command (a program spoken to on stdio) or url (a streamable-HTTP endpoint)"
BOTH = "give command or url, not both"
EMPTY_COMMAND = "command is empty — give the server's program"
BAD_URL = "url {url!r} must start with http:// or https:// and name a host"
SSE = ("type sse (the HTTP+SSE transport, deprecated since 2025) is not supported: mm speaks stdio and "
       "streamable HTTP — give the server's streamable-HTTP url with type http")
UNKNOWN_TYPE = "type {type!r} is not a transport mm knows: stdio (with command) or http (with url)"
TYPE_MISMATCH = "type {type} does not go with {key}"
NOT_JSON = "{path}: not valid JSON ({error}) — its MCP servers are left out"
NO_SERVERS_KEY = "{path}: no \"mcpServers\" object — nothing to start"
BAD_ENTRY = "{path}: mcpServers.{name}: {problem} — left out"
WRONG_TYPE = "{key} must be {what}"
UNSET = "{key}: ${{{name}}} is not set — set the variable, or write a default: ${{{name}:-default}}"
KEYS = {"command": "a string", "args": "a list of strings", "env": "an object of strings", "cwd": "a string",
        "url": "a string", "httpUrl": "a string", "headers": "an object of strings", "type": "a string",
        "timeout": "a number of seconds above 0", "startupTimeout": "a number of seconds above 0",
        "allow": "a list of strings", "permissions": "\"ask\"", "disabled": "true or false"}
DEFAULTS = {"timeout": 60.0, "startupTimeout": 30.0}  # seconds, as in mm.config.schema.McpServerEntry


@dataclass(frozen=True)
class ServerSpec:
    """One server to run, its entry read and checked: `name`, `origin` (where it is configured:
    "the agent file" or the .mcp.json path), a program (`command`, `args`, `env` over mm's
    environment, `cwd`) or an endpoint (`url`, `headers`); `timeout` (seconds per tool call),
    `startup_timeout` (seconds to start and list its tools), `allow` (tools that never ask) and
    `asks` (every call asks, even with `yolo: true`). Hashable: the key of a running server."""

    name: str
    origin: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str = "."
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    timeout: float = DEFAULTS["timeout"]
    startup_timeout: float = DEFAULTS["startupTimeout"]
    allow: tuple[str, ...] = ()
    asks: bool = False

    @property
    def where(self) -> str:
        """How it is reached, for /mcp: `stdio: <command line>` or the url."""
        if self.url is not None:
            return self.url
        import shlex

        return "stdio: " + shlex.join([self.command or "", *self.args])


def entry_problem(entry: Mapping[str, Any]) -> str | None:
    """What keeps one entry (the agent file's McpServerEntry as a dict, or a .mcp.json entry)
    from naming a server: neither or both of command and url, an empty command, a url that is
    not http(s), a `type` that is not stdio or http or does not go with the rest; None when it
    is fine. The phrases are this module's constants."""
    kind, command, url = entry.get("type"), entry.get("command"), entry.get("url")
    if kind == "sse":
        return SSE
    if kind is not None and kind not in STDIO_TYPES + HTTP_TYPES:
        return UNKNOWN_TYPE.format(type=kind)
    if command is None and url is None:
        return NEITHER
    if command is not None and url is not None:
        return BOTH
    if kind in STDIO_TYPES and url is not None:
        return TYPE_MISMATCH.format(type=kind, key="url: a stdio server has a command")
    if kind in HTTP_TYPES and command is not None:
        return TYPE_MISMATCH.format(type=kind, key="command: an http server has a url")
    if command is not None and not command.strip():
        return EMPTY_COMMAND
    if url is not None:
        from urllib.parse import urlsplit

        try:
            parts = urlsplit(url)
        except ValueError:
            return BAD_URL.format(url=url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return BAD_URL.format(url=url)
    return None


def server_specs(config: Any, cwd: Path, env: Mapping[str, str] | None = None) -> tuple[list[ServerSpec], list[str]]:
    """The servers to run for `cwd`: the agent file's `mcpServers` (already checked and
    expanded when it was loaded), then those of the project's `.mcp.json` whose name the agent
    file does not use; an entry `disabled: true` is left out. Returns the specs, in that order,
    and one line per entry of `.mcp.json` that cannot be used (BAD_ENTRY, NOT_JSON…), which is
    left out: a file other tools read too never stops mm. `env`: for `${VAR}` (default os.environ)."""
    env = os.environ if env is None else env
    specs = [_spec(name, asdict(entry), cwd, "the agent file")
             for name, entry in config.mcpServers.items() if not entry.disabled]
    path = find_mcp_json(cwd)
    if path is None:
        return specs, []
    entries, problems = read_mcp_json(path, env)
    for name, entry in entries.items():
        if name not in config.mcpServers and not entry.get("disabled"):
            specs.append(_spec(name, entry, path.parent, str(path)))
    return specs, problems


def read_mcp_json(path: Path, env: Mapping[str, str]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The usable entries of the `.mcp.json` at `path`, by name, `${VAR}` expanded from `env`
    (as in the agent file: mm.config.files.expand_text), gemini-cli's `httpUrl` read as `url`,
    keys other tools use ignored; and one line per entry left out, or for the whole file."""
    from mm.fs import FileRefused, read_bytes

    try:
        data = json.loads(read_bytes(path, MCP_JSON_BYTES, str(path)).decode("utf-8"))
    except FileRefused as err:
        return {}, [str(err)]
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as err:
        return {}, [NOT_JSON.format(path=path, error=getattr(err, "strerror", None) or err)]
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return {}, [NO_SERVERS_KEY.format(path=path)]
    usable, problems = {}, []
    for name, raw in servers.items():
        entry, problem = _read_entry(raw, env)
        if problem is None:
            usable[name] = entry
        else:
            problems.append(BAD_ENTRY.format(path=path, name=name, problem=problem))
    return usable, problems


def _read_entry(raw: Any, env: Mapping[str, str]) -> tuple[dict[str, Any], str | None]:
    """One entry of .mcp.json in the agent file's shape, or the problem that leaves it out."""
    from mm.config.files import expand_text

    if not isinstance(raw, dict):
        return {}, "an entry is an object: {\"command\": …} or {\"url\": …}"
    entry: dict[str, Any] = {}
    for key, what in KEYS.items():
        if key not in raw or raw[key] is None:
            continue
        value = raw[key]
        if not _is(value, what):
            return {}, WRONG_TYPE.format(key=key, what=what)
        if isinstance(value, (str, list, dict)):
            value, unset = _expanded(value, expand_text, env)
            if unset is not None:
                return {}, UNSET.format(key=key, name=unset)
        entry["url" if key == "httpUrl" else key] = value
    return entry, entry_problem(entry)


def _is(value: Any, what: str) -> bool:
    """Whether `value` is of the kind KEYS names (`what`)."""
    if what == "a string":
        return isinstance(value, str)
    if what == "a list of strings":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if what == "an object of strings":
        return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    if what == "true or false":
        return isinstance(value, bool)
    if what == "\"ask\"":
        return value == "ask"
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _expanded(value: Any, expand: Any, env: Mapping[str, str]) -> tuple[Any, str | None]:
    """`value` (a string, a list or an object of strings) with `${VAR}` expanded; the first
    variable that is unset with no default, else None."""
    if isinstance(value, str):
        text, _, unset = expand(value, env)
        return text, unset
    items = value.items() if isinstance(value, dict) else enumerate(value)
    out: Any = {} if isinstance(value, dict) else []
    for key, item in items:
        text, _, unset = expand(item, env)
        if unset is not None:
            return value, unset
        if isinstance(out, dict):
            out[key] = text
        else:
            out.append(text)
    return out, None


def _spec(name: str, entry: Mapping[str, Any], base: Path, origin: str) -> ServerSpec:
    """The ServerSpec of a checked entry; a relative `cwd` is relative to `base` (the working
    directory for the agent file, the folder of .mcp.json for its servers)."""
    cwd = Path(os.path.expanduser(entry.get("cwd") or "."))
    return ServerSpec(
        name=name, origin=origin, command=entry.get("command"), args=tuple(entry.get("args") or ()),
        env=tuple((entry.get("env") or {}).items()), cwd=str(cwd if cwd.is_absolute() else (base / cwd).resolve()),
        url=entry.get("url"), headers=tuple((entry.get("headers") or {}).items()),
        timeout=float(entry.get("timeout") or DEFAULTS["timeout"]),
        startup_timeout=float(entry.get("startupTimeout") or DEFAULTS["startupTimeout"]),
        allow=tuple(entry.get("allow") or ()), asks=entry.get("permissions") == "ask")
