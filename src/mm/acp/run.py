"""Starting `mm -acp`: stdout kept for JSON-RPC, the banner and logs on stderr, the agent served
until the client closes stdin (mm-acp.md §Transport)."""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Any

from mm import __version__
from mm.config.schema import AgentConfig

BANNER = "mm v{version} · acp · {model} · context window {window} · tools: {tools}"  # mm.llm.resolve.model_line
NO_SERVER = "[acp] no model server yet: {error}"
STARTED = "[acp] mm v{version} serves the Agent Client Protocol on stdio (agent file: {file})"
STOPPED = "[acp] mm stopped: {error}"


def log(line: str) -> None:
    """One line on stderr (surrogates made printable)."""
    from mm.llm.types import fix_surrogates

    try:
        print(fix_surrogates(line), file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def run_acp(config: AgentConfig, agent_file: Any = None) -> int:
    """Serve ACP on stdio until the client closes stdin or a signal stops mm; returns 0 (1 when
    the connection failed: the SDK could not be loaded).
    `agent_file`: the file the configuration came from (None: the defaults), for the first log line."""
    from mm.sdk_logs import route_sdk_logs
    from mm.acp.wire import claim_stdout

    wire = claim_stdout()
    route_sdk_logs(to_stderr=True)
    try:
        return asyncio.run(_serve(config, wire, agent_file))
    except KeyboardInterrupt:
        return 0


async def _serve(config: AgentConfig, wire: int, agent_file: Any) -> int:
    from pathlib import Path

    from mm.acp.early import EarlyAnswers
    from mm.acp.model import ModelHandle
    from mm.acp.server import EditorAgent
    from mm.acp.wire import StdioTransport
    from mm.ask.agents import ask_depth
    from mm.skills import catalogue_of, shadowed_line, shadowed_skills
    from mm.tools.lsp.servers import banner_note
    from mm.tools.registry import build_registry

    from mm.mcp import start_servers, stop_servers

    start_servers(config, Path.cwd(), log)  # MCP servers, in the background (docs/mcp.md)
    tools = build_registry(config, cwd=Path.cwd())  # what the banner names (sessions build their own)
    for skill in shadowed_skills(catalogue_of(tools)):  # not advertised: the banner says so (mm-acp.md)
        log(f"[acp] {shadowed_line(skill)}")

    def ready(endpoint: Any, facts: Any) -> None:  # the banner, then the server's warnings, once
        tools.refresh()  # with the MCP servers' tools ready by now
        log(_banner(endpoint, facts.context_window, tools.names) + banner_note(config, tools.names))
        if tools.joining is not None:
            from mm.commands.mcp import servers_line

            log(f"[acp] {servers_line(tools)}")
        for line in facts.warnings:
            log(line)

    model = ModelHandle(config, ready)
    watch: list[asyncio.Future] = []

    def warm_up() -> None:  # once the first session is answered, beside the SDK's import (docs/acp.md §Start-up)
        model.start()
        watch.append(asyncio.ensure_future(_report_failure(model)))

    agent = EditorAgent(config, model, log)
    transport = StdioTransport(sys.stdin.fileno(), wire, log, before_eof=agent.stop)
    early = EarlyAnswers(transport, log, warm_up, at_once=ask_depth() > 0)  # an asking mm prompts at once
    agent.early = early.notify  # the first session's commands go before the SDK is loaded
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, stop.set)
    log(STARTED.format(version=__version__, file=agent_file or "none, the defaults"))  # a signal now stops cleanly
    serving = asyncio.ensure_future(early.serve(agent))
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        await agent.stop()
        for task in (serving, stopping, *watch):
            task.cancel()
        await asyncio.gather(serving, stopping, *watch, return_exceptions=True)
        await stop_servers()
        model.close()
    error = serving.exception() if serving.done() and not serving.cancelled() else None
    if error is not None:  # the SDK could not be loaded (a broken installation)
        log(STOPPED.format(error=f"{type(error).__name__}: {error}"))
        return 1
    return 0


async def _report_failure(model: Any) -> None:
    """Say on stderr, once, why no model server can be used yet (the next prompt tries again)."""
    from mm.llm.types import LLMError

    try:
        await model.client()
    except LLMError as err:
        log(NO_SERVER.format(error=err))


def _banner(endpoint: Any, window: int | None, names: list[str]) -> str:
    from mm.llm.resolve import model_line

    return BANNER.format(version=__version__, model=model_line(endpoint),
                         window=f"{window} tokens" if window else "unknown", tools=", ".join(names) or "none")

