"""Applying edit_file's replacements: parsing, matching, conflicts, the diff and the write
(mm-tools.md §edit_file)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from mm.tools.base import FileChange, ToolContext, ToolResult
from mm.tools.diff import Block, diff_lines, fit, split_lines
from mm.tools.edit.args import NOTHING_WRITTEN, parse_edits
from mm.tools.edit.index import FileIndex
from mm.tools.edit.match import Match, locate
from mm.fs import BOM, FileRefused, TextFileError, read_text, write_atomic
from mm.tools.reads import Seen

PATH_REQUIRED = "edit_file: path is required — the path of the file to edit, relative to the working directory"
DOES_NOT_EXIST = "{path} does not exist. Create it with write_file"  # read_file's text (mm-tools.md §read_file)
CANNOT_READ = "{path}: cannot read the file — {error}"
CANNOT_WRITE = "{path}: cannot write the file — {error}; nothing was written"
REPEATED = "{path}: edits #{a} and #{b} change the same text (line {line}) — edits must not repeat; send one edit per place"
NESTED = (
    "{path}: edit #{inner} lies inside edit #{outer} (lines {first}-{last}) — edits must not nest; "
    "make the change of edit #{inner} part of edit #{outer}'s new text"
)
OVERLAP = "{path}: edits #{a} and #{b} overlap (line {line}) — edits must not overlap; merge them into one edit"
NO_CHANGE = "{path}: the edits leave the file as it is — nothing was written"
HEADLINE = "{path}: {count} edit{s} applied · +{added} -{deleted} lines · first change at line {line}"
DRY_HEADLINE = (
    "{path}: dry run, nothing written — {count} edit{s} would apply · +{added} -{deleted} lines · "
    "first change at line {line}"
)
RELAXED = " · {count} matched ignoring whitespace"

def conflicts(path: str, matches: list[tuple[int, Match]], index: FileIndex) -> list[str]:
    """Refusals for edits that repeat, nest in or overlap another (`matches`: (number, Match))."""
    ordered = sorted(matches, key=lambda nm: (nm[1].start, -nm[1].end, nm[0]))
    errors, outer = [], None
    for n, m in ordered:
        if outer is not None and m.start < outer[1].end:
            o, om = outer
            a, b = sorted((o, n))
            if (m.start, m.end) == (om.start, om.end):
                errors.append(REPEATED.format(path=path, a=a, b=b, line=index.line_no(m.start)))
            elif m.end <= om.end:
                errors.append(NESTED.format(path=path, inner=n, outer=o, first=index.line_no(om.start),
                                            last=index.line_no(max(om.start, om.end - 1))))
            else:
                errors.append(OVERLAP.format(path=path, a=a, b=b, line=index.line_no(m.start)))
        if outer is None or m.end > outer[1].end:
            outer = (n, m)
    return errors


def _line_end(text: str, pos: int) -> int:
    """Offset just after the newline that ends the line holding `pos`, or len(text)."""
    end = text.find("\n", pos)
    return len(text) if end == -1 else end + 1


def apply(text: str, matches: list[Match]) -> tuple[str, list[Block]]:
    """Apply disjoint `matches` to `text` (str); return the new text and the changed line
    windows for the diff, so only those are compared."""
    ms = sorted(matches, key=lambda m: m.start)
    out, blocks, pos, delta, k = [], [], 0, 0, 0
    while k < len(ms):
        head = ms[k]  # the block: the whole lines [cs, ce) that head and its neighbours touch
        cs, ce, members = text.rfind("\n", 0, head.start) + 1, _line_end(text, head.end - 1), []
        while True:
            while k < len(ms) and ms[k].start < ce:
                ce = max(ce, _line_end(text, ms[k].end - 1))
                members.append(ms[k])
                k += 1
            parts, p = [], cs
            for m in members:
                parts += [text[p:m.start], m.new]
                p = m.end
            seg = "".join(parts) + text[p:ce]
            if seg and not seg.endswith("\n") and ce < len(text):
                ce = _line_end(text, ce)
                continue
            break
        first = text.count("\n", 0, cs)
        old_count, new_count = len(split_lines(text[cs:ce])), len(split_lines(seg))
        blocks.append(Block(first, first + old_count, first + delta, first + delta + new_count))
        delta += new_count - old_count
        out += [text[pos:cs], seg]
        pos = ce
    out.append(text[pos:])
    return "".join(out), blocks


def _local_endings(text: str, m: Match) -> Match:
    """In a file with mixed line endings, give `m.new` the ending of the line where it starts."""
    eol = text.find("\n", m.start)
    if eol > 0 and text[eol - 1] == "\r":
        return replace(m, new=m.new.replace("\r\n", "\n").replace("\n", "\r\n"))
    if eol > 0:  # an LF line: a CRLF typed in new becomes LF too
        return replace(m, new=m.new.replace("\r\n", "\n"))
    return m


def _refuse(text: str, ctx: ToolContext, where: Path | None) -> ToolResult:
    """A failed result, cut to maxOutput characters but never inside its first line."""
    first, _, rest = text.partition("\n")
    body = fit(first, rest.split("\n"), ctx.settings.max_output) if rest else first
    return ToolResult(body, failed=True, locations=[where] if where else [])


def _dry(value: Any) -> bool:
    """Read dry_run leniently: true, "true", "yes", 1."""
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "1", "on")
    return bool(value)


def edit(args: dict[str, Any], ctx: ToolContext, plan_only: bool = False, read_first: bool = False) -> ToolResult:
    """Apply `args` (path, edits, dry_run) to the file; return the headline and numbered diff,
    or a refusal. Nothing is written unless every edit is found once and none conflict.

    plan_only: write nothing, and return the dry run's text with the `change` that would be made
    (the permission prompt shows it before the call runs). read_first (`readBeforeWrite: true`):
    the file must have been read, and not changed since (mm.tools.reads). A write is recorded as
    a read in every case.
    """
    path = args.get("path")
    if not isinstance(path, str) or not path.strip():
        return ToolResult(PATH_REQUIRED, failed=True)
    where = Path(os.path.abspath(ctx.resolve(path)))
    if not where.exists():
        return _refuse(DOES_NOT_EXIST.format(path=path), ctx, None)
    if read_first:
        verdict = ctx.reads.verdict(where)
        if verdict is not None:
            return _refuse(verdict.text(path), ctx, where)
    parsed, errors = parse_edits(args, path)
    if errors:
        if len(parsed) > 1:
            errors.append(NOTHING_WRITTEN.format(count=len(parsed)))
        return _refuse("\n".join(errors), ctx, where)
    try:
        file = read_text(where, path)
    except TextFileError as err:
        return _refuse(str(err), ctx, where)
    except OSError as err:
        return _refuse(CANNOT_READ.format(path=path, error=err.strerror or err), ctx, where)
    normalise = file.eol != "mixed"
    index = FileIndex(file.logical())
    found, errors = [], []
    for n, (old, new) in enumerate(parsed, 1):
        old, new = old.removeprefix(BOM), new.removeprefix(BOM)  # read_file shows a file's BOM; it is never matched
        if normalise:
            old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
        hit = locate(index, path, n, old, new)
        if not normalise and not isinstance(hit, str):
            hit = _local_endings(index.text, hit)
        if isinstance(hit, str):
            errors.append(hit)
        else:
            found.append((n, hit))
    errors = errors or conflicts(path, found, index)
    if errors:
        if len(parsed) > 1:
            errors.append(NOTHING_WRITTEN.format(count=len(parsed)))
        return _refuse("\n".join(errors), ctx, where)
    new_text, blocks = apply(index.text, [m for _, m in found])
    if new_text == index.text:
        return _refuse(NO_CHANGE.format(path=path), ctx, where)
    diff = diff_lines(split_lines(index.text), split_lines(new_text), blocks)
    relaxed = sum(m.relaxed for _, m in found)
    dry = plan_only or _dry(args.get("dry_run", False))
    head = (DRY_HEADLINE if dry else HEADLINE).format(
        path=path, count=len(found), s="" if len(found) == 1 else "s",
        added=diff.added, deleted=diff.deleted, line=diff.first_line or 1)
    if relaxed:
        head += RELAXED.format(count=relaxed)
    text = fit(head, diff.rows, ctx.settings.max_output)
    before, after = file.physical(index.text), file.physical(new_text)
    if plan_only:
        return ToolResult(text, change=FileChange(where, before, after), locations=[where])
    if dry:
        return ToolResult(text, locations=[where])
    try:
        write_atomic(where, after, path)
        ctx.reads.record(where, Seen.of(after.encode("utf-8"), os.stat(where)))
    except FileRefused as err:  # it became a pipe or a device since it was read
        return _refuse(f"{err}; nothing was written", ctx, where)
    except OSError as err:
        return _refuse(CANNOT_WRITE.format(path=path, error=err.strerror or err), ctx, where)
    return ToolResult(text, change=FileChange(where, before, after), locations=[where])
