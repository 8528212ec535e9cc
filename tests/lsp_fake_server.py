"""A language server for tests, over stdio, standard library only: it answers as a JSON script
tells it and logs every message it gets, so that tests see what mm sent and how it takes each
kind of answer (tests/test_lsp_fake.py).

Run as `python lsp_fake_server.py SCRIPT`. The script (JSON) may hold:
- `log`: a file each message received is appended to, one JSON object a line;
- `answers`: method → result sent as it is (`{root}` in a string: the root URI);
- `answers_at`: method → {"line:character": result}, null elsewhere;
- `errors`: method → the message of an error answer;
- `silent`: methods never answered;
- `crash_on`: a method at which it writes `crash_line` on stderr and exits with status 3;
- `exit_at_once`: write `crash_line` on stderr and exit with status 1 before reading anything;
- `no_exit`: true to ignore `exit` (it must be killed);
- `linger`: true to stay at the end of its input (only mm's command supervisor can end it then);
- `publish`: diagnostics published for a file each time it is opened or changed;
- `ask`: a request it sends the client after `initialized` (the answer is logged).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any


def read_message(stream: Any) -> dict | None:
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.lower() == "content-length":
            length = int(value.strip())
    return json.loads(stream.read(length))


def send(message: dict) -> None:
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def filled(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace("{root}", root)
    if isinstance(value, list):
        return [filled(v, root) for v in value]
    if isinstance(value, dict):
        return {filled(k, root): filled(v, root) for k, v in value.items()}
    return value


def main(script_path: str) -> int:
    with open(script_path) as f:
        script = json.load(f)
    if script.get("exit_at_once"):
        sys.stderr.write(script.get("crash_line", "") + "\n")
        return 1
    root = "file://" + os.getcwd()
    while True:
        message = read_message(sys.stdin.buffer)
        if message is None:
            while script.get("linger"):
                time.sleep(1)
            return 0
        if script.get("log"):
            with open(script["log"], "a") as log:
                log.write(json.dumps(message) + "\n")
        method = message.get("method")
        if method is None:  # the answer to our own request: logged above
            continue
        if method == script.get("crash_on"):
            sys.stderr.write(script.get("crash_line", "") + "\n")
            sys.stderr.flush()
            os._exit(3)
        if "id" in message:
            answer(message, method, script, root)
        elif method == "exit" and not script.get("no_exit"):
            return 0
        elif method == "initialized" and script.get("ask"):
            send({"jsonrpc": "2.0", "id": "ask-1", **script["ask"]})
        elif method in ("textDocument/didOpen", "textDocument/didChange") and "publish" in script:
            uri = message["params"]["textDocument"]["uri"]
            send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                  "params": {"uri": uri, "diagnostics": filled(script["publish"], root)}})


def answer(message: dict, method: str, script: dict, root: str) -> None:
    if method in script.get("silent", []):
        return
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
    if method in script.get("errors", {}):
        reply["error"] = {"code": -32603, "message": script["errors"][method]}
    elif method == "initialize":
        reply["result"] = {"capabilities": script.get("capabilities", {"textDocumentSync": 1}),
                           "serverInfo": {"name": "fake"}}
    elif method in script.get("answers", {}):
        reply["result"] = filled(script["answers"][method], root)
    elif method in script.get("answers_at", {}):
        position = message["params"]["position"]
        at = script["answers_at"][method].get(f"{position['line']}:{position['character']}")
        reply["result"] = filled(at, root)
    else:
        reply["result"] = None
    send(reply)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
