"""What memory search reads in a history: questions, answers and summary notes (mm-tools.md
§search_memory, Searched), and how words are compared (Matching).

A *unit* is one searchable text: a user question (without the context a `preGeneration` hook
appended), a model answer, or the notes of a `/compact` summary (without their wrapper line).
Not units: tool calls and outputs, mm's own notes (`[mm: …`, a blocked prompt's marker), the
acknowledgement after a summary. Turns count the questions and summaries from 1.
"""

from __future__ import annotations

import hashlib
import re
import sys
import unicodedata
from dataclasses import dataclass

from mm.text import CONTEXT_MARKER
from mm.text import one_line

NOTE_PREFIXES = ("[mm:", "[prompt blocked by a hook")  # mm's own notes in the user role
WORD = re.compile(r"\w+")
_MARKS: dict[int, None] | None = None


def _marks() -> dict[int, None]:
    """The translate table that deletes combining marks (canonical combining class > 0)."""
    global _MARKS
    if _MARKS is None:
        _MARKS = {c: None for c in range(0x300, min(sys.maxunicode, 0x1F000))
                  if unicodedata.combining(chr(c))}
    return _MARKS


def normalize(text: str) -> str:
    """`text` with case and accents removed: NFKD, combining marks dropped, casefolded (mm-tools.md
    §search_memory, Matching: `preference` finds `Préférence`)."""
    return unicodedata.normalize("NFKD", text).translate(_marks()).casefold()


def query_words(query: str) -> list[str]:
    """The distinct words of `query`, normalized, in order; words of one or two letters are left
    out when the query has longer ones (mm-tools.md §search_memory, Matching)."""
    words = list(dict.fromkeys(WORD.findall(normalize(query))))
    longer = [w for w in words if len(w) > 2]
    return longer or words


@dataclass
class Unit:
    """One searchable text of a session: `kind` question|answer|summary, `turn` (from 1), `pos`
    (index of its message), `text` (one line), `final` (an answer its turn ended on)."""

    kind: str
    turn: int
    pos: int
    text: str
    final: bool = False

    @property
    def key(self) -> str:
        """A digest of role and text: a unit of the conversation in progress has the same one."""
        role = "assistant" if self.kind == "answer" else "user"
        return hashlib.blake2b(f"{role}\0{self.text}".encode(), digest_size=8).hexdigest()


def text_of(message: dict) -> str:
    """The text of a message's `content`: a string, or the `text` parts of a list; else ""."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def question_text(text: str) -> str:
    """A user question without the context a hook appended after `[context added by a hook]`, and
    without the notes mm appended on lines of their own (`[mm: "$name" names the skill …]`)."""
    cut = text.find(CONTEXT_MARKER)
    text = text[:cut].rstrip() if cut >= 0 else text
    lines = text.split("\n")
    while len(lines) > 1 and lines[-1].startswith(NOTE_PREFIXES[0]):  # mm's notes after it (a skill's $name)
        lines.pop()
    return "\n".join(lines)


def summary_notes(text: str) -> str:
    """The notes of a `/compact` summary: its text without the first (wrapper) line."""
    head, sep, rest = text.partition("\n")
    return rest if sep and rest.strip() else head


def units_of(messages: list) -> list[Unit]:
    """The searchable units of a history, in order (see the module docstring)."""
    units: list[Unit] = []
    turn, after_summary, last_answer = 0, False, None
    for pos, msg in enumerate(messages):
        if not isinstance(msg, dict):
            continue
        role, text = msg.get("role"), text_of(msg)
        if role == "user" and msg.get("summary"):
            turn, after_summary, last_answer = turn + 1, True, None
            _add(units, Unit("summary", turn, pos, one_line(summary_notes(text))))
        elif role == "user" and not text.lstrip().startswith(NOTE_PREFIXES):
            turn, after_summary, last_answer = turn + 1, False, None
            _add(units, Unit("question", turn, pos, one_line(question_text(text))))
        elif role == "assistant" and turn and not after_summary:
            unit = _add(units, Unit("answer", turn, pos, one_line(text)))
            if unit is not None:
                if last_answer is not None:
                    last_answer.final = False
                unit.final, last_answer = True, unit
        elif role == "assistant" and after_summary and not msg.get("tool_calls"):
            after_summary = False  # the acknowledgement: not searched
    return units


def _add(units: list[Unit], unit: Unit) -> Unit | None:
    if not unit.text:
        return None
    units.append(unit)
    return unit
