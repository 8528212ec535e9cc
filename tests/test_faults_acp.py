"""The fault suite, ACP's input (issue 10.5): a real `mm -acp` over stdio gets lines no client should send
— brackets nested a thousand deep and more, numbers of thousands of digits, bytes that are not
UTF-8, JSON that is not a JSON-RPC object — and answers each with its JSON-RPC error, then goes
on serving: the prompt after them is answered. Hypothesis draws the bad lines (a fixed, short run).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_cases import child_env, run_case
from test_faults_stream import INIT, acp_steps_to_a_session, prompt

PARSE_ERROR = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700}}
INVALID_REQUEST = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600}}
ACP = settings(max_examples=int(os.environ.get("FAULT_EXAMPLES", "3")), deadline=None, derandomize=True,
               database=None, suppress_health_check=list(HealthCheck))


def nested(depth: int, inner: str = "") -> str:
    return "[" * depth + inner + "]" * depth


def test_lines_nested_too_deep_each_get_an_error_and_the_prompt_after_is_answered(scripted_server, tmp_path):
    request_too_deep = ('{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"x":'
                        + "{\"a\":" * 5000 + "1" + "}" * 5000 + "}}")
    bad = [
        (nested(1000), PARSE_ERROR),
        (nested(100_000), PARSE_ERROR),
        (request_too_deep, PARSE_ERROR),
        ("9" * 5000, PARSE_ERROR),  # more digits than Python reads as an integer
        ('{"jsonrpc":"2.0","id":1', PARSE_ERROR),
        (nested(50), INVALID_REQUEST),
        ('"a string"', INVALID_REQUEST),
        ("1e999999", INVALID_REQUEST),
        ('{"jsonrpc":"2.0","id":7,"method":12}', {"jsonrpc": "2.0", "id": 7, "error": {"code": -32600}}),
        ('{"jsonrpc":"2.0","id":{"a":1},"method":"initialize"}', INVALID_REQUEST),
    ]
    steps = []
    for line, answer in bad:
        steps += [{"send_raw": line}, {"receive": answer}]
    case = {
        "id": "faults-acp-bad-lines", "area": "acp", "agent_config": {},
        "model_script": [{"content": "Still here."}],
        "steps": steps + acp_steps_to_a_session() + [
            prompt(3, "are you there?"),
            {"receive_text": "Still here."},
            {"receive": {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}},
        ],
        "expect": {"steps_pass": True, "stdout_only_jsonrpc": True, "process_alive_after": True},
    }
    run = run_case(case, tmp_path, scripted_server)
    assert "Traceback" not in run.stderr and "RecursionError" not in run.stderr


class Agent:
    """`mm -acp` with its stdout read by a thread: `messages` as they come."""

    def __init__(self, cwd, base_url: str):
        (cwd / "home").mkdir(exist_ok=True)
        argv = [sys.executable, "-m", "mm", "-acp", "--base-url", base_url, "--model", "m"]
        self.proc = subprocess.Popen(argv, cwd=cwd, env=child_env(cwd / "home"), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.messages: list = []
        self.other: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr = b""
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                self.messages.append(json.loads(line))
            except ValueError:
                self.other.append(line)

    def _read_stderr(self) -> None:
        self.stderr = self.proc.stderr.read()

    def send(self, data: bytes) -> None:
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def wait_for(self, test, timeout: float = 60.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(test(m) for m in self.messages):
                return True
            time.sleep(0.05)
        return False

    def close(self) -> int:
        try:
            self.proc.stdin.close()
            return self.proc.wait(15)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


NOT_UTF8 = st.binary(min_size=1, max_size=40).filter(lambda b: b"\n" not in b and not _utf8(b))


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


BAD_LINES = st.one_of(
    st.integers(200, 20_000).map(nested),
    st.integers(200, 20_000).map(lambda d: '{"a":' * d + "0" + "}" * d),
    st.text(min_size=1, max_size=40).filter(lambda t: "\n" not in t and "\r" not in t and t.strip()).map(
        lambda t: t.encode("utf-8", "surrogatepass")),
    NOT_UTF8,
    st.one_of(st.integers(), st.floats(allow_nan=False), st.text(max_size=10), st.lists(st.integers(), max_size=3),
              st.dictionaries(st.sampled_from(["jsonrpc", "params", "result", "x"]), st.integers(), max_size=3))
    .map(lambda v: json.dumps(v).encode()),
)


def _to_bytes(line) -> bytes:
    return line if isinstance(line, bytes) else line.encode()


def test_fuzzed_bad_lines_each_get_one_error_and_mm_serves_on(scripted_server, tmp_path):
    @ACP
    @given(lines=st.lists(BAD_LINES, min_size=5, max_size=25))
    def run(lines):
        lines = [_to_bytes(line) for line in lines if _to_bytes(line).strip()]
        agent = Agent(tmp_path, scripted_server.base_url)
        try:
            for line in lines:
                agent.send(line)
            agent.send(json.dumps(INIT).encode())
            assert agent.wait_for(lambda m: m.get("id") == 1 and "result" in m), agent.stderr[-2000:]
            errors = [m for m in agent.messages if "error" in m]
            assert len(errors) == len(lines), (lines, agent.messages)
            assert all(m["id"] is None and m["error"]["code"] in (-32700, -32600) for m in errors)
            assert agent.other == []
        finally:
            assert agent.close() == 0
        assert b"Traceback" not in agent.stderr and b"RecursionError" not in agent.stderr

    run()
