"""fs_read's "PDF" and "DOCX" modes (mnemo-tools.md, fs_read modes; notes/mnemoai.md §2.1): page-marked
text with `pypdf`, paragraph text with `python-docx` (tables, headers and footnotes are not
extracted), both imported on the first such read. A document longer than docMaxTokens shows its
start and says the rest is not shown; with the `documents` group declared, fs_read first offers
a document above documents.maxTokens to the index, as the reference offloads it to its RAG
(mm.tools.documents.adding; docs/tools-files.md §Large documents).
"""

from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import Any

from mm.tools.files.common import TRUNCATED_MARK, error
from mm.tools.files.source import Cancelled
from mm.tools.files.text_modes import PARTIAL_LINE_ROOM, Outcome
from mm.tools.reads import PART_DOCUMENT, Seen

DOCUMENT_BYTES = 256 << 20  # the largest PDF or DOCX read
DOCX_TEXT_BYTES = 64 << 20  # the largest document.xml unpacked (a zip bomb is refused, not expanded)
PAGE_MARK = "--- Page {n} ---\n{text}\n\n"
PDF_EMPTY = "PDF appears to be empty or contains only images"
PDF_ERROR = "Error reading PDF: {error}"
PDF_ENCRYPTED = "it is encrypted, and a password is needed to read it"
PDF_READ = "Read {pages} of {total} pages ({tokens} tokens)"  # pages shown whole (a page without text is not)
DOCX_NOT = "File is not a DOCX document: {path}"
DOCX_EMPTY = "DOCX appears to be empty"
DOCX_ERROR = "Error reading DOCX: {error}"
DOCX_BOMB = "its text unpacks to more than {limit}"
DOCX_READ = "Read {shown} of {total} paragraphs ({tokens} tokens)"
TOO_BIG = "it is larger than {limit}"
LARGE_DOCUMENT = (" - truncated due to token limit: only the start of the document is shown; ask the user which part "
                  "matters. (With the documents tool group declared, mm indexes a large document for "
                  "search_in_documents instead.)")


def _quiet(name: str) -> None:
    """Keep a library's logging off the terminal (pypdf warns about every odd PDF)."""
    logger = logging.getLogger(name)
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
        logger.propagate = False


def document_bytes(where: Path) -> tuple[bytes, Any] | str:
    """The document's bytes and stat (mm.fs), or why not (DOCUMENT_BYTES)."""
    from mm.fs import FileTooLarge, read_with_stat, size_text

    try:
        return read_with_stat(where, DOCUMENT_BYTES, str(where))
    except FileTooLarge:
        return TOO_BIG.format(limit=size_text(DOCUMENT_BYTES))


def _fit(pieces: list[str], budget: int, cancelled: Any) -> tuple[str, int, bool]:
    """The pieces (pages, paragraphs) that fit in `budget` tokens, the last one in part when
    at least PARTIAL_LINE_ROOM tokens are left: (content, pieces shown whole, cut)."""
    from mm.llm.tokens import count_text, head_within

    kept: list[str] = []
    used = 0
    for piece in pieces:
        if cancelled is not None and cancelled.is_set():
            raise Cancelled()
        tokens = count_text(piece)
        if used + tokens > budget:
            if budget - used > PARTIAL_LINE_ROOM:
                kept.append(head_within(piece, budget - used).rstrip("\n") + "\n")
                return "".join(kept).rstrip("\n") + "\n" + TRUNCATED_MARK, len(kept) - 1, True
            return "".join(kept).rstrip("\n") + ("\n" if kept else "") + TRUNCATED_MARK, len(kept), True
        kept.append(piece)
        used += tokens
    return "".join(kept).strip(), len(kept), False


def pdf_pages(data: bytes, budget: int | None = None, cancelled: Any = None) -> tuple[list[str], int] | str:
    """The PDF's pages with text, each as PAGE_MARK, and its number of pages — extracted until
    they pass `budget` tokens (None: all) — or why it cannot be read (one line). Raises Cancelled."""
    from mm.llm.tokens import count_text

    _quiet("pypdf")
    import pypdf

    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            return PDF_ENCRYPTED
        pages, used = [], 0
        for n, page in enumerate(reader.pages, 1):  # extracted while they may still fit
            if cancelled is not None and cancelled.is_set():
                raise Cancelled()
            text = (page.extract_text() or "").strip()
            if text:
                pages.append(PAGE_MARK.format(n=n, text=text))
                used += count_text(pages[-1]) if budget is not None else 0
            if budget is not None and used > budget:
                break
        return pages, len(reader.pages)
    except Cancelled:
        raise
    except Exception as err:  # pypdf raises many kinds for a damaged file: each becomes one line
        return str(err or type(err).__name__)


def read_pdf(where: Path, budget: int, cancelled: Any = None) -> Outcome:
    """The PDF mode: each page's text under `--- Page N ---`, at most `budget` tokens."""
    from mm.llm.tokens import count_text

    got = document_bytes(where)
    if isinstance(got, str):
        return Outcome(error(PDF_ERROR.format(error=got), file_path=str(where)))
    data, st = got
    extracted = pdf_pages(data, budget, cancelled)
    if isinstance(extracted, str):
        return Outcome(error(PDF_ERROR.format(error=extracted), file_path=str(where)))
    pages, total = extracted
    seen = Seen.of(data, st)
    if not pages:
        return Outcome({"content": "", "message": PDF_EMPTY, "file_path": str(where), "total_pages": total}, seen,
                       preview="")
    content, shown, cut = _fit(pages, budget, cancelled)
    tokens = count_text(content)
    message = PDF_READ.format(pages=shown, total=total, tokens=tokens) + (LARGE_DOCUMENT if cut else "")
    payload = {"content": content, "file_path": str(where), "total_pages": total, "tokens": tokens,
               "max_tokens": budget, "truncated": cut, "message": message}
    return Outcome(payload, seen, not cut, PART_DOCUMENT if cut else "", preview=content)


def _docx_bomb(data: bytes) -> bool:
    """Whether the DOCX's main part would unpack to more than DOCX_TEXT_BYTES."""
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            return package.getinfo("word/document.xml").file_size > DOCX_TEXT_BYTES
    except (zipfile.BadZipFile, KeyError):
        return False  # python-docx says what is wrong with it


def docx_paragraphs(data: bytes) -> list[str] | str:
    """The text of each non-empty paragraph of the DOCX `data`, or why it cannot be read (one line)."""
    from mm.fs import size_text

    if _docx_bomb(data):
        return DOCX_BOMB.format(limit=size_text(DOCX_TEXT_BYTES))
    try:
        import docx

        return [p.text.strip() for p in docx.Document(io.BytesIO(data)).paragraphs if p.text.strip()]
    except Exception as err:  # not a zip, no document part, broken XML: one line each
        return str(err or type(err).__name__)


def read_docx(where: Path, budget: int, cancelled: Any = None) -> Outcome:
    """The DOCX mode: the text of each non-empty paragraph, at most `budget` tokens; refused for
    a name not ending in `.docx`."""
    from mm.llm.tokens import count_text

    if not where.name.lower().endswith(".docx"):
        return Outcome(error(DOCX_NOT.format(path=where), file_path=str(where)))
    got = document_bytes(where)
    if isinstance(got, str):
        return Outcome(error(DOCX_ERROR.format(error=got), file_path=str(where)))
    data, st = got
    paragraphs = docx_paragraphs(data)
    if isinstance(paragraphs, str):
        return Outcome(error(DOCX_ERROR.format(error=paragraphs), file_path=str(where)))
    seen = Seen.of(data, st)
    if not paragraphs:
        return Outcome({"content": "", "message": DOCX_EMPTY, "file_path": str(where), "total_paragraphs": 0}, seen,
                       preview="")
    content, shown, cut = _fit([p + "\n\n" for p in paragraphs], budget, cancelled)
    tokens = count_text(content)
    message = DOCX_READ.format(shown=shown, total=len(paragraphs), tokens=tokens) + (LARGE_DOCUMENT if cut else "")
    payload = {"content": content, "file_path": str(where), "total_paragraphs": len(paragraphs), "tokens": tokens,
               "max_tokens": budget, "truncated": cut, "message": message}
    return Outcome(payload, seen, not cut, PART_DOCUMENT if cut else "", preview=content)
