"""Checks of the agent file that its types cannot express: URLs, model files, declared tools."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Callable

from mm.config.schema import AgentConfig

BUILTIN_TOOLS = ("bash", "read_file", "write_file", "edit_file")
TOOL_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")

Where = Callable[[tuple], str]  # the place a key was set: "<file>:<line>", "--base-url", "MM_MODEL"…


def check(config: AgentConfig, where: Where) -> str | None:
    """Return the first problem as `<where>: <key>: <problem>`, or None when the configuration can work."""
    for problem in (_base_url(config, where), _model_file(config, where), _tools(config, where)):
        if problem:
            return problem
    return None


def _base_url(config: AgentConfig, where: Where) -> str | None:
    from urllib.parse import urlsplit

    url = config.baseUrl
    if not url:
        if config.provider == "openai":
            return (f"{where(('provider',))}: provider: openai has no usual address — set baseUrl "
                    "(or --base-url URL) to the server's OpenAI-compatible endpoint")
        return None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as err:
        return f"{where(('baseUrl',))}: baseUrl: {url!r} is not a URL ({err})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        guess = url if "://" in url else f"http://{url}"
        return (f"{where(('baseUrl',))}: baseUrl: {url!r} must start with http:// or https:// and name a host, "
                f"e.g. {guess if guess.startswith(('http://', 'https://')) else 'http://127.0.0.1:8080/v1'}")
    if port == 0:
        return f"{where(('baseUrl',))}: baseUrl: port 0 is not a port a server listens on"
    return None


def _model_file(config: AgentConfig, where: Where) -> str | None:
    model = config.model
    if config.baseUrl or not model or not model.endswith(".gguf"):
        return None
    if not Path(model).expanduser().is_file():
        return f"{where(('model',))}: model: the model file {model} does not exist — give the path of a .gguf file"
    return None


def _tools(config: AgentConfig, where: Where) -> str | None:
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
