"""The hooks of an agent file at their points: which run, with what input, and what they decided
together (docs/hooks.md §Events, §Input, §Several hooks, §Failures).

The hooks of an event whose `matcher` names the call run one after another, in the order of the
file: each sees the input as the hooks before it left it (a rewritten tool input, a replaced
output, answer or prompt); a denial stops the chain. A hook that fails is reported by one
`🪝` line (a HookLine event) and changes nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from mm.config.schema import HookEntry, HooksConfig
from mm.events import HookLine

EVENTS = ("preToolCall", "postToolCall", "preAsk", "postAsk", "preGeneration")
CLAUDE_EVENTS = {"preToolCall": "PreToolUse", "postToolCall": "PostToolUse", "preGeneration": "UserPromptSubmit"}
NAMED = ("preToolCall", "postToolCall", "preAsk", "postAsk")  # the events whose hooks a matcher may pick
FAILED = "🪝 {event} hook {command} {what} — ignored"
SAYS = "🪝 {event} hook {command}: {message}"  # a hook's `systemMessage` (Claude Code's), for the user
BAD_INPUT = "answered an input {tool} cannot take: {problem}"
COMMAND_CHARS = 80  # of a hook's command in a 🪝 line
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
# What a hook's `replace` changes in the input of the hooks after it, per event.
REPLACED_FIELDS = {"postToolCall": ("tool_output", "tool_response"), "postAsk": ("answer",),
                   "preGeneration": ("prompt",)}
STRICTER = {"deny": 3, "ask": 2, "allow": 1, None: 0}

Check = Callable[[dict[str, Any]], tuple[dict[str, Any] | None, str | None]]


@dataclass
class Outcome:
    """What the hooks of one event decided together: the strictest `decision` ("deny", "ask",
    "allow" or None) and the denial's `reason`, the last `replace`, every `context` in order,
    the last `input` (preToolCall)."""

    decision: str | None = None
    reason: str = ""
    replace: str | None = None
    contexts: list[str] = field(default_factory=list)
    input: dict[str, Any] | None = None

    @property
    def denied(self) -> bool:
        """True when a hook denied."""
        return self.decision == "deny"


def matcher_problem(matcher: str | None) -> str | None:
    """Why `matcher` cannot pick calls (an invalid regular expression), or None."""
    try:
        _matches(matcher)
    except re.error as err:
        return f"{matcher!r} is not a regular expression: {err}"
    return None


def _matches(matcher: str | None) -> Callable[[str], bool]:
    """The test of a name against `matcher`: none, "" or "*" take every name; a name (letters,
    digits, `_`, `-`) only itself; anything else is a regular expression the whole name must
    match. Raises re.error."""
    if matcher is None or matcher.strip() in ("", "*"):
        return lambda name: True
    if set(matcher) <= NAME_CHARS:
        return lambda name: name == matcher
    pattern = re.compile(matcher)
    return lambda name: pattern.fullmatch(name) is not None


def command_line(command: Any) -> str:
    """A hook's command as a 🪝 line shows it: the line, or the argv quoted like a shell's; on one
    line, at most COMMAND_CHARS."""
    text = " ".join((command if isinstance(command, str) else shlex.join(command)).split())
    return text if len(text) <= COMMAND_CHARS else text[:COMMAND_CHARS - 1] + "…"


class Hooks:
    """The `hooks:` of an agent file (mm.config.schema.HooksConfig), ready to run."""

    def __init__(self, config: HooksConfig):
        self._hooks = {event: [(entry, _matches(entry.matcher)) for entry in getattr(config, event)]
                       for event in EVENTS}

    def wants(self, event: str, name: str | None = None) -> bool:
        """True when a hook of `event` runs for `name` (a tool or an agent)."""
        return any(name is None or matches(name) for _, matches in self._hooks.get(event, []))

    async def run(self, event: str, fields: dict[str, Any], *, name: str | None = None, cwd: Path,
                  session_id: str, ui: Any, cancelled: asyncio.Event, check_input: Check | None = None) -> Outcome:
        """Run the hooks of `event` that pick `name`, in order, each given `fields` (as the hooks
        before it left them) with the event, session id and `cwd`; returns their Outcome.

        `check_input(input)` → (input coerced, None) or (None, the problem): a rewritten tool
        input that fails it is a failure of that hook. Failures and `systemMessage`s go to `ui`
        as HookLine events; a denial stops the chain, as does `cancelled`."""
        from mm.hooks.answer import HookFailure, read_answer
        from mm.hooks.command import run_command

        outcome, fields = Outcome(), dict(fields)
        for entry, matches in self._hooks.get(event, []):
            if name is not None and not matches(name):
                continue
            if cancelled.is_set():
                break
            shown = command_line(entry.command)
            run = await run_command(_argv(entry), _input_of(event, fields, cwd, session_id), cwd=cwd,
                                    env=hook_environment(cwd), timeout=entry.timeout, cancelled=cancelled)
            try:
                answer = read_answer(run, entry.timeout, plain_is_context=event == "preGeneration")
                if answer.input is not None and event == "preToolCall" and check_input is not None:
                    answer.input, problem = check_input(answer.input)
                    if problem is not None:
                        raise HookFailure(BAD_INPUT.format(tool=name, problem=" ".join(problem.split())))
            except HookFailure as failure:
                _say(ui, FAILED.format(event=event, command=shown, what=failure))
                continue
            if answer.message:
                _say(ui, SAYS.format(event=event, command=shown, message=" ".join(answer.message.split())))
            _add(outcome, answer, event, fields)
            if outcome.denied:
                break
        return outcome


def _say(ui: Any, line: str) -> None:
    """Show `line` through the front end `ui` (none: a tool run outside a turn)."""
    if ui is not None:
        ui.emit(HookLine(line))


def _add(outcome: Outcome, answer: Any, event: str, fields: dict[str, Any]) -> None:
    """Fold one hook's Answer into `outcome`, and into the `fields` the next hook reads."""
    if STRICTER[answer.decision] > STRICTER[outcome.decision]:
        outcome.decision = answer.decision
        outcome.reason = answer.reason
    if answer.context:
        outcome.contexts.append(answer.context)
    if answer.replace is not None:
        outcome.replace = answer.replace
        for key in REPLACED_FIELDS.get(event, ()):
            fields[key] = answer.replace
    if answer.input is not None and event == "preToolCall":
        outcome.input = fields["tool_input"] = answer.input


def _argv(entry: HookEntry) -> list[str]:
    """An argv as it is; a line is run with `bash -c`."""
    return ["bash", "-c", entry.command] if isinstance(entry.command, str) else list(entry.command)


def _input_of(event: str, fields: dict[str, Any], cwd: Path, session_id: str) -> bytes:
    """The JSON object a hook reads on stdin (docs/hooks.md §Input), as UTF-8."""
    payload = {"event": event, "hook_event_name": CLAUDE_EVENTS.get(event, event), "session_id": session_id,
               "cwd": str(cwd), **fields}
    return json.dumps(payload, ensure_ascii=False).encode("utf-8", errors="replace")


def hook_environment(cwd: Path) -> dict[str, str]:
    """mm's environment, with the project's directory as `MM_PROJECT_DIR` and, for scripts
    written for Claude Code, `CLAUDE_PROJECT_DIR`."""
    return {**os.environ, "MM_PROJECT_DIR": str(cwd), "CLAUDE_PROJECT_DIR": str(cwd)}
