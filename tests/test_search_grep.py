"""grep_search through the real engine against the scripted model server, on real file trees, with
ripgrep and with the pure-Python search alike (mnemo-tools.md §Search; notes/mnemoai.md §2.5;
docs/tools-search.md)."""

from __future__ import annotations

import os
import subprocess

import pytest

from mm.tools.search.grep_tool import GrepSearch
from search_support import grep, lines, searcher, tree  # noqa: F401 (a fixture)

CASES = {
    "a.txt": "alpha\nneedle one\n",
    "a/b.txt": "needle two\n",
    "a/c/d.py": "x = 1\n# needle three\nneedle four\n",
    "z.md": "nothing here\n",
}


def test_declaration():
    tool = GrepSearch({})
    assert (tool.name, tool.kind, tool.needs_permission) == ("grep_search", "search", False)
    assert [(p.name, p.type, p.required, p.default) for p in tool.params] == [
        ("pattern", "string", True, None), ("path", "string", False, None), ("file_pattern", "string", False, None),
        ("case_insensitive", "boolean", False, False), ("output_mode", "string", False, "files_with_matches"),
        ("context_lines", "integer", False, 0), ("context_before", "integer", False, 0),
        ("context_after", "integer", False, 0), ("max_results", "integer", False, 100), ("offset", "integer", False, 0)]


def test_the_description_says_what_is_skipped():
    """The reference's docs never said that hidden and .gitignore'd files are skipped (notes §2.5)."""
    description = GrepSearch({}).description
    assert "Skips hidden files, binary files and what .gitignore ignores" in description
    assert "sorted by path" in description


async def test_files_with_matches_is_the_default_sorted_by_path(scripted_server, tmp_path, searcher):
    tree(tmp_path, CASES)
    result = await grep(scripted_server, tmp_path, pattern="needle")
    assert (result.text, result.failed) == ("a/b.txt\na/c/d.py\na.txt", False)


async def test_content_mode(scripted_server, tmp_path, searcher):
    tree(tmp_path, CASES)
    result = await grep(scripted_server, tmp_path, pattern="needle", output_mode="content")
    assert result.text == "a/b.txt:1:needle two\na/c/d.py:2:# needle three\na/c/d.py:3:needle four\na.txt:2:needle one"


async def test_count_mode(scripted_server, tmp_path, searcher):
    tree(tmp_path, CASES)
    result = await grep(scripted_server, tmp_path, pattern="needle", output_mode="count", context_lines=3)
    assert result.text == "a/b.txt:1\na/c/d.py:2\na.txt:1\ntotal_matches: 4, files_with_matches: 3"


async def test_context_lines_and_their_overrides(scripted_server, tmp_path, searcher):
    tree(tmp_path, {"f.txt": "".join(f"line {n}\n" for n in range(1, 21)).replace("line 10\n", "hit\n")})
    both = await grep(scripted_server, tmp_path, pattern="hit", output_mode="content", context_lines=2)
    assert lines(both.text) == ["f.txt-8-line 8", "f.txt-9-line 9", "f.txt:10:hit", "f.txt-11-line 11",
                                "f.txt-12-line 12"]
    before = await grep(scripted_server, tmp_path, pattern="hit", output_mode="content", context_lines=2,
                        context_before=1)
    assert lines(before.text) == ["f.txt-9-line 9", "f.txt:10:hit", "f.txt-11-line 11", "f.txt-12-line 12"]
    after = await grep(scripted_server, tmp_path, pattern="hit", output_mode="content", context_after=3)
    assert lines(after.text) == ["f.txt:10:hit", "f.txt-11-line 11", "f.txt-12-line 12", "f.txt-13-line 13"]


async def test_context_groups_are_separated(scripted_server, tmp_path, searcher):
    tree(tmp_path, {"a.txt": "x\nhit\ny\nz\nw\nhit\n", "b.txt": "hit\n"})
    result = await grep(scripted_server, tmp_path, pattern="hit", output_mode="content", context_lines=1)
    assert lines(result.text) == ["a.txt-1-x", "a.txt:2:hit", "a.txt-3-y", "--", "a.txt-5-w", "a.txt:6:hit", "--",
                                  "b.txt:1:hit"]


async def test_max_results_counts_files_then_matches(scripted_server, tmp_path, searcher):
    tree(tmp_path, CASES)
    files = await grep(scripted_server, tmp_path, pattern="needle", max_results=2)
    assert files.text == ("a/b.txt\na/c/d.py\n\nShowing 2 of 3 matching files (offset 0). Increase max_results/offset "
                          "or narrow the search. Next page: offset=2.")
    counts = await grep(scripted_server, tmp_path, pattern="needle", output_mode="count", max_results=1, offset=1)
    assert counts.text == ("a/c/d.py:2\ntotal_matches: 2, files_with_matches: 1\n\nShowing counts for 1 of 3 "
                           "matching files. Increase max_results/offset or narrow the search. Next page: offset=2.")
    content = await grep(scripted_server, tmp_path, pattern="needle", output_mode="content", max_results=2, offset=1)
    assert content.text == ("a/c/d.py:2:# needle three\na/c/d.py:3:needle four\n\nShowing 2 of 4 matches. "
                            "Increase max_results/offset or narrow the search. Next page: offset=3.")


@pytest.mark.parametrize("limit", [0, -5])
async def test_zero_or_less_is_no_limit(scripted_server, tmp_path, searcher, limit):
    tree(tmp_path, {f"f{n:03}.txt": "needle\n" for n in range(150)})
    result = await grep(scripted_server, tmp_path, pattern="needle", max_results=limit)
    assert lines(result.text) == [f"f{n:03}.txt" for n in range(150)]


async def test_pages_of_content_with_context_cover_everything_once(scripted_server, tmp_path, searcher):
    """Each context line belongs to its nearest match (the earlier one on a tie): paging never
    repeats a line nor loses one (notes §2.5)."""
    text = "".join("hit\n" if n % 3 == 0 else f"l{n}\n" for n in range(1, 40))
    tree(tmp_path, {"f.txt": text, "g.txt": "hit\nafter\n"})
    whole = await grep(scripted_server, tmp_path, pattern="hit", output_mode="content", context_lines=2,
                       max_results=0)
    pages, offset = [], 0
    while True:
        page = await grep(scripted_server, tmp_path, pattern="hit", output_mode="content", context_lines=2,
                          max_results=4, offset=offset)
        body = page.text.split("\n\nShowing")[0]
        pages += [line for line in lines(body) if line != "--"]
        if "Next page" not in page.text:
            break
        offset += 4
    assert pages == [line for line in lines(whole.text) if line != "--"]
    assert len(pages) == len(set(pages)) == 41  # every line of both files


async def test_offset_past_the_end(scripted_server, tmp_path, searcher):
    tree(tmp_path, CASES)
    result = await grep(scripted_server, tmp_path, pattern="needle", offset=3)
    assert (result.text, result.failed) == ("Nothing at offset 3: the search found 3 matching files.", False)
    result = await grep(scripted_server, tmp_path, pattern="needle", output_mode="content", offset=10)
    assert result.text == "Nothing at offset 10: the search found 4 matches."


async def test_no_match(scripted_server, tmp_path, searcher):
    tree(tmp_path, CASES)
    result = await grep(scripted_server, tmp_path, pattern="absent")
    assert (result.text, result.failed) == ("No matches for 'absent' in the working directory.", False)
    result = await grep(scripted_server, tmp_path, pattern="absent", path="a")
    assert result.text == "No matches for 'absent' in a."


async def test_case_insensitive(scripted_server, tmp_path, searcher):
    tree(tmp_path, {"a.txt": "Needle\n", "b.txt": "NEEDLE\n", "c.txt": "needle\n"})
    assert (await grep(scripted_server, tmp_path, pattern="Needle")).text == "a.txt"
    assert (await grep(scripted_server, tmp_path, pattern="needle", case_insensitive=True)).text == "a.txt\nb.txt\nc.txt"


@pytest.mark.parametrize("glob, found", [
    ("*.py", "a/c/d.py"), ("*.{py,md}", "a/c/d.py\nz.md"), ("!*.txt", "a/c/d.py\nz.md"),
    ("a/*.txt", "a/b.txt"), ("**/c/*", "a/c/d.py"), ("*.rs", None)])
async def test_file_pattern(scripted_server, tmp_path, searcher, glob, found):
    tree(tmp_path, CASES)
    result = await grep(scripted_server, tmp_path, pattern="needle|nothing", file_pattern=glob)
    assert result.text == (found or "No matches for 'needle|nothing' in the working directory.")


async def test_a_regular_expression_not_a_glob(scripted_server, tmp_path, searcher):
    tree(tmp_path, {"a.py": "def main():\n    return 1\n", "b.py": "main = 3\n"})
    result = await grep(scripted_server, tmp_path, pattern=r"^def \w+\(\)", output_mode="content")
    assert result.text == "a.py:1:def main():"


async def test_path_is_a_folder_or_a_file_relative_to_the_session(scripted_server, tmp_path, searcher):
    """A relative path is read against the conversation's working directory, not mm's process
    directory (the reference resolved it against its server's launch directory: notes §2)."""
    work = tree(tmp_path / "work", CASES)
    assert (await grep(scripted_server, work, pattern="needle", path="a/c")).text == "a/c/d.py"
    assert (await grep(scripted_server, work, pattern="needle", path="a/c/d.py", output_mode="count")).text == \
        "a/c/d.py:2\ntotal_matches: 2, files_with_matches: 1"
    outside = tree(tmp_path / "outside", {"o.txt": "needle\n"})
    assert (await grep(scripted_server, work, pattern="needle", path=str(outside))).text == str(outside / "o.txt")
    assert (await grep(scripted_server, work, pattern="needle", path="../outside")).text == str(outside / "o.txt")


async def test_path_that_does_not_exist(scripted_server, tmp_path, searcher):
    result = await grep(scripted_server, tmp_path, pattern="x", path="no/such")
    assert (result.text, result.failed) == ("Path does not exist: no/such", True)


async def test_quoted_path_is_read_without_its_quotes(scripted_server, tmp_path, searcher):
    tree(tmp_path, {"my dir/f.txt": "needle\n"})
    assert (await grep(scripted_server, tmp_path, pattern="needle", path="'my dir'")).text == "my dir/f.txt"
    assert (await grep(scripted_server, tmp_path, pattern="needle", path="my\\ dir")).text == "my dir/f.txt"


async def test_a_pipe_or_a_device_is_not_searched(scripted_server, tmp_path, searcher):
    os.mkfifo(tmp_path / "pipe")
    os.mknod(tmp_path / "zero", 0o666 | 0o020000, os.makedev(1, 5))
    result = await grep(scripted_server, tmp_path, pattern="x", path="pipe")
    assert (result.text, result.failed) == ("Path is a named pipe, not a file or directory: pipe — nothing was searched",
                                            True)
    result = await grep(scripted_server, tmp_path, pattern="x", path="zero")
    assert result.text == "Path is a character device, not a file or directory: zero — nothing was searched"
    tree(tmp_path, {"f.txt": "x\n"})
    assert (await grep(scripted_server, tmp_path, pattern="x")).text == "f.txt"  # in a folder: skipped


async def test_invalid_output_mode_is_refused_before_anything_runs(scripted_server, tmp_path, monkeypatch):
    """The reference checked output_mode only after ripgrep had run (notes §2.5)."""
    from search_support import fake_ripgrep

    ran = tmp_path / "ran"
    monkeypatch.setenv("MM_RG", str(fake_ripgrep(tmp_path / "bin", f"touch {ran}")))
    result = await grep(scripted_server, tmp_path, pattern="x", output_mode="lines")
    assert (result.text, result.failed) == (
        "Invalid output_mode 'lines'. Use 'files_with_matches', 'content', or 'count'.", True)
    assert not ran.exists()


async def test_bad_regular_expression(scripted_server, tmp_path, searcher):
    tree(tmp_path, CASES)
    result = await grep(scripted_server, tmp_path, pattern="needle(")
    assert result.failed and result.text.startswith("Search failed: ")
    assert "regex parse error" in result.text


async def test_a_line_break_in_the_pattern(scripted_server, tmp_path, searcher):
    result = await grep(scripted_server, tmp_path, pattern="a\nb")
    assert (result.text, result.failed) == ('Search failed: the literal "\\n" is not allowed in a regex', True)


async def test_hidden_files_are_skipped_unless_named(scripted_server, tmp_path, searcher):
    tree(tmp_path, {".env": "needle\n", ".config/x.txt": "needle\n", "v.txt": "needle\n"})
    assert (await grep(scripted_server, tmp_path, pattern="needle")).text == "v.txt"
    assert (await grep(scripted_server, tmp_path, pattern="needle", path=".config")).text == ".config/x.txt"
    assert (await grep(scripted_server, tmp_path, pattern="needle", path=".env")).text == ".env"
    assert (await grep(scripted_server, tmp_path, pattern="needle", file_pattern=".env")).text == ".env"


async def test_gitignore_in_a_repository(scripted_server, tmp_path, searcher):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    tree(tmp_path, {".gitignore": "*.log\nbuild/\n!keep.log\n", "a.log": "needle\n", "keep.log": "needle\n",
                    "build/out.txt": "needle\n", "src/.gitignore": "gen.py\n", "src/gen.py": "needle\n",
                    "src/main.py": "needle\n", ".ignore": "secret.txt\n", "secret.txt": "needle\n",
                    "src/.rgignore": "!gen.py\n"})
    result = await grep(scripted_server, tmp_path, pattern="needle")
    assert result.text == "keep.log\nsrc/gen.py\nsrc/main.py"
    result = await grep(scripted_server, tmp_path, pattern="needle", file_pattern="*.log")
    assert result.text == "a.log\nkeep.log"  # a file the pattern names is searched even when ignored


async def test_gitignore_outside_a_repository_is_not_read(scripted_server, tmp_path, searcher):
    """As ripgrep: .gitignore counts in a git repository only; .ignore and .rgignore always."""
    tree(tmp_path, {".gitignore": "a.txt\n", ".rgignore": "b.txt\n", "a.txt": "needle\n", "b.txt": "needle\n",
                    "c.txt": "needle\n"})
    assert (await grep(scripted_server, tmp_path, pattern="needle")).text == "a.txt\nc.txt"


async def test_a_parent_folders_ignore_file_counts(scripted_server, tmp_path, searcher):
    tree(tmp_path, {".ignore": "*.tmp\n", "sub/a.tmp": "needle\n", "sub/b.txt": "needle\n"})
    assert (await grep(scripted_server, tmp_path / "sub", pattern="needle")).text == "b.txt"


async def test_symlinks_are_not_followed_unless_named(scripted_server, tmp_path, searcher):
    tree(tmp_path, {"real/f.txt": "needle\n", "g.txt": "needle\n"})
    (tmp_path / "dirlink").symlink_to(tmp_path / "real")
    (tmp_path / "filelink.txt").symlink_to(tmp_path / "g.txt")
    (tmp_path / "loop").symlink_to(tmp_path)
    (tmp_path / "broken").symlink_to(tmp_path / "gone")
    assert (await grep(scripted_server, tmp_path, pattern="needle")).text == "g.txt\nreal/f.txt"
    assert (await grep(scripted_server, tmp_path, pattern="needle", path="dirlink")).text == "dirlink/f.txt"


async def test_binary_files_are_skipped_unless_named(scripted_server, tmp_path, searcher):
    """A file holding a NUL byte anywhere is binary (ripgrep's rule for a search that counts)."""
    tree(tmp_path, {"img.png": b"\x89PNG\r\n\x1a\n\0\0needle\n", "late.bin": b"needle\n" + b"x" * 200_000 + b"\0\n",
                    "text.txt": "needle\n"})
    assert (await grep(scripted_server, tmp_path, pattern="needle")).text == "text.txt"
    assert (await grep(scripted_server, tmp_path, pattern="needle", output_mode="content")).text == \
        "text.txt:1:needle"
    named = await grep(scripted_server, tmp_path, pattern="needle", path="late.bin", output_mode="count")
    assert named.text == "late.bin:1\ntotal_matches: 1, files_with_matches: 1"


async def test_long_lines_are_cut_at_500_characters(scripted_server, tmp_path, searcher):
    tree(tmp_path, {"min.js": "needle" + "x" * 994 + "\n", "short.js": "needle" + "y" * 494 + "\n"})
    result = await grep(scripted_server, tmp_path, pattern="needle", output_mode="content")
    first, second = lines(result.text)
    assert first == "min.js:1:needle" + "x" * 494 + "… [+500 chars]"
    assert second == "short.js:1:needle" + "y" * 494


async def test_unicode_names_and_text(scripted_server, tmp_path, searcher):
    tree(tmp_path, {"données/été.txt": "café au lait\n", "日本/語.txt": "ラーメン café\n", "x.txt": b"caf\xe9 needle\n"})
    result = await grep(scripted_server, tmp_path, pattern="café", output_mode="content")
    assert result.text == "données/été.txt:1:café au lait\n日本/語.txt:1:ラーメン café"
    result = await grep(scripted_server, tmp_path, pattern="needle", output_mode="content")
    assert result.text == "x.txt:1:caf\ufffd needle"  # bytes that are not UTF-8 read as U+FFFD


async def test_a_file_name_that_is_not_utf8(scripted_server, tmp_path, searcher):
    (tmp_path / os.fsdecode(b"caf\xe9.txt")).write_text("needle\n")
    result = await grep(scripted_server, tmp_path, pattern="needle", output_mode="content")
    assert result.text == "caf\ufffd.txt:1:needle"


async def test_byte_order_marks_and_line_ends(scripted_server, tmp_path, searcher):
    tree(tmp_path, {"bom.txt": b"\xef\xbb\xbfneedle first\n", "u16.txt": "x\nneedle wide\n".encode("utf-16"),
                    "crlf.txt": b"one\r\nneedle crlf\r\n"})
    result = await grep(scripted_server, tmp_path, pattern="^needle", output_mode="content")
    assert result.text == "bom.txt:1:needle first\ncrlf.txt:2:needle crlf\nu16.txt:2:needle wide"
    assert (await grep(scripted_server, tmp_path, pattern="crlf$")).text.startswith("No matches")


async def test_a_huge_number_of_matches(scripted_server, tmp_path, searcher):
    tree(tmp_path, {"big.txt": "needle\n" * 200_000, "small.txt": "needle\n"})
    result = await grep(scripted_server, tmp_path, pattern="needle", output_mode="content")
    assert lines(result.text)[:2] == ["big.txt:1:needle", "big.txt:2:needle"]
    assert result.text.endswith("\n\nShowing 100 of 200001 matches. Increase max_results/offset or narrow the "
                                "search. Next page: offset=100.")
    deep = await grep(scripted_server, tmp_path, pattern="needle", output_mode="content", offset=199_999, max_results=5)
    assert deep.text == "big.txt:200000:needle\nsmall.txt:1:needle"
    count = await grep(scripted_server, tmp_path, pattern="needle", output_mode="count")
    assert count.text == "big.txt:200000\nsmall.txt:1\ntotal_matches: 200001, files_with_matches: 2"


async def test_a_page_stops_at_max_output(scripted_server, tmp_path, searcher):
    tree(tmp_path, {f"file-{n:04}.txt": "needle\n" for n in range(300)})
    result = await grep(scripted_server, tmp_path, {"maxOutput": 1000}, pattern="needle", max_results=300)
    shown = [line for line in lines(result.text) if line.startswith("file-")]
    assert shown == [f"file-{n:04}.txt" for n in range(len(shown))] and 20 <= len(shown) < 300
    assert result.text.endswith(f"\n\nShowing {len(shown)} of 300 matching files (offset 0). Increase "
                                f"max_results/offset or narrow the search. Next page: offset={len(shown)}. "
                                "(The page stopped at maxOutput, 1000 characters.)")
    assert len(result.text) <= 1000


async def test_a_search_never_holds_the_event_loop(tmp_path, searcher):
    """The reference's tool bodies ran on its single event loop and stalled every other call while
    they searched (notes §7, 1.10.3, 1.12.1): both of mm's searchers are processes it awaits, so a
    task scheduled right after the call runs while the search is still going."""
    import asyncio

    from mm.tools.base import ToolContext

    tree(tmp_path, CASES)
    search = GrepSearch(dict(os.environ))
    call = asyncio.create_task(search.run({"pattern": "needle"}, ToolContext(cwd=tmp_path)))

    async def is_done() -> bool:
        return call.done()

    assert await asyncio.create_task(is_done()) is False
    assert (await call).text == "a/b.txt\na/c/d.py\na.txt"


async def test_a_nul_byte_in_the_pattern_or_the_glob(scripted_server, tmp_path, searcher):
    tree(tmp_path, CASES)
    nul = "contains a NUL byte (\\u0000), which no file name, command or address can hold — send it without that character"
    result = await grep(scripted_server, tmp_path, pattern="nee\0dle")
    assert (result.text, result.failed) == (f"[grep_search: pattern: {nul}]", True)
    result = await grep(scripted_server, tmp_path, pattern="needle", file_pattern="*.py\0")
    assert (result.text, result.failed) == (f"[grep_search: file_pattern: {nul}]", True)


async def test_absurd_numbers(scripted_server, tmp_path, searcher):
    """Numbers no search needs are read as "everything", never an overflow (context cut to MAX_CONTEXT)."""
    tree(tmp_path, {"f.txt": "a\nneedle\nb\n"})
    result = await grep(scripted_server, tmp_path, pattern="needle", output_mode="content", context_lines=10**30,
                        max_results=10**30)
    assert (result.text, result.failed) == ("f.txt-1-a\nf.txt:2:needle\nf.txt-3-b", False)
    result = await grep(scripted_server, tmp_path, pattern="needle", offset=10**30)
    assert result.text == f"Nothing at offset {10**30}: the search found 1 matching files."
    result = await grep(scripted_server, tmp_path, pattern="needle", output_mode="content", context_lines=-4)
    assert result.text == "f.txt:2:needle"
