"""Class and id words are whole words (issue 10 §13; mm-tools.md §fetch_content row "Removed";
docs/webmd.md §Removal), on the markup of real documentation generators: Sphinx, MkDocs Material,
Docusaurus and Hugo themes. A documentation page whose sections had ids such as
`sharing-with-a-single-developer` lost half of its article to the word `share`."""

from __future__ import annotations

import pytest

from mm.webmd import html_to_markdown
from mm.webmd.rules import class_or_id_word, words_of


@pytest.mark.parametrize("token, words", [
    ("md-nav__link", ["md", "nav", "link"]), ("theme-doc-sidebar-menu", ["theme", "doc", "sidebar", "menu"]),
    ("tocCollapsible_ETCw", ["toccollapsible", "etcw"]), ("highlight-python", ["highlight", "python"]),
    ("sphinxsidebar", ["sphinxsidebar"]), ("md:hidden", ["md", "hidden"]), ("ad300", ["ad300"]),
])
def test_the_words_of_a_token(token, words):
    assert words_of(token) == words


@pytest.mark.parametrize("attrs", [
    {"class": "md-nav md-nav--primary"}, {"class": "md-sidebar md-sidebar--primary"}, {"class": "menu__link"},
    {"class": "theme-doc-sidebar-menu menu__list"}, {"class": "share-buttons"}, {"class": "post-share"},
    {"class": "ananke-socials"}, {"class": "theme-doc-breadcrumbs"}, {"id": "cookie-banner"},
    {"class": "x ADS"}, {"class": "widget_newsletter"}, {"class": "social.links"}, {"id": "sidebars"},
])
def test_generator_widgets_are_matched(attrs):
    assert class_or_id_word("div", attrs)


@pytest.mark.parametrize("attrs", [
    {"class": "section"}, {"class": "highlight-python notranslate"}, {"class": "headerlink"},
    {"class": "sphinxsidebar"}, {"class": "sphinxsidebarwrapper"}, {"class": "md-content"},
    {"class": "md-content__inner md-typeset"}, {"class": "tocCollapsible_ETCw theme-doc-toc-mobile"},
    {"id": "sharing-with-a-single-developer"}, {"class": "sharing"}, {"class": "sharebar"},
    {"class": "advertisement"}, {"class": "sponsored"}, {"class": "menuitem"}, {"class": "navigator"},
    {"class": "shadow download"}, {"class": "postShare"}, {"class": "l-sidebar-fixed"},
    {"id": "shares"},  # a page about stocks: a plural that is not the widget
])
def test_longer_words_and_other_names_are_not(attrs):
    assert not class_or_id_word("div", attrs)


def test_an_id_that_is_its_headings_anchor_is_not_matched():
    assert not class_or_id_word("section", {"id": "social-login"}, lambda: "Social login¶")
    assert not class_or_id_word("h2", {"id": "share-2"}, lambda: "Share")  # a second "Share" heading
    assert class_or_id_word("section", {"id": "social-login"}, lambda: "Log in")
    assert class_or_id_word("div", {"id": "share"}, lambda: "")
    assert class_or_id_word("div", {"class": "share", "id": "share"}, lambda: "Share")  # the class still counts


SPHINX = """<!DOCTYPE html><html><head><title>Collaborating</title></head><body>
<div class="related" role="navigation" aria-label="related navigation"><ul><li>RELATED-NAV</li></ul></div>
<div class="document"><div class="documentwrapper"><div class="bodywrapper"><div class="body" role="main">
<section id="collaborating"><h1>Collaborating<a class="headerlink" href="#collaborating" title="Link to this heading">¶</a></h1>
<p>How to work with others.</p>
<section id="sharing-with-a-single-developer"><h2>Sharing with a single developer<a class="headerlink" href="#sharing-with-a-single-developer">¶</a></h2>
<p>SHARING-SECTION-TEXT: give them access.</p>
<div class="highlight-python notranslate"><div class="highlight"><pre><span></span><span class="n">share</span><span class="p">(</span><span class="s2">"repo"</span><span class="p">)</span>
</pre></div></div>
</section>
<div class="section" id="sharing-with-a-team"><h2>Sharing with a team<a class="headerlink" href="#sharing-with-a-team">¶</a></h2>
<p>TEAM-SECTION-TEXT.</p></div>
<section id="social-login"><span id="login-ref"></span><h2>Social login<a class="headerlink" href="#social-login">¶</a></h2>
<p>SOCIAL-LOGIN-TEXT.</p></section>
</section></div></div></div>
<div class="sphinxsidebar" role="navigation" aria-label="main navigation"><div class="sphinxsidebarwrapper">
<h3>Navigation</h3><ul><li>SIDEBAR-TEXT</li></ul></div></div></div>
<div class="footer">FOOTER-TEXT</div></body></html>"""

MKDOCS_MATERIAL = """<!doctype html><html><body>
<header class="md-header" data-md-component="header"><nav class="md-header__inner md-grid">HEADER-NAV</nav></header>
<div class="md-container"><main class="md-main"><div class="md-main__inner md-grid">
<div class="md-sidebar md-sidebar--primary" data-md-component="sidebar"><div class="md-sidebar__scrollwrap">
<div class="md-nav md-nav--primary"><ul class="md-nav__list"><li class="md-nav__item"><a class="md-nav__link" href="/">PRIMARY-NAV</a></li></ul></div></div></div>
<div class="md-sidebar md-sidebar--secondary" data-md-component="sidebar"><div class="md-nav md-nav--secondary">TOC-NAV</div></div>
<div class="md-content" data-md-component="content"><article class="md-content__inner md-typeset">
<h1 id="sharing-projects">Sharing projects</h1><p>INTRO-TEXT.</p>
<h2 id="share-with-your-team">Share with your team<a class="headerlink" href="#share-with-your-team">¶</a></h2>
<p>SHARE-TEAM-TEXT.</p>
<h2 id="social-cards">Social cards</h2><p>SOCIAL-CARDS-TEXT.</p>
</article></div></div></main>
<footer class="md-footer"><div class="md-footer-meta"><div class="md-social"><a class="md-social__link" href="https://x.com/">SOCIAL-TEXT</a></div></div></footer>
</div></body></html>"""

DOCUSAURUS = """<!doctype html><html><body>
<nav aria-label="Main" class="navbar navbar--fixed-top">NAVBAR-TEXT</nav>
<div class="main-wrapper mainWrapper_z2l0"><div class="docsWrapper_hBAB"><div class="docRoot_UBD9">
<aside class="theme-doc-sidebar-container docSidebarContainer_YfHR"><div class="sidebarViewport_aRkj">
<div class="menu thin-scrollbar menu_SIkG"><ul class="theme-doc-sidebar-menu menu__list">
<li class="theme-doc-sidebar-item-link menu__list-item"><a class="menu__link" href="/docs/intro">SIDEBAR-LINK</a></li></ul></div></div></aside>
<main class="docMainContainer_TBSr"><div class="container padding-top--md"><div class="row"><div class="col docItemCol_VOVn">
<div class="docItemContainer_Djhp"><article>
<div class="theme-doc-breadcrumbs breadcrumbsContainer_Z_bl"><ul class="breadcrumbs"><li>BREADCRUMB-TEXT</li></ul></div>
<div class="tocCollapsible_ETCw theme-doc-toc-mobile tocMobile_ITEo"><span>ON-THIS-PAGE</span></div>
<div class="theme-doc-markdown markdown"><header><h1>Sharing your site</h1></header><p>INTRO-TEXT.</p>
<h2 class="anchor anchorWithStickyNavbar_LWe7" id="sharing-with-a-single-developer">Sharing with a single developer<a href="#sharing-with-a-single-developer" class="hash-link">\u200b</a></h2>
<p>DOC-TEXT.</p>
<h2 class="anchor" id="menus-and-navbars">Menus and navbars</h2><p>MENUS-TEXT.</p></div>
</article></div></div></div></div></main></div></div></div>
<footer class="footer footer--dark">FOOTER-TEXT</footer></body></html>"""

HUGO = """<!DOCTYPE html><html><body>
<header class="header"><nav class="nav">HEADER-NAV</nav></header>
<main class="main"><article class="post-single">
<header class="post-header"><h1 class="post-title">Sharing is caring</h1></header>
<div class="post-content"><p>INTRO-TEXT.</p>
<h2 id="share-buttons-in-hugo">Share buttons in Hugo</h2><p>SHARE-HOWTO-TEXT.</p>
<h2 id="sharing-on-social-media">Sharing on social media</h2><p>SOCIAL-HOWTO-TEXT.</p></div>
<footer class="post-footer"><div class="share-buttons"><a href="https://x.com/share">SHARE-BUTTONS</a></div></footer>
</article></main>
<div class="post-share"><a href="https://facebook.com/sharer">POST-SHARE</a></div>
<div class="ananke-socials"><a href="https://github.com/">SOCIALS-TEXT</a></div>
</body></html>"""


@pytest.mark.parametrize("page, kept, gone", [
    (SPHINX, ["# Collaborating", "## Sharing with a single developer", "SHARING-SECTION-TEXT",
              'share("repo")', "## Sharing with a team", "TEAM-SECTION-TEXT", "## Social login",
              "SOCIAL-LOGIN-TEXT"],
     ["RELATED-NAV", "SIDEBAR-TEXT"]),
    (MKDOCS_MATERIAL, ["# Sharing projects", "INTRO-TEXT", "## Share with your team", "SHARE-TEAM-TEXT",
                       "## Social cards", "SOCIAL-CARDS-TEXT"],
     ["HEADER-NAV", "PRIMARY-NAV", "TOC-NAV", "SOCIAL-TEXT"]),
    (DOCUSAURUS, ["# Sharing your site", "## Sharing with a single developer", "DOC-TEXT",
                  "## Menus and navbars", "MENUS-TEXT", "ON-THIS-PAGE"],
     ["NAVBAR-TEXT", "SIDEBAR-LINK", "BREADCRUMB-TEXT", "FOOTER-TEXT"]),
    (HUGO, ["# Sharing is caring", "## Share buttons in Hugo", "SHARE-HOWTO-TEXT", "## Sharing on social media",
            "SOCIAL-HOWTO-TEXT"],
     ["HEADER-NAV", "SHARE-BUTTONS", "POST-SHARE", "SOCIALS-TEXT"]),
], ids=["sphinx", "mkdocs-material", "docusaurus", "hugo"])
def test_documentation_pages_keep_their_sections_and_lose_their_widgets(page, kept, gone):
    out = html_to_markdown(page, base_url="https://docs.example.org/guide/")
    for text in kept:
        assert text in out, text
    for text in gone:
        assert text not in out, text
