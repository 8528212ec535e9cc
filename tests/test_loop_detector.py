"""The loop detector and runaway guard on their own (mm-tools.md §Loop detection)."""

import pytest
from hypothesis import given, strategies as st

from mm.engine.loops import LOOP_DETECTED, LoopDetector
from mm.engine.runaway import RunawayError, check_runaway


def test_third_to_fifth_append_sixth_stops():
    det = LoopDetector()
    actions = [det.record("edit_file", {"path": "a"}, "refused").action for _ in range(6)]
    assert actions == ["keep", "keep", "append", "append", "append", "stop"]
    assert det.stop_message("edit_file", 6) == (
        "[error: the model repeated the same edit_file call 6 times in a row with the same failing result — "
        "turn stopped by the loop detector; rephrase the request, or fix what the tool kept reporting]")


def test_different_call_output_or_reset_starts_again():
    det = LoopDetector()
    for _ in range(2):
        det.record("bash", {"command": "ls"}, "x")
    assert det.record("bash", {"command": "ls"}, "y").action == "keep"  # output differs
    det.record("bash", {"command": "ls"}, "y")
    det.reset()
    assert det.record("bash", {"command": "ls"}, "y").count == 1


def test_argument_order_does_not_matter():
    det = LoopDetector()
    det.record("t", {"a": 1, "b": 2}, "o")
    assert det.record("t", {"b": 2, "a": 1}, "o").count == 2


def test_loop_detected_text_is_the_reference():
    assert LOOP_DETECTED == ("[LOOP_DETECTED: You have attempted the same action multiple times with the same "
                             "result. Please try a different approach or provide more information.]")


@pytest.mark.parametrize("unit", ["abcd", "line\\n", "x" * 64, "    "])
def test_repeating_pattern_runs_away(unit):
    text = '{"content": "' + unit * (600 // len(unit))
    with pytest.raises(RunawayError) as info:
        check_runaway(text)
    msg = str(info.value)
    assert msg.startswith("[error: the model's tool call ran away: its arguments repeat the same pattern (")
    assert msg.endswith(") — generation stopped; rephrase the request, or try another model]")


def test_size_runs_away():
    text = "".join(f"line {i}\\n" for i in range(40000))
    check_runaway(text[:256_000])
    with pytest.raises(RunawayError, match="exceed 256 KB"):
        check_runaway(text[:256_001])


def test_ordinary_code_does_not_run_away():
    code = "".join(f"def f{i}(x):\\n    return x + {i}\\n\\n" for i in range(200))
    for end in range(256, len(code), 97):
        check_runaway(code[:end])


@given(st.text(min_size=0, max_size=300))
def test_never_raises_on_short_text(text):
    if len(text) < 256:
        check_runaway(text)


def cycle_actions(det: LoopDetector, block: list[tuple[str, dict, str]], times: int) -> list[str]:
    return [det.record(*call).action for _ in range(times) for call in block]


@pytest.mark.parametrize("length", [2, 3])
def test_a_cycle_gets_the_note_at_its_third_repetition_and_stops_at_its_sixth(length):
    from mm.engine.loops import CYCLE_STOPPED

    block = [("edit_file", {"path": "a"}, "refused"), ("read_file", {"path": "a"}, "text"),
             ("bash", {"command": "ls"}, "a\n")][:length]
    det = LoopDetector()
    actions = cycle_actions(det, block, 6)
    first_note = 3 * length - 1
    assert actions[:first_note] == ["keep"] * first_note
    assert actions[first_note:-1] == ["append"] * (len(actions) - first_note - 1)
    assert actions[-1] == "stop"
    tools = ", ".join(name for name, _, _ in block)
    assert det.record(*block[0]).text == CYCLE_STOPPED.format(n=length, tools=tools, count=6)


def test_cycle_texts():
    from mm.engine.loops import CYCLE_STOPPED, SAME_ERROR_NOTE, SAME_ERROR_STOPPED

    assert CYCLE_STOPPED.format(n=2, tools="edit_file, read_file", count=6) == (
        "[error: the model repeated the same cycle of 2 calls (edit_file, read_file) 6 times in a row with the same "
        "results — turn stopped by the loop detector; rephrase the request, or fix what the tools kept reporting]")
    assert SAME_ERROR_NOTE.format(tool="bash", count=3) == (
        "[mm: bash failed 3 times in a row with this same error, each time with other arguments — this approach "
        "keeps failing the same way: read what the error says and change the approach]")
    assert SAME_ERROR_STOPPED.format(tool="bash", count=6) == (
        "[error: bash failed 6 times in a row with the same error, each time with other arguments — turn stopped "
        "by the loop detector; rephrase the request, or fix what the tool kept reporting]")


def test_a_broken_cycle_or_a_changed_result_starts_again():
    det = LoopDetector()
    a, b = ("read_file", {"path": "a"}, "x"), ("read_file", {"path": "b"}, "y")
    assert cycle_actions(det, [a, b], 2) == ["keep"] * 4
    det.record("read_file", {"path": "b"}, "changed")
    assert cycle_actions(det, [a, b], 2) == ["keep"] * 4
    assert cycle_actions(det, [a, b], 1) == ["keep", "append"]  # the third repetition is complete


def test_the_single_call_rule_is_unchanged_by_the_cycle_rule():
    det = LoopDetector()
    verdicts = [det.record("t", {"a": 1}, "o") for _ in range(8)]
    assert [v.action for v in verdicts] == ["keep", "keep", "append", "append", "append", "stop", "stop", "stop"]
    assert verdicts[6].text == det.stop_message("t", 7)


def test_the_same_error_with_other_arguments():
    from mm.engine.loops import SAME_ERROR_NOTE, SAME_ERROR_STOPPED

    det = LoopDetector()
    verdicts = [det.record("bash", {"command": f"test -e f{i}"}, "[exit 1]", failed=True) for i in range(6)]
    assert [v.action for v in verdicts] == ["keep", "keep", "append", "append", "append", "stop"]
    assert verdicts[2].text == SAME_ERROR_NOTE.format(tool="bash", count=3)
    assert verdicts[5].text == SAME_ERROR_STOPPED.format(tool="bash", count=6)


@pytest.mark.parametrize("between", [("bash", {"command": "x"}, "[exit 2]", True),  # another error
                                     ("bash", {"command": "y"}, "[exit 1]", False),  # a success
                                     ("read_file", {"path": "a"}, "[exit 1]", True)])  # another tool
def test_the_same_error_count_starts_again(between):
    det = LoopDetector()
    for i in range(2):
        det.record("bash", {"command": f"c{i}"}, "[exit 1]", failed=True)
    det.record(*between)
    assert [det.record("bash", {"command": f"d{i}"}, "[exit 1]", failed=True).action for i in range(3)] == [
        "keep", "keep", "append"]


def test_text_watch_and_its_marker():
    from mm.engine.runaway import ANSWER_RUNAWAY, RUNAWAY_MARKER, AnswerRunaway, RepeatWatch, runaway_marker

    watch = RepeatWatch("text")
    watch.feed("Here is the plan: ")
    with pytest.raises(AnswerRunaway) as info:
        for _ in range(100):
            watch.feed("la la ")
    err = info.value
    tail = " la" + " la la" * 6 + " "
    assert err.period == 6 and str(err) == ANSWER_RUNAWAY.format(what="text", n=watch.size, tail=tail)
    shown = "Here is the plan: " + "la la " * 50
    assert runaway_marker(err, shown) == ("Here is the plan: la la\n"
                                          + RUNAWAY_MARKER.format(what="text", period=6))
    assert RUNAWAY_MARKER.format(what="text", period=6) == (
        "[… mm stopped the answer here: its text kept repeating the same 6-character pattern …]")
    assert ANSWER_RUNAWAY.format(what="reasoning", n=300, tail="abc") == (
        "[error: the model's answer ran away: its reasoning repeats the same pattern (300 characters so far: …abc)"
        " — generation stopped; rephrase the request, or try another model]")


@pytest.mark.parametrize("text", ["=" * 255 + "\n", "| a | b |\n|---|---|\n" * 12, "ha" * 127 + "!" + "ha" * 100,
                                  "".join(f"- item {i}\n" for i in range(100))])
def test_repetition_shorter_than_the_window_is_not_stopped(text):
    from mm.engine.runaway import RepeatWatch

    watch = RepeatWatch("text")
    for i in range(0, len(text), 7):
        watch.feed(text[i:i + 7])
