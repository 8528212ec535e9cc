"""What one hook answered: its exit status and the JSON object it printed, in mm's fields or in
Claude Code's (docs/hooks.md §Answer, §Claude Code's hooks).

Exit status 0 with nothing printed: no opinion. Exit status 2: deny, stderr the reason. Any
other ending is a failure: it is reported and changes nothing, as Claude Code treats a hook's
non-blocking error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mm.hooks.command import OUTPUT_BYTES, CommandRun

DENY_STATUS = 2  # the exit status that denies (Claude Code's)
NO_REASON = "no reason given"
REASON_CHARS = 4000  # of a reason the model reads
DECISIONS = {"allow": "allow", "approve": "allow", "deny": "deny", "block": "deny", "ask": "ask"}
# Failures, each the part of the line after `🪝 <event> hook <command> ` (mm.hooks.point.FAILED).
TIMED_OUT = "timed out after {seconds}"
EXITED = "failed ({how}){why}"
NOT_STARTED = "cannot be started: {reason}"
FLOODED = f"wrote more than {OUTPUT_BYTES // (1024 * 1024)} MiB"
NOT_JSON = "printed something that is not a JSON object ({error})"
BAD_DECISION = 'answered "{key}": {value} (expected "allow" or "deny")'
BAD_INPUT = 'answered an "{key}" that is not a JSON object ({value})'


@dataclass
class Answer:
    """One hook's answer; every field optional. `decision` is "allow", "deny" or "ask" (Claude
    Code's `permissionDecision: ask`); `message`: Claude Code's `systemMessage`, for the user."""

    decision: str | None = None
    reason: str = ""
    replace: str | None = None
    context: str | None = None
    input: dict[str, Any] | None = None
    message: str | None = None


class HookFailure(Exception):
    """The hook did not answer; `str(err)` says how (the failure texts above)."""


def read_answer(run: CommandRun, timeout: float, plain_is_context: bool = False) -> Answer:
    """The Answer of a finished hook (`run`, given `timeout` seconds). `plain_is_context`: text
    that is not JSON, printed by a hook that succeeded, is context (Claude Code's
    `UserPromptSubmit`); otherwise it is ignored.
    Raises HookFailure when the hook failed, timed out, could not start, wrote too much, or
    printed a JSON answer mm cannot read. A cancelled hook answers nothing."""
    from mm.tools.process import format_seconds, signal_name

    if run.not_started is not None:
        raise HookFailure(NOT_STARTED.format(reason=run.not_started))
    if run.flooded:
        raise HookFailure(FLOODED)
    if run.cancelled:
        return Answer()
    if run.timed_out or run.returncode is None:
        raise HookFailure(TIMED_OUT.format(seconds=format_seconds(timeout)))
    if run.returncode == DENY_STATUS:
        return Answer("deny", reason=_reason(run.stderr))
    if run.returncode != 0:
        how = f"signal: {signal_name(-run.returncode)}" if run.returncode < 0 else f"exit status {run.returncode}"
        last = [line.strip() for line in run.stderr.splitlines() if line.strip()]
        raise HookFailure(EXITED.format(how=how, why=f": {_cut(last[-1], 200)}" if last else ""))
    text = run.stdout.strip()
    if not text:
        return Answer()
    if not text.startswith("{"):
        return Answer(context=text) if plain_is_context else Answer()
    try:
        data = json.loads(text)
    except ValueError as err:
        raise HookFailure(NOT_JSON.format(error=_cut(str(err), 120))) from None
    if not isinstance(data, dict):
        raise HookFailure(NOT_JSON.format(error="not an object"))
    return from_json(data)


def from_json(data: dict[str, Any]) -> Answer:
    """An Answer from a hook's JSON object: mm's `decision`, `reason`, `replace`, `context`,
    `input`, and Claude Code's `decision: "block"` / `"approve"`, `continue: false` (deny, with
    `stopReason`), `hookSpecificOutput.permissionDecision`, `.permissionDecisionReason`,
    `.updatedInput`, `.additionalContext`, `.updatedMCPToolOutput`, and `systemMessage`. When both
    kinds of decision are given, the stricter wins (deny, then ask, then allow). Raises
    HookFailure for a decision mm does not know or an input that is not an object."""
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    decisions = [_decision("decision", data.get("decision")),
                 _decision("permissionDecision", specific.get("permissionDecision"))]
    if data.get("continue") is False:
        decisions.append("deny")
    decision = next((d for d in ("deny", "ask", "allow") if d in decisions), None)
    reason = next((v for v in (specific.get("permissionDecisionReason"), data.get("reason"), data.get("stopReason"))
                   if isinstance(v, str) and v.strip()), "")
    contexts = [_text(v) for v in (data.get("context"), specific.get("additionalContext")) if v is not None]
    replace = data.get("replace", specific.get("updatedMCPToolOutput"))
    given = data.get("input", specific.get("updatedInput"))
    if given is not None and not isinstance(given, dict):
        key = "input" if "input" in data else "updatedInput"
        raise HookFailure(BAD_INPUT.format(key=key, value=_cut(json.dumps(given, ensure_ascii=False), 80)))
    message = data.get("systemMessage")
    return Answer(decision, _reason(reason) if decision == "deny" else reason.strip(),
                  None if replace is None else _text(replace),
                  "\n".join(c for c in contexts if c.strip()) or None, given,
                  message.strip() if isinstance(message, str) and message.strip() else None)


def _decision(key: str, value: Any) -> str | None:
    if value is None or value == "" or value == "defer":  # Claude Code's `defer`: no opinion here
        return None
    found = DECISIONS.get(value.strip().lower()) if isinstance(value, str) else None
    if found is None:
        raise HookFailure(BAD_DECISION.format(key=key, value=_cut(json.dumps(value, ensure_ascii=False), 60)))
    return found


def _reason(text: str) -> str:
    """A denial's reason as the model reads it: trimmed, at most REASON_CHARS, NO_REASON when empty."""
    text = text.strip()
    return _cut(text, REASON_CHARS) if text else NO_REASON


def _text(value: Any) -> str:
    """A field that must be text: a string as it is, anything else as its JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"
