"""`mm -p --output-format json|stream-json`: the engine's events rendered as JSON on stdout
(docs/scripting.md, which gives the schema).

`json` writes one object when the run ends (RESULT); `stream-json` writes one object per line as
the turn happens — `init`, the user's `message`, the answer's `message` deltas, `thought`,
`tool_use`, `tool_result`, `usage`, `compaction`, `agent_message` — and the same RESULT object
last. Whatever happens (a failed turn, a configuration error, an interruption), stdout holds
JSON only and ends with the result; a reader that leaves ends the turn (status 141) and nothing
more is written. Text for people (warnings, errors) still goes to stderr.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict
from typing import Any, Callable, TextIO

from mm.events import (Answered, Compacted, Event, RelayedText, TextChunk, ThoughtChunk, ToolCallDone,
                              ToolCallStarted, TurnDone, UsageReport)
from mm.llm.types import Usage, fix_surrogates
from mm.ui.oneshot import OneShotUI

FORMATS = ("text", "json", "stream-json")
SUBTYPES = {"end_turn": "success", "max_turn_requests": "error_max_turns"}  # others: error_during_execution
USAGE_ERROR = "error_usage"  # exit status 2: the run never started (docs/scripting.md)


class JsonUI(OneShotUI):
    """The front end of `--output-format json` (`stream=False`) and `stream-json` (`stream=True`).

    Built from the engine's events only: the answer's text (the result is the text of the turn's
    last answer, the one after its last tool call), the count of answered requests (`num_turns`),
    the usage of every request, the turn's stop reason and error. Permission requests are
    rejected, as in text mode (OneShotUI)."""

    def __init__(self, stream: bool = False, out: TextIO = sys.stdout, err: TextIO = sys.stderr,
                 on_closed_output: Callable[[], None] | None = None, structured: bool = False):
        super().__init__(0, out=out, err=err, on_closed_output=on_closed_output, structured=structured)
        self.stream = stream
        self.started_at = time.monotonic()
        self.usage = Usage()
        self.turns = 0  # model requests answered
        self.done: TurnDone | None = None
        self._answer = ""  # the text of the last answer without tool calls
        self._text = ""  # the text streamed since the last answered request
        self._announced: set[str] = set()  # call ids whose tool_use was written

    def started(self, session_id: str | None, model: str, tools: list[str], cwd: str, prompt: str) -> None:
        """The turn is about to run: `init` (the session, model, tools and working directory),
        then the user's message (stream-json only)."""
        self._line({"type": "init", "session_id": session_id, "model": model, "cwd": cwd, "tools": list(tools)})
        self._line({"type": "message", "role": "user", "content": prompt})

    def emit(self, event: Event) -> None:
        """Record one engine event, and write its line in stream-json."""
        if isinstance(event, TextChunk):
            self._text += event.text
            self._line({"type": "message", "role": "assistant", "content": event.text, "delta": True})
        elif isinstance(event, ThoughtChunk):
            self._line({"type": "thought", "content": event.text, "delta": True})
        elif isinstance(event, Answered):
            self.turns += 1
            self._answer = "" if event.tool_calls else self._text
            self._text = ""
        elif isinstance(event, ToolCallStarted):
            self._tool_use(event.call_id, event.name, event.arguments)
        elif isinstance(event, ToolCallDone):
            self._tool_use(event.call_id, event.name, event.arguments)  # a call refused before it ran
            self._line({"type": "tool_result", "tool_id": event.call_id, "tool_name": event.name,
                        "status": "error" if event.result.failed else "success", "output": event.result.text})
        elif isinstance(event, UsageReport):
            self.usage.add(event.usage)
            self._line({"type": "usage", "usage": asdict(event.usage)})
        elif isinstance(event, RelayedText):
            self._line({"type": "agent_message", "agent": event.agent, "content": event.text,
                        "thought": event.thought})
        elif isinstance(event, Compacted):
            self._line({"type": "compaction", "message": event.line})
        elif isinstance(event, TurnDone):
            self.done = event
            if event.error:  # said to people too (stderr), once
                self._note(event.error if event.error.startswith("[") else f"mm: {event.error}")

    def end_run(self, status: int, session_id: str | None = None, error: str | None = None,
               stop_reason: str = "error", usage_error: bool = False) -> None:
        """Write the result (RESULT in docs/scripting.md). `error`: a failure outside the turn
        (`stop_reason` then says which: "error" or "cancelled"), also said on stderr as
        `mm: <error>`; `usage_error`: the run never started (exit status 2)."""
        if error is not None:
            self._note(f"mm: {error}")
        elif self.done is not None:
            error, stop_reason = self.done.error, self.done.stop_reason
        subtype = USAGE_ERROR if usage_error else SUBTYPES.get(stop_reason, "error_during_execution")
        structured = self.done.structured if self.done is not None and error is None else None
        result = {"type": "result", "subtype": subtype, "is_error": subtype != "success",
                  "result": structured if structured is not None else self._text or self._answer,
                  "error": error, "stop_reason": stop_reason,
                  "session_id": session_id, "num_turns": self.turns,
                  "duration_ms": round((time.monotonic() - self.started_at) * 1000), "usage": asdict(self.usage)}
        if self.structured:  # the answer's value: null when none followed the schema (docs/scripting.md)
            result["structured_output"] = json.loads(structured) if structured is not None else None
        self._line(result, always=True)

    def _tool_use(self, call_id: str, name: str, arguments: Any) -> None:
        if call_id not in self._announced:
            self._announced.add(call_id)
            self._line({"type": "tool_use", "tool_id": call_id, "tool_name": name, "parameters": arguments})

    def _line(self, record: dict[str, Any], always: bool = False) -> None:
        """Write `record` as one line of JSON: in stream-json, or `always` (the result)."""
        if self.stream or always:
            self._write_out(fix_surrogates(json.dumps(record, ensure_ascii=False, separators=(",", ":"))) + "\n")


def oneshot_ui(output_format: str, preview_lines: int, structured: bool = False) -> OneShotUI:
    """The front end of `mm -p` for `--output-format` (FORMATS): OneShotUI for text, else JsonUI;
    `structured`: a structured output is in effect (the JSON alone as the answer)."""
    if output_format == "text":
        return OneShotUI(preview_lines, structured=structured)
    return JsonUI(stream=output_format == "stream-json", structured=structured)
