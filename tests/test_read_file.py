"""The `read_file` tool (mm-tools.md §read_file; decisions in docs/tools-bash.md)."""

from __future__ import annotations

from pathlib import Path

from mm.tools.base import Settings, ToolContext
from mm.tools.read_file import ReadFile

TEXT = "one\ntwo\nthree\nfour\n"


def context(tmp_path: Path, max_output: int = 20000) -> ToolContext:
    return ToolContext(cwd=tmp_path, settings=Settings(max_output=max_output))


async def read(tmp_path: Path, max_output: int = 20000, **args):
    full = {"start": 0, "end": 0, "numbered": False} | args
    return await ReadFile().run(full, context(tmp_path, max_output))


def test_declaration() -> None:
    tool = ReadFile()
    assert (tool.name, tool.kind, tool.needs_permission) == ("read_file", "read", False)
    assert [(p.name, p.type, p.required, p.default) for p in tool.params] == [
        ("path", "string", True, None),
        ("start", "integer", False, 0),
        ("end", "integer", False, 0),
        ("numbered", "boolean", False, False),
    ]


async def test_whole_file_keeps_its_final_newline(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    result = await read(tmp_path, path="a.txt")
    assert (result.text, result.failed) == (TEXT, False)
    assert result.locations == [tmp_path / "a.txt"]


async def test_file_without_final_newline(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo")
    assert (await read(tmp_path, path="a.txt")).text == "one\ntwo"


async def test_range_drops_the_final_newline_before_the_end(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    assert (await read(tmp_path, path="a.txt", start=2, end=3)).text == "two\nthree"


async def test_range_to_the_end_keeps_the_final_newline(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    assert (await read(tmp_path, path="a.txt", start=3)).text == "three\nfour\n"
    assert (await read(tmp_path, path="a.txt", start=3, end=99)).text == "three\nfour\n"
    assert (await read(tmp_path, path="a.txt", end=1)).text == "one"


async def test_numbered(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    result = await read(tmp_path, path="a.txt", start=3, numbered=True)
    assert result.text == "     3\tthree\n     4\tfour\n"


async def test_absolute_path(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    result = await ReadFile().run({"path": str(tmp_path / "a.txt")}, context(Path("/")))
    assert result.text == TEXT


async def test_missing_file(tmp_path: Path) -> None:
    result = await read(tmp_path, path="sub/none.txt")
    assert result.text == "sub/none.txt does not exist. Create it with write_file"
    assert result.failed


async def test_empty_file(tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_text("")
    assert (await read(tmp_path, path="e.txt")).text == ""
    assert (await read(tmp_path, path="e.txt", start=1)).text == ""


async def test_start_past_the_end(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    result = await read(tmp_path, path="a.txt", start=9)
    assert result.text == "a.txt has 4 lines: start 9 is past the end"
    assert result.failed


async def test_end_before_start(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    result = await read(tmp_path, path="a.txt", start=3, end=2)
    assert result.text.startswith("end 2 is before start 3")
    assert result.failed


async def test_negative_line(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    result = await read(tmp_path, path="a.txt", start=-1)
    assert result.text == "start -1 is not a line number: give 0 or a line number from 1"


async def test_directory_lists_its_entries(tmp_path: Path) -> None:
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "b.txt").write_text("")
    result = await read(tmp_path, path="d")
    assert result.text == "d is a directory, not a file. Its entries: b.txt, sub/"
    assert result.failed


async def test_binary_file(tmp_path: Path) -> None:
    (tmp_path / "x.bin").write_bytes(b"\x7fELF\x00\x01\x02")
    result = await read(tmp_path, path="x.bin")
    assert result.text == "x.bin is a binary file (7 bytes): read_file shows text only"
    assert result.failed


async def test_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "l.txt").write_bytes(b"caf\xe9\n")
    assert (await read(tmp_path, path="l.txt")).text == "caf\ufffd\n"


async def test_crlf_is_kept(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"a\r\nb\r\n")
    assert (await read(tmp_path, path="w.txt")).text == "a\r\nb\r\n"
    assert (await read(tmp_path, path="w.txt", end=1)).text == "a\r"


async def test_truncated_to_max_output_on_whole_lines(tmp_path: Path) -> None:
    lines = [f"line {n}" for n in range(1, 1001)]
    (tmp_path / "big.txt").write_text("\n".join(lines) + "\n")
    result = await read(tmp_path, max_output=500, path="big.txt", start=10)
    out = result.text
    assert len(out) <= 500
    assert out.startswith("line 10\nline 11\n")
    body, marker = out.rsplit("\n", 1)
    last = int(body.split("\n")[-1].split()[1])
    assert marker == (
        f"[... truncated to maxOutput (500 characters): lines 10-{last} of 1000 shown; "
        f"call read_file with start={last + 1} to read on ...]"
    )


async def test_single_line_longer_than_max_output(tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("x" * 5000 + "\n")
    out = (await read(tmp_path, max_output=400, path="min.js")).text
    assert len(out) <= 400
    assert out.startswith("xxxx")
    assert out.endswith(
        "[... truncated to maxOutput (400 characters): line 1 of 1 is longer than that "
        "and only its start is shown ...]"
    )


async def test_empty_path(tmp_path: Path) -> None:
    result = await read(tmp_path, path="")
    assert result.failed
    assert "path is empty" in result.text
