"""Declared tools: one tool per entry of the agent file's `tools:` block (mm-tools.md §Declared tools).

An entry runs its `command` argv with `{{param}}` placeholders filled in, without a shell.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult
from mm.tools.bash import CANNOT_START, start_failure_reason
from mm.tools.coerce import (
    CoercionError,
    coerce_arguments,
    coerce_value,
    describe_param,
    render_value,
)
from mm.tools.process import format_outcome, run_process

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}")
REQUIRED_SUFFIX = "Required parameters: {names}. "
FIELDS_SUFFIX = "Give each parameter as its own field."
EMPTY_ARGV = "[error: {name}: the command is empty once its optional parameters are left out]"
TYPE_ALIASES = {
    "string": "string", "str": "string", "text": "string",
    "integer": "integer", "int": "integer",
    "number": "number", "float": "number",
    "boolean": "boolean", "bool": "boolean",
}  # fmt: skip
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_timeout(value: Any) -> float | None:
    """Return a `timeout` in seconds: a number of seconds, or a duration text ("10s", "1m30s",
    "500ms"). None stays None (bashTimeout applies). Raises ValueError for anything else."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and re.fullmatch(r"\s*\d+(\.\d+)?\s*", value):
        seconds = float(value)
    elif isinstance(value, str) and re.fullmatch(r"(?:\d+(?:\.\d+)?(?:ms|s|m|h))+", value.strip()):
        parts = _DURATION_PART.findall(value.strip())
        seconds = sum(float(n) * _DURATION_UNITS[u] for n, u in parts)
    else:
        raise ValueError(f"timeout {value!r} is not a number of seconds or a duration like 10s")
    if seconds <= 0:
        raise ValueError(f"timeout {value!r} must be more than 0")
    return seconds


@dataclass
class DeclaredTool:
    """A tool declared by the agent file: kind `execute`, permission requested like bash.

    `command` is the argv template; `enums` maps a parameter to its allowed values; `timeout`
    is in seconds (None: `bashTimeout`).
    """

    name: str
    summary: str  # the entry's own description
    params: list[Param]
    command: list[str]
    enums: dict[str, list[Any]] = field(default_factory=dict)
    timeout: float | None = None
    kind: ToolKind = "execute"
    needs_permission: bool = True

    @property
    def description(self) -> str:
        """The entry's description, then `Required parameters: …. Give each parameter as its own
        field.` (mm-tools.md §Declared tools, Schema)."""
        required = [p.name for p in self.params if p.required]
        suffix = (REQUIRED_SUFFIX.format(names=", ".join(required)) if required else "") + FIELDS_SUFFIX
        summary = self.summary.strip()
        return f"{summary} {suffix}" if summary else suffix

    def schema(self) -> dict:
        """Return the OpenAI `tools[]` entry: one property per parameter with its type and
        description, and no `required` or `enum` keywords (mm-tools.md §Declared tools)."""
        props = {
            p.name: {"type": p.type, "description": describe_param(p, self.enums.get(p.name))}
            for p in self.params
        }
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {"type": "object", "properties": props},
            },
        }

    def argv_for(self, args: dict[str, Any]) -> list[str]:
        """Return the argv for coerced `args`: each `{{p}}` replaced by the value as text.

        A parameter left out (optional, no default) removes an entry that is only its
        placeholder and is an empty string inside a longer entry. A value never adds an argument.
        """
        argv: list[str] = []
        for entry in self.command:
            whole = PLACEHOLDER.fullmatch(entry)
            if whole and args.get(whole.group(1)) is None:
                continue
            argv.append(PLACEHOLDER.sub(lambda m: _fill(args, m.group(1)), entry))
        return argv

    def title(self, args: dict[str, Any], ctx: Any = None) -> str:
        """Return `<name>: <argv>` for front ends (mm-tools.md §Declared tools, ACP and window)."""
        return f"{self.name}: {shlex.join(self.argv_for(args))}"

    def requires_permission(self, args: dict[str, Any], ctx: ToolContext) -> bool:
        """No permission is asked for a call the safety floor refuses: it is refused."""
        coerced, _ = coerce_arguments(self.name, self.params, args, enums=self.enums)
        argv = self.argv_for(coerced) if coerced is not None else []
        return not argv or _floor_refusal(argv, ctx) is None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the command for `args` in `ctx.cwd`, as `bash` runs its command — unless the safety
        floor refuses its argv (mm.tools.floor.check_argv: the one-line refusal, nothing run).

        `args` are coerced again (harmless when the engine already did); an invalid call runs
        nothing. Timeout: the entry's, else `ctx.settings.bash_timeout` seconds.
        """
        coerced, message = coerce_arguments(self.name, self.params, args, enums=self.enums)
        if coerced is None:
            return ToolResult(message or "", failed=True)
        argv = self.argv_for(coerced)
        if not argv:
            return ToolResult(EMPTY_ARGV.format(name=self.name), failed=True)
        refusal = _floor_refusal(argv, ctx)
        if refusal is not None:
            return ToolResult(refusal, failed=True)
        timeout = self.timeout if self.timeout is not None else ctx.settings.bash_timeout
        try:
            outcome = await run_process(argv, cwd=ctx.cwd, timeout=timeout, cancelled=ctx.cancelled)
        except OSError as err:
            reason = start_failure_reason(argv[0], err)
            return ToolResult(CANNOT_START.format(program=argv[0] or '""', reason=reason), failed=True)
        text, failed = format_outcome(outcome, timeout=timeout, max_output=ctx.settings.max_output)
        return ToolResult(text, failed=failed)


def _floor_refusal(argv: list[str], ctx: ToolContext) -> str | None:
    from mm.tools.floor import check_argv
    from mm.tools.process import command_environment

    return check_argv(argv, ctx.cwd, command_environment())


def _fill(args: dict[str, Any], name: str) -> str:
    """Return the text put in place of `{{name}}`: the value rendered, "" when left out."""
    value = args.get(name)
    return "" if value is None else render_value(value)


def _param_from(name: str, spec: Any, tool: str) -> tuple[Param, list[Any] | None]:
    """Build the Param (and enum values) of one `parameters` entry; raise ValueError when invalid."""
    if not isinstance(spec, dict):
        raise ValueError(f"tool {tool}: parameter {name} must be a mapping")
    ptype = TYPE_ALIASES.get(str(spec.get("type") or "string").lower())
    if ptype is None:
        raise ValueError(
            f"tool {tool}: parameter {name} has type {spec.get('type')!r} — "
            "use string, integer, number or boolean"
        )
    default = spec.get("default")
    enum = spec.get("enum")
    if enum is not None and not isinstance(enum, list):
        raise ValueError(f"tool {tool}: parameter {name}: enum must be a list")
    try:
        if default is not None:
            default = coerce_value(ptype, default)
        if enum is not None:
            enum = [coerce_value(ptype, v) for v in enum]
    except CoercionError:
        raise ValueError(f"tool {tool}: parameter {name}: default or enum is not of type {ptype}") from None
    if enum is not None and not enum:
        raise ValueError(f"tool {tool}: parameter {name}: enum is empty — list the allowed values")
    if enum and default is not None and default not in enum:
        raise ValueError(f"tool {tool}: parameter {name}: the default {default!r} is not one of its enum values")
    required = not spec.get("optional", False)
    description = str(spec.get("description") or "")
    return Param(name, ptype, description, required=required, default=default), enum


def declared_tool_from_entry(entry: dict) -> DeclaredTool:
    """Return the DeclaredTool of one `tools:` entry in neutral form.

    `entry` has `name`, `description`, `command` (argv list with `{{param}}` placeholders),
    `parameters` (name → {type, description, optional, default, enum}) and optional `timeout`
    (seconds, or a duration like "10s"). Raises ValueError for an entry that cannot work: no
    name, an empty command, a placeholder that names no parameter, an unknown type.
    """
    name = str(entry.get("name") or "").strip()
    if not name:
        raise ValueError("a tools entry has no name")
    command = entry.get("command")
    if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command):
        raise ValueError(f"tool {name}: command must be a non-empty list of strings")
    if not command[0].strip():
        raise ValueError(f"tool {name}: the command's program (its first item) is empty")
    params: list[Param] = []
    enums: dict[str, list[Any]] = {}
    for pname, spec in (entry.get("parameters") or {}).items():
        param, enum = _param_from(str(pname), spec, name)
        params.append(param)
        if enum:
            enums[param.name] = enum
    known = {p.name for p in params}
    for arg in command:
        for placeholder in PLACEHOLDER.findall(arg):
            if placeholder not in known:
                raise ValueError(f"tool {name}: {{{{{placeholder}}}}} in command is not a parameter")
    return DeclaredTool(
        name=name,
        summary=str(entry.get("description") or ""),
        params=params,
        command=list(command),
        enums=enums,
        timeout=parse_timeout(entry.get("timeout")),
    )
