"""Small helpers over the selectolax tree and the cleaned HTML."""

from __future__ import annotations

import re

_TAGS = re.compile(r"<[^>]*>")
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
HEADING_LOOKS = 3  # element children of a section looked at for its heading (an anchor `span` may come first)


def has_content(html: str) -> bool:
    """Whether cleaned HTML (str) shows anything: text other than blanks, or an image."""
    return "<img" in html or bool(_TAGS.sub("", html).strip())


def holders(root, selector: str, include_self: bool) -> set[int]:
    """The mem_id of every element under `root` that holds a match of `selector` (str), and of
    the matches themselves with `include_self` (bool). One pass up from each match, stopping at
    an ancestor already seen: linear in the page, where a `css_first` per element is quadratic
    on deeply nested pages."""
    found: set[int] = set()
    for match in root.css(selector):
        if include_self:
            found.add(match.mem_id)
        parent = match.parent
        while parent is not None and parent.mem_id not in found:
            found.add(parent.mem_id)
            parent = parent.parent
    return found


def push_children(stack: list, node) -> None:
    """Push the children of `node` on `stack` (list) so that they pop in document order."""
    children = []
    child = node.child
    while child is not None:
        children.append(child)
        child = child.next
    stack.extend(reversed(children))


def heading_text(node, tag: str) -> str:
    """The text of the heading an element names: its own when it is a heading (`tag`, lower
    case), else that of a heading among its first HEADING_LOOKS element children, else ""."""
    if tag in HEADINGS:
        return node.text() or ""
    child, looked = node.child, 0
    while child is not None and looked < HEADING_LOOKS:
        if child.tag and not child.tag.startswith("-"):
            if child.tag.lower() in HEADINGS:
                return child.text() or ""
            looked += 1
        child = child.next
    return ""
