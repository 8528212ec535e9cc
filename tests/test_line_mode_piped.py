"""Line mode with its prompts piped in (`printf … | mm`): one prompt per line, no terminal needed."""

import os
import subprocess
import sys


def test_prompts_from_a_pipe_run_one_per_line(scripted_server, tmp_path):
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": "echo piped"}}])
    scripted_server.add_reply("It printed **piped**.")
    scripted_server.add_reply("Second answer.")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "mm", "--base-url", scripted_server.base_url, "--model", "m"],
                          input="run it\n/usage\nagain\n", capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Input is not a terminal" not in out + proc.stderr
    assert out.count("› run it\n") == 1 and out.count("› again\n") == 1  # each prompt shown once
    assert "🛠️  bash: echo piped" in out and "It printed piped." in out and "Second answer." in out
    assert "📊 session: 20 input · 10 output" in out
    assert [m["content"] for m in scripted_server.requests[2]["messages"] if m["role"] == "user"] == ["run it", "again"]
