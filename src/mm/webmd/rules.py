"""Which elements fetch_content removes, and which attributes it keeps.

Source: mm-tools.md §fetch_content, rows "Removed" and "Attributes".
"""

from __future__ import annotations

import re

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

# Class/id words (a token split on "-" and "_"), with a few plural and derived variants.
CLASS_WORDS = frozenset({
    "ad", "ads", "advert", "adverts", "advertisement", "advertisements", "advertising",
    "sponsor", "sponsors", "sponsored", "promo", "promos", "promoted", "cookie", "cookies",
    "cookiebanner", "consent", "gdpr", "newsletter", "newsletters", "subscribe", "popup", "popups",
    "modal", "share", "sharing", "sharebar", "social", "breadcrumb", "breadcrumbs", "nav",
    "navbar", "navigation", "menu", "sidebar", "sidebars", "skiplink", "skiplinks",
})

# An element matched by class/id is kept when it is or contains one of these.
KEEP_SELECTOR = "main, article, h1"
KEEP_TAGS = frozenset({"main", "article", "h1"})

# Never removed by a class/id word: they hold the whole page.
NEVER_MATCHED = frozenset({"html", "body", "main", "article"})

_WORD_SPLIT = re.compile(r"[-_]+")
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


def class_or_id_word(tag: str, attrs: dict) -> bool:
    """Whether a word of the element's class or id is one of `CLASS_WORDS`.

    A word is a whole class token, or a part of one split on `-` and `_` ('download' does not
    match 'ad'; 'ad-slot' does), except in a layout token (`LAYOUT_PREFIXES`). The keep rule
    (`KEEP_SELECTOR`) is the caller's.
    Source: mm-tools.md §fetch_content, row "Removed".
    """
    if tag in NEVER_MATCHED:
        return False
    for name in ("class", "id"):
        value = attrs.get(name)
        if not value:
            continue
        for token in value.lower().split():
            if token in CLASS_WORDS:
                return True
            words = _WORD_SPLIT.split(token)
            if words[0] not in LAYOUT_PREFIXES and any(w in CLASS_WORDS for w in words):
                return True
    return False


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
