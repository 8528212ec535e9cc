"""The embedded engine's child process: llama.cpp's own server through xllamacpp.

Run as `python -m mm.llm.embedded_child MODEL PORT N_CTX [TEMPLATE_FILE]`. It prints
`listening <address>` on stdout once the server is up, and exits when told to (SIGTERM, SIGINT)
or when its parent dies (PR_SET_PDEATHSIG on Linux, and a parent poll elsewhere).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time


def _die_with_parent(parent: int) -> None:
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, daemon=True).start()


def main(argv: list[str]) -> int:
    """Start the server and wait for a signal; returns the exit status."""
    model, port, n_ctx = argv[0], int(argv[1]), int(argv[2])
    template = argv[3] if len(argv) > 3 else ""
    _die_with_parent(os.getppid())
    import xllamacpp as x

    params = x.CommonParams()
    params.model.path = model
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.use_jinja = True
    params.n_ctx = n_ctx
    params.n_parallel = 1
    threads = max(1, min(8, os.cpu_count() or 1))
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    if template:
        with open(template, encoding="utf-8") as f:
            params.chat_template = f.read()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    server = x.Server(params)
    print(f"listening {server.listening_address}", flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    os._exit(0)  # the server's threads do not stop by themselves


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
