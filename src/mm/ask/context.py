"""`with_context`: this conversation as text before the task (mm-tools.md §ask_agent)."""

from __future__ import annotations

from mm.sessions.units import text_of

HEAD = "The conversation so far (questions, answers and tool calls; tool outputs left out):"
TASK = "Your task:"
CALL = "tool call: {title}"


def context_lines(history: list[dict]) -> list[str]:
    """One line (or block) per question and answer, one `tool call: <title>` line per call;
    the system prompt and tool outputs are left out."""
    from mm.tools.titles import stored_arguments, tool_title

    lines = []
    for message in history:
        role, text = message.get("role"), text_of(message).strip()
        if role == "user" and text:
            lines.append(f"user: {text}")
        elif role == "assistant":
            if text:
                lines.append(f"assistant: {text}")
            for call in message.get("tool_calls") or []:
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict):
                    arguments = stored_arguments(function.get("arguments"))
                    lines.append(CALL.format(title=tool_title(str(function.get("name")), arguments)))
    return lines


def with_context(prompt: str, history: list[dict], max_chars: int) -> str:
    """`prompt` after the conversation's lines, the oldest dropped until they fit in `max_chars`."""
    lines = context_lines(history)
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        if size + len(line) + 1 > max_chars:
            break
        kept.append(line)
        size += len(line) + 1
    if not kept:
        return prompt
    return "\n".join([HEAD, *reversed(kept), "", TASK, prompt])

