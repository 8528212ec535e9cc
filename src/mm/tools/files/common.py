"""What the three tools of the `files` group share: the JSON results of the reference, the path
as the model wrote it, the binary check and the docMaxTokens cap (mnemo-tools.md, Read files and
Write and edit files; notes/mnemoai.md §2.1–2.3; docs/tools-files.md)."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

from mm.tools.base import FileChange, ToolContext, ToolResult

DEFAULT_DOC_MAX_TOKENS = 8192  # the reference's value when DOC_MAX_TOKENS is absent
WINDOW_SHARE = 4  # unset, the cap is at most a quarter of a known context window (the reference's wizard)
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp", ".tiff", ".ico")
BINARY_SNIFF_BYTES = 8192  # a NUL byte in the first 8 KiB means binary, as read_file and git decide
IS_IMAGE = ("'{path}' is an image, not a text file. Use the describe_image tool to inspect it (it answers "
            "questions about images), not a file-reading tool.")
# IS_IMAGE points at describe_image only where it is declared and takes the format (docs/vision.md).
IS_IMAGE_UNSEEN = ("'{path}' is an image, not a text file, and no tool in this conversation can see images: "
                   "describe_image is declared only with a vision model (visionModel and toolsets: vision in the "
                   "agent file).")
IS_IMAGE_OTHER_FORMAT = ("'{path}' is an image, not a text file, in a format describe_image does not take ({suffix}; "
                         "it takes {formats}).")
IS_BINARY = "'{path}' appears to be a binary file and can't be read as text."
USE_MODE = ' Read it with mode "{mode}".'  # a .pdf or .docx read as text
DOCUMENT_MODES = {".pdf": "PDF", ".docx": "DOCX"}
NOT_FOUND = "Path doesn't exist: {path}"
NOT_A_FILE = "Path exists but is not a file: {path}"
PATH_REQUIRED = "path is required: the path of the file, relative to the working directory"
TRUNCATED_MARK = "[TRUNCATED - Content exceeds token limit]"


def doc_max_tokens(configured: int | None, window: int | None) -> int:
    """fs_read's cap in tokens: `files.docMaxTokens` when set; unset, 8192 (the reference's value
    when the key is absent), but at most a quarter of the context window `window` when it is known."""
    if configured is not None:
        return configured
    if window:
        return max(1, min(DEFAULT_DOC_MAX_TOKENS, window // WINDOW_SHARE))
    return DEFAULT_DOC_MAX_TOKENS


class TokenBudget:
    """Items (rows, matches, directory entries) kept while their JSON fits in `limit` tokens; once
    one does not fit, `cut` is set and no later one is taken (the output stays in order)."""

    def __init__(self, limit: int, used: int = 0):
        self.limit, self.used, self.cut = limit, used, False

    def take(self, item: Any) -> bool:
        """Whether `item` still fits; if so its tokens are counted as used."""
        from mm.llm.tokens import count_text

        if self.cut:
            return False
        tokens = count_text(json.dumps(item, ensure_ascii=False))
        if self.used + tokens > self.limit:
            self.cut = True
            return False
        self.used += tokens
        return True


def error(message: str, **fields: Any) -> dict[str, Any]:
    """The reference's error object: `{"error": true, "message": …}` and any further fields."""
    return {"error": True, "message": message, **fields}


def result(payload: dict[str, Any], where: Path | None = None, preview: str | None = None,
           change: FileChange | None = None) -> ToolResult:
    """The ToolResult of a payload: its JSON (UTF-8 as is) for the model, failed when it is an
    error; `preview` is what a terminal shows instead (the content read, the diff)."""
    return ToolResult(json.dumps(payload, ensure_ascii=False), failed=bool(payload.get("error")),
                      locations=[where] if where is not None else [], preview=preview, change=change)


def _unquoted(path: str) -> str:
    """`path` without one pair of matching quotes around it."""
    if len(path) >= 2 and path[0] == path[-1] and path[0] in "'\"":
        return path[1:-1]
    return path


def _unescaped(path: str) -> str:
    """`path` read as a shell word (`My\\ File.txt` → `My File.txt`), when it is one word."""
    try:
        words = shlex.split(path)
    except ValueError:
        return path
    return words[0] if len(words) == 1 else path


def resolve(ctx: ToolContext, path: str) -> Path:
    """The absolute path `path` names, relative paths against the working directory, `~` expanded.

    Tolerated as the reference's normalize_path does: the path as written, else without its
    quotes, else as a shell word (a path copied from a terminal) — the first that exists wins; when
    none exists (a file to create) the unquoted, unescaped one. Raises ArgumentError for a path no
    file can have (ToolContext.resolve)."""
    stripped = path.strip()
    candidates = list(dict.fromkeys([stripped, _unquoted(stripped), _unescaped(stripped)]))
    resolved = [Path(os.path.abspath(ctx.resolve(c))) for c in candidates]
    for where in resolved:
        if os.path.lexists(where):
            return where
    return resolved[-1]


CONTROL_SHARE = 0.30  # more control characters than this share of the first bytes: binary (the reference's rule)
TEXT_CONTROLS = "\t\n\r\f\b"


def _control_share(text: str) -> float:
    """The share of `text` (str) that is control characters other than TEXT_CONTROLS (DEL
    included); bytes above 127 do not count, so text in any single-byte encoding passes."""
    if not text:
        return 0.0
    controls = sum(1 for ch in text if (ch < " " and ch not in TEXT_CONTROLS) or ch == "\x7f")
    return controls / len(text)


def image_pointer(payload: dict[str, Any], where: Path, describer: bool) -> dict[str, Any]:
    """`payload` (a refusal of binary_message) made true of this conversation: an image's message
    points at describe_image only when it is declared (`describer`) and takes the image's format;
    otherwise it says why no tool can see the image. Other refusals are returned as they are."""
    if not payload.get("is_image"):
        return payload
    from mm.tools.vision.images import SUPPORTED

    if not describer:
        return {**payload, "message": IS_IMAGE_UNSEEN.format(path=where)}
    if where.suffix.lower() not in SUPPORTED:
        message = IS_IMAGE_OTHER_FORMAT.format(path=where, suffix=where.suffix.lower(), formats=", ".join(SUPPORTED))
        return {**payload, "message": message}
    return payload


def binary_message(where: Path, head: bytes) -> dict[str, Any] | None:
    """The reference's refusal for a binary or image file (`head`: its first bytes), else None.
    An image is known by its extension; a binary by a NUL byte in its first 8 KiB (not in UTF-16 or
    UTF-32 text with a BOM) or by more than 30% control characters there."""
    from mm.textcodec import bom_codec, wide

    suffix = where.suffix.lower()
    if suffix in IMAGE_EXTENSIONS:
        return error(IS_IMAGE.format(path=where), binary=True, is_image=True)
    sample = head[:BINARY_SNIFF_BYTES]
    if wide(sample):
        binary = _control_share(sample.decode(bom_codec(sample) or "utf-8", errors="replace")) > CONTROL_SHARE
    else:
        binary = b"\0" in sample or _control_share(sample.decode("latin-1")) > CONTROL_SHARE
    if not binary:
        return None
    mode = DOCUMENT_MODES.get(suffix)
    message = IS_BINARY.format(path=where) + (USE_MODE.format(mode=mode) if mode else "")
    return error(message, binary=True, is_image=False)
