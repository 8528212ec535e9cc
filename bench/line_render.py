"""Line mode's rendering of a streaming answer: CPU time per KB, against rendering it once.

Run: .venv/bin/python bench/line_render.py [--naive]

Streams answers of 5, 20 and 80 KB in 16-character chunks into line mode's view
(mm.ui.line.view.LineView, on a rich Console that takes itself for a terminal, writing to memory),
inside an event loop as the engine does, and measures the process's CPU time (rich's Live thread
included). Two shapes of answer: a typical one (headings, paragraphs, lists, code blocks, tables)
and a worst case (one code block that stays open to the end), and two paces: as fast as the loop
goes, and at most 16 KB/s (a fast model; line mode updates the screen 8 times a second). The baseline, in the same run, is the CPU time of
rendering the same answer once, whole, as Markdown on the same kind of console. Printed per row:
ms per KB streamed, ms per KB of the baseline, and their ratio: it must stay about flat as the
answer grows (issue 10 §9: rendering in time linear in the answer's size).

`--naive` adds what the rendering cost before (rich's Markdown of the whole answer at every
chunk), for 2.5 and 5 KB only: its ratio doubles with the size.
"""

from __future__ import annotations

import asyncio
import io
import sys
import time

from mm.events import TextChunk
from mm.ui.line.view import LineView

SIZES_KB = (5, 20, 80)
CHUNK = 16  # characters per chunk: a token or two, as a model streams them
PACE = 0.001  # seconds slept after each chunk in the paced runs: at most 16 KB/s, a fast model's pace


def typical(kb: int) -> str:
    """An answer of about `kb` KB: sections of a heading, a paragraph, a list, a code block, a table."""
    parts: list[str] = []
    size, n = 0, 0
    while size < kb * 1000:
        part = (f"## Step {n}\n\nThis paragraph explains **step {n}** with `inline code` and a "
                f"[link](https://example.com/{n}); it is long enough to wrap on the terminal once.\n\n"
                + "".join(f"- item {i} of list {n}, with *emphasis*\n" for i in range(4)) + "\n"
                + f"```python\ndef step_{n}(x):\n    return x * {n}\n\nprint(step_{n}(2))\n```\n\n"
                + "| name | value |\n|---|---|\n" + "".join(f"| row {i} | {i * n} |\n" for i in range(3)) + "\n")
        parts.append(part)
        size, n = size + len(part), n + 1
    return "".join(parts)


def one_code_block(kb: int) -> str:
    """An answer of about `kb` KB that is one code block, never closed: one block open to the end."""
    lines = ["Here is the file:", "", "```python"]
    n = 0
    while sum(len(line) + 1 for line in lines) < kb * 1000:
        lines.append(f"value_{n} = compute({n}, factor={n % 7})  # line {n}")
        n += 1
    return "\n".join(lines)


def terminal_console():
    from rich.console import Console

    return Console(file=io.StringIO(), force_terminal=True, width=100, height=40, color_system="truecolor")


def baseline(text: str) -> float:
    """CPU seconds to render `text` once, whole, as Markdown."""
    from rich.markdown import Markdown

    console = terminal_console()
    started = time.process_time()
    console.print(Markdown(text))
    return time.process_time() - started


async def streamed(text: str, paced: bool) -> float:
    """CPU seconds to stream `text` into LineView in CHUNK-character chunks (`paced`: PACE after each)."""
    view = LineView(terminal_console(), 5)
    started = time.process_time()
    view.start_turn()
    for at in range(0, len(text), CHUNK):
        view.emit(TextChunk(text[at:at + CHUNK]))
        await asyncio.sleep(PACE if paced else 0)
    view.close()
    return time.process_time() - started


def naive(text: str) -> float:
    """CPU seconds of the rendering before: rich's Markdown of the whole answer at every chunk."""
    from rich.markdown import Markdown

    console = terminal_console()
    started = time.process_time()
    for at in range(CHUNK, len(text) + CHUNK, CHUNK):
        console.print(Markdown(text[:at]))
    return time.process_time() - started


def row(label: str, kb: float, seconds: float, base: float) -> None:
    print(f"{label:<34} {kb:5.1f} KB  {seconds * 1000 / kb:8.2f} ms/KB   baseline {base * 1000 / kb:6.2f} ms/KB"
          f"   ratio {seconds / base:6.1f}")


def main() -> None:
    print(f"{CHUNK}-character chunks; ratio = CPU streamed / CPU of rendering the answer once")
    for shape, make in (("typical", typical), ("one open code block", one_code_block)):
        for paced in (False, True):
            for kb in SIZES_KB:
                text = make(kb)
                base = min(baseline(text) for _ in range(3))
                seconds = asyncio.run(streamed(text, paced))
                row(f"{shape}, {'paced' if paced else 'burst'}", len(text) / 1000, seconds, base)
    if "--naive" in sys.argv[1:]:
        for kb in (2.5, 5):
            text = typical(int(kb) + 1)[:int(kb * 1000)]
            row("naive: whole answer at every chunk", len(text) / 1000, naive(text), baseline(text))


if __name__ == "__main__":
    main()
