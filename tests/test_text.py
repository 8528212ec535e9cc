"""mm.text: the one shortener of messages, titles and excerpts."""

from mm.text import cut, one_line


def test_one_line_makes_every_whitespace_run_one_space_and_trims():
    assert one_line("  a\n\tb  \r\n c ") == "a b c"
    assert one_line(42) == "42"


def test_one_line_cuts_with_an_ellipsis_within_the_limit():
    assert one_line("abcdef", 4) == "abc…" and len(one_line("x" * 50, 10)) == 10
    assert one_line("abcd", 4) == "abcd"


def test_cut_keeps_the_line_as_it_is_when_it_fits():
    assert cut("a  b", 10) == "a  b"
    assert cut("abcdef", 3) == "ab…"
