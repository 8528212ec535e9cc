"""Putting the parts together: endpoint, client, tools, conversation, and the one-shot run."""

from __future__ import annotations

import asyncio
import signal
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from mm.config.schema import AgentConfig
from mm.engine.conversation import Conversation
from mm.tools.base import Settings

EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_CLOSED_OUTPUT = 0, 1, 130, 141
FIRST_REQUEST_HEAD_START = 0.1  # seconds the context-window probe waits in one-shot mode
SESSION_NOT_SAVED = "[warning: the session could not be saved to {path}: {error}]"


def build_conversation(config: AgentConfig, client, cwd: Path, resume: Path | None = None) -> Conversation:
    """A Conversation for `config` talking to `client` in `cwd`, saving sessions when enabled.

    `resume`: a session file whose conversation goes on (its system prompt replaced by the
    current one); raises mm.sessions.load.SessionError when it cannot be read.
    """
    from mm.skills import catalogue_of, skills_system_prompt
    from mm.tools.registry import build_registry

    registry = build_registry(config, cwd=cwd)
    conv = Conversation(
        client=client,
        registry=registry,
        cwd=cwd,
        system_prompt=skills_system_prompt(config.systemPrompt, catalogue_of(registry)),
        settings=Settings(max_output=config.maxOutput, bash_timeout=config.bashTimeout,
                          preview_lines=config.previewLines, watchdog_timeout=config.watchdogTimeout),
        yolo=config.yolo,
        max_turns=config.maxTurns,
        context=config.context,
    )
    if config.sessions.enabled:
        from mm.llm.types import fix_surrogates
        from mm.sessions.store import SessionFile

        session = SessionFile(cwd / config.sessions.dir,
                              meta={"cwd": str(cwd), "model": getattr(client, "model", "") or ""})
        conv.session = session
        if resume is not None:
            resume_session(conv, resume)

        def save(c: Conversation) -> None:
            try:
                session.save(c.history, c.errors, asdict(c.totals))
            except (OSError, ValueError) as err:  # the turn's work stands; say why the file is missing
                reason = getattr(err, "strerror", None) or err
                if session.directory.exists() and not session.directory.is_dir():
                    reason = f"{session.directory} is not a directory"
                print(fix_surrogates(SESSION_NOT_SAVED.format(path=session.path, error=reason)), file=sys.stderr)

        def keep_previous(c: Conversation, previous: list[dict]) -> str | None:
            kept_as = None
            if len(previous) > 1:  # mm-acp.md §/new: the conversation so far under a new id
                kept = SessionFile(session.directory, meta=dict(session.meta))
                try:
                    kept.save(previous, [], asdict(c.totals))
                    kept_as = kept.id
                except (OSError, ValueError):
                    pass
            save(c)
            return kept_as

        conv.on_turn_end = save
        conv.on_new = keep_previous
        memory = conv.registry.get("search_memory")
        if memory is not None:  # the conversation in progress is left out of its own search
            memory.current = lambda: conv.history
    return conv


def resume_session(conv: Conversation, path: Path, loaded: tuple | None = None,
                   session_id: str | None = None) -> int:
    """Load the session file at `path` into `conv`, whose session file becomes that one (held by
    this process, under `session_id` or the file's own id); returns the number of messages
    loaded. `loaded`: what mm.sessions.load.load_session(path) returned, when the caller read it
    already. Raises mm.sessions.load.SessionError when it cannot be read, SessionBusy (one of
    them) when another mm holds it; `conv` is unchanged then."""
    from mm.sessions.load import load_session, timestamp

    meta, messages = loaded if loaded is not None else load_session(path)
    conv.session.claim(session_id or meta.id)
    if messages and messages[0].get("role") == "system":
        messages = messages[1:]
    conv.history[1:] = messages
    conv.errors[:] = list(meta.errors)
    conv.totals = usage_of(meta.usage)
    conv.meter.forget()
    conv.loops.reset()
    conv.session.created = timestamp(meta.created, path)
    return len(messages)


def usage_of(record: dict) -> Any:
    """The session's token totals as a session file records them (`usage`: the fields of
    mm.llm.types.Usage); unreadable counts are 0."""
    from dataclasses import fields

    from mm.llm.types import Usage

    counts = {}
    for name in (f.name for f in fields(Usage)):
        value = record.get(name) if isinstance(record, dict) else None
        counts[name] = value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
    return Usage(**counts)


def make_client(config: AgentConfig, base_url: str, model: str, provider: str):
    """The model client for an endpoint, with the agent file's options."""
    from mm.llm.client import ChatClient

    options = {}
    if config.temperature is not None:
        options["temperature"] = config.temperature
    if config.maxTokens is not None:
        options["max_tokens"] = config.maxTokens
    elif provider == "embedded":  # the demo model can repeat itself for ever: bound each answer
        from mm.llm.embedded import DEFAULT_MAX_TOKENS

        options["max_tokens"] = DEFAULT_MAX_TOKENS
    return ChatClient(base_url, model, api_key=config.apiKey, provider=provider,
                      idle_timeout=config.watchdogTimeout, loading_timeout=config.watchdogTimeout,
                      options=options)


def run_oneshot(config: AgentConfig, prompt: str, cwd: Path | None = None) -> int:
    """Run one turn for `prompt` in `cwd` (default: the working directory); returns the exit
    status (0, 1 or 130)."""
    try:
        return asyncio.run(_oneshot(config, prompt, cwd or Path.cwd()))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


async def _learn_context_window(conv: Conversation, config: AgentConfig, endpoint) -> None:
    """Set the context window (for automatic compaction) once the server or the configuration tells it."""
    from mm.llm.resolve import context_window

    await asyncio.sleep(FIRST_REQUEST_HEAD_START)  # let the first request go out first (start-up time)
    conv.context_window = await context_window(config, endpoint)


async def _oneshot(config: AgentConfig, prompt: str, cwd: Path) -> int:
    from mm.llm.resolve import ResolveError, resolve_endpoint
    from mm.ui.oneshot import OneShotUI

    try:
        endpoint = await resolve_endpoint(config)
    except ResolveError as err:  # mm.llm.embedded.EmbeddedError included
        print(f"mm: {err}", file=sys.stderr)
        return EXIT_FAILED
    try:
        conv = build_conversation(config, make_client(config, endpoint.base_url, endpoint.model,
                                                      endpoint.provider), cwd)
        ui = OneShotUI(config.previewLines, on_closed_output=conv.cancel)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # a closed terminal too
            loop.add_signal_handler(sig, conv.cancel)
        probe = asyncio.ensure_future(_learn_context_window(conv, config, endpoint))  # beside the first request
        try:
            done = await conv.run_turn(prompt, ui)
        finally:
            probe.cancel()
            await conv.close()  # the agents ask_agent started, the session file let go
    finally:
        endpoint.close()
    if ui.closed_output:  # `mm -p … | head`: the reader left, as SIGPIPE would end a pipeline member
        return EXIT_CLOSED_OUTPUT
    if done.stop_reason == "cancelled":
        print("mm: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_OK if done.stop_reason == "end_turn" else EXIT_FAILED
