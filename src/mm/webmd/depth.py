"""Capping the nesting of a page before it is parsed (issue 10 §9; docs/webmd.md §Deep nesting).

lexbor's HTML5 parser spends time proportional to the depth of the open elements on every block
start tag (the standard's "has a `p` element in button scope" walks the stack of open elements),
so a page of 200,000 nested `<div>` took 106 s. Browsers bound the depth (Chrome's parser
stops nesting at 512); so does mm, on the text, before parsing: one linear scan over the tags
keeps a model of the stack of open elements, and the start and end tags of an element that
would open deeper than `MAX_DEPTH` are dropped — its content is kept, one level up.

The model follows the standard's tree construction in the cases that keep a stack from
growing: void elements, raw text (`script`, `style`, `textarea`, `title`, …) and comments;
an end tag closes the elements opened after its own start tag (one that closes nothing open is
ignored, and so is one for `html`, `body` or `head`); elements whose end tag may be left out
close as the standard says (a `p` before a block, an `li` before the next `li`, table cells and
rows, `dt`/`dd`, `option`); an `a`, `button` or `nobr` closes the open one; `/>` closes an
element only inside `svg` or `math`. It is a model: on a page where it counts deeper than the
parser would, elements may be dropped that the parser would have kept, never the text.
"""

from __future__ import annotations

import re
from typing import Any

from .cancel import CHECK_EVERY, check

MAX_DEPTH = 512  # open elements at most (Chrome's parser: 512)
MAX_FORMATTING = 8  # formatting elements left open at most (`<b>` never closed, …)

VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
                  "wbr", "param", "keygen", "basefont", "bgsound", "frame", "image"})
RAW_TEXT = frozenset({"script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "plaintext"})
# The standard's formatting elements: one left open is opened again in every block that follows.
FORMATTING = frozenset({"a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt",
                        "u"})
NEVER_CLOSED = frozenset({"html", "body", "head"})  # their end tags change modes, not the stack
# Start tags that close an open `p` (the standard's "close a p element" in button scope).
CLOSES_P = frozenset({"address", "article", "aside", "blockquote", "center", "details", "dialog", "dir", "div",
                      "dl", "fieldset", "figcaption", "figure", "footer", "header", "hgroup", "main", "menu", "nav",
                      "ol", "p", "search", "section", "summary", "ul", "h1", "h2", "h3", "h4", "h5", "h6", "pre",
                      "listing", "form", "table", "hr", "xmp", "li", "dd", "dt", "plaintext"})
HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
SCOPE = ("html", "table", "td", "th", "caption", "object", "applet", "marquee", "template")  # the standard's scope
TABLE_PARTS = frozenset({"tr", "thead", "tbody", "tfoot", "caption", "colgroup"})  # closed in table scope
_CELLS = ("td", "th", "tr")
_SECTIONS = ("thead", "tbody", "tfoot") + _CELLS
# A start tag of the key closes the last open element with a name of the first tuple, when it
# is open inside the last one named in the second tuple and (with the third item) in SCOPE.
IMPLIED = {
    "li": (("li",), ("ul", "ol", "menu"), True), "dt": (("dt", "dd"), ("dl",), True),
    "dd": (("dt", "dd"), ("dl",), True), "button": (("button",), (), True), "option": (("option",), ("select", "datalist"), True),
    "optgroup": (("optgroup", "option"), ("select",), True),
    "td": (_CELLS, ("table",), False), "th": (_CELLS, ("table",), False), "tr": (_CELLS, ("table",), False),
    "thead": (_SECTIONS, ("table",), False), "tbody": (_SECTIONS, ("table",), False),
    "tfoot": (_SECTIONS, ("table",), False),
}

_ATTRIBUTES = r"""(?:[^>="']++|=[\t\n\f\r ]*+(?:"[^"]*+"|'[^']*+')?|["'])*+"""  # quoted values may hold `>`
# The start of a comment, of a bogus comment (`<!DOCTYPE …>`, `<?…>`), or a whole start or end tag.
_TAG = re.compile(rf"<(?:(!--)|[!?]|(/?)([a-z][^\t\n\f\r />]*+){_ATTRIBUTES}>)", re.I)
_RAW_END = {name: re.compile(f"</{name}[\t\n\f\r />]", re.I) for name in RAW_TEXT}


def cap_depth(html: str, cancelled: Any = None) -> str:
    """`html` (str) without the start and end tags of the elements that would open deeper than
    MAX_DEPTH, and of the formatting elements left open past MAX_FORMATTING (their content kept),
    in one pass linear in its length; the same string when nothing is that deep.
    Raises cancel.ConversionCancelled when `cancelled` (with `is_set()`) is set meanwhile.
    Source: docs/webmd.md §Deep nesting."""
    if html.count("<") <= MAX_FORMATTING:  # not enough tags to nest that deep
        return html
    stack, parts, kept_from, at, count = _Stack(), [], 0, 0, 0
    search = _TAG.search
    while (token := search(html, at)) is not None:
        count += 1
        if count % CHECK_EVERY == 0:
            check(cancelled)
        comment, end, name = token.groups()
        if name is None:  # skip a comment to its `-->`, a bogus one to its `>`
            close = html.find("-->" if comment else ">", token.end())
            at = len(html) if close < 0 else close + (3 if comment else 1)
            continue
        at = token.end()
        name = name.lower()
        if end:
            dropped = stack.close(name)
        else:
            dropped = stack.open(name, self_closing=html[at - 2] == "/")
            if name in RAW_TEXT:  # its text holds no tags
                found = _RAW_END[name].search(html, at) if name != "plaintext" else None
                at = len(html) if found is None else found.start()
        if dropped:
            parts.append(html[kept_from:token.start()])
            kept_from = at
    if not parts:
        return html
    parts.append(html[kept_from:])
    return "".join(parts)


class _Stack:
    """The open elements: their names, whether each was dropped, and where each name is (so that
    finding the last open element of a name costs nothing, however deep)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.dropped: list[bool] = []
        self.where: dict[str, list[int]] = {}
        self.scopes: list[int] = [-1]  # where the open elements named in SCOPE are
        self.kept = 0  # open elements not dropped
        self.formatting: dict[str, list[bool]] = {}  # the formatting elements left open, dropped or not
        self.kept_formatting = 0

    def open(self, name: str, self_closing: bool) -> bool:
        """A start tag: close what it implies, then open it; returns whether its tag is dropped."""
        if name in FORMATTING:
            return self.open_formatting(name)
        if name in CLOSES_P:
            p = self.last("p")
            if p > self.scopes[-1] and p > self.last("button"):
                self.pop_to(p)
        if name in HEADINGS and self.names and self.names[-1] in HEADINGS:
            self.pop_to(len(self.names) - 1)
        implied = IMPLIED.get(name)
        if implied is not None:
            closes, bounds, in_scope = implied
            found = self.last(*closes)
            if found >= 0 and found > (self.scopes[-1] if in_scope else -1) and found > self.last(*bounds):
                self.pop_to(found)
        if name in VOID or name in RAW_TEXT or (self_closing and self.last("svg", "math") >= 0):
            return False  # not left open: kept at any depth
        return self.push(name)

    def open_formatting(self, name: str) -> bool:
        """A formatting element's start tag (an `a` or `nobr` closes the one left open); returns
        whether it is dropped: MAX_FORMATTING of them are left open. They are counted apart from
        the stack: the standard opens them again in each block, until their end tag."""
        left = self.formatting.setdefault(name, [])
        if name in ("a", "nobr") and left:
            self.kept_formatting -= not left.pop()
        dropped = self.kept_formatting >= MAX_FORMATTING
        left.append(dropped)
        self.kept_formatting += not dropped
        return dropped

    def close(self, name: str) -> bool:
        """An end tag: close its element and those opened after it; returns whether it is dropped."""
        if name in FORMATTING:
            left = self.formatting.get(name)
            if not left:
                return False
            dropped = left.pop()
            self.kept_formatting -= not dropped
            return dropped
        if name in NEVER_CLOSED:
            return False
        found = self.last(*HEADINGS) if name in HEADINGS else self.last(name)
        bound = self.last("table", "template") if name in TABLE_PARTS else self.scopes[-1]
        if found < 0 or (found < bound and name not in SCOPE):
            return False
        return self.pop_to(found)

    def last(self, *names: str) -> int:
        """The index of the last open element with one of `names`, or -1."""
        found = -1
        for name in names:
            at = self.where.get(name)
            if at and at[-1] > found:
                found = at[-1]
        return found

    def push(self, name: str) -> bool:
        """Open `name`; returns whether it is dropped (MAX_DEPTH elements are open)."""
        dropped = self.kept >= MAX_DEPTH
        at = self.where.get(name)
        if at is None:
            at = self.where[name] = []
        at.append(len(self.names))
        if name in SCOPE:
            self.scopes.append(len(self.names))
        self.names.append(name)
        self.dropped.append(dropped)
        if not dropped:
            self.kept += 1
        return dropped

    def pop_to(self, index: int) -> bool:
        """Close the elements from `index` on; returns whether the one at `index` was dropped."""
        dropped = self.dropped[index]
        names, where, was_dropped = self.names, self.where, self.dropped
        while len(names) > index:
            name = names.pop()
            where[name].pop()
            if name in SCOPE:
                self.scopes.pop()
            if not was_dropped.pop():
                self.kept -= 1
        return dropped
