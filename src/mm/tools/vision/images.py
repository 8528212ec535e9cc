"""An image file as describe_image sends it: the accepted extensions, the size limit, the format
known from the content, and the data URL (mnemo-tools.md: describe_image accepts .png, .jpg,
.jpeg, .gif, .bmp, .webp; docs/vision.md). Read only through mm.fs: regular files only, never
waiting, at most IMAGE_LIMIT bytes."""

from __future__ import annotations

import base64
from pathlib import Path

SUPPORTED = (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp")  # the reference's list, in its order
IMAGE_LIMIT = 20 << 20  # bytes: the largest image sent (OpenAI's limit for one image; 27 MiB once in base64)
UNSUPPORTED = "Unsupported image format: {suffix}. Supported formats: {formats}"
NO_SUFFIX = "(none)"  # the suffix of a name without one, in UNSUPPORTED
EMPTY = "'{path}' is empty (0 bytes), not an image"
NOT_AN_IMAGE = ("'{path}' is not a PNG, JPEG, GIF, BMP or WebP image: its content is none of these formats, "
                "whatever its name says")
TOO_LARGE = ("'{path}' is larger than {limit}, the largest image describe_image sends — describe a smaller copy "
             "(scaled down or cropped)")
# The first bytes of each format (its magic number), and the media type sent with it.
SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF87a", "image/gif"),
              (b"GIF89a", "image/gif"))
BMP_HEADER_SIZES = (12, 16, 40, 52, 56, 64, 108, 124)  # a BMP's DIB header sizes (bytes 14–17)


class ImageRefused(Exception):
    """A file describe_image does not send; `str(err)` is the message for the model."""


def unsupported(path: Path) -> str | None:
    """UNSUPPORTED for a name whose extension (any case) is not one of SUPPORTED, else None."""
    suffix = path.suffix
    if suffix.lower() in SUPPORTED:
        return None
    return UNSUPPORTED.format(suffix=suffix or NO_SUFFIX, formats=", ".join(SUPPORTED))


def media_type(data: bytes) -> str | None:
    """The media type of the image `data` holds, known from its first bytes (PNG, JPEG, GIF, BMP,
    WebP), or None when it is none of them."""
    for magic, kind in SIGNATURES:
        if data.startswith(magic):
            return kind
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:2] == b"BM" and int.from_bytes(data[14:18], "little") in BMP_HEADER_SIZES:
        return "image/bmp"
    return None


def read_image(path: Path, limit: int = IMAGE_LIMIT) -> tuple[bytes, str]:
    """The bytes of the image file `path` (absolute) and their media type. Raises ImageRefused
    (larger than `limit` bytes, empty, not an image whatever its name), mm.fs.FileRefused (not a
    regular file, a read that would wait) and OSError."""
    from mm.fs import FileTooLarge, read_bytes, size_text

    try:
        data = read_bytes(path, limit, str(path))
    except FileTooLarge:
        raise ImageRefused(TOO_LARGE.format(path=path, limit=size_text(limit))) from None
    if not data:
        raise ImageRefused(EMPTY.format(path=path))
    kind = media_type(data)
    if kind is None:
        raise ImageRefused(NOT_AN_IMAGE.format(path=path))
    return data, kind


def data_url(data: bytes, kind: str) -> str:
    """`data:<kind>;base64,<data>`: the image as an OpenAI `image_url` carries it."""
    return f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"
