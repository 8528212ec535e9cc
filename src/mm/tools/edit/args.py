"""The arguments of an edit_file call as small models send them: the shapes accepted, and the
refusals for malformed ones (mm-tools.md §edit_file; docs/tools-edit.md §What small models send)."""

from __future__ import annotations

import json
from typing import Any

OLD_ALIASES = ("old", "old_string", "old_str")
NEW_ALIASES = ("new", "new_string", "new_str")
EDITS_SHAPE = (
    '{path}: edits must be a list of {{"old": "...", "new": "..."}} objects, e.g. '
    '[{{"old": "x = 1", "new": "x = 2"}}] — got {got}'
)
EDITS_EMPTY = '{path}: edits is empty — send at least one {{"old": "...", "new": "..."}}'
EDIT_SHAPE = '{path}: edit #{n}: must be an object {{"old": "...", "new": "..."}} — got {got}'
FIELD_MISSING = "{path}: edit #{n}: {field} is missing — every edit needs old (the text to replace) and new"
FIELD_NOT_TEXT = "{path}: edit #{n}: {field} must be text — got {got}"
OLD_EMPTY = (
    "{path}: edit #{n}: old is empty — it must quote text present exactly once in the file; "
    "to add text, quote a neighbouring line in old and repeat it in new"
)
SAME = "{path}: edit #{n}: old and new are identical — the edit would change nothing"
NOTHING_WRITTEN = "nothing was written: the {count} edits apply together or not at all — send them all again once fixed"


def _kind(value: Any) -> str:
    """Describe a JSON value's type for messages: 'a number', 'an object'…"""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return "nothing" if value is None else type(value).__name__


def _field(item: dict, names: tuple[str, ...]) -> Any:
    """Return the first of `names` present in `item`, else a sentinel ..."""
    for name in names:
        if name in item:
            return item[name]
    return ...


def parse_edits(args: dict[str, Any], path: str) -> tuple[list[tuple[str, str]], list[str]]:
    """Return the (old, new) pairs of `args` (one per edit sent) and the refusal lines for
    malformed ones (empty when all are well formed).

    Tolerates what small models send: `edits` as a JSON string, one {old, new} object instead
    of a list, old/new at the top level, and the aliases old_string/new_string, old_str/new_str.
    """
    edits = args.get("edits")
    if edits is None and any(k in args for k in OLD_ALIASES):
        edits = [args]
    if isinstance(edits, str):
        try:
            edits = json.loads(edits)
        except ValueError:
            return [], [EDITS_SHAPE.format(path=path, got="text that is not JSON")]
    if isinstance(edits, dict) and any(k in edits for k in OLD_ALIASES):
        edits = [edits]
    if isinstance(edits, dict):
        return [], [EDITS_SHAPE.format(path=path, got="an object without old and new")]
    if not isinstance(edits, list):
        return [], [EDITS_SHAPE.format(path=path, got=_kind(edits))]
    if not edits:
        return [], [EDITS_EMPTY.format(path=path)]
    pairs, errors = [], []
    for n, item in enumerate(edits, 1):
        if isinstance(item, str):
            try:
                item = json.loads(item)
            except ValueError:
                pass
        if not isinstance(item, dict):
            errors.append(EDIT_SHAPE.format(path=path, n=n, got=_kind(item)))
            pairs.append(("", ""))
            continue
        old, new = _field(item, OLD_ALIASES), _field(item, NEW_ALIASES)
        problems = [FIELD_MISSING.format(path=path, n=n, field=f) for f, v in (("old", old), ("new", new)) if v is ...]
        problems += [FIELD_NOT_TEXT.format(path=path, n=n, field=f, got=_kind(v))
                     for f, v in (("old", old), ("new", new)) if v is not ... and not isinstance(v, str)]
        if not problems and old == "":
            problems.append(OLD_EMPTY.format(path=path, n=n))
        elif not problems and old == new:
            problems.append(SAME.format(path=path, n=n))
        errors += problems
        pairs.append((old, new))
    return pairs, errors
