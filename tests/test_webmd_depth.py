"""Deep pages convert in time linear in their size, and a conversion can be cancelled (issue 10
§9; docs/webmd.md §Deep nesting): the nesting is capped before lexbor parses the page (its time
grows with the depth on every block start tag: 200,000 nested `<div>` took 106 s), and the
conversion looks at its caller's event while it runs."""

from __future__ import annotations

import asyncio
import sys
import threading
import traceback

import pytest

from harness import RecordingUI, make_conversation
from mm.webmd import ConversionCancelled, html_to_markdown
from mm.webmd.depth import MAX_DEPTH, MAX_FORMATTING, cap_depth


def nested(depth: int, tag: str = "div", text: str = "deep text") -> str:
    return f"<html><body>{f'<{tag}>' * depth}{text}{f'</{tag}>' * depth}</body></html>"


def left_open_formatting(paragraphs: int) -> str:
    """Paragraphs that each leave a different `<b>` open: the HTML5 parser opens every one of
    them again in each paragraph that follows (its size grows with the square of theirs)."""
    return "".join(f"<p><b class=c{i}>para {i}</p>" for i in range(paragraphs))


# -- the cap --------------------------------------------------------------------------------------

@pytest.mark.parametrize("depth", [10_000, 50_000, 200_000])
def test_a_deeply_nested_page_keeps_its_text(depth):
    assert html_to_markdown(nested(depth)) == "deep text\n"


def test_nesting_within_the_cap_is_left_as_it_is():
    page = nested(MAX_DEPTH - 2)  # html and body are open too
    assert cap_depth(page) is page


def test_past_the_cap_the_tags_go_and_the_text_stays():
    page = "".join(f"<div>level {i} " for i in range(MAX_DEPTH + 100)) + "</div>" * (MAX_DEPTH + 100)
    capped = cap_depth(page)
    assert capped.count("<div>") == MAX_DEPTH and capped.count("</div>") == MAX_DEPTH
    assert all(f"level {i} " in capped for i in range(MAX_DEPTH + 100))
    out = html_to_markdown(page)
    assert f"level {MAX_DEPTH + 99}" in out and "level 0" in out


def test_what_follows_a_capped_branch_is_not_nested_in_it():
    branch = "<section>" * (MAX_DEPTH + 50) + "inside" + "</section>" * (MAX_DEPTH + 50)
    capped = cap_depth(f"<div>{branch}</div><p>after</p>")
    assert capped.endswith("</div><p>after</p>")  # the end tags of the dropped sections went too
    assert capped.count("<section>") == capped.count("</section>")


@pytest.mark.parametrize("page", [
    "<ul>" + "<li><span>item" * 2000 + "</ul>",  # li closes the open li (and what it holds)
    "<table>" + "<tr><td><span>cell" * 2000 + "</table>",  # cells and rows close each other
    "<div>" + "<p><span>para" * 2000 + "</div>",  # a p closes an open p
    "<dl>" + "<dt>term<dd><i>def</i>" * 2000 + "</dl>",
    "<p>" + "<a href=x>link" * 2000,  # an a closes the open a
    "<select>" + "<option>choice" * 2000 + "</select>",
    "<svg>" + "<path d='M 0 0'/>" * 2000 + "</svg>",  # /> closes inside svg
    "<!-- " + "<div>" * 2000 + " -->" + "<p>x</p>" * 600,  # tags in a comment are text
    "<script>" + "'<div>'" * 2000 + "</script>" + "<p>x</p>" * 600,  # and in a script
    "<textarea>" + "<div>" * 2000 + "</textarea>" + "<p>x</p>" * 600,
    "<div title='a > b'>" + "<br>" * 2000 + "</div>",  # a quoted > does not end the tag
    "<b>" * 5 + "text" + "</b>" * 5 + "<b>x</b>" * 2000,  # formatting closed again
])
def test_pages_that_do_not_nest_deep_are_left_as_they_are(page):
    assert cap_depth(page) is page


def test_a_div_self_closed_outside_svg_still_nests():
    assert cap_depth("<div/>" * (MAX_DEPTH + 10)).count("<div/>") == MAX_DEPTH


def test_formatting_left_open_is_capped_and_the_text_kept():
    page = left_open_formatting(2000)
    capped = cap_depth(page)
    assert capped.count("<b class=") == MAX_FORMATTING
    out = html_to_markdown(page)
    assert all(f"para {i}" in out for i in (0, 7, 8, 999, 1999))


def test_a_dropped_formatting_tag_takes_its_end_tag_along():
    page = "<b class=k>" * MAX_FORMATTING + "<span>a</span>" + "<b>late</b>" + "<i>it</i>"
    assert cap_depth(page) == "<b class=k>" * MAX_FORMATTING + "<span>a</span>" + "late" + "it"


# -- cancellation ---------------------------------------------------------------------------------

def test_a_conversion_told_to_stop_before_it_starts_raises():
    stop = threading.Event()
    stop.set()
    with pytest.raises(ConversionCancelled):
        html_to_markdown(nested(20_000), cancelled=stop)


def converting() -> bool:
    """Whether a thread of this process is inside mm.webmd now."""
    return any("mm/webmd/" in frame.filename
               for top in sys._current_frames().values() for frame in traceback.extract_stack(top))


def test_a_conversion_stops_when_told_to_while_it_runs():
    stop, outcome = threading.Event(), []

    def convert() -> None:
        try:
            outcome.append(html_to_markdown(left_open_formatting(40_000), cancelled=stop))
        except ConversionCancelled as err:
            outcome.append(err)

    worker = threading.Thread(target=convert)
    worker.start()
    for _ in range(600):  # until it runs (a hang guard, not a time measured)
        if converting():
            break
        threading.Event().wait(0.05)
    stop.set()
    worker.join(120)
    assert not worker.is_alive() and isinstance(outcome[0], ConversionCancelled)


async def test_a_turn_cancelled_while_a_huge_page_converts_ends_with_error_cancelled(scripted_server, web,
                                                                                   tmp_path):
    web.page("/huge.html", left_open_formatting(200_000)[:4_900_000])  # under fetch_content's 5 MB
    scripted_server.add_tool_calls([{"id": "c1", "name": "fetch_content",
                                     "arguments": {"url": web.origin + "/huge.html"}}])
    scripted_server.add_reply("not asked")
    conv = make_conversation(scripted_server.base_url, tmp_path, {"fetchContentTool": True})
    ui = RecordingUI()
    turn = asyncio.create_task(conv.run_turn("fetch it", ui))
    for _ in range(1200):  # until the page converts (a hang guard)
        if converting():
            break
        await asyncio.sleep(0.05)
    assert converting(), "the conversion never started"
    conv.cancel()
    await asyncio.wait_for(turn, 60)  # the turn ends: it does not wait for the conversion
    assert ui.done_calls()[0].result.text == "[error: cancelled]"
    assert ui.turn_done().stop_reason == "cancelled"
    for _ in range(1200):  # the conversion's thread stops too
        if not converting():
            break
        await asyncio.sleep(0.05)
    assert not converting()
