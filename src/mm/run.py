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

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_CLOSED_OUTPUT = 0, 1, 2, 130, 141
INTERRUPTED = "interrupted"  # said as `mm: interrupted` (the result's `error` in JSON)
FIRST_REQUEST_HEAD_START = 0.1  # seconds the server probe waits in one-shot mode
PROBE_GRACE = 5.0  # seconds a one-shot turn that ended first still gives the probe (its own request timeout)
PROBE_FIRST_CHARS = 2048  # a longer prompt waits for the server's window: one too large is refused, not cut
SESSION_NOT_SAVED = "[warning: the session could not be saved to {path}: {error}]"


def with_memory(system_prompt: str, registry: Any) -> str:
    """`system_prompt` followed by the section of the memory tool's MEMORY.md, after a blank line
    (mm.tools.memory.store.MemoryFile.section, read now); unchanged without the tool or entries."""
    tool = registry.get("memory")
    section = tool.file.section() if tool is not None and hasattr(tool, "file") else ""
    return f"{system_prompt.rstrip(chr(10))}\n\n{section}" if section else system_prompt


def build_conversation(config: AgentConfig, client, cwd: Path, resume: Path | None = None,
                       instructions: Any = None) -> Conversation:
    """A Conversation for `config` talking to `client` in `cwd`, saving sessions when enabled.

    `resume`: a session file whose conversation goes on (its system prompt replaced by the
    current one); raises mm.sessions.load.SessionError when it cannot be read. `instructions`:
    the project instructions for `cwd` (mm.instructions.Instructions) when the front end read
    them already to say which; None: read here.
    """
    from mm.instructions import read_instructions, with_instructions
    from mm.skills import catalogue_of, skills_system_prompt
    from mm.tools.registry import build_registry

    if instructions is None:
        instructions = read_instructions(cwd, config.instructions.maxTokens)
    registry = build_registry(config, cwd=cwd)
    base_prompt = with_instructions(skills_system_prompt(config.systemPrompt, catalogue_of(registry)), instructions)

    def prompt_now() -> str:
        """The system prompt, MEMORY.md as it is now included (docs/memory.md)."""
        system_prompt = with_memory(base_prompt, registry)
        if config.structuredOutput is not None:  # the final answer follows this JSON Schema (mm.answer_schema)
            from mm.answer_schema import system_note

            system_prompt += system_note(config.structuredOutput)
        return system_prompt

    system_prompt = prompt_now()
    conv = Conversation(
        client=client,
        registry=registry,
        cwd=cwd,
        system_prompt=system_prompt,
        settings=Settings(max_output=config.maxOutput, bash_timeout=config.bashTimeout,
                          preview_lines=config.previewLines, watchdog_timeout=config.watchdogTimeout),
        yolo=config.yolo,
        max_turns=config.maxTurns,
        context=config.context,
        answer_schema=config.structuredOutput,
    )
    if registry.get("memory") is not None:  # MEMORY.md read again after a compaction and at /new
        conv.fresh_system_prompt = prompt_now
    agents = conv.registry.get("spawn_agent")
    if agents is not None:  # sub-agents run in this process, on this conversation (docs/subagents.md)
        from mm.engine.subagent import SubagentRunner

        agents.runs.runner = SubagentRunner(conv, config)
        conv.inbox = agents.runs
    if config.planMode:  # read-only until a plan is approved (docs/plan-mode.md)
        conv.set_plan_mode(True)
    if any(vars(config.hooks).values()):  # imported only when the agent file has hooks (start-up time)
        from mm.hooks.point import Hooks

        conv.hooks = Hooks(config.hooks)
    if config.sessions.enabled:
        from mm.llm.types import fix_surrogates
        from mm.sessions.store import SessionFile

        session = SessionFile(cwd / config.sessions.dir,
                              meta={"cwd": str(cwd), "model": getattr(client, "model", "") or ""})
        conv.session = session
        if resume is not None:
            from mm.engine.resume import resume_session

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
                kept.release()  # archived: another mm may go on with it
            save(c)
            return kept_as

        def save_now(c: Conversation) -> None:  # in a turn: what ran is on disk at once (docs/sessions.md)
            try:
                session.save(c.history, c.errors, asdict(c.totals), index=False)
            except (OSError, ValueError):  # the end of the turn saves again, and says what fails
                pass

        conv.on_turn_end = save
        conv.on_change = save_now
        conv.on_new = keep_previous
        memory = conv.registry.get("search_memory")
        if memory is not None:  # the conversation in progress is left out of its own search
            memory.current = lambda: conv.history
    return conv


def make_client(config: AgentConfig, base_url: str, model: str, provider: str):
    """The model client for an endpoint, with the agent file's options."""
    from mm.llm.client import ChatClient

    options = {}
    if config.temperature is not None:
        options["temperature"] = config.temperature
    elif provider == "embedded":  # greedy: the demo model gives the same answer every time (README)
        options["temperature"] = 0
    if config.maxTokens is not None:
        options["max_tokens"] = config.maxTokens
    elif provider == "embedded":  # the demo model can repeat itself for ever: bound each answer
        from mm.llm.embedded import DEFAULT_MAX_TOKENS

        options["max_tokens"] = DEFAULT_MAX_TOKENS
    return ChatClient(base_url, model, api_key=config.apiKey, provider=provider,
                      idle_timeout=config.watchdogTimeout, loading_timeout=config.watchdogTimeout,
                      options=options)


def run_oneshot(config: AgentConfig, prompt: str | None, output_format: str = "text",
                resume: str | None = None, cwd: Path | None = None) -> int:
    """Run one turn in `cwd` (default: the working directory) for `prompt` and what is piped to mm (mm.ui.piped:
    None or "-" takes the whole prompt from stdin), rendered as `output_format` (text, json,
    stream-json: docs/scripting.md); `resume`: go on with that saved conversation ("" the
    latest). Returns the exit status: 0, 1 (failed turn), 2 (usage: the prompt, the session
    to resume), 130 (interrupted), 141 (the reader of stdout left)."""
    from mm.ui.piped import PromptError, prompt_with_input, read_piped
    from mm.ui.scripting import oneshot_ui

    ui = oneshot_ui(output_format, config.previewLines, structured=config.structuredOutput is not None)
    for sig in (signal.SIGTERM, signal.SIGHUP):  # until the turn's own handlers (_oneshot): as Ctrl-C
        signal.signal(sig, _interrupt)
    try:
        try:
            text = prompt_with_input(prompt, read_piped(notice=ui.note))
        except PromptError as err:
            return _finish(ui, EXIT_USAGE, error=str(err), usage_error=True)
        return asyncio.run(_oneshot(config, text, ui, resume, cwd or Path.cwd()))
    except KeyboardInterrupt:
        return _finish(ui, EXIT_INTERRUPTED, error=INTERRUPTED, stop_reason="cancelled")


def _interrupt(signum: int, frame: Any) -> None:
    """SIGTERM or SIGHUP before the turn starts (waiting for piped input, finding the server):
    an interruption like Ctrl-C, so that the run still ends with its result (status 130)."""
    raise KeyboardInterrupt


def refuse_oneshot(output_format: str, error: str) -> int:
    """End `mm -p` before it starts (an agent file or flags it cannot run with): `mm: <error>`
    on stderr, and the result object in the JSON formats (docs/scripting.md); returns 2."""
    from mm.ui.scripting import oneshot_ui

    return _finish(oneshot_ui(output_format, 0), EXIT_USAGE, error=error, usage_error=True)


def _finish(ui, status: int, session_id: str | None = None, **ending: Any) -> int:
    """Let `ui` end the run (`end_run`: the result object, the session line) and return the exit
    status, EXIT_CLOSED_OUTPUT when the reader of stdout left."""
    if ui.closed_output:  # `mm -p … | head`: the reader left, as SIGPIPE would end a pipeline member
        status = EXIT_CLOSED_OUTPUT
    ui.end_run(status, session_id, **ending)
    return status


def apply_facts(conv: Conversation, facts: Any) -> None:
    """Give `conv` what the server said (mm.llm.servers.ServerFacts): the context window that
    compaction measures against, and whether a request over it must be refused (ollama)."""
    conv.context_window = facts.context_window
    conv.refuse_overflow = facts.cuts_silently and bool(facts.context_window)


async def _learn_server(conv: Conversation, config: AgentConfig, endpoint, head_start: float) -> None:
    """Ask the server how it runs the model, after `head_start` seconds (the first request goes
    out first: start-up time), then give it to `conv` and say its warnings on stderr."""
    from mm.llm.resolve import server_facts
    from mm.llm.types import fix_surrogates

    await asyncio.sleep(head_start)
    facts = await server_facts(config, endpoint, load_timeout=config.watchdogTimeout)
    apply_facts(conv, facts)
    for line in facts.warnings:
        print(fix_surrogates(line), file=sys.stderr, flush=True)


async def _oneshot(config: AgentConfig, prompt: str, ui: Any, resume: str | None, cwd: Path) -> int:
    from mm.llm.resolve import ResolveError, model_line, resolve_endpoint
    from mm.sessions.load import SessionError

    to_resume = None
    if resume is not None:
        from mm.commands.sessions import session_to_resume

        to_resume = await asyncio.to_thread(session_to_resume, config, cwd, resume)
        if isinstance(to_resume, str):
            return _finish(ui, EXIT_USAGE, error=to_resume, usage_error=True)
    from mm.mcp import start_servers, stop_servers

    start_servers(config, cwd, ui.note)  # beside finding the server; the turn waits for them (docs/mcp.md)
    try:
        endpoint = await resolve_endpoint(config)
    except ResolveError as err:  # mm.llm.embedded.EmbeddedError included
        await stop_servers()
        return _finish(ui, EXIT_FAILED, error=str(err))
    if endpoint.picked:  # mm chose the server or the model: say which answers
        ui.note(model_line(endpoint))
    try:
        from mm.instructions import read_instructions

        instructions = read_instructions(cwd, config.instructions.maxTokens)
        for line in instructions.lines():  # which AGENTS.md files the model reads (docs/configuration.md)
            ui.note(line)
        try:
            conv = build_conversation(config, make_client(config, endpoint.base_url, endpoint.model,
                                                          endpoint.provider), cwd, resume=to_resume,
                                      instructions=instructions)
        except SessionError as err:  # the conversation to go on with cannot be read, or another mm holds it
            return _finish(ui, EXIT_USAGE, error=str(err), usage_error=True)
        from mm.skills import catalogue_of, rewrite_skill_command

        prompt = rewrite_skill_command(prompt, catalogue_of(conv.registry))  # `/review x` → `$review x` (docs/skills.md)
        ui.on_closed_output = conv.cancel
        conv.await_background = True  # nobody would receive a later report (docs/subagents.md)
        session_id = conv.session.id if conv.session is not None else None
        interrupted = asyncio.Event()

        def stop() -> None:
            interrupted.set()
            conv.cancel()

        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # a closed terminal too
            loop.add_signal_handler(sig, stop)
        try:
            done = None
            if await _servers_settled(conv, interrupted):
                conv.registry.refresh()  # the MCP servers' tools are declared from the first request
                ui.started(session_id, endpoint.model, conv.registry.names, str(conv.cwd), prompt)
                done = await _probe_and_turn(conv, config, endpoint, prompt, ui, interrupted)
        finally:
            await conv.close()  # the agents ask_agent started, the session file let go
    finally:
        await stop_servers()
        endpoint.close()
    if ui.closed_output:  # the turn was cancelled because the reader left: nothing else to say
        return _finish(ui, EXIT_CLOSED_OUTPUT, session_id)
    if done is None or done.stop_reason == "cancelled":
        return _finish(ui, EXIT_INTERRUPTED, session_id, error=INTERRUPTED, stop_reason="cancelled")
    return _finish(ui, EXIT_OK if done.stop_reason == "end_turn" else EXIT_FAILED, session_id)


async def _servers_settled(conv: Conversation, interrupted: asyncio.Event) -> bool:
    """One-shot mode has one turn, and no later prompt for a slow MCP server's tools to join:
    wait until no server is starting (each gives up after its startupTimeout, docs/mcp.md §When
    the tools join). Returns False when interrupted first."""
    joining = conv.registry.joining
    if joining is None:
        return True
    from mm.tools.waiting import Cancelled, unless_cancelled

    try:
        await unless_cancelled(joining.settled(), interrupted)
    except Cancelled:
        return False
    return True


async def _probe_and_turn(conv: Conversation, config: AgentConfig, endpoint, prompt: str, ui,
                          interrupted: asyncio.Event) -> Any:
    """The server probe and the turn: the probe goes beside the first request, except for a
    server that cuts silently (ollama), whose window the first request must already fit
    (docs/model-servers.md §What the server says), and for a prompt longer than
    PROBE_FIRST_CHARS, which is refused when it does not fit the window (docs/engine.md §Context).
    Returns the TurnDone, or None when interrupted first."""
    from mm.llm.servers import cuts_silently
    from mm.tools.waiting import Cancelled, unless_cancelled

    probe = None
    if cuts_silently(endpoint.provider) or len(prompt) > PROBE_FIRST_CHARS:
        try:
            await unless_cancelled(_learn_server(conv, config, endpoint, 0), interrupted)
        except Cancelled:
            return None
    else:
        probe = asyncio.ensure_future(_learn_server(conv, config, endpoint, FIRST_REQUEST_HEAD_START))
    try:
        done = await conv.run_turn(prompt, ui)
        if probe is not None and not interrupted.is_set():
            await asyncio.wait([probe], timeout=PROBE_GRACE)  # its warnings, when the answer came first
        return done
    finally:
        if probe is not None:
            probe.cancel()
