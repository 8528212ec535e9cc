"""Decoding a fetched page's bytes to text (mm-tools.md §fetch_content, row "Encoding").

Order: byte-order mark, the `charset` of the `Content-Type` header, `<meta charset>` or
`<meta http-equiv="Content-Type">` in the first 4 KiB, UTF-8 when the bytes are valid UTF-8,
else `windows-1252`. A name Python does not know is skipped. `chardet` is asked only in the
last step (nothing declared, not UTF-8), and only a confident multi-byte answer replaces the
windows-1252 fallback: it never overrides a declared charset.
"""

from __future__ import annotations

import codecs
import re

META_PRESCAN_BYTES = 4096
CHARDET_SAMPLE_BYTES = 65536
CHARDET_MIN_CONFIDENCE = 0.5  # with a strict decode and a multi-byte answer (docs/webmd.md)
FALLBACK = "cp1252"  # windows-1252, the WHATWG default for unlabelled pages

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# WHATWG Encoding Standard labels whose decoder is a superset of the Python codec of the same
# name: a page labelled `iso-8859-1` or `gbk` is decoded as the browser decodes it.
_WHATWG_ALIASES = {
    "iso-8859-1": "windows-1252", "iso8859-1": "windows-1252", "latin1": "windows-1252",
    "latin-1": "windows-1252", "l1": "windows-1252", "ascii": "windows-1252",
    "us-ascii": "windows-1252", "cp1252": "windows-1252", "x-cp1252": "windows-1252",
    "gbk": "gb18030", "gb2312": "gb18030", "x-gbk": "gb18030", "gb_2312-80": "gb18030",
    "shift_jis": "cp932", "shift-jis": "cp932", "sjis": "cp932", "x-sjis": "cp932",
    "ms_kanji": "cp932", "windows-31j": "cp932", "euc-kr": "cp949", "ks_c_5601-1987": "cp949",
    "big5": "big5hkscs", "x-x-big5": "big5hkscs", "iso-8859-9": "cp1254", "latin5": "cp1254",
    "iso-8859-11": "cp874", "tis-620": "cp874", "utf8": "utf-8", "unicode-1-1-utf-8": "utf-8",
}

# Multi-byte encodings that chardet may add when nothing is declared (its single-byte guesses
# are too weak to beat the WHATWG default).
_CHARDET_ACCEPTED = {"gb18030", "gbk", "gb2312", "big5", "big5hkscs", "cp932", "shift_jis",
                     "euc_jp", "euc_kr", "cp949", "iso2022_jp", "iso2022_kr", "cp950"}

_HEADER_CHARSET = re.compile(r"charset\s*=\s*[\"']?([^\s;\"']+)", re.I)
_META_TAG = re.compile(rb"<meta\b[^>]*>", re.I)
_META_CHARSET = re.compile(rb"""charset\s*=\s*["']?\s*([^\s;"'/>]+)""", re.I)
_META_CHARSET_ATTR = re.compile(rb"""\scharset\s*=\s*["']?\s*([^\s;"'/>]+)""", re.I)
_CONTENT_ATTR = re.compile(rb"""\scontent\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)""", re.I)
_HTTP_EQUIV = re.compile(rb"""http-equiv\s*=\s*["']?\s*content-type""", re.I)


def codec_for(label: str | None) -> str | None:
    """The Python codec for an encoding label, or None when the label is unknown.

    Args: label (str | None): a charset name as written in a header or a meta tag.
    Returns: a codec name usable with `bytes.decode`, WHATWG aliases applied.
    Source: mm-tools.md §fetch_content, "An unknown name is skipped".
    """
    if not label:
        return None
    name = label.strip().strip("\"'").lower()
    name = _WHATWG_ALIASES.get(name, name)
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def bom_encoding(body: bytes) -> str | None:
    """The encoding named by a byte-order mark at the start of `body` (bytes), or None."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name
    return None


def header_encoding(content_type: str | None) -> str | None:
    """The known codec named by the `charset` parameter of a Content-Type value (str | None)."""
    match = _HEADER_CHARSET.search(content_type or "")
    return codec_for(match.group(1)) if match else None


def meta_encoding(body: bytes) -> str | None:
    """The first known codec declared by a `<meta>` tag in the first 4 KiB of `body` (bytes).

    Both `<meta charset=x>` and `<meta http-equiv="Content-Type" content="…; charset=x">` count.
    A UTF-16 label in a meta tag means UTF-8, as in the WHATWG prescan (the bytes were read as
    ASCII to find it).
    """
    for tag in _META_TAG.findall(body[:META_PRESCAN_BYTES]):
        content = _CONTENT_ATTR.search(tag)
        if _HTTP_EQUIV.search(tag) and content:
            match = _META_CHARSET.search(content.group(1))
        else:  # only a charset attribute counts, not "charset=" inside another attribute
            match = _META_CHARSET_ATTR.search(_CONTENT_ATTR.sub(b"", tag))
        if not match:
            continue
        codec = codec_for(match.group(1).decode("ascii", "replace"))
        if codec:
            return "utf-8" if codec.startswith("utf-16") else codec
    return None


def _is_utf8(body: bytes) -> bool:
    """Whether `body` (bytes) is valid UTF-8 throughout."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def guessed_encoding(body: bytes) -> str:
    """The encoding of an undeclared, non-UTF-8 `body` (bytes): chardet's confident multi-byte
    answer that decodes the bytes cleanly, else `windows-1252` (the WHATWG default)."""
    import chardet  # lazy: only pages with no declared charset and invalid UTF-8 need it

    guess = chardet.detect(body[:CHARDET_SAMPLE_BYTES])
    codec = codec_for(guess.get("encoding"))
    if not codec or (guess.get("confidence") or 0) < CHARDET_MIN_CONFIDENCE:
        return FALLBACK
    if codec not in _CHARDET_ACCEPTED:
        return FALLBACK
    try:
        body.decode(codec)
    except UnicodeDecodeError:
        return FALLBACK
    return codec


def detect_encoding(body: bytes, content_type: str | None) -> str:
    """The codec to decode a page with, following the reference order.

    Args: body (bytes): the page as received; content_type (str | None): the header value.
    Returns: a Python codec name.
    Source: mm-tools.md §fetch_content, row "Encoding".
    """
    return (bom_encoding(body) or header_encoding(content_type) or meta_encoding(body)
            or ("utf-8" if _is_utf8(body) else guessed_encoding(body)))


def decode_html(body: bytes, content_type: str | None) -> str:
    """The page's text, decoded by `detect_encoding` (a BOM is dropped; bytes the chosen
    encoding cannot decode become U+FFFD rather than failing).

    Args: body (bytes): the page; content_type (str | None): the `Content-Type` header value.
    Returns: str, the text of the page.
    Source: mm-tools.md §fetch_content, row "Encoding".
    """
    codec = detect_encoding(body, content_type)
    for bom, _name in _BOMS:
        if body.startswith(bom):
            body = body[len(bom):]
            break
    return body.decode(codec, errors="replace")
