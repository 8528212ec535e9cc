"""The slash commands `mm -acp` intercepts in `session/prompt` (mm-acp.md §session/prompt: /new,
/compact; issue 11 point 6: /help, /clear, /model, /resume, /cost, /init; issue 12: /mcp; issue 14: /memory-file;
docs/acp.md §Commands).

Each answers with one `agent_message_chunk` and `stopReason: end_turn` without calling the model,
but /init, which runs a turn with its prompt (mm.commands.init).
"""

from __future__ import annotations

from typing import Any

NEW_LOG = "[acp] session {id}: new session, {n} message(s) forgotten"
KEPT_LOG = "[acp] session {id}: previous conversation kept as {kept}"
COMMAND_LOG = "[acp] session {id}: {command} — {line}"  # /compact's line of mm-acp.md, and the others'
MORE_LINES = " (+{n} line(s))"  # a command's answer of several lines is logged by its first
NO_SERVER = "no model server yet: {error}"


async def run_command(session: Any, ui: Any, command: str, argument: str) -> dict[str, Any]:
    """Run `command` (`/new`, `/model`…: mm.commands.ACP_COMMANDS) with the words after it
    (`argument`) in `session` (mm.acp.session.Session), within the turn lock; returns the
    `session/prompt` response's fields. Raises mm.acp.session.TurnFailed when /init's turn fails."""
    if command in ("/new", "/clear"):
        return await _new(session, ui)
    if command == "/init":
        from mm.commands.init import init_of

        prompt, refusal = init_of(session.conv)
        if prompt:
            return await session.turn(prompt, ui)
        line = refusal
    elif command == "/compact":
        from mm.run import apply_facts

        apply_facts(session.conv, await session.facts())
        line = await session.conv.compact()
    elif command == "/help":
        line = _help(session)
    elif command == "/cost":
        line = session.conv.usage_text()
    elif command == "/model":
        line = await _model(session, argument)
    elif command == "/mcp":
        from mm.commands.mcp import servers_text

        line = servers_text(session.conv.registry)
    elif command == "/memory-file":
        from mm.commands.memory_file import memory_file_text

        line = memory_file_text(session.conv.registry)
    elif command == "/docs":
        from mm.commands.docs import docs_command

        line = await docs_command(session.conv, argument)
    elif command == "/plan":  # docs/plan-mode.md: the mode changes, and the client is told
        from mm.acp.modes import mode_update

        line = session.conv.set_plan_mode(not session.conv.plan_mode.active)
        ui.outbox.put(mode_update(session.conv))
    else:  # /resume
        line = await _resume(session, ui, argument)
    first, *more = line.split("\n")
    logged = first + (MORE_LINES.format(n=len(more)) if more else "")
    session.server.log(COMMAND_LOG.format(id=session.id, command=command, line=logged))
    return await session.command_done(line, ui)


async def _new(session: Any, ui: Any) -> dict[str, Any]:
    """`/new` (and `/clear`), as mm-acp.md §session/prompt says."""
    forgotten = len(session.conv.history) - 1
    line = session.conv.new()
    session.server.log(NEW_LOG.format(id=session.id, n=forgotten))
    if session.conv.kept_as:
        session.server.log(KEPT_LOG.format(id=session.id, kept=session.conv.kept_as))
    return await session.command_done(line, ui)


def _help(session: Any) -> str:
    """`/help`: the commands, then the skills advertised (mm.commands.help_text)."""
    from mm.commands import help_text
    from mm.skills import advertised_skills

    return help_text(advertised_commands(session), advertised_skills(session.catalogue))


def advertised_commands(session: Any) -> tuple[Any, ...]:
    """The commands `session` offers (mm.commands.ACP_COMMANDS): /mcp only when an MCP server is
    configured for it, /memory-file only when the memory tool is declared, /docs only with the
    documents tool group (each answers every time, with why there is nothing to show)."""
    from mm.commands import ACP_COMMANDS, DOCS, MCP, MEMORY_FILE

    registry = session.conv.registry
    return tuple(c for c in ACP_COMMANDS if (c is not MCP or registry.joining is not None)
                 and (c is not MEMORY_FILE or registry.get("memory") is not None)
                 and (c is not DOCS or registry.get("list_documents") is not None))


async def _model(session: Any, name: str) -> str:
    """`/model [NAME]`: the server's models, or the switch for this session alone — the other
    sessions keep the model they have (mm.acp.model.LazyClient)."""
    from mm.commands.model import models_text, switch_model
    from mm.llm.types import LLMError

    handle = session.server.model
    try:
        await handle.client()
    except LLMError as err:
        return NO_SERVER.format(error=err)
    if not name:
        return await models_text(handle.config, handle.endpoint, session.conv.client.model)
    line, facts = await switch_model(session.conv, handle.config, handle.endpoint, name)
    if facts is not None:
        session.model_facts = facts
    return line


async def _resume(session: Any, ui: Any, choice: str) -> str:
    """`/resume [ID]`: the saved conversations of the session's `cwd`, or going on with one in
    this session — its messages replayed first, as `session/load` does (mm-acp.md §session/load
    replay), so that the editor shows them."""
    from mm.commands.sessions import resume_in_place, sessions_list

    config = session.server.config
    if not choice:
        return await sessions_list(config, session.cwd)
    line, loaded = await resume_in_place(config, session.cwd, choice, session.conv)
    if loaded is not None:
        from mm.acp.replay import replay_updates

        meta, messages = loaded
        updates = list(replay_updates(messages, meta.unanswered, session.cwd, session.conv.registry))
        session.server.ids.skip_past([u["toolCallId"] for u in updates if "toolCallId" in u])
        for update in updates:
            ui.outbox.put(update)
    return line
