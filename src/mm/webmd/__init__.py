"""HTML to Markdown and page decoding for fetch_content (mm-tools.md §fetch_content)."""

from .cancel import ConversionCancelled
from .convert import BAD_TABLES, TABLE_MODES, html_to_markdown
from .encoding import decode_html, detect_encoding

__all__ = ["BAD_TABLES", "TABLE_MODES", "ConversionCancelled", "decode_html", "detect_encoding", "html_to_markdown"]
