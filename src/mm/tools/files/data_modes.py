"""fs_read's "CSV", "JSON" and "JSONL" modes (mnemo-tools.md, fs_read modes; notes/mnemoai.md §2.1).

CSV: the delimiter sniffed (a comma when one is in the first 1024 characters, else csv.Sniffer,
else the first of `;`, TAB, `|` there), columns and rows while they fit in docMaxTokens — in
every encoding (the reference returned every row of a file that was not UTF-8). JSON/JSONL: the
line range applied first, then the syntax checked — per line when the file's name ends in
`.jsonl`, whatever the mode says — then the text cut line by line to docMaxTokens.
"""

from __future__ import annotations

import csv
import json
from itertools import islice
from typing import Any

from mm.tools.files.common import TRUNCATED_MARK, TokenBudget, error
from mm.tools.files.source import TextSource, strip_eol
from mm.tools.files.text_modes import INVALID_RANGE, Outcome, count_lines, line_range
from mm.tools.reads import PART_LINES, PART_TRUNCATED

SNIFF_CHARS = 1024
FALLBACK_DELIMITERS = (";", "\t", "|")
CSV_READ = "Read CSV with {columns} columns. Showing {shown} of {total} rows ({tokens} tokens)."
CSV_CUT = " TRUNCATED at token limit."
CSV_ERROR = "CSV parsing error: {error}"
CSV_COLUMNS = "Columns: {names}\n"
CSV_PART = "the first {shown} of {total} rows"
JSON_EMPTY = "File is empty or selected range is empty"
JSON_INVALID = "Invalid JSON format: {error}"
JSONL_INVALID = "Invalid JSON format: line {n}: {error}"
JSON_READ = "Read {kind} file lines {start}-{end} ({tokens} tokens)."
JSON_CUT = (" TRUNCATED at token limit {limit}. File has {total} total lines. Tell the user the file's size and "
            "structure and how many lines were included, then ask what they are looking for; do not read the rest "
            "in chunks unless they ask.")
JSON_TOO_LARGE = ("The selected range holds more than {limit} of text, too much to validate as JSON: give "
                  "start_line and end_line, or read it in mode \"Line\"")
JSON_TEXT_BYTES = 64 << 20


def sniff_delimiter(sample: str) -> str:
    """The CSV delimiter of `sample` (the first SNIFF_CHARS characters), by the reference's rule."""
    if "," in sample:
        return ","
    try:
        return csv.Sniffer().sniff(sample).delimiter
    except csv.Error:
        return next((d for d in FALLBACK_DELIMITERS if d in sample), ",")


def read_csv(source: TextSource, budget: int) -> Outcome:
    """The CSV mode of `source`: columns and rows (as objects) while they fit in `budget` tokens;
    every row is counted."""
    from mm.llm.tokens import count_text

    sample = "".join(islice(source.lines(), 64))[:SNIFF_CHARS]
    delimiter = sniff_delimiter(sample)
    rows: list[dict[str, Any]] = []
    total = 0
    try:
        reader = csv.DictReader(source.lines(), delimiter=delimiter)
        columns = list(reader.fieldnames or [])
        room = TokenBudget(budget, count_text(CSV_COLUMNS.format(names=", ".join(columns))))
        for row in reader:
            total += 1
            if room.take(row):
                rows.append(row)
    except csv.Error as err:
        return Outcome(error(CSV_ERROR.format(error=err)))
    used, cut = room.used, room.cut
    message = CSV_READ.format(columns=len(columns), shown=len(rows), total=total, tokens=used) + (CSV_CUT if cut else "")
    payload = {"path": str(source.path), "type": "csv", "columns": columns, "delimiter": delimiter,
               "total_rows": total, "rows_returned": len(rows), "rows": rows, "tokens": used, "max_tokens": budget,
               "truncated": cut, "message": message}
    if source.encoding != "utf-8":
        payload["encoding"] = source.encoding
    part = CSV_PART.format(shown=len(rows), total=total) if cut else ""
    return Outcome(payload, source.seen, not cut, part, preview="\n".join(
        delimiter.join(str(v) for v in r.values()) for r in rows[:50]))


def _invalid(selected: list[str], first: int, jsonl: bool) -> str | None:
    """Why the `selected` lines (the first being line `first`) are not valid JSON — for JSONL,
    the first line that is not — else None."""
    if not jsonl:
        try:
            json.loads("\n".join(selected))
        except ValueError as err:
            return JSON_INVALID.format(error=err)
        return None
    for n, line in enumerate(selected, first):
        if line.strip():
            try:
                json.loads(line)
            except ValueError as err:
                return JSONL_INVALID.format(n=n, error=err)
    return None


def read_json(source: TextSource, start_line: int, end_line: int, budget: int) -> Outcome:
    """The JSON and JSONL modes of `source`: lines `start_line`..`end_line`, validated, then cut
    line by line to `budget` tokens (a first line longer than that: its start)."""
    from mm.llm.tokens import count_text, head_within

    path = str(source.path)
    jsonl = source.path.name.lower().endswith(".jsonl")
    kind = "jsonl" if jsonl else "json"
    total = count_lines(source)
    start, end = line_range(start_line, end_line, total)
    if start > end and total:
        return Outcome(error(INVALID_RANGE.format(start=start, end=end, total=total)))
    selected, size = [], 0
    for n, line in enumerate(source.lines(), 1):
        if n > end:
            break
        if n >= start:
            size += len(line)
            if size > JSON_TEXT_BYTES:
                return Outcome(error(JSON_TOO_LARGE.format(limit="64 MiB")))
            selected.append(strip_eol(line))
    head = {"path": path, "type": kind}
    content = "\n".join(selected).strip()
    if not content:
        payload = {**head, "content": "", "start_line": start, "end_line": end, "total_lines": total,
                   "message": JSON_EMPTY}
        return Outcome(payload, source.seen, start == 1 and end == total, PART_LINES.format(
            first=start, last=end, total=total), preview="")
    invalid = _invalid(selected, start, jsonl)
    if invalid:
        return Outcome(error(invalid))
    tokens, included, cut = count_text(content), len(selected), False
    if tokens > budget:
        kept, used = [], 0
        for line in content.split("\n"):
            cost = count_text(line + "\n")
            if used + cost > budget:
                break
            kept.append(line)
            used += cost
        included, cut = len(kept), True
        if not kept:  # one long line (minified JSON): its start, rather than nothing
            kept = [head_within(content.split("\n", 1)[0], budget)]
        content = "\n".join(kept) + "\n" + TRUNCATED_MARK
        tokens = count_text(content)
    message = JSON_READ.format(kind=kind.upper(), start=start, end=end, tokens=tokens)
    if cut:
        message += JSON_CUT.format(limit=budget, total=total)
    payload = {**head, "content": content, "start_line": start, "end_line": end, "total_lines": total,
               "lines_requested": end - start + 1, "lines_included": included, "tokens": tokens,
               "max_tokens": budget, "truncated": cut, "message": message}
    whole = start == 1 and end == total and not cut
    part = PART_TRUNCATED.format(last=start + included - 1, total=total) if cut else \
        PART_LINES.format(first=start, last=end, total=total)
    return Outcome(payload, source.seen, whole, "" if whole else part, preview=content)
