"""Line mode renders a streaming answer once (issue 10 §9): the blocks that are complete are printed
once above the live region, the open one rendered again; what the user sees is the answer
rendered whole, on a pipe and on a real pseudo-terminal (read through a terminal emulator, pyte)."""

import io
import os
import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_line_mode import console_to, drive
from test_line_mode_terminal import Terminal, spawn_on_terminal


def _chunk(delta: dict, finish=None) -> dict:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def stream(srv, content: str, size: int, reasoning: str = "", delay: float = 0.0) -> None:
    """One answer streamed in chunks of `size` characters (its reasoning first)."""
    chunks = [_chunk({"role": "assistant", "content": ""})]
    chunks += [_chunk({"reasoning_content": reasoning[i:i + size]}) for i in range(0, len(reasoning), size)]
    chunks += [_chunk({"content": content[i:i + size]}) for i in range(0, len(content), size)]
    srv.add_sse(chunks + [_chunk({}, "stop"), "data: [DONE]"], delay=delay)


def long_answer(sections: int) -> str:
    """A model's long answer: headings, paragraphs, a list, a code block and a table per section,
    every line marked with its section so that each can be counted on the screen."""
    parts = []
    for n in range(sections):
        parts.append(f"## Section {n}\n\nParagraph {n}: the **first** point, with `inline code` and a "
                     f"[link](https://example.com/{n}); it goes on long enough to wrap on the terminal.\n\n")
        parts.append("".join(f"- item {n}.{i} of the list\n" for i in range(3)) + "\n")
        parts.append(f"```python\ndef section_{n}(x):\n    return x + {n}\n```\n\n")
        parts.append(f"| column | value |\n|---|---|\n| row {n}.a | {n} |\n| row {n}.b | {n + 1} |\n\n")
    return "".join(parts) + "That is all."


def rendered_whole(text: str, thought: str = "") -> str:
    """`text` (and `thought`, dimmed) as line mode rendered it before streaming by blocks: one
    Markdown of the whole answer, on the console the tests use."""
    from rich.console import Group
    from rich.markdown import Markdown
    from rich.text import Text

    out = io.StringIO()
    parts = [Text(thought.strip(), style="dim italic")] if thought.strip() else []
    console_to(out).print(Group(*parts, Markdown(text)))
    return out.getvalue()


def streamed_view(chunks: list[tuple[str, bool]], every_chunk: bool) -> str:
    """What LineView prints on a console without a terminal for `chunks` (text, is a thought)."""
    from mm.events import TextChunk, ThoughtChunk
    from mm.ui.line import view as line_view

    out = io.StringIO()
    shown = line_view.LineView(console_to(out), 5)
    shown.start_turn()
    for text, thought in chunks:
        shown.emit(ThoughtChunk(text) if thought else TextChunk(text))
        if every_chunk:
            shown._next_update = 0.0  # no time between two chunks: every chunk updates
    shown.close()
    return out.getvalue()


MARKDOWN_PIECES = ["# Title\n", "Title\n===\n", "para one\n", "para two, *em*\n", "\n", "\n\n", "- a\n", "- b\n",
                   "  indented continuation\n", "1. one\n", "2) two\n", "> quote\n", "lazy line\n", "```py\n",
                   "x = 1\n", "```\n", "~~~\n", "    code block\n", "---\n", "***\n", "| a | b |\n", "|---|---|\n",
                   "| 1 | 2 |\n", "![img](http://x/y.png)\n", "<div>html</div>\n", "text \x1b[2J\n", "tab\there\n"]


@settings(max_examples=150, deadline=None)
@given(pieces=st.lists(st.sampled_from(MARKDOWN_PIECES), min_size=1, max_size=30),
       cuts=st.lists(st.integers(1, 25), min_size=1, max_size=60),
       thought=st.sampled_from(["", "  I think\n\nabout it\nfor a while\n\n", "one line"]))
def test_every_way_of_cutting_an_answer_prints_it_as_rendered_whole(pieces, cuts, thought):
    from mm.ui.line.view import safe

    text = "".join(pieces) + "\n\nthe end"  # (an answer of HTML alone renders nothing: a blank line)
    chunks: list[tuple[str, bool]] = []
    for source, is_thought in ((thought, True), (text, False)):
        at, i = 0, 0
        while at < len(source):
            size = cuts[i % len(cuts)]
            chunks.append((source[at:at + size], is_thought))
            at, i = at + size, i + 1
    assert streamed_view(chunks, every_chunk=True) == rendered_whole(safe(text), safe(thought))


async def test_a_long_answer_in_small_chunks_is_printed_as_rendered_whole(scripted_server, tmp_path):
    answer = long_answer(12)
    stream(scripted_server, answer, 7, reasoning="Let me think.\n\nFirst this,\nthen that.\n")
    shown = await drive(scripted_server, tmp_path, ["go\r", "/quit\r"])
    whole = rendered_whole(answer, "Let me think.\n\nFirst this,\nthen that.\n")
    assert whole in shown
    assert shown.count("Paragraph 5: the first point") == 1 and shown.count("def section_11(x):") == 1


def screen_lines(raw: bytes, columns: int, rows: int) -> list[str]:
    """Every line a terminal of `columns` × `rows` shows after `raw`: those scrolled off first."""
    import pyte

    screen = pyte.HistoryScreen(columns, rows, history=100_000)
    pyte.ByteStream(screen).feed(raw)
    scrolled = ["".join(line[x].data for x in range(columns)) for line in screen.history.top]
    return [line.rstrip() for line in scrolled + list(screen.display)]


def test_a_long_streamed_answer_on_a_terminal_shows_each_block_once(scripted_server, tmp_path):
    answer = long_answer(15)  # about 5 KB, twice the terminal's height
    stream(scripted_server, answer, 9, reasoning="Thinking it over.\nStill thinking.\n", delay=0.002)
    proc, fd = spawn_on_terminal([sys.executable, "-m", "mm", "--base-url", scripted_server.base_url,
                                  "--model", "m"], tmp_path, size=(30, 100))
    terminal = Terminal(fd)
    try:
        terminal.expect("›")
        terminal.write("go\r")
        terminal.expect("That is all.", timeout=120)
        terminal.expect("›", timeout=60)  # the recap, then the next prompt
        terminal.write("/quit\r")
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(fd)
    lines = screen_lines(terminal.raw, 100, 30)
    text = "\n".join(lines)
    assert "Traceback" not in text
    for n in range(15):
        for marker in (f"Section {n}", f"Paragraph {n}: the first point", f"• item {n}.2 of the list",
                       f"def section_{n}(x):", f"return x + {n}", f"row {n}.a", f"row {n}.b"):
            assert len(re.findall(re.escape(marker) + r"(?![0-9])", text)) == 1, marker
    order = [text.index(f"Section {n}\n") for n in range(15)]
    assert order == sorted(order)
    assert text.count("Thinking it over.") == 1 and text.count("Still thinking.") == 1
    assert text.index("Still thinking.") < text.index("Section 0")
    assert text.index("That is all.") < text.index("⚙ 0 command(s)")

