"""The elements that need more than their tag: `pre`, `a`, `img`, `br`, `hr`, checkboxes,
MathML and tables. Each handler takes the `clean.Cleaner`, the selectolax node, its attributes
(dict) and the walk's stack. Source: mm-tools.md §fetch_content, row "Conversion".
"""

from __future__ import annotations

from html import escape as html_escape

from . import rules, tables
from .escape import CELL_BREAK, escape_text, plain
from .links import image_source, link_target
from .tree import has_content, push_children


def pre(cleaner, node, attrs: dict, stack: list) -> None:
    """`pre` → fenced block, info string from a `language-x`/`lang-x` class of the `pre` or
    of its `code`."""
    code = node.css_first("code")
    lang = rules.code_language(attrs) or (code and rules.code_language(code.attributes))
    cleaner.code_depth += 1
    cleaner.out.append("<pre>")
    closing = "</pre>"
    if lang:
        cleaner.out.append(f'<code class="language-{html_escape(lang)}">')
        closing = "</code></pre>"

    def close() -> None:
        cleaner.out.append(closing)
        cleaner.code_depth -= 1
        cleaner.line_start = True

    stack.append(close)
    push_children(stack, node)


def anchor(cleaner, node, attrs: dict, stack: list) -> None:
    """`a` → link; text only for `javascript:`; the URL as text when none is left once the
    removal rules ran (a share link whose label was screen-reader-only shows its URL)."""
    target = link_target(attrs.get("href"), cleaner.options.base_url)
    if target is None:
        push_children(stack, node)
        return
    href = f' href="{html_escape(target)}"'
    mark = len(cleaner.out)

    def url_if_empty() -> None:
        if not has_content("".join(cleaner.out[mark + 1:-1])):
            del cleaner.out[mark:]
            cleaner.out.append(f"<a{href}>{html_escape(escape_text(target, False))}</a>")

    cleaner.open(node, "a", href, stack, inline=True, after=url_if_empty)


def image(cleaner, node, attrs: dict, stack: list) -> None:
    """`img` → image; alt text only for a `data:` URI or no source."""
    src = image_source(attrs.get("src"), cleaner.options.base_url)
    alt = attrs.get("alt") or ""
    if src is None:
        if alt.strip():
            cleaner.text(alt)
        return
    cleaner.out.append(f'<img src="{html_escape(src)}" alt="{html_escape(plain(alt))}">')
    cleaner.line_start = cleaner.li_start = False


def line_break(cleaner, node, attrs: dict, stack: list) -> None:
    """`br` → hard break (`<br>` inside a table cell, a newline inside code)."""
    if cleaner.code_depth:
        cleaner.out.append("\n")
    else:
        cleaner.out.append(CELL_BREAK if cleaner.cell_depth else "<br>")
        cleaner.line_start = True


def rule(cleaner, node, attrs: dict, stack: list) -> None:
    """`hr` → `---`."""
    cleaner.out.append("<hr>")
    cleaner.line_start = True


def checkbox(cleaner, node, attrs: dict, stack: list) -> None:
    """A checkbox starting a list item → `[ ] `/`[x] ` with taskList; else dropped."""
    if cleaner.options.task_list and cleaner.li_start:
        cleaner.out.append("[x] " if "checked" in attrs else "[ ] ")
        cleaner.li_start = cleaner.line_start = False


def math(cleaner, node, attrs: dict, stack: list) -> None:
    """MathML → its TeX annotation as a code span when it has one, else its text (beyond
    the reference: token-per-element MathML text reads as noise; docs/webmd.md)."""
    tex = node.css_first('annotation[encoding="application/x-tex"]')
    if tex is None:
        push_children(stack, node)
        return
    cleaner.out.append(f"<code>{html_escape(plain(tex.text()).strip(), quote=False)}</code>")
    cleaner.line_start = cleaner.li_start = False


def table(cleaner, node, attrs: dict, stack: list) -> None:
    """Tables: see `tables.emit_table`."""
    tables.emit_table(cleaner, node, stack)


HANDLERS = {
    "pre": pre, "a": anchor, "img": image, "br": line_break, "hr": rule, "input": checkbox,
    "table": table, "math": math,
}
