"""A text file's encoding: found from its bytes, and kept when it is written again
(mnemo-tools.md, Write and edit files: "Both preserve the file's existing encoding, BOM, and line
endings"; docs/tools-files.md §Encodings).

Order: a byte-order mark (UTF-32, UTF-8, UTF-16: the longest first, so UTF-32 LE is not read as
UTF-16 LE); else UTF-8; else mm.webmd.encoding's guess (chardet's confident multi-byte answer,
else windows-1252), else Latin-1. An encoding is taken only when the bytes decode strictly and
encode back to exactly the same bytes: a file is never rewritten with bytes it did not have.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

# Signature, codec: the longest first (UTF-32 LE's starts with UTF-16 LE's).
BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
LAST_RESORT = "latin-1"  # decodes any byte; tried after the guess


@dataclass(frozen=True)
class Decoded:
    """A file's text (`text`, its BOM left out), its Python codec name and whether it had a BOM."""

    text: str
    encoding: str
    bom: bool


def bom_codec(head: bytes) -> str | None:
    """The codec a byte-order mark at the start of `head` (bytes) names, else None."""
    return next((codec for sig, codec in BOMS if head.startswith(sig)), None)


def wide(head: bytes) -> bool:
    """Whether `head` (bytes) starts with a UTF-16 or UTF-32 byte-order mark: text whose NUL
    bytes are no sign of a binary file."""
    codec = bom_codec(head)
    return codec is not None and codec != "utf-8"


def _round_trip(data: bytes, codec: str) -> str | None:
    """`data` decoded strictly with `codec` when it encodes back to the same bytes, else None."""
    try:
        text = data.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None
    try:
        same = text.encode(codec) == data
    except UnicodeEncodeError:
        same = False
    return text if same else None


def decode(data: bytes) -> Decoded | None:
    """The text of `data` (a whole file's bytes) in the order of the module docstring, or None
    when no encoding gives it back exactly (a file with a BOM that its codec cannot decode)."""
    codec = bom_codec(data)
    if codec is not None:
        size = next(len(sig) for sig, c in BOMS if c == codec)
        text = _round_trip(data[size:], codec)
        return Decoded(text, codec, True) if text is not None else None
    text = _round_trip(data, "utf-8")
    if text is not None:
        return Decoded(text, "utf-8", False)
    from mm.webmd.encoding import guessed_encoding  # chardet: only for a file that is not UTF-8

    for codec in dict.fromkeys((guessed_encoding(data), LAST_RESORT)):
        text = _round_trip(data, codec)
        if text is not None:
            return Decoded(text, codecs.lookup(codec).name, False)
    return None


def unencodable(text: str, codec: str) -> str | None:
    """The first character of `text` that `codec` cannot encode, else None."""
    try:
        text.encode(codec)
        return None
    except UnicodeEncodeError as err:
        return text[err.start]
