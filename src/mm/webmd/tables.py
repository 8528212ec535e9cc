"""Tables (mm-tools.md §fetch_content, field `tables` and row "Conversion").

A simple table (no `rowspan`/`colspan` above 1, no nested table) goes to html-to-markdown as a
GFM table, its `<caption>` first as a paragraph and its first row as `th` cells (the header
the reference asks for; it also stops html-to-markdown from rendering a short, link-dense
table as a list). A table with spans or a nested table is kept
as raw HTML (`tables: html`, whitelisted attributes only) or flattened into a span-free grid
whose spanned cells are copied into every slot they cover (`tables: flatten`).
"""

from __future__ import annotations

import re
from html import escape as html_escape

from . import rules
from .escape import BLOCK_CLOSE, BLOCK_OPEN, plain
from .links import image_source, link_target

SECTION_TAGS = ("thead", "tbody", "tfoot")
CELL_TAGS = ("td", "th")
# Elements kept inside a raw HTML table; the others keep only their content.
RAW_TAGS = frozenset({
    "table", "caption", "tr", "td", "th", "p", "a", "img", "strong", "b", "em", "i", "code",
    "pre", "br", "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "hr", "del",
    "s", "sub", "sup",
})
VOID_TAGS = frozenset({"br", "hr", "img"})
STRUCTURE_TAGS = frozenset({"table", "tr", *SECTION_TAGS})
MAX_FRAGMENT_DEPTH = 20  # tables in captions in tables…: past this, no further special handling
LAYOUT_CONTENT = "h1, h2, h3, h4, h5, h6, blockquote, article, main"
_SPACES = re.compile(r"\s+")
# A blank text node right after one of these adds nothing to a raw table.
_BLOCK_EDGES = ("<td", "<th", "</td", "</th", "<tr", "</tr", "<table", "</table", "<caption",
                "<p", "</p", "<li", "</li", "<ul", "</ul", "<ol", "</ol", "<br", "<h", "</h",
                "<blockquote", "</blockquote", "<pre", "</pre")
_BLANK_LINES = re.compile(r"\n\s*\n")


def is_complex(table) -> bool:
    """Whether a table (selectolax node) has a cell spanning several slots or a nested table."""
    if len(table.css("table")) > 1:
        return True
    return any(rules.span_value(cell.attributes, name) > 1
               for cell in table.css("td, th") for name in ("colspan", "rowspan"))


def is_layout(table, cells: list) -> bool:
    """Whether a table lays out a page rather than holding data: `role="presentation"` or
    `"none"`, a single cell, or a cell holding a heading, a quote or several paragraphs (content
    a GFM cell cannot hold). Beyond the reference, after Readability's data-table test."""
    if (table.attributes.get("role") or "").strip().lower() in ("presentation", "none"):
        return True
    if len(cells) == 1:
        return not _direct(table, ("caption",))
    return any(cell.css_first(LAYOUT_CONTENT) is not None or len(cell.css("p")) >= 2
               for cell in cells)


def emit_table(cleaner, table, stack: list) -> None:
    """Emit a table into `cleaner` (clean.Cleaner) by the rules above; `stack` is its walk.

    A layout table (`is_layout`) is no data: each cell's content is emitted as a container
    (beyond the reference; docs/webmd.md).
    """
    if cleaner.cell_depth or cleaner.fragment_depth > MAX_FRAGMENT_DEPTH:
        # A table inside a flattened cell: html-to-markdown writes it as the cell's text.
        cleaner.open(table, "table", "", stack)
        return
    cells = [cell for row in rows_of(table) for cell in _direct(row, CELL_TAGS)]
    if is_layout(table, cells):
        for cell in reversed(cells):
            stack.append(lambda cell=cell: _emit_layout_cell(cleaner, cell, stack))
        return
    if is_complex(table) and cleaner.options.tables == "html":
        emit_raw(cleaner, table)
        return
    caption = _direct(table, ("caption",))
    if caption:
        cleaner.out.append(f"<p>{cleaner.fragment(caption[0], in_cell=False)}</p>")
        caption[0].decompose()
    if is_complex(table):
        emit_flattened(cleaner, table)
    else:
        for row in rows_of(table)[:1]:
            cleaner.header_cells.update(cell.mem_id for cell in _direct(row, CELL_TAGS))
        cleaner.open(table, "table", "", stack)


def _emit_layout_cell(cleaner, cell, stack: list) -> None:
    """A layout table's cell as a container, unless a removal rule drops it."""
    if not cleaner.removed(cell, cell.tag, cell.attributes):
        cleaner.open(cell, "div", "", stack)


def _direct(node, tags: tuple) -> list:
    """The children of `node` whose tag is in `tags` (tuple of str), in order."""
    found, child = [], node.child
    while child is not None:
        if child.tag in tags:
            found.append(child)
        child = child.next
    return found


def rows_of(table) -> list:
    """The `tr` elements of this table (not of nested tables), in document order."""
    rows = []
    for child in _direct(table, ("tr", *SECTION_TAGS)):
        rows.extend([child] if child.tag == "tr" else _direct(child, ("tr",)))
    return rows


def grid_of(cleaner, table) -> list[list[tuple[str, str]]]:
    """The table as rows of `(tag, cleaned cell HTML)`, a spanned cell copied into each slot.

    Source: mm-tools.md §fetch_content, field `tables` (`flatten`).
    """
    slots: dict[tuple[int, int], tuple[str, str]] = {}
    kept_rows = [tr for tr in rows_of(table) if not cleaner.removed(tr, "tr", tr.attributes)]
    for r, tr in enumerate(kept_rows):
        c = 0
        for cell in _direct(tr, CELL_TAGS):
            if cleaner.removed(cell, cell.tag, cell.attributes):
                continue
            while (r, c) in slots:
                c += 1
            content = (cell.tag, cleaner.fragment(cell))
            rowspan = min(rules.span_value(cell.attributes, "rowspan"), len(kept_rows) - r)
            colspan = rules.span_value(cell.attributes, "colspan")
            for dr in range(rowspan):
                for dc in range(colspan):
                    slots[(r + dr, c + dc)] = content
            c += colspan
    if not slots:
        return []
    height = max(r for r, _ in slots) + 1
    width = max(c for _, c in slots) + 1
    return [[slots.get((r, c), ("td", "")) for c in range(width)] for r in range(height)]


def emit_flattened(cleaner, table) -> None:
    """Emit a span-free copy of `table` for html-to-markdown to render as GFM."""
    rows = grid_of(cleaner, table)
    rows[:1] = [[("th", h) for _, h in row] for row in rows[:1]]
    html = "".join("<tr>" + "".join(f"<{t}>{h}</{t}>" for t, h in row) + "</tr>" for row in rows)
    cleaner.out.append(f"<table>{html}</table>" if rows else "")
    cleaner.line_start = True


def emit_raw(cleaner, table) -> None:
    """Keep `table` as raw HTML: a placeholder paragraph now, the HTML in `raw_blocks`."""
    out: list[str] = []
    RawTable(cleaner, out).run(table)
    cleaner.out.append(f"<div>{BLOCK_OPEN}{len(cleaner.raw_blocks)}{BLOCK_CLOSE}</div>")
    cleaner.raw_blocks.append(_BLANK_LINES.sub("\n", "".join(out)).strip())
    cleaner.line_start = True


class RawTable:
    """Serialises a table as clean HTML: removal rules, attribute whitelist, resolved links.
    Iterative (a stack, not recursion), as tables nest without limit in real pages.

    Source: mm-tools.md §fetch_content, rows "Removed" and "Attributes".
    """

    def __init__(self, cleaner, out: list[str]):
        self.cleaner, self.out, self.pre = cleaner, out, 0
        self.stack: list = []

    def run(self, table) -> None:
        """Append the HTML of `table` (selectolax node) to the output list."""
        self.stack.append((table, ""))
        while self.stack:
            item = self.stack.pop()
            if callable(item):
                item()
            else:
                self.node(*item)

    def node(self, node, parent: str) -> None:
        """Append the HTML of `node` whose parent tag is `parent` (str)."""
        tag = node.tag
        if tag == "-text":
            self.text(node.text_content or "", parent)
        elif tag and not tag.startswith("-"):
            self.element(node, tag.lower())

    def text(self, text: str, parent: str) -> None:
        """Text: whitespace collapsed outside `pre`, dropped between table structure tags."""
        if not self.pre and not text.strip() and (
                parent in STRUCTURE_TAGS or not self.out or self.out[-1][-1:].isspace()
                or self.out[-1].startswith(_BLOCK_EDGES)):
            return
        text = plain(text) if self.pre else _SPACES.sub(" ", plain(text))
        self.out.append(html_escape(text, quote=False))

    def children(self, node, tag: str, closing: str = "", pre: bool = False) -> None:
        """Queue the children of `node` (its tag is `tag`), then `closing` (str)."""
        def close() -> None:
            self.pre -= pre
            self.out.append(closing)

        self.pre += pre
        self.stack.append(close)
        children, child = [], node.child
        while child is not None:
            children.append((child, tag))
            child = child.next
        self.stack.extend(reversed(children))

    def element(self, node, tag: str) -> None:
        """Append an element with its whitelisted attributes, or only its content."""
        attrs = node.attributes
        if self.cleaner.removed(node, tag, attrs):
            return
        if tag == "a":
            return self.anchor(node, attrs)
        if tag == "img":
            src = image_source(attrs.get("src"), self.cleaner.options.base_url)
            alt = html_escape(plain(attrs.get("alt") or ""))
            self.out.append(f'<img src="{html_escape(src)}" alt="{alt}">' if src else alt)
            return
        if tag not in RAW_TAGS:
            return self.children(node, tag)
        self.out.append(f"<{tag}{self.attributes(tag, attrs)}>" + ("\n" if tag == "table" else ""))
        if tag not in VOID_TAGS:
            end = "\n" if tag in ("tr", "caption", "table") else ""
            self.children(node, tag, f"</{tag}>{end}", pre=tag == "pre")

    def anchor(self, node, attrs: dict) -> None:
        """A link with its resolved `href`; text only for `javascript:`; the URL without text."""
        target = link_target(attrs.get("href"), self.cleaner.options.base_url)
        if target is None:
            return self.children(node, "a")
        self.out.append(f'<a href="{html_escape(target)}">')
        if node.text().strip() or node.css_first("img") is not None:
            return self.children(node, "a", "</a>")
        self.out.append(f"{html_escape(target)}</a>")

    @staticmethod
    def attributes(tag: str, attrs: dict) -> str:
        """The whitelisted attributes of a raw element, as HTML text."""
        names = ("colspan", "rowspan") if tag in CELL_TAGS else ("start",) if tag == "ol" else ()
        if tag in ("pre", "code"):
            lang = rules.code_language(attrs)
            return f' class="language-{html_escape(lang)}"' if lang else ""
        return "".join(f' {n}="{html_escape(attrs[n].strip())}"' for n in names if attrs.get(n))
