"""Line mode (`mm`): a prompt_toolkit REPL around one conversation, rendered with rich.

Enter sends, Esc then Enter (or Alt-Enter) adds a line; Esc or Ctrl-C during a turn, or during a
slash command that waits (/compact, /memory), cancels it (its running command ends with
`[error: cancelled]`), at the prompt Ctrl-C clears the line; `/quit` or Ctrl-D leaves; SIGTERM
or SIGHUP cancel what runs and leave (mm.ui.line.interrupts). With `yolo: false`, bash,
write_file and edit_file ask first (`🔐`, mm.ui.line.permission); Esc there rejects and stops the
turn, Esc at an ask_user question declines the form. The slash commands are
mm.ui.line.commands'; they win over a skill of the same name (docs/line-mode.md).
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

from mm import __version__
from mm.config.schema import AgentConfig
from mm.events import Event, PermissionAnswer
from mm.commands.sessions import NO_SESSIONS, RESUMED, session_to_resume, sessions_text
from mm.ui.line.commands import (HELP, NO_EDITOR_HERE, NO_MEMORY, NO_WORDS, QUITS, STATUS, UNKNOWN_COMMAND,
                                 WORKING, Services, command_of, is_a_prompt, question_command, run_waiting,
                                 shadowing_names, words_after)
from mm.ui.line.interrupts import Interrupts, Leave
from mm.ui.line.keys import ask_line, newline_keys
from mm.ui.line.view import LineView

PROMPT = "› "
BANNER = "mm v{version} · {model} · context window {window} · tools: {tools}"  # model: mm.llm.resolve.model_line
CONNECTING = "connecting to the model server…"
LEFT_ON = "mm: {signal} received: leaving"  # after SIGTERM (after SIGHUP nobody can read it)
ATTACHED = "📎 attached {path}"  # an `@path` of the prompt (mm.attach)


class LineUI:
    """The Interaction of line mode: events to the view, permission questions and ask_user at the prompt.

    `stop_turn()` is called with /abort or /quit typed at a question; `command(line)` answers a
    line-mode command typed at an ask_user question (mm.ui.line.commands.question_command);
    `interrupts.stopped`, once set, gives up a question waiting at the prompt (the turn was
    cancelled by a signal)."""

    def __init__(self, view: LineView, session: Any, stop_turn: Any = None, command: Any = None,
                 interrupts: Interrupts | None = None):
        self.view, self.session = view, session
        self.stop_turn = stop_turn
        self.command = command
        self.interrupts = interrupts
        self.quit_after_turn = False

    async def ask_user(self, questions: list) -> list[str] | str:
        """Put ask_user's questions at the prompt (mm-tools.md §ask_user, Line mode)."""
        from mm.ui.line.ask import ask_in_line_mode

        self.view.close()

        def stop(command: str) -> None:
            self.quit_after_turn = command in QUITS
            if self.stop_turn is not None:
                self.stop_turn()

        asking = ask_in_line_mode(questions, lambda text: ask_line(self.session, text), self.view.say, stop,
                                  self.command)
        return await self._unless_stopped(asking, "cancelled")

    async def approve_plan(self, plan: str, allowed_bash: list[str], plan_file: Path) -> tuple[str, str]:
        """exit_plan_mode's question at the prompt (mm.ui.line.plan): the plan, then y, e or n."""
        from mm.ui.line.plan import ask_plan_approval

        self.view.close()
        asking = ask_plan_approval(plan, allowed_bash, lambda text: ask_line(self.session, text), self.view.say)
        return await self._unless_stopped(asking, ("keep", ""))

    def emit(self, event: Event) -> None:
        """Render one engine event."""
        self.view.emit(event)

    async def request_permission(self, name: str, arguments: dict[str, Any], preview: str) -> PermissionAnswer:
        """Ask at the `🔐` prompt (mm.ui.line.permission.ask_permission): `preview` is the command,
        the file and its diff, or the arguments; Esc, Ctrl-C or end of input reject and stop the turn."""
        from mm.llm.types import fix_surrogates
        from mm.ui.line.permission import ask_permission

        self.view.close()
        asking = ask_permission(self.session, fix_surrogates(name), fix_surrogates(preview), self.view.say,
                                self.stop_turn)
        return await self._unless_stopped(asking, "reject_once")

    async def _unless_stopped(self, asking: Any, otherwise: Any) -> Any:
        """`asking`'s answer, or `otherwise` when the turn is cancelled meanwhile (a signal)."""
        if self.interrupts is None:
            return await asking
        from mm.tools.waiting import Cancelled, unless_cancelled

        try:
            return await unless_cancelled(asking, self.interrupts.stopped)
        except Cancelled:
            return otherwise


def prompt_session(history_file: Path | None, input: Any = None, output: Any = None, completer: Any = None) -> Any:
    """A PromptSession with history across runs (`history_file`, mm.ui.line.history: read in a
    thread, only ever a regular file), Esc-Enter for a new line, Ctrl-X Ctrl-E for $EDITOR
    (mm.ui.line.keys) and Tab completing with `completer` (mm.ui.line.complete; None: none)."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import InMemoryHistory, ThreadedHistory

    history: Any = InMemoryHistory()
    if history_file is not None:
        from mm.ui.line.history import PromptHistory

        history = ThreadedHistory(PromptHistory(history_file))
    return PromptSession(history=history, key_bindings=newline_keys(), input=input, output=output,
                         completer=completer, complete_while_typing=False, tempfile_suffix=".md")


def answer_session(session: Any) -> Any:
    """The session the answers to a `🔐` prompt or an ask_user question are read with: a
    PromptSession on the same terminal as `session` with a history of its own, in memory, so that
    no answer joins the prompt history (docs/line-mode.md §Prompt history); `session` itself when
    it keeps no history (PlainSession)."""
    from prompt_toolkit import PromptSession

    if not isinstance(session, PromptSession):
        return session
    return PromptSession(key_bindings=session.key_bindings, input=session.input, output=session.output)


async def repl(conv: Any, session: Any, view: LineView, banner: str, services: Services | None = None,
               first: str | None = None) -> int:
    """Read prompts until /quit or end of input, running one turn per prompt — `first` (`mm
    "PROMPT"`) before any typed one; returns 0, or 128 + the signal's number after SIGTERM or
    SIGHUP (the work running then cancelled first).

    Any exception on its way out stops the live region first (the cursor shown again)."""
    def hang_up() -> None:  # the terminal is gone: writing to it would only fail
        view.console.quiet = view.errors.quiet = True

    try:
        with Interrupts(getattr(session, "input", None), hang_up) as interrupts:
            try:
                await _read_eval(conv, session, view, banner, services or Services(), interrupts, first)
            except Leave:
                pass
            if interrupts.left_by is not None:
                view.say(LEFT_ON.format(signal=signal.Signals(interrupts.left_by).name), style="dim")
            return interrupts.exit_status
    except BaseException:
        view.abort()
        raise


async def _read_eval(conv: Any, session: Any, view: LineView, banner: str, services: Services,
                     interrupts: Interrupts, first: str | None = None) -> None:
    """The REPL's loop (see repl); returns when the user leaves, raises Leave on a signal at the prompt."""
    from mm.attach import attach_paths
    from mm.skills import catalogue_of, rewrite_skill_command, shadowed_line, shadowed_skills

    view.say(banner, style="bold", wrap=True)
    view.say(HELP, style="dim", wrap=True)
    for skill in shadowed_skills(catalogue_of(conv.registry), shadowing_names(catalogue_of(conv.registry))):
        view.say(shadowed_line(skill), style="dim", wrap=True)

    async def at_a_question(line: str) -> str | None:
        return await question_command(conv, line, services)

    answers = answer_session(session)

    def make_ui(stop: Any) -> LineUI:
        return LineUI(view, answers, stop, at_a_question, interrupts)

    ui = make_ui(conv.cancel)
    given = [first] if first and first.strip() else []
    edit: str | None = None  # /edit: the next prompt opens $EDITOR with this text
    while interrupts.left_by is None:
        for line in services.notes() if services.notes is not None else []:  # between turns (docs/mcp.md)
            view.say(line, style="yellow")
        try:
            typed = await _next_line(session, view, interrupts, given, edit)
        except KeyboardInterrupt:
            continue
        except EOFError:
            return
        finally:
            edit = None
        text = typed.strip()
        if not text:
            continue
        command = command_of(text)
        if command in QUITS and text.lower() == command:
            return
        if command == "/ask":
            from mm.ui.line.asking import ask_command

            await ask_command(conv, text, view, make_ui, interrupts.running)
            continue
        if command == "/edit":
            edit = words_after(text)
            if not hasattr(session, "default_buffer"):  # no terminal (mm.ui.line.plain)
                view.say(NO_EDITOR_HERE)
                edit = None
            continue
        if command == "/init":
            text = _init(conv, text, view)
            if not text:
                continue
        elif command is not None:
            await _command(conv, text, command, view, services, interrupts)
            continue
        catalogue = catalogue_of(conv.registry)
        text = rewrite_skill_command(text, catalogue, shadowing_names(catalogue))  # `/greetings x` → `$greetings x`
        if text.startswith("/") and not is_a_prompt(typed):  # neither a command, a skill nor a path
            view.say(UNKNOWN_COMMAND.format(command=text.split()[0], help=HELP))
            continue
        lines, attached = attach_paths(text, conv.cwd)  # `@path`, as over ACP (mm-acp.md §session/prompt)
        for path in attached:
            view.say(ATTACHED.format(path=path), style="dim")
        text += lines
        try:
            view.start_turn()
            with interrupts.running(conv.cancel):
                await conv.run_turn(text, ui)
        finally:
            view.close()
        if ui.quit_after_turn:
            return


async def _next_line(session: Any, view: LineView, interrupts: Interrupts, given: list[str], edit: str | None) -> str:
    """The next line to run: a prompt `given` on the command line first (shown after the prompt
    sign, as if typed, and kept in the prompt history), then what the user types (in $EDITOR
    first after /edit). Raises as `session.prompt_async` (KeyboardInterrupt, EOFError)."""
    if not given:
        return await interrupts.idle(_prompt(session, edit))
    text = given.pop(0)
    view.say(PROMPT + text)
    history = getattr(session, "history", None)
    if history is not None:  # Up recalls it, as a typed prompt
        history.append_string(text)
    return text


def _prompt(session: Any, edit: str | None) -> Any:
    """The next prompt of `session`; with `edit` (the words after /edit), one that opens $EDITOR
    with them at once — the text written there comes back to the prompt, sent by Enter as after
    Ctrl-X Ctrl-E (mm.ui.line.keys)."""
    if edit is None:
        return session.prompt_async(PROMPT)
    return session.prompt_async(PROMPT, default=edit, pre_run=lambda: session.default_buffer.open_in_editor())


def _init(conv: Any, text: str, view: LineView) -> str:
    """`/init`: the prompt of its turn (mm.commands.init), said with INIT_STARTED; "" when it does
    not run (words after it, an AGENTS.md already there, no write_file), the reason said."""
    from mm.commands.init import INIT_STARTED, init_of

    if text.lower() != "/init":
        view.say(NO_WORDS.format(command="/init"))
        return ""
    prompt, refusal = init_of(conv)
    view.say(refusal or INIT_STARTED, style=None if refusal else "dim")
    return prompt


async def _command(conv: Any, text: str, command: str, view: LineView, services: Services,
                   interrupts: Interrupts) -> None:
    """Run a slash command like a turn: a spinner while it waits, Esc, Ctrl-C and the leaving
    signals cancel it (mm.ui.line.commands.run_waiting); then its text."""
    cancelled = asyncio.Event()

    def cancel() -> None:
        conv.cancel()  # /compact honours it
        cancelled.set()

    try:
        view.start_turn(STATUS.get(command, WORKING))
        with interrupts.running(cancel):
            shown = await run_waiting(conv, text, services, cancelled)
    finally:
        view.close()
    view.say(shown)


def memory_search(config: AgentConfig, cwd: Path) -> Any:
    """The `/memory` search over past sessions: `search(words, history)` gives the text to show,
    NO_SESSIONS or NO_MEMORY when sessions or the command are off."""
    async def search(words: str, history: list) -> str:
        if not config.sessions.enabled:
            return NO_SESSIONS
        if not config.sessions.searchMemory:
            return NO_MEMORY
        from mm.sessions.search import search_memory

        return await asyncio.to_thread(search_memory, cwd / config.sessions.dir, words, None, history,
                                       config.maxOutput)

    return search


def model_command(config: AgentConfig, endpoint: Any) -> Any:
    """The `/model` command of line mode: `models(choice, conv)` lists the models of the server at
    `endpoint` (no choice) or switches `conv` to the one named (mm.commands.model)."""
    async def models(choice: str, conv: Any) -> str:
        from mm.commands.model import models_text, switch_model

        if not choice:
            return await models_text(config, endpoint, conv.client.model)
        return (await switch_model(conv, config, endpoint, choice))[0]

    return models


def banner_line(config: AgentConfig, endpoint: Any, conv: Any) -> str:
    """The start-up banner: the model and where it runs (mm.llm.resolve.model_line), the context
    window, the tools declared (and that no lsp server was found, when none was)."""
    from mm.llm.resolve import model_line
    from mm.tools.lsp.servers import banner_note

    window = f"{conv.context_window} tokens" if conv.context_window else "unknown"
    conv.registry.refresh()  # the tools of the MCP servers ready by now
    return BANNER.format(version=__version__, model=model_line(endpoint), window=window,
                         tools=", ".join(conv.registry.names) or "none") + banner_note(config, conv.registry.names)


async def run_line_mode(config: AgentConfig, cwd: Path, input: Any = None, output: Any = None,
                        console: Any = None, history_file: Path | None = None, resume: str | None = None,
                        prompt: str | None = None) -> int:
    """Run line mode until the user leaves, running `prompt` (`mm "PROMPT"`) first when given;
    returns the exit status (0; 1 without a server;
    2 when `--resume` names nothing to go on with; 128 + the signal's number after SIGTERM or
    SIGHUP). `CONNECTING` is shown while the model server is found (it can take seconds); a
    Ctrl-C then raises KeyboardInterrupt, which `mm` reports as `mm: interrupted` (mm.cli)."""
    from mm.llm.resolve import ResolveError, resolve_endpoint, server_facts
    from mm.run import apply_facts, build_conversation, make_client

    if console is None:  # stdout (through Unpadded when it is no terminal); error lines to stderr
        from rich.console import Console

        from mm.ui.line.unpadded import line_console

        console, errors = line_console(highlight=False), Console(stderr=True, highlight=False)
    else:
        errors = console
    view = LineView(console, config.previewLines, errors)
    resumed = session_to_resume(config, cwd, resume) if resume is not None else None
    if isinstance(resumed, str):
        view.error(f"mm: {resumed}")
        return 2
    from mm.mcp import start_servers, stop_servers

    notes = start_servers(config, cwd)  # in the background from now on: the prompt waits for none (docs/mcp.md)
    view.say(CONNECTING, style="dim")
    try:
        endpoint = await resolve_endpoint(config)
    except ResolveError as err:
        view.error(f"mm: {err}")
        await stop_servers()
        return 1
    try:
        from mm.instructions import read_instructions
        from mm.sessions.load import SessionError

        instructions = read_instructions(cwd, config.instructions.maxTokens)
        try:
            conv = build_conversation(config, make_client(config, endpoint.base_url, endpoint.model,
                                                          endpoint.provider), cwd, resume=resumed,
                                      instructions=instructions)
        except SessionError as err:
            view.error(f"mm: {err}")
            return 2
        facts = await server_facts(config, endpoint, load_timeout=config.watchdogTimeout)
        apply_facts(conv, facts)
        from mm.ui.line.plain import PlainSession, stdin_is_a_terminal

        if input is None and not stdin_is_a_terminal():  # `mm < prompts.txt`: one prompt per line
            session: Any = PlainSession()
        else:
            from mm.ui.line.complete import PromptCompleter

            session = prompt_session(history_file, input, output, PromptCompleter(conv))
        banner = "\n".join([banner_line(config, endpoint, conv)] + _servers_line(conv) + instructions.lines()
                           + facts.warnings)
        if history_file is not None and not isinstance(session, PlainSession):
            from mm.ui.line.history import history_problem

            problem = history_problem(history_file)  # a named pipe or a device: said, never written
            banner += f"\n{problem}" if problem else ""
        if resumed is not None:
            banner += "\n" + RESUMED.format(id=resumed.stem, n=len(conv.history) - 1)
        try:
            services = Services(memory_search(config, cwd), lambda choice, c: sessions_text(config, cwd, choice, c),
                                model_command(config, endpoint), notes)
            return await repl(conv, session, view, banner, services, prompt)
        finally:
            await conv.close()  # the agents ask_agent started, the session file let go
    finally:
        await stop_servers()
        endpoint.close()


def _servers_line(conv: Any) -> list[str]:
    """The banner's line of the MCP servers (mm.commands.mcp.servers_line), when any is configured."""
    if conv.registry.joining is None:
        return []
    from mm.commands.mcp import servers_line

    return [servers_line(conv.registry) or ""]
