"""mm.webmd, one test per rule of mm-tools.md §fetch_content (rows "Removed" to "Result",
fields `baseUrl`, `tables`, `strikethrough`, `taskList`)."""

from __future__ import annotations

import codecs
import re

import pytest

from mm.webmd import BAD_TABLES, decode_html, detect_encoding, html_to_markdown

BASE = "https://example.org/docs/page.html"


def md(html: str, **options) -> str:
    """The Markdown of `html` inside a `main`, resolved against BASE unless told otherwise."""
    options.setdefault("base_url", BASE)
    return html_to_markdown(f"<html><body><main>{html}</main></body></html>", **options)


# --- Removed -----------------------------------------------------------------------------

@pytest.mark.parametrize("tag", [
    "script", "style", "noscript", "template", "title", "svg", "canvas", "iframe", "object",
    "nav", "aside", "dialog", "button", "select", "textarea",
])
def test_removed_tags(tag: str) -> None:
    assert md(f"<p>kept</p><{tag}>GONE</{tag}>") == "kept\n"


def test_removed_void_and_head_elements() -> None:
    page = ('<html><head><title>T</title><meta name="x" content="GONE"><link rel="stylesheet" '
            'href="GONE.css"><base href="/GONE/"></head><body><embed src="GONE">'
            '<p>kept</p></body></html>')
    assert html_to_markdown(page) == "kept\n"


@pytest.mark.parametrize("kind", ["text", "radio", "submit", "hidden", "search", ""])
def test_inputs_other_than_checkboxes_removed(kind: str) -> None:
    assert md(f'<p>a <input type="{kind}" value="GONE"> b</p>') == "a b\n"


def test_footer_outside_article_or_main_removed() -> None:
    page = ("<body><article><p>text</p><footer>IN-ARTICLE</footer></article>"
            "<footer>PAGE</footer></body>")
    out = html_to_markdown(page)
    assert "IN-ARTICLE" in out and "PAGE" not in out


def test_footer_inside_main_kept() -> None:
    assert "IN-MAIN" in md("<p>x</p><footer>IN-MAIN</footer>")


def test_comments_removed() -> None:
    assert md("<p>a<!-- GONE -->b</p>") == "ab\n"


@pytest.mark.parametrize("role", ["navigation", "banner", "complementary", "search",
                                  "contentinfo", "dialog"])
def test_aria_roles_removed(role: str) -> None:
    assert md(f'<p>kept</p><div role="{role}">GONE</div>') == "kept\n"


def test_aria_hidden_and_hidden_removed() -> None:
    out = md('<p>kept</p><p aria-hidden="true">GONE1</p><p hidden>GONE2</p>'
             '<p aria-hidden="false">shown</p>')
    assert out == "kept\n\nshown\n"


@pytest.mark.parametrize("word", [
    "ad", "ads", "advert", "sponsor", "promo", "cookie", "consent", "gdpr", "newsletter",
    "subscribe", "popup", "modal", "share", "social", "breadcrumb", "nav", "navbar",
    "navigation", "menu", "sidebar", "skiplink",
])
def test_class_words_removed(word: str) -> None:
    assert md(f'<p>kept</p><div class="x {word}">GONE</div>') == "kept\n"


def test_id_words_removed() -> None:
    assert md('<p>kept</p><div id="cookie-banner">GONE</div>') == "kept\n"


def test_class_word_is_a_whole_word() -> None:
    out = md('<div class="download">DL</div><div class="header-ad-slot">GONE</div>'
             '<div class="shadow">SH</div>')
    assert out == "DL\n\nSH\n"


@pytest.mark.parametrize("inner", ["<h1>Title</h1>", "<article>Body</article>",
                                   "<main>Body</main>"])
def test_class_match_kept_when_it_contains_main_article_or_h1(inner: str) -> None:
    out = html_to_markdown(f'<body><div class="sidebar">{inner}<p>WITH</p></div></body>')
    assert "WITH" in out


def test_layout_class_token_is_not_a_word_match() -> None:
    assert md('<div class="l-sidebar-fixed"><p>content</p></div>') == "content\n"


@pytest.mark.parametrize("cls", ["sr-only", "visually-hidden", "screen-reader-text"])
def test_screen_reader_classes_removed(cls: str) -> None:
    assert md(f'<p>kept<span class="{cls}">GONE</span></p>') == "kept\n"


# --- Attributes ----------------------------------------------------------------------------

def test_raw_table_keeps_only_span_attributes() -> None:
    out = md('<table class="c" style="s" id="i"><tr><td colspan="2" data-x="1" class="k">a</td>'
             '</tr><tr><td>b</td><td>c</td></tr></table>')
    assert '<td colspan="2">a</td>' in out
    assert "class=" not in out and "style=" not in out and "data-x" not in out


def test_raw_table_links_keep_only_href_and_images_src_alt() -> None:
    out = md('<table><tr><td rowspan="2"><a href="x.html" class="c" title="t">L</a>'
             '<img src="i.png" alt="A" width="3"></td><td>1</td></tr><tr><td>2</td></tr></table>')
    assert '<a href="https://example.org/docs/x.html">L</a>' in out
    assert '<img src="https://example.org/docs/i.png" alt="A">' in out
    assert "title=" not in out and "width=" not in out


def test_code_class_keeps_language_word_only() -> None:
    out = md('<pre class="highlight lang-go"><code class="hljs">x := 1</code></pre>')
    assert out == "```go\nx := 1\n```\n"


# --- Conversion ----------------------------------------------------------------------------

@pytest.mark.parametrize("level", range(1, 7))
def test_headings(level: int) -> None:
    assert md(f"<h{level}>Title</h{level}>") == "#" * level + " Title\n"


def test_paragraphs_separated_by_a_blank_line() -> None:
    assert md("<p>one</p><p>two</p>") == "one\n\ntwo\n"


@pytest.mark.parametrize("html,expected", [
    ("<strong>s</strong> <b>b</b>", "**s** **b**"),
    ("<em>e</em> <i>i</i>", "*e* *i*"),
    ("<code>c</code> <kbd>k</kbd> <samp>s</samp> <tt>t</tt>", "`c` `k` `s` `t`"),
])
def test_inline_formatting(html: str, expected: str) -> None:
    assert md(f"<p>{html}</p>") == expected + "\n"


def test_pre_is_a_fenced_block_with_language() -> None:
    assert md('<pre><code class="language-python">a  =  1\n</code></pre>') == \
        "```python\na  =  1\n```\n"


def test_fence_longer_than_backticks_inside() -> None:
    out = md("<pre><code>````\nx\n````</code></pre>")
    assert out.startswith("`````\n") and out.endswith("\n`````\n")


def test_br_is_a_backslash_hard_break() -> None:
    assert md("<p>a<br>b</p>") == "a\\\nb\n"


def test_hr_and_blockquote() -> None:
    assert md("<p>a</p><hr><blockquote><p>q</p></blockquote>") == "a\n\n---\n\n> q\n"


def test_link_resolved_against_base_url() -> None:
    assert md('<p><a href="../x.html">X</a></p>') == "[X](https://example.org/x.html)\n"


def test_base_url_none_leaves_links_as_written() -> None:
    assert md('<p><a href="x.html">X</a></p>', base_url=None) == "[X](x.html)\n"


def test_link_without_text_shows_its_url() -> None:
    assert "https://example.org/docs/e" in md('<p><a href="e"></a></p>')


def test_link_whose_content_was_removed_shows_its_url() -> None:
    out = md('<p><a href="/share"><span class="sr-only">Share</span><svg></svg></a></p>')
    assert out == "<https://example.org/share>\n"


def test_javascript_link_keeps_only_its_text() -> None:
    assert md('<p><a href=" JavaScript:go()">Go</a></p>') == "Go\n"


def test_images() -> None:
    out = md('<p><img src="a.png" alt="A"> <img src="/b.png"> <img src="data:image/png;base64,xx" '
             'alt="Inline"></p>')
    assert out == "![A](https://example.org/docs/a.png) ![](https://example.org/b.png) Inline\n"


def test_lists_ordered_start_and_nesting_by_marker_width() -> None:
    out = md('<ol start="9"><li>nine</li><li>ten<ul><li>in<ul><li>deep</li></ul></li></ul></li>'
             '</ol><ul><li>a</li></ul>')
    assert out == "9. nine\n10. ten\n    - in\n      - deep\n\n- a\n"


def test_simple_table_is_gfm_with_caption_above() -> None:
    out = md("<table><caption>Cap</caption><tr><th>A</th><th>B</th></tr>"
             "<tr><td>x | y</td><td>1<br>2</td></tr></table>")
    lines = out.splitlines()
    assert lines[0] == "Cap" and lines[1] == ""
    assert lines[2].replace(" ", "") == "|A|B|"
    assert lines[4].replace(" ", "") == "|x\\|y|1<br>2|"


def test_first_row_is_the_header_even_without_th() -> None:
    out = md("<table><tr><td>h1</td><td>h2</td></tr><tr><td>a</td><td>b</td></tr></table>")
    assert out.splitlines()[1].replace(" ", "") == "|---|---|"


def test_link_dense_simple_table_stays_a_table() -> None:
    out = md('<table><tr><td><a href="a">A</a></td><td><a href="b">B</a></td></tr>'
             '<tr><td><a href="c">C</a></td><td>d</td></tr></table>')
    assert re.fullmatch(r"\|-+\|-+\|", out.splitlines()[1].replace(" ", ""))


def test_span_table_kept_as_html_by_default() -> None:
    out = md('<table><tr><th colspan="2">Q</th></tr><tr><td>a</td><td>b</td></tr></table>')
    assert out == '<table>\n<tr><th colspan="2">Q</th></tr>\n<tr><td>a</td><td>b</td></tr>\n</table>\n'


def test_nested_table_kept_as_html() -> None:
    out = md("<table><tr><td><table><tr><td>in</td><td>2</td></tr></table></td><td>b</td></tr>"
             "</table>")
    assert out.startswith("<table>") and out.count("<table>") == 2


def test_flatten_copies_a_spanned_cell_into_every_slot() -> None:
    out = md('<table><tr><th colspan="2">Q</th></tr><tr><td rowspan="2">R</td><td>a</td></tr>'
             '<tr><td>b</td></tr></table>', tables="flatten")
    rows = [line.replace(" ", "") for line in out.splitlines()]
    assert rows == ["|Q|Q|", "|---|---|", "|R|a|", "|R|b|"]


def test_raw_table_in_a_list_is_indented() -> None:
    out = md('<ul><li>item<table><tr><td colspan="2">x</td></tr><tr><td>1</td><td>2</td></tr>'
             '</table></li></ul>')
    assert "\n  <table>\n  <tr>" in out


def test_single_cell_table_is_a_container() -> None:
    assert md("<table><tr><td><p>one</p><p>two</p></td></tr></table>") == "one\n\ntwo\n"


@pytest.mark.parametrize("table", [
    '<table role="presentation"><tr><td>one</td><td>two</td></tr></table>',
    "<table><tr><td><h2>one</h2></td><td>two</td></tr></table>",
    "<table><tr><td><p>one</p><p>two</p></td><td>three</td></tr></table>",
    '<table><tr><td colspan="2"><h2>one</h2><table><tr><td>a</td></tr></table></td></tr></table>',
])
def test_layout_tables_are_containers(table: str) -> None:
    out = md(table)
    assert "|" not in out and "<table" not in out


def test_layout_table_cells_follow_the_removal_rules() -> None:
    out = md('<table><tr><td class="sidebar">GONE</td><td><h2>Title</h2><p>kept</p></td></tr></table>')
    assert out == "## Title\n\nkept\n"


def test_unknown_tables_value_rejected() -> None:
    with pytest.raises(ValueError, match="tables must be one of"):
        md("<p>x</p>", tables="grid")
    assert "{value!r}" in BAD_TABLES


@pytest.mark.parametrize("tag", ["del", "s", "strike"])
def test_strikethrough_option(tag: str) -> None:
    assert md(f"<p>a <{tag}>old</{tag}> b</p>") == "a old b\n"
    assert md(f"<p>a <{tag}>old</{tag}> b</p>", strikethrough=True) == "a ~~old~~ b\n"


def test_task_list_option() -> None:
    html = ('<ul><li><input type="checkbox" checked> done</li><li><input type="checkbox"> todo'
            '</li><li>mid <input type="checkbox"> box</li></ul>')
    assert md(html) == "- done\n- todo\n- mid box\n"
    assert md(html, task_list=True) == "- [x] done\n- [ ] todo\n- mid box\n"


# --- Unknown, empty, invalid -----------------------------------------------------------------

def test_unknown_element_text_kept() -> None:
    assert md("<p>a <x-chip>chip</x-chip> <blink>b</blink></p>") == "a chip b\n"


def test_unknown_element_with_block_is_a_container() -> None:
    assert md("<x-card><p>one</p><p>two</p></x-card><x-note>three</x-note>") == \
        "one\n\ntwo\n\nthree\n"


def test_empty_elements_leave_no_blank_line() -> None:
    assert md("<p>a</p><p></p><div> </div><h2></h2><ul></ul><p><b></b></p><p>b</p>") == "a\n\nb\n"


def test_invalid_html_repaired_by_the_html5_parser() -> None:
    assert md("<p>one<p>two") == "one\n\ntwo\n"
    assert md("<p><b>bold <i>both</b> italic</i></p>") == "**bold *both*** *italic*\n"


def test_deeply_nested_page_converts() -> None:
    assert md("<div>" * 3000 + "deep" + "</div>" * 3000) == "deep\n"
    assert md("<span>" * 3000 + "deep" + "</span>" * 3000) == "deep\n"


@pytest.mark.parametrize("tables", ["html", "flatten"])
def test_deeply_nested_tables_convert(tables: str) -> None:
    nested = "<table><tr><td>a</td><td>" * 100 + "x" + "</td></tr></table>" * 100
    assert "x" in md(nested, tables=tables)
    deeper = "<table><tr><td>a</td><td>" * 400 + "x" + "</td></tr></table>" * 400
    assert md(deeper, tables=tables).endswith("\n")  # past html-to-markdown's depth: no crash
    captions = "<table><caption>" * 300 + "c" + "</caption></table>" * 300
    assert md(captions, tables=tables).endswith("\n")


def test_flatten_writes_a_nested_table_as_cell_text() -> None:
    out = md('<table><tr><td colspan="2">A</td></tr><tr><td>x<table><tr><td>i1</td><td>i2</td>'
             '</tr></table></td><td>y</td></tr></table>', tables="flatten")
    assert [line.replace(" ", "") for line in out.splitlines()][2] == "|xi1i2|y|"


# --- Escaping ------------------------------------------------------------------------------

@pytest.mark.parametrize("text,expected", [
    ("a*b", "a\\*b"), ("a\\b", "a\\\\b"), ("`x`", "\\`x\\`"), ("[a]", "\\[a\\]"),
    ("a &lt;b&gt;", "a \\<b>"), ("snake_case", "snake_case"), ("_x_", "\\_x\\_"),
])
def test_inline_escaping(text: str, expected: str) -> None:
    assert md(f"<p>{text}</p>") == expected + "\n"


@pytest.mark.parametrize("text,expected", [
    ("# h", "\\# h"), ("&gt; q", "\\> q"), ("- l", "\\- l"), ("+ p", "\\+ p"),
    ("= e", "\\= e"), ("| t", "\\| t"), ("12. n", "12\\. n"), ("mid # - + = |", "mid # - + = |"),
])
def test_line_start_escaping(text: str, expected: str) -> None:
    assert md(f"<p>{text}</p>") == expected + "\n"


def test_line_start_after_a_hard_break_and_in_a_list_item() -> None:
    assert md("<p>a<br># b</p><ul><li>- c</li></ul>") == "a\\\n\\# b\n\n- \\- c\n"


def test_code_is_not_escaped() -> None:
    assert md("<p><code>a*b_[c]</code></p><pre># x\n*y*</pre>") == \
        "`a*b_[c]`\n\n```\n# x\n*y*\n```\n"


# --- Result --------------------------------------------------------------------------------

def test_result_ends_with_exactly_one_newline_and_has_no_title() -> None:
    out = html_to_markdown("<html><head><title>T</title></head><body><p>x</p>\n\n\n</body></html>")
    assert out == "x\n"


@pytest.mark.parametrize("page", ["", "   ", "<p> </p>", "<nav>menu</nav><script>x()</script>"])
def test_no_text_content_is_empty(page: str) -> None:
    assert html_to_markdown(page) == ""


# --- Encoding ------------------------------------------------------------------------------

GBK_TEXT = "中文测试，这是一个没有声明编码的网页。" * 20


def _page(text: str, head: str = "") -> str:
    return f"<html><head>{head}</head><body><p>{text}</p></body></html>"


def test_bom_comes_first() -> None:
    body = codecs.BOM_UTF8 + _page("café").encode("utf-8")
    assert detect_encoding(body, "text/html; charset=iso-8859-1") == "utf-8"
    assert decode_html(body, "text/html; charset=iso-8859-1") == _page("café")
    utf16 = codecs.BOM_UTF16_LE + _page("é").encode("utf-16-le")
    assert decode_html(utf16, None) == _page("é")


def test_header_charset_beats_meta() -> None:
    body = _page("café", '<meta charset="windows-1252">').encode("utf-8")
    expected = _page("café", '<meta charset="windows-1252">')
    assert decode_html(body, 'text/html; charset="UTF-8"') == expected


def test_meta_charset_and_http_equiv() -> None:
    body = _page("中文", '<meta charset="gbk">').encode("gbk")
    assert detect_encoding(body, "text/html") == "gb18030"
    equiv = _page("é", '<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">')
    assert detect_encoding(equiv.encode("latin-1"), None) == "cp1252"


def test_charset_inside_another_meta_attribute_is_not_a_declaration() -> None:
    body = _page("é", '<meta name="d" content="charset=gbk"><meta charset="utf-8">').encode()
    assert detect_encoding(body, None) == "utf-8"


def test_meta_after_the_first_4_kib_is_ignored() -> None:
    body = ("<!--" + "x" * 4100 + '--><meta charset="gbk">').encode() + "é".encode("utf-8")
    assert detect_encoding(body, None) == "utf-8"


def test_unknown_names_are_skipped() -> None:
    body = _page("é", '<meta charset="no-such-charset"><meta charset="utf-8">').encode("utf-8")
    assert detect_encoding(body, "text/html; charset=bogus") == "utf-8"


def test_meta_utf16_means_utf8() -> None:
    assert detect_encoding(_page("x", '<meta charset="utf-16">').encode(), None) == "utf-8"


def test_valid_utf8_then_windows_1252() -> None:
    assert detect_encoding(_page("naïve").encode("utf-8"), None) == "utf-8"
    assert decode_html(_page("naïve “q” €").encode("cp1252"), None) == _page("naïve “q” €")


def test_chardet_names_an_undeclared_multibyte_page() -> None:
    assert decode_html(_page(GBK_TEXT).encode("gbk"), "text/html") == _page(GBK_TEXT)


def test_chardet_never_overrides_a_declared_charset() -> None:
    body = _page(GBK_TEXT).encode("gbk")
    assert detect_encoding(body, "text/html; charset=windows-1252") == "cp1252"


def test_undecodable_bytes_become_replacement_characters() -> None:
    assert decode_html(b"<p>ok</p>\x81", "text/html; charset=utf-8") == "<p>ok</p>\ufffd"
