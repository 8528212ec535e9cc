"""Line mode (`mm`): a prompt_toolkit REPL around one conversation, rendered with rich.

Enter sends, Esc then Enter (or Alt-Enter) adds a line; Esc or Ctrl-C during a turn cancels it
(its running command ends with `[error: cancelled]`), at the prompt Ctrl-C clears the line;
`/quit` or Ctrl-D leaves. With `yolo: false`, bash, write_file and edit_file ask first (`🔐`,
mm.ui.line.permission); Esc there rejects and stops the turn, Esc at an ask_user question declines
the form.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from pathlib import Path
from typing import Any, Iterator

from mm import __version__
from mm.config.schema import AgentConfig
from mm.engine.events import Event, PermissionAnswer
from mm.ui.line.keys import ask_line, newline_keys
from mm.ui.line.view import LineView

PROMPT = "› "
BANNER = "mm v{version} · {model} @ {provider} · {url} · context window {window} · tools: {tools}"
HELP = ("/new · /compact · /usage · /memory <words> · /sessions · /ask <agent> <prompt> · /quit · "
        "Esc Enter for a new line · Esc or Ctrl-C cancels the turn")
UNKNOWN_COMMAND = "unknown command {command} — {help}"
NO_SESSIONS = "sessions are off: set `sessions: {enabled: true}` in the agent file to keep conversations"
NOTHING_TO_RESUME = "no saved conversation in {dir}"
NO_SUCH_SESSION = "no saved conversation {id} in {dir} — /sessions lists them"
RESUMED = "resumed {id}: {n} message(s)"
RESUME_HINT = "go on with one: /sessions <id> (or mm --resume <id>)"
SESSIONS_SHOWN = 20


class LineUI:
    """The Interaction of line mode: events to the view, permission questions and ask_user at the prompt."""

    def __init__(self, view: LineView, session: Any, stop_turn: Any = None):
        self.view, self.session = view, session
        self.stop_turn = stop_turn  # called with /abort or /quit typed at a question
        self.quit_after_turn = False

    async def ask_user(self, questions: list) -> list[str] | str:
        """Put ask_user's questions at the prompt (mm-tools.md §ask_user, Line mode)."""
        from mm.ui.line.ask import ask_in_line_mode

        self.view.close()

        def say(line: str) -> None:
            self.view.console.print(line, markup=False, highlight=False, soft_wrap=True)

        def stop(command: str) -> None:
            self.quit_after_turn = command in ("/quit", "/exit")
            if self.stop_turn is not None:
                self.stop_turn()

        return await ask_in_line_mode(questions, lambda text: ask_line(self.session, text), say, stop)

    def emit(self, event: Event) -> None:
        """Render one engine event."""
        self.view.emit(event)

    async def request_permission(self, name: str, arguments: dict[str, Any], preview: str) -> PermissionAnswer:
        """Ask at the `🔐` prompt (mm.ui.line.permission.ask_permission): `preview` is the command,
        the file and its diff, or the arguments; Esc, Ctrl-C or end of input reject and stop the turn."""
        from mm.ui.line.permission import ask_permission

        self.view.close()

        def say(renderable: Any) -> None:
            self.view.console.print(renderable, markup=False, highlight=False, soft_wrap=True)

        return await ask_permission(self.session, name, preview, say, self.stop_turn)


def prompt_session(history_file: Path | None, input: Any = None, output: Any = None) -> Any:
    """A PromptSession with history across runs (`history_file`) and Esc-Enter for a new line."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    history: Any = InMemoryHistory()
    if history_file is not None:
        history_file.parent.mkdir(parents=True, exist_ok=True)
        history = FileHistory(str(history_file))
    return PromptSession(history=history, key_bindings=newline_keys(), input=input, output=output)


async def repl(conv: Any, session: Any, view: LineView, banner: str, memory: Any = None,
               sessions: Any = None) -> int:
    """Read prompts until /quit or end of input, running one turn per prompt; returns 0."""
    view.console.print(banner, style="bold", markup=False, highlight=False, soft_wrap=True)
    view.console.print(HELP, style="dim", markup=False, highlight=False, soft_wrap=True)
    ui = LineUI(view, session, conv.cancel)
    loop = asyncio.get_running_loop()
    while True:
        try:
            text = await session.prompt_async(PROMPT)
        except KeyboardInterrupt:
            continue
        except EOFError:
            return 0
        from mm.skills import catalogue_of, resolve_skill_notation, rewrite_skill_command

        catalogue = catalogue_of(conv.registry)
        text = rewrite_skill_command(text.strip(), catalogue)  # `/greetings Bob` → `$greetings Bob`
        if not text:
            continue
        if text.startswith("/"):
            if text in ("/quit", "/exit"):
                return 0
            if text.split()[0] == "/ask":
                from mm.ui.line.asking import ask_command

                await ask_command(conv, text, view, session, lambda stop: LineUI(view, session, stop),
                                  escape_cancels)
                continue
            view.say(await slash_command(conv, text, memory, sessions))
            continue
        loop.add_signal_handler(signal.SIGINT, conv.cancel)
        try:
            view.start_turn()
            with escape_cancels(session.input, conv.cancel):
                await conv.run_turn(resolve_skill_notation(text, catalogue), ui)
        finally:
            view.close()
            loop.remove_signal_handler(signal.SIGINT)
        if ui.quit_after_turn:
            return 0


async def slash_command(conv: Any, text: str, memory: Any = None, sessions: Any = None) -> str:
    """Run a slash command typed at the prompt and return the text to show (mm-acp.md: /new, /compact;
    mm-tools.md §search_memory: /memory). `memory(words, history)` searches past sessions, when on."""
    command = text.split()[0]
    if command == "/new":
        return conv.new()
    if command == "/compact":
        return await conv.compact()
    if command == "/usage":
        return conv.usage_text()
    if command == "/sessions" and sessions is not None:
        return sessions(text[len(command):].strip(), conv)
    if command == "/memory" and memory is not None:
        return await memory(text[len(command):].strip(), conv.history)
    return UNKNOWN_COMMAND.format(command=command, help=HELP)


def memory_search(config: AgentConfig, cwd: Path) -> Any:
    """The `/memory` search over past sessions, or None when sessions or the command are off."""
    if not (config.sessions.enabled and config.sessions.searchMemory):
        return None

    async def search(words: str, history: list) -> str:
        from mm.sessions.search import search_memory

        return await asyncio.to_thread(search_memory, cwd / config.sessions.dir, words, None, history,
                                       config.maxOutput)

    return search


@contextlib.contextmanager
def escape_cancels(terminal: Any, cancel: Any) -> Iterator[None]:
    """While a turn runs, Esc (or Ctrl-C arriving as a key) typed at the terminal cancels it.

    The terminal's keys are read in raw mode through prompt_toolkit's input; a prompt opened
    during the turn (🔐, ask_user) reads them itself and gives them back afterwards.
    """
    from prompt_toolkit.keys import Keys

    def keys_ready() -> None:
        keys = terminal.read_keys() + terminal.flush_keys()
        if any(k.key in (Keys.Escape, Keys.ControlC) for k in keys):
            cancel()

    if not hasattr(terminal, "fileno") or not _is_terminal(terminal):
        yield
        return
    with terminal.raw_mode(), terminal.attach(keys_ready):
        yield


def _is_terminal(terminal: Any) -> bool:
    import os

    try:
        return os.isatty(terminal.fileno())
    except (OSError, ValueError, NotImplementedError):
        return False


def banner_line(config: AgentConfig, endpoint: Any, conv: Any) -> str:
    """The start-up banner: model, provider, server URL, context window, tools declared."""
    window = f"{conv.context_window} tokens" if conv.context_window else "unknown"
    return BANNER.format(version=__version__, model=endpoint.model, provider=endpoint.provider,
                         url=endpoint.base_url, window=window, tools=", ".join(conv.registry.names) or "none")


def session_to_resume(config: AgentConfig, cwd: Path, resume: str) -> Path | str:
    """The file `--resume [ID]` names (the latest when ID is empty), or the one-line reason it cannot."""
    from mm.sessions.load import latest_session

    directory = cwd / config.sessions.dir
    if not config.sessions.enabled:
        return NO_SESSIONS
    if not resume:
        latest = latest_session(directory)
        return latest.path if latest is not None else NOTHING_TO_RESUME.format(dir=directory)
    path = directory / f"{Path(resume).name.removesuffix('.json')}.json"
    return path if path.is_file() else NO_SUCH_SESSION.format(id=resume, dir=directory)


def sessions_text(config: AgentConfig, cwd: Path, choice: str = "", conv: Any = None) -> str:
    """`/sessions`: the saved conversations, newest first; `/sessions <id>` goes on with that one."""
    from mm.sessions.load import SessionError, list_sessions

    if not config.sessions.enabled:
        return NO_SESSIONS
    if choice and conv is not None:
        from mm.run import resume_session

        path = session_to_resume(config, cwd, choice)
        if isinstance(path, str):
            return path
        try:
            return RESUMED.format(id=path.stem, n=resume_session(conv, path))
        except SessionError as err:
            return str(err)
    found = list_sessions(cwd / config.sessions.dir)[:SESSIONS_SHOWN]
    if not found:
        return NOTHING_TO_RESUME.format(dir=cwd / config.sessions.dir)
    lines = [f"{s.id} · {s.updated[:16].replace('T', ' ')} · {s.first_question[:80]}" for s in found]
    return "\n".join(lines + [RESUME_HINT])


async def run_line_mode(config: AgentConfig, cwd: Path, input: Any = None, output: Any = None,
                        console: Any = None, history_file: Path | None = None, resume: str | None = None) -> int:
    """Run line mode until the user leaves; returns the exit status (0; 1 without a server;
    2 when `--resume` names nothing to go on with)."""
    from rich.console import Console

    from mm.llm.resolve import ResolveError, context_window, resolve_endpoint
    from mm.run import build_conversation, make_client

    console = console or Console(highlight=False)
    resumed = session_to_resume(config, cwd, resume) if resume is not None else None
    if isinstance(resumed, str):
        console.print(f"mm: {resumed}", style="red", markup=False, highlight=False, soft_wrap=True)
        return 2
    try:
        endpoint = await resolve_endpoint(config)
    except ResolveError as err:
        console.print(f"mm: {err}", style="red", markup=False, highlight=False, soft_wrap=True)
        return 1
    try:
        from mm.sessions.load import SessionError

        try:
            conv = build_conversation(config, make_client(config, endpoint.base_url, endpoint.model,
                                                          endpoint.provider), cwd, resume=resumed)
        except SessionError as err:
            console.print(f"mm: {err}", style="red", markup=False, highlight=False, soft_wrap=True)
            return 2
        conv.context_window = await context_window(config, endpoint)
        view = LineView(console, config.previewLines)
        from mm.ui.line.plain import PlainSession, stdin_is_a_terminal

        if input is None and not stdin_is_a_terminal():  # `mm < prompts.txt`: one prompt per line
            session: Any = PlainSession()
        else:
            session = prompt_session(history_file, input, output)
        banner = banner_line(config, endpoint, conv)
        if resumed is not None:
            banner += "\n" + RESUMED.format(id=resumed.stem, n=len(conv.history) - 1)
        try:
            return await repl(conv, session, view, banner, memory_search(config, cwd),
                              lambda choice, c: sessions_text(config, cwd, choice, c))
        finally:
            await conv.registry.close()  # the agents ask_agent started
    finally:
        endpoint.close()
