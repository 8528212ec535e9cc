"""Checks of the agent file that its types cannot express: URLs, model files, declared tools."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Callable

from mm.config.schema import AgentConfig

EXAMPLE_URL = "http://127.0.0.1:8080/v1"
BUILTIN_TOOLS = ("bash", "read_file", "write_file", "edit_file", "fetch_content", "web_crawler", "web_search",
                 "ask_user", "save_answer", "search_memory", "read_skill", "ask_agent", "unload_model")
TOOL_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")

Where = Callable[[tuple], str]  # the place a key was set: "<file>:<line>", "--base-url", "MM_MODEL"…


def check(config: AgentConfig, where: Where) -> str | None:
    """Return the first problem as `<where>: <key>: <problem>`, or None when the configuration can work."""
    for problem in (_base_url(config, where), _model_file(config, where), _tools(config, where),
                    _asked_agents(config, where), _hooks(config, where), _toolsets(config, where),
                    _mcp_servers(config, where),
                    _vision_model(config, where),
                    _structured_output(config, where)):
        if problem:
            return problem
    return None


def _toolsets(config: AgentConfig, where: Where) -> str | None:
    """Every name of `toolsets:` is a tool group (mm.tools.registry.GROUPS, `core`)."""
    from mm.tools.registry import UNKNOWN_GROUP, group_names

    names = group_names()
    for i, name in enumerate(config.toolsets):
        if name not in names:
            return f"{where(('toolsets', i))}: " + UNKNOWN_GROUP.format(name=name, names=", ".join(names))
    return None


def _mcp_servers(config: AgentConfig, where: Where) -> str | None:
    """Each `mcpServers` entry names one server: a program (command) or an endpoint (url)
    (mm.mcp.servers.entry_problem; docs/mcp.md)."""
    if not config.mcpServers:
        return None
    from mm.mcp.servers import entry_problem

    for name, entry in config.mcpServers.items():
        problem = "the server's name is empty" if not name.strip() else entry_problem(asdict(entry))
        if problem:
            return f"{where(('mcpServers', name))}: mcpServers.{name}: {problem}"
    return None


def _structured_output(config: AgentConfig, where: Where) -> str | None:
    """`structuredOutput:` is a valid JSON Schema (mm.answer_schema.schema_problem; jsonschema is
    imported only when the key is set)."""
    if config.structuredOutput is None:
        return None
    from mm.answer_schema import schema_problem

    problem = schema_problem(config.structuredOutput)
    return f"{where(('structuredOutput',))}: structuredOutput: {problem}" if problem else None


def _base_url(config: AgentConfig, where: Where) -> str | None:
    url = config.baseUrl
    if not url:
        if config.provider in ("openai", "llmman"):
            return (f"{where(('provider',))}: provider: {config.provider} has no usual address — set baseUrl "
                    "(or --base-url URL) to the server's OpenAI-compatible endpoint")
        return None
    return _url_problem(url, f"{where(('baseUrl',))}: baseUrl: {url!r}")


def _url_problem(url: str, at: str) -> str | None:
    """What is wrong with `url` as a model server's OpenAI base (`at` starts the message), or None."""
    from urllib.parse import urlsplit

    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        return f"{at} holds a space or a control character — write the URL alone, e.g. {EXAMPLE_URL}"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as err:
        return f"{at} is not a URL ({err})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        guess = f"http://{url}" if "://" not in url and url[:1].isalnum() else EXAMPLE_URL
        return f"{at} must start with http:// or https:// and name a host, e.g. {guess}"
    if port == 0:
        return f"{at}: port 0 is not a port a server listens on"
    if parts.query or parts.fragment:
        return f"{at} must not have a query or a fragment: mm appends /chat/completions to it"
    return None


def _vision_model(config: AgentConfig, where: Where) -> str | None:
    """`toolsets` naming `vision` needs a `visionModel`; its baseUrl, when given, is a URL (docs/vision.md)."""
    from mm.tools.vision import NO_VISION_MODEL

    vision = config.visionModel
    if vision is None and "vision" in config.toolsets:
        return f"{where(('toolsets', config.toolsets.index('vision')))}: toolsets: " + NO_VISION_MODEL
    url = getattr(vision, "baseUrl", None)
    if url is not None:
        return _url_problem(url, f"{where(('visionModel', 'baseUrl'))}: visionModel.baseUrl: {url!r}")
    return None


def _model_file(config: AgentConfig, where: Where) -> str | None:
    model = config.model
    if config.baseUrl or not model or not model.endswith(".gguf"):
        return None
    path = Path(model).expanduser()
    if not path.is_file():
        problem = "is a directory" if path.is_dir() else "does not exist"
        return f"{where(('model',))}: model: the model file {model} {problem} — give the path of a .gguf file"
    return None


def _tools(config: AgentConfig, where: Where) -> str | None:
    if not config.tools:
        return None
    from mm.tools.declared import declared_tool_from_entry

    seen: set[str] = set()
    for i, entry in enumerate(config.tools):
        at = f"{where(('tools', i))}: tools[{i}]"
        if not set(entry.name) <= TOOL_NAME_CHARS or len(entry.name) > 64:
            return f"{at}: name {entry.name!r} must be letters, digits, _ or - (64 at most), as models expect"
        if entry.name in BUILTIN_TOOLS:
            return f"{at}: name {entry.name!r} is a built-in tool — choose another name"
        if entry.name in seen:
            return f"{at}: name {entry.name!r} is declared twice"
        seen.add(entry.name)
        try:
            declared_tool_from_entry(asdict(entry))
        except ValueError as err:
            return f"{at}: {err}"
    return None


def _asked_agents(config: AgentConfig, where: Where) -> str | None:
    """Each `mmConfigs` entry names one agent: an existing agent file, or a command line."""
    for name, entry in config.mmConfigs.items():
        at = f"{where(('mmConfigs', name))}: mmConfigs.{name}"
        if not name or not set(name) <= TOOL_NAME_CHARS or len(name) > 64:
            return f"{at}: the name {name!r} must be letters, digits, _ or - (64 at most)"
        if entry.command is not None and (not entry.command or not entry.command[0].strip()):
            return f"{at}: command is empty — give the agent's program and its arguments"
        if bool(entry.config) == bool(entry.command):
            return (f"{at}: give either config (another mm's agent file) or command (an ACP agent's "
                    "command line), not {what}".format(what="both" if entry.config else "neither"))
        if entry.config and Path(entry.config).is_dir():
            return f"{at}: config: {entry.config} is a directory — name the agent file itself"
        if entry.config and Path(entry.config).exists() and not Path(entry.config).is_file():
            return f"{at}: config: {entry.config} is not a regular file — name the agent file itself"
        if entry.config and not Path(entry.config).is_file():
            return f"{at}: config: no such agent file {entry.config}"
    return None


def _hooks(config: AgentConfig, where: Where) -> str | None:
    """Each hook has a command (an argv of strings, or a line), a matcher that can pick calls, and
    no matcher on preGeneration, which has no name to match (docs/hooks.md)."""
    from dataclasses import fields

    for event in (f.name for f in fields(config.hooks)):
        for i, entry in enumerate(getattr(config.hooks, event)):
            at = f"{where(('hooks', event, i))}: hooks.{event}[{i}]"
            command = entry.command
            if isinstance(command, str) and not command.strip():
                return f"{at}.command: the command line is empty — give the command to run"
            if isinstance(command, list) and command and all(isinstance(a, str) for a in command):
                if not command[0].strip():
                    return f"{at}.command: the program (its first item) is empty"
            elif not isinstance(command, str):
                return (f"{at}.command: a hook's command is a list of strings (the program and its arguments) "
                        f"or one string (run with bash -c), not {command!r}")
            if entry.matcher is not None and event == "preGeneration":
                return f"{at}.matcher: a preGeneration hook has no matcher: it runs for every prompt"
            if entry.matcher is not None:
                from mm.hooks.point import matcher_problem

                problem = matcher_problem(entry.matcher)
                if problem:
                    return f"{at}.matcher: {problem}"
    return None
