"""The loop detector and runaway guard on their own (mm-tools.md §Loop detection)."""

import pytest
from hypothesis import given, strategies as st

from mm.engine.loops import LOOP_DETECTED, LoopDetector, RunawayError, check_runaway


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
