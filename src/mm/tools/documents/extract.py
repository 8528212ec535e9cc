"""The text of a file added to the documents index: PDF pages and DOCX paragraphs as fs_read's
PDF and DOCX modes read them (mm.tools.files.documents), Markdown and other text files in
whatever encoding they are in (mm.fs.read_any_text) (docs/documents.md §What can be added).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PDF_SUFFIXES = (".pdf",)
DOCX_SUFFIXES = (".docx",)
NOT_A_FILE = "not a file"
NO_TEXT = "it has no text to index"


class DocumentError(Exception):
    """A file that cannot be indexed; `str(err)` is why, in one line (of "it")."""


@dataclass(frozen=True)
class Extracted:
    """A file's text, and its number of pages when it is a PDF."""

    text: str
    pages: int | None = None


def document_text(where: Path) -> Extracted:
    """The text of the file `where` (PDF, DOCX, else text), stripped. Raises DocumentError for a
    file that cannot be read or holds no text; OSError for an I/O failure."""
    name = where.name.lower()
    pages = None
    if where.is_dir():
        raise DocumentError(NOT_A_FILE)
    if name.endswith(PDF_SUFFIXES) or name.endswith(DOCX_SUFFIXES):
        text, pages = _document(where, name.endswith(PDF_SUFFIXES))
    else:
        from mm.fs import TextFileError, read_any_text

        try:
            text = read_any_text(where, str(where))[0].logical()
        except TextFileError as err:
            raise DocumentError(str(err)) from None
    if not text.strip():
        raise DocumentError(NO_TEXT)
    return Extracted(text.strip(), pages)


def _document(where: Path, pdf: bool) -> tuple[str, int | None]:
    """A PDF's page-marked text and number of pages, or a DOCX's paragraphs one blank line apart."""
    from mm.tools.files.documents import PDF_ERROR, DOCX_ERROR, docx_paragraphs, document_bytes, pdf_pages

    template = PDF_ERROR if pdf else DOCX_ERROR
    got = document_bytes(where)
    if isinstance(got, str):
        raise DocumentError(template.format(error=got))
    data = got[0]
    extracted = pdf_pages(data) if pdf else docx_paragraphs(data)
    if isinstance(extracted, str):
        raise DocumentError(template.format(error=extracted))
    return ("".join(extracted[0]), extracted[1]) if pdf else ("\n\n".join(extracted), None)
