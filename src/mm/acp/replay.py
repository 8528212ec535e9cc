"""The `session/load` replay: one `session/update` per element of a stored history, in order
(mm-acp.md §session/load replay). No tool runs during a replay."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from mm.acp.toolcalls import call_locations, own_title, text_chunk, text_content, tool_kind
from mm.tools.titles import stored_arguments, tool_title
from mm.sessions.units import text_of

SUMMARY_PREFIX = "🗜️ "


def replay_updates(messages: list[dict], unanswered: list[str], cwd: Path, registry: Any = None
                   ) -> Iterator[dict[str, Any]]:
    """The `update` objects replaying `messages` (the history, system prompt included or not).

    A user message → `user_message_chunk`; a `/compact` summary → `agent_message_chunk` with
    `🗜️ ` and its notes (the acknowledgement mm wrote after it is not replayed); model text →
    `agent_message_chunk`; a tool call → `tool_call` `completed` with its recorded output, or
    `failed` with no content when `unanswered` lists its id (the loader gave it a placeholder).
    """
    from mm.engine.compaction import SUMMARY_ACK, summary_text

    results = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
    after_summary = False
    for message in messages:
        role, text = message.get("role"), text_of(message)
        if role == "user" and message.get("summary"):
            after_summary = True
            yield text_chunk("agent_message_chunk", SUMMARY_PREFIX + summary_text({"content": text}))
            continue
        if role == "user":
            yield text_chunk("user_message_chunk", text)
        elif role == "assistant":
            if text and not (after_summary and text == SUMMARY_ACK):
                yield text_chunk("agent_message_chunk", text)
            for call in message.get("tool_calls") or []:
                yield _replayed_call(call, results, unanswered, cwd, registry)
        after_summary = False


def _replayed_call(call: Any, results: dict, unanswered: list[str], cwd: Path, registry: Any) -> dict[str, Any]:
    function = call.get("function") if isinstance(call, dict) else None
    function = function if isinstance(function, dict) else {}
    call_id, name = str(call.get("id") or ""), str(function.get("name") or "")
    arguments = stored_arguments(function.get("arguments"))
    tool = registry.get(name) if registry is not None else None
    update: dict[str, Any] = {"sessionUpdate": "tool_call", "toolCallId": call_id,
                              "title": tool_title(name, arguments, own_title(tool, arguments)),
                              "kind": tool_kind(name, tool, arguments),
                              "rawInput": arguments}
    locations = call_locations(name, arguments, cwd)
    if locations:
        update["locations"] = locations
    if call_id in unanswered or call_id not in results:
        update["status"] = "failed"
        return update
    output = text_of({"content": results[call_id]})
    update.update(status="completed", rawOutput={"output": output}, content=text_content(output))
    return update
