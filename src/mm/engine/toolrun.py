"""Running one tool call of the model: checks, permission, the tool itself, the loop detector."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from mm.events import Interaction, ToolCallDone, ToolCallRunning, ToolCallStarted
from mm.engine.loops import LoopDetector, with_note
from mm.llm.types import ToolCall, fix_surrogates
from mm.tools.base import ToolContext, ToolResult
from mm.tools.failures import failure_text
from mm.tools.registry import Registry

UNKNOWN_TOOL = (
    '[error: there is no tool named "{name}" — the tools are: {names}. '
    "Call one of them, with its arguments as a JSON object]"
)
NO_TOOLS = '[error: there is no tool named "{name}" — no tool is declared in this conversation: answer in text]'
UNPARSABLE = "the arguments are not a JSON object: {error}"
REJECTED = "[{name} rejected by the user]"
REJECTED_BASH = "[command rejected by the user]"
OVER_MAX_OUTPUT = "[... truncated to maxOutput ({limit} characters): {shown} of {total} characters shown ...]"
DENIED = "[denied by a hook: {reason}]"  # docs/hooks.md; mm-acp.md §session/update notifications sent
DENIED_TITLE = "{tool} — denied by a hook"  # the ACP title of a call a preToolCall hook denied


@dataclass
class Permissions:
    """The user's remembered answers, per tool name, for this session (mm-acp.md: kept across /new)."""

    always_allow: set[str] = field(default_factory=set)
    always_reject: set[str] = field(default_factory=set)


@dataclass
class CallOutcome:
    """A finished call: the text the model reads, and whether the loop detector stopped the turn."""

    result: ToolResult
    arguments: dict[str, Any]
    stop_error: str | None = None


def held_to(text: str, limit: int, max_output: int | None = None) -> str:
    """`text` within `limit` characters (maxOutput): whole when it fits, else its start and
    OVER_MAX_OUTPUT, which names `max_output` (default `limit`: less room is left when hook
    context follows). Every tool result passes here, whatever the tool did itself (issue 10.5)."""
    from mm.tools.truncate import cut_to

    if len(text) <= limit:
        return text
    said = limit if max_output is None else max_output
    return cut_to(text, max(limit, 0), lambda shown: OVER_MAX_OUTPUT.format(limit=said, shown=shown, total=len(text)))


def output_limit(tool: Any, ctx: ToolContext) -> int:
    """The characters a tool's result is held to: the tool's own `output_limit(ctx)` when it has
    one (fs_read, capped in tokens by docMaxTokens: docs/tools-files.md), else maxOutput."""
    own = getattr(tool, "output_limit", None)
    return int(own(ctx)) if callable(own) else ctx.settings.max_output


def rejection_text(name: str, tool: Any = None) -> str:
    """The text a refused call returns (mm-tools.md, Permissions note): the tool's own
    `rejection()` when it has one (lsp: `[rename rejected by the user]`)."""
    own = getattr(tool, "rejection", None)
    if callable(own):
        return own()
    return REJECTED_BASH if name == "bash" else REJECTED.format(name=name)


async def run_call(call: ToolCall, registry: Registry, ctx: ToolContext, ui: Interaction,
                   permissions: Permissions, yolo: bool, loops: LoopDetector) -> CallOutcome:
    """Run one tool call end to end and return its outcome; never raises for a bad call.

    Order: unknown tool or unparsable arguments → message; coercion (mm.tools.coerce); plan
    mode's gate; the preToolCall hooks (a rewritten input meets the gate again); permission when
    `yolo` is false and the tool needs it (or a hook asks), then the gate again (plan mode may
    have been switched on while the question waited); the tool; the postToolCall hooks; the loop detector (its note appended, or its stop error as
    the result).
    """
    from mm.tools.coerce import coerce_tool_args, invalid_call_message

    tool, title = registry.get(call.name), None
    arguments: dict[str, Any] = fix_surrogates(call.arguments) if call.arguments is not None else {}
    if tool is None:
        text = UNKNOWN_TOOL.format(name=call.name, names=", ".join(registry.names)) if registry.names else \
            NO_TOOLS.format(name=call.name)
        result = ToolResult(text, failed=True)
    elif call.arguments is None:
        fault = UNPARSABLE.format(error=call.error or "unreadable")
        result = ToolResult(invalid_call_message(tool.name, tool.params, call.raw_arguments, [fault],
                                                 getattr(tool, "enums", None)), failed=True)
    else:
        try:
            coerced, problem = coerce_tool_args(tool, arguments)
        except Exception as err:  # a coercer bug must not end the turn
            coerced, problem = None, f"[error: {tool.name}: the arguments could not be read: {type(err).__name__}: {err}]"
        if problem is not None:
            result = ToolResult(problem, failed=True)
        elif (refused := _plan_refusal(tool, coerced, ctx)) is not None:  # before hooks and permission
            result = ToolResult(refused, failed=True)
        else:
            result, arguments, title = await _hooked_run(tool, coerced, ctx, ui, permissions, yolo, call.id)
    failed = result.failed and result.text != rejection_text(call.name, tool)  # the user's refusal is no failure
    limit = output_limit(tool, ctx)
    result.text = held_to(result.text, limit)
    verdict = loops.record(call.name, call.arguments if call.arguments is not None else call.raw_arguments,
                           result.text, failed)
    outcome = CallOutcome(result, arguments)
    if verdict.action == "stop":
        outcome.stop_error = verdict.text
        result.text, result.failed = outcome.stop_error, True
    elif verdict.action == "append":  # the note fits within maxOutput too
        result.text = with_note(held_to(result.text.rstrip(chr(10)), limit - len(verdict.text) - 1), verdict)
    if result.stop and not outcome.stop_error:  # the tool itself ends the turn (an asked agent gone silent)
        outcome.stop_error = result.stop
    result.text = fix_surrogates(result.text)  # a file name that is not UTF-8, say
    shown = arguments if call.arguments is not None else call.raw_arguments  # what was sent, for display
    ui.emit(ToolCallDone(call.id, call.name, shown, result, title))
    return outcome


async def _hooked_run(tool: Any, arguments: dict[str, Any], ctx: ToolContext, ui: Interaction,
                      permissions: Permissions, yolo: bool,
                      call_id: str) -> tuple[ToolResult, dict[str, Any], str | None]:
    """A valid call between its hooks (docs/hooks.md): the one place every tool call passes —
    built-in, declared, MCP. Returns the result, the arguments it ran with (a hook may rewrite
    them) and the call's new title (DENIED_TITLE) when a preToolCall hook denied it: then nothing
    ran and no permission was asked."""
    hooks = ctx.hooks
    if hooks is None or not (hooks.wants("preToolCall", tool.name) or hooks.wants("postToolCall", tool.name)):
        return await _permitted_run(tool, arguments, ctx, ui, permissions, yolo, call_id), arguments, None
    from mm.text import add_context
    from mm.tools.process import CANCELLED_LINE

    where = {"name": tool.name, "cwd": ctx.cwd, "session_id": ctx.session_id, "ui": ui, "cancelled": ctx.cancelled}
    fields = {"tool_name": tool.name, "tool_input": arguments, "tool_use_id": call_id}
    before = await hooks.run("preToolCall", fields, check_input=lambda given: _coerced(tool, given), **where)
    arguments = before.input if before.input is not None else arguments
    retitle = None
    # a rewritten input meets plan mode's gate again (docs/plan-mode.md §What is refused)
    gated = _plan_refusal(tool, arguments, ctx) if before.input is not None else None
    if before.denied or before.replace is not None or ctx.cancelled.is_set() or gated is not None:
        ui.emit(ToolCallStarted(call_id, tool.name, arguments, _title(tool, arguments, ctx)))
        if gated is not None:
            result = ToolResult(gated, failed=True)
        elif before.denied:
            result = ToolResult(DENIED.format(reason=before.reason), failed=True)
            retitle = DENIED_TITLE.format(tool=tool.name)
        elif ctx.cancelled.is_set():
            result = ToolResult(CANCELLED_LINE, failed=True)
        else:  # the hook answered in the tool's place
            result = ToolResult(before.replace or "")
    else:
        result = await _permitted_run(tool, arguments, ctx, ui, permissions, yolo, call_id, before.decision)
    contexts = list(before.contexts)
    refused = result.failed and (result.text == rejection_text(tool.name, tool) or gated is not None or
                                 result.text == _plan_refusal(tool, arguments, ctx))
    ran = retitle is None and before.replace is None and not refused
    if ran and not ctx.cancelled.is_set():
        fields = {**fields, "tool_input": arguments, "tool_output": result.text, "tool_response": result.text,
                  "failed": result.failed}
        after = await hooks.run("postToolCall", fields, **where)
        contexts += after.contexts
        if after.denied:  # the output is withheld from the model
            result = ToolResult(DENIED.format(reason=after.reason), failed=True, locations=result.locations)
        elif after.replace is not None:
            result.text, result.preview, result.summary = after.replace, None, None
    limit = output_limit(tool, ctx)
    result.text = add_context(result.text, contexts, limit, lambda text, room: held_to(text, room, limit))
    return result, arguments, retitle


def _plan_refusal(tool: Any, arguments: dict[str, Any], ctx: ToolContext) -> str | None:
    """Plan mode's refusal of the call (mm.tools.plan.gate, docs/plan-mode.md), or None; the
    rule is imported only while plan mode is on."""
    if ctx.plan_mode is None or not ctx.plan_mode.active:
        return None
    from mm.tools.plan.gate import refusal

    return refusal(tool, arguments, ctx)


def _pre_approved(tool: Any, arguments: dict[str, Any], ctx: ToolContext) -> bool:
    """Whether an approved plan's allowed_bash covers this command (docs/plan-mode.md §Leaving
    plan mode): then no permission is asked for it."""
    plan = ctx.plan_mode
    if plan is None or not plan.approved or tool.name not in ("bash", "execute_bash"):
        return False
    from mm.tools.floor.readonly import approved_by

    return approved_by(str(arguments.get("command", "")), plan.approved, ctx.cwd) is not None


def _coerced(tool: Any, given: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """A tool input a hook rewrote, coerced like the model's (mm.tools.coerce), or the problem."""
    from mm.tools.coerce import coerce_tool_args

    try:
        return coerce_tool_args(tool, fix_surrogates(given))
    except Exception as err:  # a coercer bug must not end the turn
        return None, f"{type(err).__name__}: {err}"


def _title(tool: Any, arguments: dict[str, Any], ctx: ToolContext) -> str | None:
    """The tool's own title for the call (a declared tool's argv), when it gives one."""
    return tool.title(arguments, ctx) if callable(getattr(tool, "title", None)) else None


async def _permitted_run(tool: Any, arguments: dict[str, Any], ctx: ToolContext, ui: Interaction,
                         permissions: Permissions, yolo: bool, call_id: str, decision: str | None = None) -> ToolResult:
    """Ask the permission when it is needed, then run the tool. `decision`: a preToolCall hook's
    "allow" (not asked, unless the user said never) or "ask" (asked even with `yolo`). A tool
    whose `always_asks` is true asks even with `yolo` (an MCP server's `permissions: ask`, mm-acp.md)."""
    title = _title(tool, arguments, ctx)
    if decision == "ask":
        asks = True
    elif decision == "allow":
        asks = tool.name in permissions.always_reject
    else:
        wanted = (_needs_permission(tool, arguments, ctx) and not yolo and not _pre_approved(tool, arguments, ctx)) \
            or getattr(tool, "always_asks", False)
        asks = wanted and tool.name not in permissions.always_allow
    preview, planned = _preview(tool.name, arguments), None
    if asks and tool.name not in permissions.always_reject:
        planned = await _planned_change(tool, arguments, ctx)
        if planned is not None:
            preview = _plan_preview(planned, arguments, tool.name)
    change = planned.change if planned is not None and not planned.failed else None
    ui.emit(ToolCallStarted(call_id, tool.name, arguments, title, change))
    if asks:
        allowed = False
        if tool.name not in permissions.always_reject:
            answer = await ui.request_permission(tool.name, arguments, preview)
            if answer == "allow_always":
                permissions.always_allow.add(tool.name)
            elif answer == "reject_always":
                permissions.always_reject.add(tool.name)
            allowed = answer in ("allow_once", "allow_always")
        if not allowed:
            return ToolResult(rejection_text(tool.name, tool), failed=True)
        # plan mode may have been switched on while the question waited (ACP set_session_mode)
        if (gated := _plan_refusal(tool, arguments, ctx)) is not None:
            return ToolResult(gated, failed=True)
    ui.emit(ToolCallRunning(call_id))
    try:
        return await tool.run(arguments, ctx)
    except Exception as err:  # an argument no file can have, or a tool bug: the model reads it, the turn goes on
        return ToolResult(failure_text(tool.name, arguments, err), failed=True)


async def _planned_change(tool: Any, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult | None:
    """The tool's `plan(args, ctx)` (write_file, edit_file, save_answer): what the call would do,
    written nowhere — its change, or the refusal it will meet; None when the tool has no plan."""
    plan = getattr(tool, "plan", None)
    if not callable(plan):
        return None
    try:
        return await plan(arguments, ctx)
    except Exception:  # a preview must never stop the call: the prompt shows the arguments instead
        return None


def _plan_preview(planned: ToolResult, arguments: dict[str, Any], name: str) -> str:
    """The permission prompt's text for a file tool (`name`): the file as the call names it, then
    the whole diff's rows (not the output's, which maxOutput cuts), or what the call will meet
    instead (a refusal, an unchanged file)."""
    from mm.tools.base import PATH_ARGUMENT
    from mm.tools.diff import diff_texts

    change = planned.change
    head = str(arguments.get(PATH_ARGUMENT.get(name, "path")) or (change.path if change is not None else ""))
    if change is None or planned.failed:
        return "\n".join([head, planned.text])
    old, new = (change.old_text or "").replace("\r\n", "\n"), change.new_text.replace("\r\n", "\n")
    rows = diff_texts(old, new).rows
    return "\n".join([head] + (rows or [planned.text.split("\n", 1)[0]]))


def _needs_permission(tool: Any, arguments: dict[str, Any], ctx: ToolContext) -> bool:
    """The tool's own per-call answer (`requires_permission(args, ctx)`, e.g. fetch_content only with
    `output`) when it has one, else its static `needs_permission`."""
    per_call = getattr(tool, "requires_permission", None)
    return bool(per_call(arguments, ctx)) if callable(per_call) else bool(tool.needs_permission)


def _preview(name: str, arguments: dict[str, Any]) -> str:
    if name == "bash":
        return str(arguments.get("command", ""))
    return json.dumps(arguments, ensure_ascii=False)[:2000]
