"""Which elements fetch_content removes, and which attributes it keeps.

Source: mm-tools.md §fetch_content, rows "Removed" and "Attributes".
"""

from __future__ import annotations

import re
from typing import Callable

REMOVED_TAGS = frozenset({
    "script", "style", "noscript", "template", "meta", "link", "base", "title", "svg", "canvas",
    "iframe", "object", "embed", "nav", "aside", "dialog", "button", "select", "textarea", "head",
})

REMOVED_ROLES = frozenset({
    "navigation", "banner", "complementary", "search", "contentinfo", "dialog",
})

# Whole class tokens for text meant only for screen readers (no keep rule).
HIDDEN_CLASSES = frozenset({
    "sr-only", "visually-hidden", "screen-reader-text", "visuallyhidden", "screenreader-text",
    "sr-only-focusable", "skip-link", "skip-links", "skiplink", "skiplinks", "skip-to-content",
})

# Class/id words, the reference's list, and their few variants: the plurals of its nouns (a class
# `cookies` or `sidebars` names the same thing). Never a longer word that starts with one:
# `sharing`, `shadow`, `download`, `advertisement`, `menuitem` are not matched (docs/webmd.md).
LISTED_WORDS = frozenset({
    "ad", "ads", "advert", "sponsor", "promo", "cookie", "consent", "gdpr", "newsletter", "subscribe", "popup",
    "modal", "share", "social", "breadcrumb", "nav", "navbar", "navigation", "menu", "sidebar", "skiplink",
})
PLURALS = frozenset({
    "adverts", "sponsors", "promos", "cookies", "newsletters", "popups", "modals", "socials", "breadcrumbs", "navbars",
    "menus", "sidebars", "skiplinks",
})
CLASS_WORDS = LISTED_WORDS | PLURALS

# An element matched by class/id is kept when it is or contains one of these.
KEEP_SELECTOR = "main, article, h1"
KEEP_TAGS = frozenset({"main", "article", "h1"})

# Never removed by a class/id word: they hold the whole page.
NEVER_MATCHED = frozenset({"html", "body", "main", "article"})

# The words of a class or id token (lower case): its runs of letters and digits; anything else
# (`-`, `_`, `.`, `:`, …) separates them. Neither camelCase nor digits split a word: MathJax marks
# every formula `CtxtMenu_Attached_0`, which would read as a menu, and generated ids such as
# `uocnys3ad1` would hold an `ad`; `sphinxsidebar` is one word.
_WORDS = re.compile(r"[^\W_]+")
# A token starting with one of these words names the layout around the element
# ('l-sidebar-fixed', 'has-sidebar'), not the element itself (corpus page videos-1).
LAYOUT_PREFIXES = frozenset({"l", "layout", "has", "with", "no"})


def removed_by_markup(tag: str, attrs: dict, in_article: bool) -> bool:
    """Whether an element is removed for its tag, role, hidden state or screen-reader class.

    Args: tag (str): lower-case tag name; attrs (dict): its attributes; in_article (bool):
    whether an `article` or `main` is an ancestor.
    Returns: True when the element and its content are dropped.
    Source: mm-tools.md §fetch_content, row "Removed".
    """
    if tag in REMOVED_TAGS:
        return True
    if tag == "footer" and not in_article:
        return True
    if tag == "input" and (attrs.get("type") or "").strip().lower() != "checkbox":
        return True
    if "hidden" in attrs or (attrs.get("aria-hidden") or "").strip().lower() == "true":
        return True
    role = attrs.get("role")
    if role and any(r in REMOVED_ROLES for r in role.lower().split()):
        return True
    classes = attrs.get("class")
    return bool(classes) and any(c in HIDDEN_CLASSES for c in classes.lower().split())


def words_of(token: str) -> list[str]:
    """The lower-case words of one class or id token (str): `md-nav__link` → md, nav, link;
    `tocCollapsible` → toccollapsible; `ad300` → ad300. Source: docs/webmd.md §Removal."""
    return _WORDS.findall(token.lower())


def class_or_id_word(tag: str, attrs: dict, heading: Callable[[], str] | None = None) -> bool:
    """Whether a word of the element's class or id is one of `CLASS_WORDS`.

    A word is a whole word of a class or id token (`words_of`): `share-buttons`, `post_share` and
    `ad-slot` match; `sharing-with-a-single-developer`, `download`, `shadow`, `menuitem` and
    `postShare` do not.
    A token starting with a layout word (`LAYOUT_PREFIXES`) is not matched, nor an id that names
    the element's own heading (`heading()`: that heading's text, or "" when it has none) — a
    heading's anchor, as documentation generators write them (`<section id="share-your-work">
    <h2>Share your work</h2>`). The keep rule (`KEEP_SELECTOR`) is the caller's.
    Source: mm-tools.md §fetch_content, row "Removed"; docs/webmd.md §Removal.
    """
    if tag in NEVER_MATCHED:
        return False
    if _names_a_word(attrs.get("class")):
        return True
    ident = attrs.get("id")
    if not _names_a_word(ident):
        return False
    return heading is None or not _is_anchor_of(ident, heading())


def _names_a_word(value: str | None) -> bool:
    """Whether a class or id attribute (`value`) holds a class/id word."""
    for token in (value or "").split():
        words = words_of(token)
        if words and words[0] not in LAYOUT_PREFIXES and any(w in CLASS_WORDS for w in words):
            return True
    return False


def _is_anchor_of(ident: str, heading: str) -> bool:
    """Whether the id `ident` is the anchor of a heading whose text is `heading`: the same words,
    but for a number the generator added to tell two headings apart (`share-1`)."""
    id_words = words_of(ident)
    heading_words = words_of(heading)
    if id_words and id_words[-1].isdigit() and id_words[:-1] == heading_words:
        return True
    return bool(heading_words) and id_words == heading_words


def code_language(attrs: dict) -> str | None:
    """The `x` of a `language-x` or `lang-x` class word of a `pre`/`code`, or None.

    Source: mm-tools.md §fetch_content, row "Attributes".
    """
    for word in (attrs.get("class") or "").split():
        for prefix in ("language-", "lang-"):
            if word.lower().startswith(prefix) and len(word) > len(prefix):
                return word[len(prefix):]
    return None


def span_value(attrs: dict, name: str) -> int:
    """The integer value of a `colspan`/`rowspan` attribute: 1 when absent, invalid or 0, at most
    1000 columns (HTML's limit) or 1000 rows (to bound a flattened table)."""
    try:
        value = int((attrs.get(name) or "1").strip())
    except ValueError:
        return 1
    return max(1, min(value, 1000))
