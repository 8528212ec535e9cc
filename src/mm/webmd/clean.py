"""Cleaning the parsed page into the HTML that html-to-markdown converts.

One walk over the HTML5 tree (lexbor, through selectolax) drops the removed elements, keeps the
whitelisted attributes, resolves links and images, escapes text for Markdown, maps code-like
and unknown elements, and hands tables to `tables`. Sources: mm-tools.md §fetch_content, rows
"Removed", "Attributes", "Conversion", "Unknown element", "Escaping".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape as html_escape

from . import rules
from .cancel import CHECK_EVERY, check
from .escape import ends_line, escape_text, plain
from .handlers import HANDLERS
from .tree import heading_text, holders, push_children

# Elements passed to html-to-markdown under their own name.
KEPT_TAGS = frozenset({
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "b", "em", "i", "blockquote", "ul", "ol",
    "li", "div", "thead", "tbody", "tfoot", "tr", "td", "th",
})
# Structural elements with no Markdown form of their own: containers.
CONTAINER_TAGS = frozenset({
    "html", "body", "section", "article", "main", "header", "footer", "figure", "figcaption",
    "address", "details", "summary", "dl", "dt", "dd", "center", "form", "fieldset", "legend",
    "hgroup", "search", "caption", "noframes",
})
LIST_ALIASES = {"menu": "ul", "dir": "ul"}
INLINE_CODE_TAGS = frozenset({"code", "kbd", "samp", "tt"})
STRIKE_TAGS = frozenset({"del", "s", "strike"})
BLOCK_SELECTOR = ("p, div, h1, h2, h3, h4, h5, h6, ul, ol, li, table, pre, blockquote, hr, "
                  "section, article, main, header, footer, figure, dl, form, address, details")
# Their text does not start a Markdown line (a heading's text, a cell's text).
NO_LINE_START = frozenset({"h1", "h2", "h3", "h4", "h5", "h6", "td", "th"})
ARTICLE_TAGS = frozenset({"article", "main"})
# html-to-markdown skips nodes deeper than 1024; deeper elements keep only their content.
MAX_DEPTH = 512
_HTML_SPACES = re.compile(r"[ \t\n\r\f]+")


@dataclass(frozen=True)
class Options:
    """What the caller chose: base_url (str | None), tables ("html" | "flatten"),
    strikethrough (bool), task_list (bool). Source: mm-tools.md §fetch_content fields."""

    base_url: str | None = None
    tables: str = "html"
    strikethrough: bool = False
    task_list: bool = False


class Cleaner:
    """Serialises a cleaned copy of a page; `raw_blocks` holds the HTML kept verbatim (tables
    with spans), referenced from the output by placeholders."""

    def __init__(self, options: Options, cancelled=None):
        """`cancelled` (with `is_set()`, or None): when set, the walk raises
        cancel.ConversionCancelled."""
        self.options = options
        self.cancelled = cancelled
        self.visited = 0
        self.out: list[str] = []
        self.raw_blocks: list[str] = []
        self.line_start = True
        self.li_start = False
        self.code_depth = 0
        self.cell_depth = 0
        self.article_depth = 0
        self.depth = 0
        self.fragment_depth = 0
        self.header_cells: set[int] = set()  # mem_id of the cells of a table's first row
        self.holds_block: set[int] = set()  # mem_id of the elements holding a block element
        self.holds_keeper: set[int] = set()  # … that are or hold a main, article or h1

    def run(self, root) -> str:
        """The cleaned HTML (str) of the tree under `root` (a selectolax node)."""
        self.holds_block = holders(root, BLOCK_SELECTOR, include_self=False)
        self.holds_keeper = holders(root, rules.KEEP_SELECTOR, include_self=True)
        self.walk_children(root)
        return "".join(self.out)

    def fragment(self, node, in_cell: bool = True) -> str:
        """The cleaned HTML (str) of the children of `node`, without adding it to the output;
        `in_cell` (bool): the children are a table cell's (else a caption's, a line start)."""
        mark, saved = len(self.out), (self.line_start, self.li_start)
        self.cell_depth += in_cell
        self.fragment_depth += 1
        self.line_start, self.li_start = not in_cell, False
        self.walk_children(node)
        self.cell_depth -= in_cell
        self.fragment_depth -= 1
        self.line_start, self.li_start = saved
        text = "".join(self.out[mark:])
        del self.out[mark:]
        return text

    def walk_children(self, node) -> None:
        """Visit the children of `node` in document order, without recursion (deep pages)."""
        stack: list = []
        push_children(stack, node)
        while stack:
            item = stack.pop()
            if callable(item):
                item()
            else:
                self.visited += 1
                if self.visited % CHECK_EVERY == 0:
                    check(self.cancelled)
                self.visit(item, stack)

    def visit(self, node, stack: list) -> None:
        """Emit one node; push its children and closing action on `stack`."""
        tag = node.tag
        if tag == "-text":
            self.text(node.text_content or "")
        elif tag and not tag.startswith("-"):
            self.element(node, tag.lower(), stack)

    def text(self, text: str) -> None:
        """Emit a text node: escaped for Markdown outside code, HTML-escaped always. Outside
        code, runs of HTML whitespace become one space (HTML renders them so; html-to-markdown
        would keep each newline of an indented source)."""
        if self.code_depth:
            self.out.append(html_escape(plain(text), quote=False))
            return
        text = _HTML_SPACES.sub(" ", text)
        self.out.append(html_escape(escape_text(text, self.line_start), quote=False))
        if text.strip():
            self.li_start = False
        self.line_start = ends_line(text, self.line_start)

    def element(self, node, tag: str, stack: list) -> None:
        """Emit an element, or nothing when a rule removes it."""
        attrs = node.attributes
        if self.removed(node, tag, attrs):
            return
        handler = HANDLERS.get(tag)
        if self.code_depth and tag != "br":
            push_children(stack, node)  # code holds text only
        elif handler:
            handler(self, node, attrs, stack)
        elif tag in KEPT_TAGS or tag in CONTAINER_TAGS or tag in LIST_ALIASES:
            self.block_or_kept(node, tag, attrs, stack)
        elif tag in INLINE_CODE_TAGS:
            self.inline_code(node, stack)
        elif tag in STRIKE_TAGS and self.options.strikethrough:
            self.open(node, "del", "", stack, inline=True)
        elif tag not in STRIKE_TAGS and node.mem_id in self.holds_block:
            self.open(node, "div", "", stack)
        else:
            push_children(stack, node)

    def removed(self, node, tag: str, attrs: dict) -> bool:
        """Whether a rule of the "Removed" row drops this element (with its content)."""
        if rules.removed_by_markup(tag, attrs, self.article_depth > 0):
            return True
        return (rules.class_or_id_word(tag, attrs, lambda: heading_text(node, tag))
                and node.mem_id not in self.holds_keeper)

    def open(self, node, name: str, attrs: str, stack: list, inline: bool = False,
             after=None) -> None:
        """Emit `<name attrs>`, then the children, then `</name>` (and `after()`). Past
        `MAX_DEPTH` open elements only the children are emitted."""
        block = not inline
        tags = self.depth < MAX_DEPTH
        self.out.append(f"<{name}{attrs}>" if tags else " ")
        self.depth += 1
        self.line_start = block and name not in NO_LINE_START

        def close() -> None:
            self.depth -= 1
            self.out.append(f"</{name}>" if tags else " ")
            if block:
                self.line_start = True
            if after:
                after()

        stack.append(close)
        push_children(stack, node)

    def block_or_kept(self, node, tag: str, attrs: dict, stack: list) -> None:
        """A kept or container element; `ol[start]` and cell spans are its only attributes."""
        name = LIST_ALIASES.get(tag, tag if tag in KEPT_TAGS else "div")
        if tag == "td" and node.mem_id in self.header_cells:
            name = "th"
        attr_text = ""
        if tag == "ol" and (attrs.get("start") or "").strip().lstrip("-").isdigit():
            attr_text = f' start="{attrs["start"].strip()}"'
        after = None
        if tag in ARTICLE_TAGS:
            self.article_depth += 1
            after = self._leave_article
        elif tag in ("td", "th"):
            self.cell_depth += 1
            after = self._leave_cell
        if tag == "li":
            self.li_start = True
        inline = tag in ("strong", "b", "em", "i")
        self.open(node, name, attr_text, stack, inline=inline, after=after)

    def _leave_article(self) -> None:
        self.article_depth -= 1

    def _leave_cell(self) -> None:
        self.cell_depth -= 1

    def _leave_code(self) -> None:
        self.code_depth -= 1

    def inline_code(self, node, stack: list) -> None:
        """`code`/`kbd`/`samp`/`tt` → a code span (plain text inside a `pre`)."""
        if self.code_depth:
            push_children(stack, node)
            return
        self.code_depth += 1
        self.open(node, "code", "", stack, inline=True, after=self._leave_code)


