"""`mm -acp` stopped by a signal exits 0, idle or in a session (docs/acp.md §Transport): editors
stop their agents with SIGTERM."""

import json
import os
import signal
import subprocess
import sys

import pytest


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=["TERM", "INT", "HUP"])
@pytest.mark.parametrize("busy", [False, True], ids=["idle", "in-a-session"])
def test_a_signal_ends_mm_acp_cleanly(tmp_path, scripted_server, sig, busy):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "mm", "-acp", "--base-url", scripted_server.base_url,
                             "--model", "m"], cwd=tmp_path, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        if busy:
            init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
            new = {"jsonrpc": "2.0", "id": 2, "method": "session/new",
                   "params": {"cwd": str(tmp_path), "mcpServers": []}}
            proc.stdin.write((json.dumps(init) + "\n" + json.dumps(new) + "\n").encode())
            proc.stdin.flush()
            assert [json.loads(proc.stdout.readline()).get("id") for _ in range(2)] == [1, 2]
        else:  # nothing ever sent: mm waits in its stdin reader from the start
            assert b"serves the Agent Client Protocol" in proc.stderr.readline()
        proc.send_signal(sig)  # stdin still open
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 0, err.decode()
    assert b"Fatal Python error" not in err and b"Traceback" not in err
    assert all(json.loads(line) for line in out.splitlines())
