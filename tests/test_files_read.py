"""fs_read through a real conversation: every mode, parameter, limit and error of the reference
(mnemo-tools.md, Read files; notes/mnemoai.md §2.1), and each weakness the notes list for it,
shown absent in mm."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from files_calls import Session, gutter
from mm.llm.tokens import count_text
from mm.tools.files.read import MODES

MARK = "[TRUNCATED - Content exceeds token limit]"


def lines_file(path, n: int, word: str = "line") -> None:
    path.write_text("".join(f"{word} {i}\n" for i in range(1, n + 1)))


# --- Line ----------------------------------------------------------------------------------------

async def test_line_reads_the_whole_file_with_a_cat_n_gutter(scripted_server, tmp_path):
    (tmp_path / "f.txt").write_text("alpha\nbeta\ngamma\n")
    out = await Session(scripted_server, tmp_path).read("f.txt")
    assert out == {"path": str(tmp_path / "f.txt"), "content": "     1\talpha\n     2\tbeta\n     3\tgamma",
                   "start_line": 1, "end_line": 3, "total_lines": 3, "lines_processed": 3, "lines_requested": 3,
                   "tokens": count_text(out["content"]), "max_tokens": 8192, "truncated": False,
                   "message": f"Read 3/3 lines ({count_text(out['content'])} tokens)"}


@pytest.mark.parametrize("start, end, first, last", [
    (-2, -1, 4, 5),  # negative values count from the end
    (1, -2, 1, 4),
    (-1, -1, 5, 5),
    (0, 2, 1, 2),  # a start below 1 is 1
    (4, 99, 4, 5),  # an end past the file is its last line
    (2, 0, 2, 5),  # an end of 0 is the end of the file
    (-99, 1, 1, 1),
])
async def test_line_ranges(scripted_server, tmp_path, start, end, first, last):
    lines_file(tmp_path / "f.txt", 5)
    out = await Session(scripted_server, tmp_path).read("f.txt", start_line=start, end_line=end)
    assert (out["start_line"], out["end_line"], out["total_lines"]) == (first, last, 5)
    assert out["content"] == gutter(first, *[f"line {i}" for i in range(first, last + 1)])


async def test_line_range_backwards_is_an_error(scripted_server, tmp_path):
    lines_file(tmp_path / "f.txt", 4)
    session = Session(scripted_server, tmp_path)
    assert await session.read("f.txt", start_line=3, end_line=2) == {
        "error": True, "message": "Invalid line range: 3-2. File has 4 lines."}
    assert (await session.read("f.txt", start_line=9))["message"] == "Invalid line range: 9-4. File has 4 lines."


async def test_an_empty_file_is_a_successful_read(scripted_server, tmp_path):
    (tmp_path / "e.txt").write_text("")
    out = await Session(scripted_server, tmp_path).read("e.txt", start_line=5)
    assert out["content"] == "" and out["total_lines"] == 0 and out["message"] == "File is empty (0 lines)"
    assert "error" not in out


async def test_crlf_and_cr_only_lines_are_shown_without_their_endings(scripted_server, tmp_path):
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    (tmp_path / "m.txt").write_bytes(b"one\rtwo\rthree")
    session = Session(scripted_server, tmp_path)
    assert (await session.read("w.txt"))["content"] == gutter(1, "one", "two")
    assert (await session.read("m.txt"))["content"] == gutter(1, "one", "two", "three")


async def test_utf16_and_latin1_text_is_read_in_its_encoding(scripted_server, tmp_path):
    (tmp_path / "u.txt").write_bytes(b"\xff\xfe" + "héllo\nwörld\n".encode("utf-16-le"))
    (tmp_path / "l.txt").write_bytes("café crème\n".encode("latin-1"))
    session = Session(scripted_server, tmp_path)
    out = await session.read("u.txt")
    assert out["content"] == gutter(1, "héllo", "wörld") and out["encoding"] == "utf-16-le"
    out = await session.read("l.txt")
    assert out["content"] == gutter(1, "café crème") and out["encoding"] in ("cp1252", "iso8859-1")


async def test_the_cap_is_8192_tokens_when_the_key_is_absent(scripted_server, tmp_path):
    lines_file(tmp_path / "big.txt", 5000, "the quick brown fox")
    out = await Session(scripted_server, tmp_path).read("big.txt")
    assert out["max_tokens"] == 8192 and out["truncated"] is True
    assert out["content"].endswith("\n" + MARK)
    assert count_text(out["content"].removesuffix(MARK)) <= 8192
    shown = out["lines_processed"]
    assert out["message"] == (f"Read {shown}/5000 lines ({out['tokens']} tokens) - truncated due to token limit; "
                              f"call fs_read with start_line={shown + 1} to read on")


async def test_doc_max_tokens_sets_the_cap(scripted_server, tmp_path):
    lines_file(tmp_path / "f.txt", 100)
    out = await Session(scripted_server, tmp_path, {"files": {"docMaxTokens": 40}}).read("f.txt")
    assert out["max_tokens"] == 40 and out["truncated"] is True and out["lines_processed"] < 100
    assert count_text(out["content"].removesuffix(MARK)) <= 40


async def test_unset_cap_is_at_most_a_quarter_of_a_known_window(scripted_server, tmp_path):
    lines_file(tmp_path / "f.txt", 3000)
    session = Session(scripted_server, tmp_path)
    session.conv.context_window = 4096  # as the front ends set it from contextWindow or the server's probe
    out = await session.read("f.txt")
    assert out["max_tokens"] == 1024 and out["truncated"] is True
    session = Session(scripted_server, tmp_path, {"files": {"docMaxTokens": 2000}})
    session.conv.context_window = 4096
    assert (await session.read("f.txt"))["max_tokens"] == 2000  # a value set is taken as it is


async def test_doc_max_tokens_replaces_max_output(scripted_server, tmp_path):
    lines_file(tmp_path / "f.txt", 400, "some words on a line")  # ~12,000 characters, ~3,200 tokens
    session = Session(scripted_server, tmp_path, {"maxOutput": 1000})
    out = await session.read("f.txt")
    assert out["truncated"] is False and out["lines_processed"] == 400
    assert len(json.dumps(out)) > 1000


async def test_a_line_longer_than_the_room_is_shown_in_part(scripted_server, tmp_path):
    (tmp_path / "min.js").write_text("var a = 1;\n" + "x = y + z; " * 5000 + "\nend\n")
    out = await Session(scripted_server, tmp_path, {"files": {"docMaxTokens": 300}}).read("min.js")
    first, second, mark = out["content"].split("\n")
    assert first == "     1\tvar a = 1;" and second.startswith("     2\tx = y + z; x = y") and mark == MARK
    assert out["lines_processed"] == 1 and out["truncated"] is True


async def test_binary_and_image_files_fail_fast(scripted_server, tmp_path):
    (tmp_path / "a.bin").write_bytes(b"\x7fELF\x00\x01\x02" * 100)
    (tmp_path / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (tmp_path / "doc.pdf").write_bytes(b"%PDF-1.4\n\x00\x01binary")
    session = Session(scripted_server, tmp_path)
    assert await session.read("a.bin") == {
        "error": True, "message": f"'{tmp_path / 'a.bin'}' appears to be a binary file and can't be read as text.",
        "binary": True, "is_image": False}
    assert await session.read("pic.png") == {
        "error": True, "binary": True, "is_image": True,
        "message": f"'{tmp_path / 'pic.png'}' is an image, not a text file, and no tool in this conversation can see "
                   "images: describe_image is declared only with a vision model (visionModel and toolsets: vision in "
                   "the agent file)."}  # with describe_image declared, the pointer: tests/test_vision.py
    assert (await session.read("doc.pdf"))["message"].endswith("can't be read as text. Read it with mode \"PDF\".")
    (tmp_path / "ctl.txt").write_bytes(bytes(range(1, 9)) * 50)  # control characters, no NUL
    assert (await session.read("ctl.txt"))["binary"] is True


async def test_missing_path_directory_and_special_files(scripted_server, tmp_path):
    (tmp_path / "d").mkdir()
    os.mkfifo(tmp_path / "pipe")
    session = Session(scripted_server, tmp_path)
    assert await session.read("nope.txt") == {"error": True, "message": f"Path doesn't exist: {tmp_path / 'nope.txt'}"}
    assert await session.read("d") == {"error": True, "message": f"Path exists but is not a file: {tmp_path / 'd'}"}
    out = await session.read("pipe")  # never waited on
    assert out["error"] is True and "named pipe, not a regular file" in out["message"]


async def test_unknown_mode_lists_all_eight_and_any_case_is_read(scripted_server, tmp_path):
    (tmp_path / "f.txt").write_text("x\n")
    session = Session(scripted_server, tmp_path)
    assert await session.read("f.txt", mode="Text") == {
        "error": True,
        "message": "Invalid mode 'Text'. Use 'Line', 'Search', 'Directory', 'CSV', 'JSON', 'JSONL', 'PDF', or 'DOCX'"}
    message = (await session.read("f.txt", mode="xml"))["message"]
    assert all(f"'{m}'" in message for m in MODES)
    assert (await session.read("f.txt", mode="line"))["content"] == gutter(1, "x")


async def test_relative_paths_resolve_against_the_conversation_folder(scripted_server, tmp_path):
    """The reference resolved them against the tool server's folder, not the session's."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f.txt").write_text("here\n")
    assert os.getcwd() != str(tmp_path)
    assert (await Session(scripted_server, tmp_path).read("sub/f.txt"))["content"] == gutter(1, "here")


async def test_a_path_quoted_or_escaped_as_in_a_shell_is_found(scripted_server, tmp_path):
    (tmp_path / "My File.txt").write_text("x\n")
    session = Session(scripted_server, tmp_path)
    for path in ['"My File.txt"', "My\\ File.txt", "'My File.txt'"]:
        assert (await session.read(path))["path"] == str(tmp_path / "My File.txt")


# --- Search --------------------------------------------------------------------------------------

async def test_search_is_literal_case_insensitive_with_context(scripted_server, tmp_path):
    (tmp_path / "f.py").write_text("a = 1\nb = a.c\nC = 3\nabc = 4\nz\n")
    session = Session(scripted_server, tmp_path)
    out = await session.read("f.py", mode="Search", pattern="a.C", context_lines=1)
    assert out == {"path": str(tmp_path / "f.py"), "pattern": "a.C", "total_matches": 1, "context_lines": 1,
                   "truncated": False, "matches": [{"line_number": 2, "line_content": "b = a.c", "context": [
                       {"number": 1, "content": "a = 1", "is_match": False},
                       {"number": 2, "content": "b = a.c", "is_match": True},
                       {"number": 3, "content": "C = 3", "is_match": False}]}]}
    out = await session.read("f.py", mode="Search", pattern="c")  # default context_lines = 2
    assert [m["line_number"] for m in out["matches"]] == [2, 3, 4]
    assert [r["number"] for r in out["matches"][0]["context"]] == [1, 2, 3, 4]
    assert [r["number"] for r in out["matches"][2]["context"]] == [2, 3, 4, 5]


async def test_search_needs_a_pattern(scripted_server, tmp_path):
    (tmp_path / "f.txt").write_text("x\n")
    assert await Session(scripted_server, tmp_path).read("f.txt", mode="Search") == {
        "error": True, "message": "Search pattern cannot be empty"}


async def test_search_is_capped_and_refuses_binary_files(scripted_server, tmp_path):
    """The reference's Search had no token cap and no binary check."""
    lines_file(tmp_path / "f.txt", 2000, "needle in the haystack")
    (tmp_path / "b.bin").write_bytes(b"needle\x00" * 100)
    session = Session(scripted_server, tmp_path, {"files": {"docMaxTokens": 500}})
    out = await session.read("f.txt", mode="Search", pattern="needle", context_lines=0)
    assert out["total_matches"] == 2000 and out["truncated"] is True and 0 < len(out["matches"]) < 2000
    assert re.fullmatch(rf"Showing {len(out['matches'])} of 2000 matches \((\d+) tokens\) - truncated due to token "
                        "limit; narrow the pattern or lower context_lines", out["message"])
    assert int(re.search(r"\((\d+) tokens", out["message"]).group(1)) <= 500
    assert (await session.read("b.bin", mode="Search", pattern="needle"))["binary"] is True


async def test_search_cuts_very_long_lines(scripted_server, tmp_path):
    (tmp_path / "f.txt").write_text("needle " + "x" * 1000 + "\n")
    out = await Session(scripted_server, tmp_path).read("f.txt", mode="Search", pattern="needle")
    assert out["matches"][0]["line_content"] == ("needle " + "x" * 1000)[:500] + "… [+507 chars]"


# --- Directory -----------------------------------------------------------------------------------

def tree(root) -> None:
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "m.py").write_text("x")
    (root / "src" / "a.py").write_text("abc")
    (root / ".git").mkdir()
    (root / ".env").write_text("SECRET")
    (root / "README").write_text("hello")


async def test_directory_depth_zero_is_the_current_level_and_dot_entries_are_skipped(scripted_server, tmp_path):
    tree(tmp_path)
    out = await Session(scripted_server, tmp_path).read(".", mode="Directory")
    assert out == {"path": str(tmp_path), "type": "directory", "depth": 0, "total_items": 2, "truncated": False,
                   "contents": [{"name": "README", "type": "file", "path": "README", "size": 5},
                                {"name": "src", "type": "directory", "path": "src"}]}


async def test_directory_recurses_to_depth(scripted_server, tmp_path):
    tree(tmp_path)
    session = Session(scripted_server, tmp_path)
    out = await session.read(".", mode="Directory", depth=1)
    assert out["contents"][1]["contents"] == [{"name": "a.py", "type": "file", "path": "src/a.py", "size": 3},
                                              {"name": "pkg", "type": "directory", "path": "src/pkg"}]
    deep = await session.read(".", mode="Directory", depth=5)
    assert deep["contents"][1]["contents"][1]["contents"] == [
        {"name": "m.py", "type": "file", "path": "src/pkg/m.py", "size": 1}]


async def test_directory_errors(scripted_server, tmp_path):
    (tmp_path / "f").write_text("x")
    session = Session(scripted_server, tmp_path)
    assert await session.read("f", mode="Directory") == {"error": True, "message": f"Path is not a directory: {tmp_path / 'f'}"}
    assert await session.read("no", mode="Directory") == {"error": True, "message": f"Path doesn't exist: {tmp_path / 'no'}"}


async def test_directory_is_capped_and_never_walks_a_link_loop(scripted_server, tmp_path):
    """The reference's listing had no cap and followed links to folders."""
    for i in range(300):
        (tmp_path / f"file-{i:03}.txt").write_text("x")
    (tmp_path / "loop").mkdir()
    os.symlink(tmp_path, tmp_path / "loop" / "again")
    out = await Session(scripted_server, tmp_path, {"files": {"docMaxTokens": 600}}).read(".", mode="Directory", depth=50)
    assert out["truncated"] is True and out["message"].startswith("Listing truncated at the token limit (600 tokens)")
    small = tmp_path / "small"
    small.mkdir()
    os.symlink(tmp_path, small / "up")
    out = await Session(scripted_server, tmp_path).read("small", mode="Directory", depth=50)
    assert out["contents"] == [{"name": "up", "type": "directory", "path": "up", "symlink": True}]


# --- CSV -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, delimiter", [
    ("name,age\nann,31\nbob,42\n", ","),
    ("name;age\nann;31\nbob;42\n", ";"),
    ("name\tage\nann\t31\nbob\t42\n", "\t"),
    ("name|age\nann|31\nbob|42\n", "|"),
])
async def test_csv_sniffs_the_delimiter(scripted_server, tmp_path, text, delimiter):
    (tmp_path / "d.csv").write_text(text)
    out = await Session(scripted_server, tmp_path).read("d.csv", mode="CSV")
    assert out["delimiter"] == delimiter and out["columns"] == ["name", "age"]
    assert out["rows"] == [{"name": "ann", "age": "31"}, {"name": "bob", "age": "42"}]
    assert (out["total_rows"], out["rows_returned"], out["truncated"], out["type"]) == (2, 2, False, "csv")
    assert out["message"] == f"Read CSV with 2 columns. Showing 2 of 2 rows ({out['tokens']} tokens)."


async def test_a_comma_anywhere_in_the_sample_wins(scripted_server, tmp_path):
    (tmp_path / "d.csv").write_text("a;b\n1,5;2,5\n")  # the reference's rule: `,` first
    assert (await Session(scripted_server, tmp_path).read("d.csv", mode="CSV"))["delimiter"] == ","


async def test_csv_is_capped_in_every_encoding(scripted_server, tmp_path):
    """The reference returned every row of a file that was not UTF-8."""
    rows = "".join(f"café {i},crème {i}\n" for i in range(3000))
    (tmp_path / "l.csv").write_bytes(("a,b\n" + rows).encode("latin-1"))
    out = await Session(scripted_server, tmp_path, {"files": {"docMaxTokens": 300}}).read("l.csv", mode="CSV")
    assert out["truncated"] is True and out["total_rows"] == 3000 and out["rows_returned"] < 3000
    assert out["rows"][0] == {"a": "café 0", "b": "crème 0"} and out["encoding"] in ("cp1252", "iso8859-1")
    assert out["message"].endswith(" TRUNCATED at token limit.") and out["tokens"] <= 300


# --- JSON / JSONL --------------------------------------------------------------------------------

async def test_json_reads_and_validates(scripted_server, tmp_path):
    (tmp_path / "c.json").write_text('{\n  "a": 1,\n  "b": [1, 2]\n}\n')
    out = await Session(scripted_server, tmp_path).read("c.json", mode="JSON")
    assert out["content"] == '{\n  "a": 1,\n  "b": [1, 2]\n}' and out["type"] == "json"
    assert out["message"] == f"Read JSON file lines 1-4 ({out['tokens']} tokens)."  # no truncation text


async def test_a_partial_range_of_a_json_file_fails_validation(scripted_server, tmp_path):
    (tmp_path / "c.json").write_text('{\n  "a": 1,\n  "b": 2\n}\n')
    out = await Session(scripted_server, tmp_path).read("c.json", mode="JSON", start_line=1, end_line=2)
    assert out == {"error": True, "message": "Invalid JSON format: Expecting property name enclosed in double "
                                             "quotes: line 2 column 10 (char 11)"}


async def test_per_line_validation_is_chosen_by_the_extension(scripted_server, tmp_path):
    (tmp_path / "e.jsonl").write_text('{"a": 1}\n{"b": 2}\n')
    (tmp_path / "e.json").write_text('{"a": 1}\n{"b": 2}\n')
    session = Session(scripted_server, tmp_path)
    out = await session.read("e.jsonl", mode="JSON")
    assert out["type"] == "jsonl" and out["content"] == '{"a": 1}\n{"b": 2}'
    out = await session.read("e.json", mode="JSONL")  # the mode does not choose it
    assert out["error"] is True and out["message"].startswith("Invalid JSON format: Extra data")
    (tmp_path / "bad.jsonl").write_text('{"a": 1}\n{"b": \n')
    assert (await session.read("bad.jsonl", mode="JSONL"))["message"].startswith("Invalid JSON format: line 2: ")
    assert (await session.read("e.jsonl", mode="JSONL", start_line=2))["content"] == '{"b": 2}'


async def test_json_truncation_says_so_only_when_truncated(scripted_server, tmp_path):
    (tmp_path / "big.jsonl").write_text("".join(json.dumps({"id": i, "name": f"item {i}"}) + "\n" for i in range(2000)))
    out = await Session(scripted_server, tmp_path, {"files": {"docMaxTokens": 200}}).read("big.jsonl", mode="JSONL")
    assert out["truncated"] is True and out["content"].endswith("\n" + MARK) and out["lines_included"] < 2000
    assert " TRUNCATED at token limit 200. File has 2000 total lines." in out["message"]
    (tmp_path / "empty.json").write_text("\n\n")
    assert (await Session(scripted_server, tmp_path).read("empty.json", mode="JSON"))["message"] == \
        "File is empty or selected range is empty"


# --- PDF -----------------------------------------------------------------------------------------

def make_pdf(path, pages: list[str]) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for text in pages:
        pdf.add_page()
        for line in text.split("\n") if text else []:
            pdf.cell(0, 8, line, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))


async def test_pdf_text_is_page_marked(scripted_server, tmp_path):
    make_pdf(tmp_path / "r.pdf", ["First page text", "", "Third page"])
    out = await Session(scripted_server, tmp_path).read("r.pdf", mode="PDF")
    assert out["content"] == "--- Page 1 ---\nFirst page text\n\n--- Page 3 ---\nThird page"
    assert (out["total_pages"], out["file_path"], out["truncated"]) == (3, str(tmp_path / "r.pdf"), False)


async def test_a_pdf_without_text_says_so(scripted_server, tmp_path):
    make_pdf(tmp_path / "blank.pdf", [""])
    assert await Session(scripted_server, tmp_path).read("blank.pdf", mode="PDF") == {
        "content": "", "message": "PDF appears to be empty or contains only images",
        "file_path": str(tmp_path / "blank.pdf"), "total_pages": 1}


async def test_a_large_pdf_is_capped_and_says_the_offload_needs_the_documents_group(scripted_server, tmp_path):
    make_pdf(tmp_path / "long.pdf", ["\n".join(f"Paragraph {p}.{i} of a long report" for i in range(25))
                                     for p in range(40)])
    out = await Session(scripted_server, tmp_path, {"files": {"docMaxTokens": 400}}).read("long.pdf", mode="PDF")
    assert out["truncated"] is True and out["content"].endswith(MARK) and out["total_pages"] == 40
    assert out["message"].endswith(" - truncated due to token limit: only the start of the document is shown; ask the "
                                   "user which part matters. (With the documents tool group declared, mm indexes a "
                                   "large document for search_in_documents instead.)")


async def test_a_damaged_pdf_is_one_error(scripted_server, tmp_path):
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    out = await Session(scripted_server, tmp_path).read("bad.pdf", mode="PDF")
    assert out["error"] is True and out["message"].startswith("Error reading PDF: ")


# --- DOCX ----------------------------------------------------------------------------------------

def make_docx(path, paragraphs: list[str], table: bool = False) -> None:
    import docx

    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    if table:
        document.add_table(rows=1, cols=1).cell(0, 0).text = "IN A TABLE"
    document.save(str(path))


async def test_docx_paragraph_text_without_tables(scripted_server, tmp_path):
    make_docx(tmp_path / "n.docx", ["Title", "", "  Body text  "], table=True)
    out = await Session(scripted_server, tmp_path).read("n.docx", mode="DOCX")
    assert out["content"] == "Title\n\nBody text" and out["total_paragraphs"] == 2
    assert "IN A TABLE" not in json.dumps(out)


async def test_docx_needs_the_extension_and_says_empty(scripted_server, tmp_path):
    make_docx(tmp_path / "n.docx", ["x"])
    os.rename(tmp_path / "n.docx", tmp_path / "n.doc")
    make_docx(tmp_path / "e.docx", [])
    (tmp_path / "bad.docx").write_text("not a zip")
    session = Session(scripted_server, tmp_path)
    assert await session.read("n.doc", mode="DOCX") == {
        "error": True, "message": f"File is not a DOCX document: {tmp_path / 'n.doc'}", "file_path": str(tmp_path / "n.doc")}
    assert await session.read("e.docx", mode="DOCX") == {
        "content": "", "message": "DOCX appears to be empty", "file_path": str(tmp_path / "e.docx"), "total_paragraphs": 0}
    assert (await session.read("bad.docx", mode="DOCX"))["message"].startswith("Error reading DOCX: ")


async def test_a_large_docx_is_capped(scripted_server, tmp_path):
    make_docx(tmp_path / "big.docx", [f"Paragraph number {i} with a few words." for i in range(2000)])
    out = await Session(scripted_server, tmp_path, {"files": {"docMaxTokens": 300}}).read("big.docx", mode="DOCX")
    assert out["truncated"] is True and out["total_paragraphs"] == 2000 and "documents tool group" in out["message"]


# --- the tool itself -----------------------------------------------------------------------------

def test_pdf_and_docx_libraries_are_imported_only_when_read(tmp_path):
    code = ("import sys; from mm.config.load import agent_config_adapter; from mm.tools.registry import build_registry;"
            "r = build_registry(agent_config_adapter().validate_python({'toolsets': ['core', 'files']}), {}, None);"
            "assert 'fs_read' in r.names; print(sorted(m for m in ('pypdf', 'docx', 'chardet') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.stdout.strip() == "[]", done.stderr


async def test_the_terminal_shows_the_content_read(scripted_server, tmp_path):
    (tmp_path / "f.txt").write_text("alpha\n")
    session = Session(scripted_server, tmp_path)
    (call,) = await session.done(("fs_read", {"path": "f.txt"}))
    assert call.result.preview == "     1\talpha" and not call.result.failed
    assert call.result.locations == [tmp_path / "f.txt"]


async def test_a_json_document_on_one_long_line_is_read_whole(scripted_server, tmp_path):
    document = json.dumps({"items": [{"id": i, "name": "x" * 50} for i in range(20000)]})  # ~1.4 MB, one line
    (tmp_path / "min.json").write_text(document)
    out = await Session(scripted_server, tmp_path, {"files": {"docMaxTokens": 100}}).read("min.json", mode="JSON")
    assert "error" not in out and out["total_lines"] == 1 and out["truncated"] is True
    assert out["content"].startswith('{"items": [{"id": 0, "name": "xxx') and out["content"].endswith("\n" + MARK)
    assert out["lines_included"] == 0
