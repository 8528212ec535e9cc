"""The runner of tests/cases/acp/*.json (cases/README.md §Conventions, §sessions/, §acp/): it drives
a real `mm -acp` subprocess over stdio and checks `expect`, strictly.

API
---
- `match(pattern, actual, bindings=None) -> MatchResult(ok, bindings, reason)`: the pattern language.
- `substitute(value, bindings)`: the `{name}` placeholders (`{cwd}`, `{origin}`, captures) filled in.
- `falsy_path_problems(message, paths)`, `is_falsy(value)`, `jsonrpc_problem(obj)`.
- `run_case(case, tmp_path, scripted_server, command=None) -> Run`: sets the case up, runs its steps
  against `command` (default `python -m mm -acp`), checks every `expect` key, and raises
  `AssertionError` with the reasons, the stdout transcript and the stderr tail when anything fails.
- `check_expect(run) -> list[str]`: the `expect` checks on a finished `Run` (one problem per line).

Setup
-----
The case directory is `tmp_path` (realpath; it is `{cwd}`). `files` are written there as they are
(no placeholder is filled in file contents). `<cwd>/.mm/agent.yaml` holds `agent_config` plus
`baseUrl` (the scripted server) and `model: m`. `sessions` fixtures (placeholders filled,
`"summary": true` kept, `extra_fields` as in sessions/) are written with
`mm.sessions.store.session_record` / `write_session(index=False)` at
`<cwd>/<sessions.dir>/<id>.json` (`sessions.dir` of `agent_config`, else mm's default). Each
`model_script` entry goes to `scripted_server.add`. mm runs with the environment minus every `MM_*`
variable, `HOME` = `<tmp_path>/home` (fresh) and the `XDG_*` base directories inside it, and
without `PYTHONUNBUFFERED`: as an editor starts it, so a message mm forgets to flush times out.

Pattern language
----------------
- A dict matches partially: each key must be present (unless its pattern accepts absence:
  `{"$falsy": true}`) and match. Keys starting with `$` are operators on the whole value; plain keys
  and operators in one object all have to hold.
- A list matches element by element, same length. A scalar is JSON equality (`true` is not `1`).
- `$unordered` (list, same length, some permutation matches; backtracking), `$regex` (`re.search`,
  strings only), `$capture` (binds the value, any JSON type; the same name twice in one match must
  bind equal values; a later step may rebind it), `$exact` (deep JSON equality), `$falsy` (true:
  absent, null, false, "", [] or {}; `0` is not falsy; false: present and not falsy),
  `$contains` / `$not_contains` (a string or a list of them; strings only), `$starts_with` /
  `$not_starts_with` (strings only), `$json_contains` (the value's JSON text,
  `json.dumps(ensure_ascii=False)`, or one of its string leaves, contains the string; a leaf counts
  so that a newline or quote need not be written escaped). An unknown `$` operator is an error.
- Placeholders `{name}` (identifier names only, so regex counts like `\\d{8}` are untouched) are
  filled from the bindings when the pattern is applied; a string that is only `{name}` becomes the
  value with its JSON type; inside `$regex` the value is `re.escape`d. Unbound names stay as written.

Steps
-----
- `send` (placeholders filled, one compact JSON line), `send_raw` (the text plus a newline).
- `receive`: messages are read (20 s per step). The first that matches the pattern ends the step
  (then `falsy_paths` must hold on it: each dotted path absent, null, false or empty; a path through a
  truthy non-container fails). A message that does not match is skipped only if it is a
  `session/update` notification whose `sessionUpdate` is in `skippable_updates` (case key, default
  `["usage_update"]`); anything else (including a non-JSON line) fails the step.
- `receive_text`: `agent_message_chunk` text notifications are read and joined until they equal the
  text (skippable updates in between are skipped); a chunk that makes the joined text stop being a
  prefix of it, a non-text chunk, or any other message fails. The chunks must carry the `sessionId`
  of the last `session/prompt`/`session/load` sent (when one was sent). Extra chunks after the text
  are seen by the next step, which fails on them.
- After the last step (and after stdin is closed and mm has exited), every remaining message must be
  skippable: nothing unlisted may follow either.
- `expect.strict_order: true`: nothing at all may be skipped, not even `skippable_updates`.

`expect` keys (an unknown key, or an unsupported value, fails the test)
-----------------------------------------------------------------------
- `steps_pass: true`: the steps above pass (steps always run; their failure always fails the test).
- `strict_order: true`: see above.
- `stdout_only_jsonrpc: true`: every stdout line (skipped and trailing ones included) ends with a
  newline and is a JSON-RPC 2.0 message object: `"jsonrpc": "2.0"`; a request/notification has a
  string `method`, no `result`/`error`, an id (when present) that is a string, number or null, and
  object/array `params`; a response has an id and exactly one of `result` / `error`, the error an
  object with an integer `code` and a string `message`.
- `stderr_contains`: each string (placeholders filled) is in mm's whole stderr.
- `model_requests`: `count` = requests the scripted server received. `request_N_*` on the N-th
  (1-based): `last_user_message` (text of the last `user` message, text parts joined; a string must
  be equal, an object is a pattern on the text), `roles` (the list of roles, equal),
  `tools_include` (each name among the declared tools' function names), `tool_message` (the request
  must hold exactly one `tool` message; `content`: string equal or pattern on its text;
  `tool_call_id_matches_call: true`: its `tool_call_id` is non-empty and is the id of a tool call of
  the nearest `assistant` message before it that has `tool_calls`). Other keys fail.
- `files_absent`: no such path (not even a dangling link) under the case directory afterwards.
- `response_before_notification: true`: for every `session/new` sent, its response and then an
  `available_commands_update` for the returned `sessionId` are on stdout, the response first.
- `no_tool_ran: true`: (1) no `tool_call_update` notification and no `tool_call` whose status is not
  `completed`/`failed` (a live call is announced `pending`, the default when status is absent) was
  sent; (2) mm sent no request of its own to the client (permission, elicitation, fs, terminal);
  (3) the case directory is byte-for-byte unchanged (files, directories, links), except `HOME` and
  the sessions directory (mm may keep its own state there). The model's requests are counted by
  `model_requests`, not here.
- `agentInfo_version_equals_mm_version_output: true`: `result.agentInfo.version` of the response to
  the `initialize` sent equals the output of `python -m mm --version`, without `mm ` and the newline.
- `process_alive_after: true`: 0.5 s after the last step, before stdin is closed, mm still runs.
"""

from __future__ import annotations

import copy
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STEP_TIMEOUT = 20.0  # seconds a step may wait for mm's messages
EXIT_TIMEOUT = 5.0  # seconds mm has to exit once stdin is closed, before it is killed
ALIVE_SETTLE = 0.5  # seconds waited before checking `process_alive_after`
DEFAULT_SKIPPABLE = ["usage_update"]
AGENT_COMMAND = [sys.executable, "-m", "mm", "-acp"]
VERSION_COMMAND = [sys.executable, "-m", "mm", "--version"]

CASE_KEYS = {"id", "area", "kind", "source", "see", "description", "beyond_reference", "why", "note", "expect",
             "agent_config", "files", "sessions", "extra_fields", "model_script", "steps", "skippable_updates"}
SESSION_KEYS = {"id", "created", "updated", "cwd", "model", "messages", "errors", "usage"}
STEP_ACTIONS = ("send", "send_raw", "receive", "receive_text")
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class PatternError(Exception):
    """The pattern itself is malformed (an unknown operator, a bad operand): the test fails."""


class StepFailure(Exception):
    """A step did not pass."""


# ---------------------------------------------------------------------------------------------
# Placeholders


def _text_of_value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def substitute(value: Any, bindings: dict[str, Any], regex: bool = False) -> Any:
    """`value` with `{name}` placeholders filled, in strings at any depth (not in keys). A string that
    is exactly `{name}` becomes the bound value itself, with its JSON type (a copy). With `regex`, the
    filled text is `re.escape`d. Unbound names are left as written."""
    if isinstance(value, str):
        whole = PLACEHOLDER.fullmatch(value)
        if whole and whole.group(1) in bindings and not regex:
            return copy.deepcopy(bindings[whole.group(1)])

        def one(m: re.Match) -> str:
            if m.group(1) not in bindings:
                return m.group(0)
            text = _text_of_value(bindings[m.group(1)])
            return re.escape(text) if regex else text

        return PLACEHOLDER.sub(one, value)
    if isinstance(value, list):
        return [substitute(v, bindings, regex) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, bindings, regex) for k, v in value.items()}
    return value


# ---------------------------------------------------------------------------------------------
# Matching


class _Missing:
    def __repr__(self) -> str:
        return "<absent>"


MISSING = _Missing()
OPERATORS = ("$unordered", "$regex", "$capture", "$exact", "$falsy", "$contains", "$not_contains",
             "$starts_with", "$not_starts_with", "$json_contains")


@dataclass
class MatchResult:
    ok: bool
    bindings: dict[str, Any]
    reason: str = ""

    def __bool__(self) -> bool:
        return self.ok


def is_falsy(value: Any) -> bool:
    """Absent, null, false, or empty (string, list, object). `0` is not falsy."""
    if value is MISSING or value is None or value is False:
        return True
    return isinstance(value, (str, list, dict)) and len(value) == 0


def json_equal(a: Any, b: Any) -> bool:
    """Deep JSON equality: booleans are not numbers, 1 equals 1.0, objects ignore key order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if type(a) is not type(b):
        return False
    return a == b


def _short(value: Any, limit: int = 300) -> str:
    text = repr(value) if value is MISSING else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"


def _string_list(op: str, operand: Any) -> list[str]:
    items = [operand] if isinstance(operand, str) else operand
    if not isinstance(items, list) or not items or not all(isinstance(s, str) for s in items):
        raise PatternError(f"{op} takes a string or a non-empty list of strings, not {_short(operand)}")
    return items


def _string_leaves(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from _string_leaves(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _string_leaves(v)


def _where(path: str) -> str:
    return path or "(top)"


def _match(pattern: Any, actual: Any, path: str, binds: dict[str, Any]) -> str | None:
    """None when `actual` matches `pattern` (binding captures into `binds`), else the reason."""
    if isinstance(pattern, dict):
        ops = {k: v for k, v in pattern.items() if k.startswith("$")}
        keys = {k: v for k, v in pattern.items() if not k.startswith("$")}
        for op in ops:
            if op not in OPERATORS:
                raise PatternError(f"unknown pattern operator {op!r} at {_where(path)}")
        if keys:
            if actual is MISSING:
                return f"{_where(path)}: absent, expected an object"
            if not isinstance(actual, dict):
                return f"{_where(path)}: expected an object, got {_short(actual)}"
            for key, sub in keys.items():
                why = _match(sub, actual.get(key, MISSING), f"{path}.{key}" if path else key, binds)
                if why:
                    return why
        for op, operand in ops.items():
            if op == "$capture":
                continue
            why = _operator(op, operand, actual, path, binds)
            if why:
                return why
        if "$capture" in ops:
            name = ops["$capture"]
            if not isinstance(name, str) or not PLACEHOLDER.fullmatch("{" + name + "}"):
                raise PatternError(f"$capture takes a name, not {_short(name)}")
            if actual is MISSING:
                return f"{_where(path)}: absent, nothing to capture as {name!r}"
            if name in binds.get("\0fresh", set()) and not json_equal(binds[name], actual):
                return (f"{_where(path)}: {name!r} captured twice with different values: "
                        f"{_short(binds[name])} and {_short(actual)}")
            binds[name] = copy.deepcopy(actual)
            binds.setdefault("\0fresh", set()).add(name)
        return None
    if isinstance(pattern, list):
        if actual is MISSING:
            return f"{_where(path)}: absent, expected a list of {len(pattern)}"
        if not isinstance(actual, list):
            return f"{_where(path)}: expected a list, got {_short(actual)}"
        if len(actual) != len(pattern):
            return f"{_where(path)}: expected {len(pattern)} element(s), got {len(actual)}: {_short(actual)}"
        for i, (sub, item) in enumerate(zip(pattern, actual)):
            why = _match(sub, item, f"{path}[{i}]", binds)
            if why:
                return why
        return None
    expected = substitute(pattern, _public(binds))
    if actual is MISSING:
        return f"{_where(path)}: absent, expected {_short(expected)}"
    if not json_equal(expected, actual):
        return f"{_where(path)}: expected {_short(expected)}, got {_short(actual)}"
    return None


def _public(binds: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in binds.items() if k != "\0fresh"}


def _operator(op: str, operand: Any, actual: Any, path: str, binds: dict[str, Any]) -> str | None:
    where = _where(path)
    if op == "$falsy":
        if not isinstance(operand, bool):
            raise PatternError(f"$falsy takes true or false, not {_short(operand)}")
        if is_falsy(actual) != operand:
            return f"{where}: expected {'absent/null/false/empty' if operand else 'a truthy value'}, got {_short(actual)}"
        return None
    if actual is MISSING:
        return f"{where}: absent ({op} {_short(operand)})"
    if op == "$exact":
        expected = substitute(operand, _public(binds))
        if not json_equal(expected, actual):
            return f"{where}: expected exactly {_short(expected)}, got {_short(actual)}"
        return None
    if op == "$unordered":
        if not isinstance(operand, list):
            raise PatternError(f"$unordered takes a list, not {_short(operand)}")
        if not isinstance(actual, list):
            return f"{where}: expected a list, got {_short(actual)}"
        if len(actual) != len(operand):
            return f"{where}: expected {len(operand)} element(s) in any order, got {len(actual)}: {_short(actual)}"
        found = _unordered(operand, actual, path, binds)
        if found is None:
            reasons = []
            for i, sub in enumerate(operand):
                attempts = [_match(sub, item, f"{path}[{j}]", dict(binds)) for j, item in enumerate(actual)]
                if all(attempts):
                    reasons.append(f"pattern #{i} {_short(sub, 200)} matches no element")
            detail = "; ".join(reasons) or "no one-to-one assignment of the elements"
            return f"{where}: $unordered: {detail}; got {_short(actual)}"
        binds.clear()
        binds.update(found)
        return None
    if op == "$json_contains":
        needles = _string_list(op, substitute(operand, _public(binds)))
        text = json.dumps(actual, ensure_ascii=False)
        for needle in needles:
            if needle not in text and not any(needle in leaf for leaf in _string_leaves(actual)):
                return f"{where}: the JSON text does not contain {needle!r}: {_short(actual)}"
        return None
    # string operators
    if op == "$regex":
        regex = substitute(operand, _public(binds), regex=True)
        if not isinstance(regex, str):
            raise PatternError(f"$regex takes a string, not {_short(operand)}")
        if not isinstance(actual, str):
            return f"{where}: expected a string matching {regex!r}, got {_short(actual)}"
        if not re.search(regex, actual):
            return f"{where}: {_short(actual)} does not match {regex!r}"
        return None
    items = _string_list(op, substitute(operand, _public(binds)))
    if not isinstance(actual, str):
        return f"{where}: {op} needs a string, got {_short(actual)}"
    for item in items:
        if op == "$contains" and item not in actual:
            return f"{where}: {item!r} missing in {_short(actual)}"
        if op == "$not_contains" and item in actual:
            return f"{where}: {item!r} must not be in {_short(actual)}"
        if op == "$starts_with" and not actual.startswith(item):
            return f"{where}: {_short(actual)} does not start with {item!r}"
        if op == "$not_starts_with" and actual.startswith(item):
            return f"{where}: {_short(actual)} must not start with {item!r}"
    return None


def _unordered(patterns: list, items: list, path: str, binds: dict[str, Any]) -> dict | None:
    """A bindings dict for an assignment of each pattern to a distinct item, or None (backtracking)."""
    def assign(i: int, used: frozenset, current: dict) -> dict | None:
        if i == len(patterns):
            return current
        for j, item in enumerate(items):
            if j in used:
                continue
            trial = dict(current)
            trial["\0fresh"] = set(current.get("\0fresh", set()))
            if _match(patterns[i], item, f"{path}[{j}]", trial) is None:
                done = assign(i + 1, used | {j}, trial)
                if done is not None:
                    return done
        return None

    return assign(0, frozenset(), binds)


def match(pattern: Any, actual: Any, bindings: dict[str, Any] | None = None) -> MatchResult:
    """Match `actual` against `pattern` (module docstring). On success `bindings` of the result are
    the given ones plus the captures; on failure they are the given ones, unchanged."""
    given = dict(bindings or {})
    binds = dict(given)
    why = _match(pattern, actual, "", binds)
    if why:
        return MatchResult(False, given, why)
    return MatchResult(True, _public(binds))


def resolve_path(message: Any, dotted: str) -> Any:
    """The value at `a.b.0.c` in `message`, MISSING when a step is absent or falsy; raises ValueError
    when a step goes through a truthy value that is not an object or list."""
    value = message
    for part in dotted.split("."):
        if is_falsy(value):
            return MISSING
        if isinstance(value, dict):
            value = value.get(part, MISSING)
        elif isinstance(value, list) and part.isdigit():
            value = value[int(part)] if int(part) < len(value) else MISSING
        else:
            raise ValueError(f"{dotted}: {_short(value)} has no {part!r}")
    return value


def falsy_path_problems(message: Any, paths: list[str]) -> list[str]:
    """One problem per dotted path that is not absent, null, false or empty in `message`."""
    problems = []
    for dotted in paths:
        try:
            value = resolve_path(message, dotted)
        except ValueError as err:
            problems.append(f"falsy_paths: {err}")
            continue
        if not is_falsy(value):
            problems.append(f"falsy_paths: {dotted} is {_short(value)}, expected absent/null/false/empty")
    return problems


# ---------------------------------------------------------------------------------------------
# JSON-RPC


def _valid_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool))


def jsonrpc_problem(obj: Any) -> str | None:
    """None when `obj` is a JSON-RPC 2.0 message object (request, notification or response)."""
    if not isinstance(obj, dict):
        return f"not a JSON object: {_short(obj)}"
    if obj.get("jsonrpc") != "2.0":
        return f'"jsonrpc" is not "2.0": {_short(obj)}'
    if "method" in obj:
        if not isinstance(obj["method"], str):
            return f"the method is not a string: {_short(obj)}"
        if "result" in obj or "error" in obj:
            return f"a request carrying result/error: {_short(obj)}"
        if "id" in obj and not _valid_id(obj["id"]):
            return f"invalid id: {_short(obj)}"
        if "params" in obj and not isinstance(obj["params"], (dict, list)):
            return f"params is neither an object nor an array: {_short(obj)}"
        return None
    if "id" not in obj:
        return f"neither a request nor a response (no method, no id): {_short(obj)}"
    if not _valid_id(obj["id"]):
        return f"invalid id: {_short(obj)}"
    if ("result" in obj) == ("error" in obj):
        return f"a response must carry exactly one of result and error: {_short(obj)}"
    if "error" in obj:
        err = obj["error"]
        if not isinstance(err, dict) or not isinstance(err.get("code"), int) or isinstance(err.get("code"), bool) \
                or not isinstance(err.get("message"), str):
            return f"the error is not {{code: integer, message: string}}: {_short(obj)}"
    return None


def is_notification(obj: Any, method: str | None = None) -> bool:
    return isinstance(obj, dict) and "id" not in obj and isinstance(obj.get("method"), str) \
        and (method is None or obj["method"] == method)


def update_kind(obj: Any) -> str | None:
    """The `sessionUpdate` of a `session/update` notification, else None."""
    if not is_notification(obj, "session/update"):
        return None
    params = obj.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    kind = update.get("sessionUpdate") if isinstance(update, dict) else None
    return kind if isinstance(kind, str) else None


def is_response_to(obj: Any, request_id: Any) -> bool:
    return isinstance(obj, dict) and "method" not in obj and "id" in obj and json_equal(obj["id"], request_id)


# ---------------------------------------------------------------------------------------------
# The process


class _NotJson:
    def __init__(self, text: str, error: str):
        self.text, self.error = text, error


@dataclass
class Line:
    index: int  # 0-based position in stdout
    raw: bytes
    obj: Any  # the parsed JSON, or a _NotJson


def _parse(raw: bytes) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return _NotJson(raw.decode("utf-8", "replace"), f"not UTF-8: {err}")
    try:
        return json.loads(text)
    except ValueError as err:
        return _NotJson(text, f"not JSON: {err}")


class AgentProcess:
    """The agent as a subprocess: stdout lines read by a thread into a queue, stderr collected."""

    def __init__(self, command: list[str], cwd: Path, env: dict[str, str]):
        self.proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.lines: list[Line] = []
        self._queue: queue.Queue[Line | None] = queue.Queue()
        self._stderr: list[bytes] = []
        self.eof = False
        self._threads = [threading.Thread(target=self._read_stdout, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for t in self._threads:
            t.start()

    def _read_stdout(self) -> None:
        for i, raw in enumerate(iter(self.proc.stdout.readline, b"")):
            line = Line(i, raw, _parse(raw))
            self.lines.append(line)
            self._queue.put(line)
        self._queue.put(None)

    def _read_stderr(self) -> None:
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):
            self._stderr.append(chunk)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    def write_line(self, text: str) -> None:
        try:
            self.proc.stdin.write(text.encode("utf-8") + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as err:
            time.sleep(0.2)
            raise StepFailure(f"cannot write to mm's stdin ({err}); {self.status()}") from None

    def next_line(self, deadline: float) -> Line:
        """The next stdout line; StepFailure at the deadline or once stdout is closed."""
        if self.eof:
            raise StepFailure(f"mm closed stdout; {self.status()}")
        try:
            line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise StepFailure(f"no message within {STEP_TIMEOUT:g} s; {self.status()}") from None
        if line is None:
            self.eof = True
            time.sleep(0.2)
            raise StepFailure(f"mm closed stdout; {self.status()}")
        return line

    def status(self) -> str:
        code = self.proc.poll()
        return "mm is still running" if code is None else f"mm exited with code {code}"

    def finish(self, timeout: float = EXIT_TIMEOUT) -> tuple[list[Line], bool]:
        """Close stdin, wait for the exit (kill after `timeout`), and return the lines not yet taken
        plus whether mm had to be killed."""
        killed = False
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            killed = True
        for t in self._threads:
            t.join(5)
        rest = []
        while True:
            try:
                line = self._queue.get_nowait()
            except queue.Empty:
                break
            if line is not None:
                rest.append(line)
        return rest, killed


# ---------------------------------------------------------------------------------------------
# Running a case


@dataclass
class Run:
    case: dict
    cwd: Path
    home: Path
    sessions_dir: Path | None
    bindings: dict[str, Any]
    sent: list[tuple[str, Any]] = field(default_factory=list)  # ("json", obj) or ("raw", text)
    lines: list[Line] = field(default_factory=list)
    stderr: str = ""
    returncode: int | None = None
    killed: bool = False
    alive_after: bool | None = None
    step_problem: str | None = None
    requests: list[Any] = field(default_factory=list)
    before: dict[str, Any] = field(default_factory=dict)
    after: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)

    @property
    def expect(self) -> dict:
        return self.case.get("expect", {})

    def messages(self) -> list[Any]:
        """Every stdout line parsed (a _NotJson for a line that is not JSON), in order."""
        return [line.obj for line in self.lines]


def load_acp_cases() -> list[dict]:
    from harness import load_cases

    return load_cases("acp")


def child_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")}
    env.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share"),
                "XDG_STATE_HOME": str(home / ".local/state"), "XDG_CACHE_HOME": str(home / ".cache")})
    env.pop("XDG_CONFIG_DIRS", None)
    env.pop("PYTHONUNBUFFERED", None)  # as an editor starts it: mm must flush each message itself
    return env


def _sessions_dir(case: dict, cwd: Path) -> Path | None:
    config = case.get("agent_config") or {}
    sessions = config.get("sessions") if isinstance(config.get("sessions"), dict) else {}
    directory = sessions.get("dir")
    if directory is None:
        from mm.config.schema import SessionsConfig

        directory = SessionsConfig().dir
    return (cwd / directory) if directory else None


def setup_case(case: dict, cwd: Path, base_url: str) -> None:
    """`files`, the agent file and the `sessions` fixtures in `cwd` (module docstring)."""
    import yaml

    from harness import write_files
    from mm.sessions.store import session_record, write_session

    unknown = set(case) - CASE_KEYS - {k for k in case if k.endswith("_note")}
    if unknown:
        raise AssertionError(f"unknown case key(s) {sorted(unknown)}: the runner does not know them")
    write_files(cwd, case.get("files") or {})
    config = dict(case.get("agent_config") or {})
    config.update({"baseUrl": base_url, "model": "m"})
    (cwd / ".mm").mkdir(parents=True, exist_ok=True)
    (cwd / ".mm" / "agent.yaml").write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False),
                                            encoding="utf-8")
    bindings = {"cwd": str(cwd)}
    extra = case.get("extra_fields") or {}
    directory = _sessions_dir(case, cwd)
    for s in substitute(case.get("sessions") or [], bindings):
        unknown = set(s) - SESSION_KEYS
        if unknown:
            raise AssertionError(f"unknown session fixture key(s) {sorted(unknown)}")
        messages = [{**m, **extra.get("each_message", {})} for m in s["messages"]]
        record = session_record(id=s["id"], messages=messages, created=s.get("created", s["updated"]),
                                updated=s["updated"], cwd=s.get("cwd", ""), model=s.get("model", ""),
                                errors=s.get("errors"), usage=s.get("usage"), extra=extra.get("file"))
        write_session(directory / f"{s['id']}.json", record, index=False)


def snapshot(cwd: Path, skip: list[Path]) -> dict[str, Any]:
    """Every path under `cwd` (but the `skip` trees) → its content, `<dir>` or `-> target`."""
    skip_real = {os.path.realpath(p) for p in skip}
    found: dict[str, Any] = {}
    for root, dirs, files in os.walk(cwd):
        dirs[:] = sorted(d for d in dirs if os.path.realpath(os.path.join(root, d)) not in skip_real)
        for name in dirs + sorted(files):
            full = os.path.join(root, name)
            rel = os.path.relpath(full, cwd)
            if os.path.islink(full):
                found[rel] = "-> " + os.readlink(full)
            elif os.path.isdir(full):
                found[rel] = "<dir>"
            else:
                try:
                    found[rel] = Path(full).read_bytes()
                except OSError as err:
                    found[rel] = f"<unreadable: {err}>"
    return found


def _skippable(run: Run) -> list[str]:
    if run.expect.get("strict_order") is True:
        return []
    value = run.case.get("skippable_updates", DEFAULT_SKIPPABLE)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise StepFailure(f"skippable_updates must be a list of strings, not {_short(value)}")
    return value


def _describe(line: Line) -> str:
    if isinstance(line.obj, _NotJson):
        return f"stdout line {line.index + 1} is {line.obj.error}: {line.obj.text[:300]!r}"
    return f"stdout line {line.index + 1}: {_short(line.obj, 600)}"


def _is_skippable(line: Line, skippable: list[str]) -> bool:
    return not isinstance(line.obj, _NotJson) and update_kind(line.obj) in skippable


def run_steps(agent: AgentProcess, run: Run) -> None:
    """Every step in order; raises StepFailure naming the step."""
    skippable = _skippable(run)
    prompt_session: Any = MISSING
    for number, step in enumerate(run.case.get("steps") or [], 1):
        if not isinstance(step, dict):
            raise StepFailure(f"step {number} is not an object: {_short(step)}")
        actions = [k for k in STEP_ACTIONS if k in step]
        unknown = set(step) - set(STEP_ACTIONS) - {"falsy_paths", "note"}
        if len(actions) != 1 or unknown or ("falsy_paths" in step and actions != ["receive"]):
            raise StepFailure(f"step {number} has an unsupported shape: {_short(step)}")
        action = actions[0]
        label = f"step {number} ({action} {_short(step[action], 200)})"
        try:
            if action == "send":
                obj = substitute(step["send"], run.bindings)
                run.sent.append(("json", obj))
                if isinstance(obj, dict) and obj.get("method") in ("session/prompt", "session/load") \
                        and isinstance(obj.get("params"), dict) and "sessionId" in obj["params"]:
                    prompt_session = obj["params"]["sessionId"]
                agent.write_line(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))
            elif action == "send_raw":
                text = substitute(step["send_raw"], run.bindings)
                if not isinstance(text, str):
                    raise StepFailure("send_raw takes a string")
                run.sent.append(("raw", text))
                agent.write_line(text[:-1] if text.endswith("\n") else text)
            elif action == "receive":
                _receive(agent, run, step, skippable)
            else:
                _receive_text(agent, run, step["receive_text"], skippable, prompt_session)
        except StepFailure as err:
            raise StepFailure(f"{label}: {err}") from None
        except PatternError as err:
            raise StepFailure(f"{label}: malformed pattern: {err}") from None


def _receive(agent: AgentProcess, run: Run, step: dict, skippable: list[str]) -> None:
    deadline = time.monotonic() + STEP_TIMEOUT
    paths = step.get("falsy_paths") or []
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise StepFailure(f"falsy_paths must be a list of dotted paths, not {_short(paths)}")
    while True:
        line = agent.next_line(deadline)
        if isinstance(line.obj, _NotJson):
            raise StepFailure(f"unexpected {_describe(line)}")
        result = match(step["receive"], line.obj, run.bindings)
        if result.ok:
            problems = falsy_path_problems(line.obj, paths)
            if problems:
                raise StepFailure("; ".join(problems) + f" — in {_describe(line)}")
            run.bindings = result.bindings
            return
        if _is_skippable(line, skippable):
            continue
        raise StepFailure(f"the next message does not match: {result.reason}\n    got {_describe(line)}")


def _receive_text(agent: AgentProcess, run: Run, expected: Any, skippable: list[str], session: Any) -> None:
    expected = substitute(expected, run.bindings)
    if not isinstance(expected, str):
        raise StepFailure(f"receive_text takes a string, not {_short(expected)}")
    deadline = time.monotonic() + STEP_TIMEOUT
    got = ""
    while got != expected:
        try:
            line = agent.next_line(deadline)
        except StepFailure as err:
            raise StepFailure(f"{err}; text so far {got!r}") from None
        if _is_skippable(line, skippable):
            continue
        if isinstance(line.obj, _NotJson) or update_kind(line.obj) != "agent_message_chunk":
            raise StepFailure(f"expected agent_message_chunk text (so far {got!r}), got {_describe(line)}")
        params = line.obj["params"]
        content = params["update"].get("content")
        if not isinstance(content, dict) or content.get("type") != "text" or not isinstance(content.get("text"), str):
            raise StepFailure(f"an agent_message_chunk that is not text: {_describe(line)}")
        if line.obj.get("jsonrpc") != "2.0":
            raise StepFailure(f"not JSON-RPC 2.0: {_describe(line)}")
        if session is not MISSING and not json_equal(params.get("sessionId", MISSING), session):
            raise StepFailure(f"a chunk for session {_short(params.get('sessionId', MISSING))}, expected "
                              f"{_short(session)}: {_describe(line)}")
        got += content["text"]
        if not expected.startswith(got):
            raise StepFailure(f"the chunks joined are {got!r}, which is not {expected!r} (nor its beginning); "
                              f"last {_describe(line)}")


def run_case(case: dict, tmp_path: Path, scripted_server: Any, command: list[str] | None = None) -> Run:
    """Set up, run and check one case (module docstring); raises AssertionError when it fails."""
    cwd = Path(os.path.realpath(tmp_path))
    home = cwd / "home"
    home.mkdir(exist_ok=True)
    setup_case(case, cwd, scripted_server.base_url)
    for spec in case.get("model_script") or []:
        scripted_server.add(spec)
    sessions_dir = _sessions_dir(case, cwd)
    run = Run(case=case, cwd=cwd, home=home, sessions_dir=sessions_dir,
              bindings={"cwd": str(cwd), "origin": scripted_server.origin}, env=child_env(home))
    run.before = snapshot(cwd, [home] + ([sessions_dir] if sessions_dir else []))
    agent = AgentProcess(command or AGENT_COMMAND, cwd, run.env)
    try:
        try:
            run_steps(agent, run)
        except StepFailure as err:
            run.step_problem = str(err)
        if run.step_problem is None and run.expect.get("process_alive_after") is True:
            time.sleep(ALIVE_SETTLE)
            run.alive_after = agent.proc.poll() is None
    finally:
        rest, run.killed = agent.finish()
        run.lines = list(agent.lines)
        run.stderr = agent.stderr
        run.returncode = agent.proc.returncode
    if run.step_problem is None:
        skippable = _skippable(run)
        extra = [line for line in rest if not _is_skippable(line, skippable)]
        if extra:
            run.step_problem = "after the last step: unexpected " + "; ".join(_describe(x) for x in extra[:5])
    scripted_server.wait_idle()
    run.requests = list(scripted_server.requests)
    run.after = snapshot(cwd, [home] + ([sessions_dir] if sessions_dir else []))
    problems = check_expect(run)
    if problems:
        raise AssertionError(report(run, problems))
    return run


def report(run: Run, problems: list[str]) -> str:
    out = [f"acp case {run.case.get('id')} failed:"]
    out += ["- " + p for p in problems]
    out.append(f"--- mm: exit code {run.returncode}{' (killed: it did not exit once stdin was closed)' if run.killed else ''}")
    out.append(f"--- stdout ({len(run.lines)} line(s)) ---")
    shown = run.lines[-60:]
    if len(run.lines) > len(shown):
        out.append(f"[… {len(run.lines) - len(shown)} earlier line(s)]")
    for line in shown:
        text = line.raw.decode("utf-8", "replace").rstrip("\n")
        out.append(f"{line.index + 1:3}: {text if len(text) <= 800 else text[:800] + '…'}")
    tail = run.stderr[-4000:]
    out.append(f"--- stderr (last {len(tail)} of {len(run.stderr)} chars) ---")
    out.append(tail)
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# expect


def _flag(name: str, value: Any) -> list[str] | None:
    """The problem of a flag key whose value is not `true` (only `true` is supported)."""
    return None if value is True else [f"expect.{name}: only true is supported, got {_short(value)}"]


def _check_steps_pass(run: Run, value: Any) -> list[str]:
    return _flag("steps_pass", value) or []  # the steps' own failure is reported by check_expect


def _check_strict_order(run: Run, value: Any) -> list[str]:
    return _flag("strict_order", value) or []  # applied while the steps ran


def _check_stdout_only_jsonrpc(run: Run, value: Any) -> list[str]:
    problems = _flag("stdout_only_jsonrpc", value) or []
    for line in run.lines:
        if isinstance(line.obj, _NotJson):
            problems.append(f"stdout_only_jsonrpc: {_describe(line)}")
            continue
        if not line.raw.endswith(b"\n"):
            problems.append(f"stdout_only_jsonrpc: stdout line {line.index + 1} does not end with a newline")
        why = jsonrpc_problem(line.obj)
        if why:
            problems.append(f"stdout_only_jsonrpc: stdout line {line.index + 1}: {why}")
    return problems


def _string_items(name: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PatternError(f"expect.{name} takes a list of strings, not {_short(value)}")
    return value


def _check_stderr_contains(run: Run, value: Any) -> list[str]:
    return [f"stderr_contains: {s!r} is not in stderr"
            for s in substitute(_string_items("stderr_contains", value), run.bindings) if s not in run.stderr]


def _check_files_absent(run: Run, value: Any) -> list[str]:
    return [f"files_absent: {p} exists" for p in substitute(_string_items("files_absent", value), run.bindings)
            if os.path.lexists(run.cwd / p)]


def message_text(content: Any) -> str | None:
    """A chat message's content as text: a string, or the `text` parts of a list joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return None


def _text_check(label: str, expected: Any, text: Any, bindings: dict) -> list[str]:
    if isinstance(expected, str):
        want = substitute(expected, bindings)
        return [] if text == want else [f"{label}: expected {want!r}, got {_short(text)}"]
    if isinstance(expected, dict):
        result = match(expected, text if text is not None else MISSING, bindings)
        return [] if result.ok else [f"{label}: {result.reason}"]
    raise PatternError(f"{label} takes a string or a pattern object, not {_short(expected)}")


REQUEST_KEY = re.compile(r"request_(\d+)_(last_user_message|roles|tools_include|tool_message)")


def _check_model_requests(run: Run, value: Any) -> list[str]:
    if not isinstance(value, dict):
        return [f"expect.model_requests must be an object, got {_short(value)}"]
    problems: list[str] = []
    requests = run.requests
    for key, want in value.items():
        label = f"model_requests.{key}"
        if key == "count":
            if len(requests) != want:
                problems.append(f"{label}: expected {want} request(s), the model server received {len(requests)}")
            continue
        m = REQUEST_KEY.fullmatch(key)
        if not m:
            problems.append(f"{label}: unknown check")
            continue
        n, what = int(m.group(1)), m.group(2)
        if not 1 <= n <= len(requests):
            problems.append(f"{label}: request {n} never came ({len(requests)} received)")
            continue
        request = requests[n - 1]
        messages = request.get("messages") if isinstance(request, dict) else None
        if not isinstance(messages, list):
            problems.append(f"{label}: request {n} has no messages list: {_short(request)}")
            continue
        messages = [msg for msg in messages if isinstance(msg, dict)]
        if what == "last_user_message":
            users = [msg for msg in messages if msg.get("role") == "user"]
            if not users:
                problems.append(f"{label}: request {n} holds no user message")
            else:
                problems += _text_check(label, want, message_text(users[-1].get("content")), run.bindings)
        elif what == "roles":
            roles = [msg.get("role") for msg in messages]
            if not json_equal(roles, want):
                problems.append(f"{label}: expected {_short(want)}, got {_short(roles)}")
        elif what == "tools_include":
            names = [t.get("function", {}).get("name") if isinstance(t.get("function"), dict) else t.get("name")
                     for t in request.get("tools") or [] if isinstance(t, dict)]
            problems += [f"{label}: {name!r} is not among the declared tools {names}"
                         for name in _string_items(key, want) if name not in names]
        else:
            problems += _check_tool_message(label, want, messages, run.bindings)
    return problems


def _check_tool_message(label: str, want: Any, messages: list[dict], bindings: dict) -> list[str]:
    if not isinstance(want, dict) or set(want) - {"content", "tool_call_id_matches_call"}:
        raise PatternError(f"{label} takes {{content, tool_call_id_matches_call}}, not {_short(want)}")
    tools = [i for i, msg in enumerate(messages) if msg.get("role") == "tool"]
    if len(tools) != 1:
        return [f"{label}: expected exactly one tool message, found {len(tools)}: "
                f"{_short([messages[i] for i in tools])}"]
    at = tools[0]
    tool = messages[at]
    problems = []
    if "content" in want:
        problems += _text_check(f"{label}.content", want["content"], message_text(tool.get("content")), bindings)
    if "tool_call_id_matches_call" in want:
        if want["tool_call_id_matches_call"] is not True:
            raise PatternError(f"{label}.tool_call_id_matches_call: only true is supported")
        calls = next((msg.get("tool_calls") for msg in reversed(messages[:at])
                      if msg.get("role") == "assistant" and msg.get("tool_calls")), None)
        ids = [c.get("id") for c in calls or [] if isinstance(c, dict)]
        call_id = tool.get("tool_call_id")
        if not calls:
            problems.append(f"{label}: no assistant message with tool_calls before the tool message")
        elif not isinstance(call_id, str) or not call_id or call_id not in ids:
            problems.append(f"{label}: tool_call_id {_short(call_id)} is not the id of the assistant's call {ids}")
    return problems


def _check_response_before_notification(run: Run, value: Any) -> list[str]:
    problems = _flag("response_before_notification", value) or []
    messages = run.messages()
    news = [obj["id"] for kind, obj in run.sent
            if kind == "json" and isinstance(obj, dict) and obj.get("method") == "session/new" and "id" in obj]
    if not news:
        return problems + ["response_before_notification: no session/new was sent"]
    for request_id in news:
        at = next((i for i, m in enumerate(messages) if is_response_to(m, request_id)), None)
        if at is None:
            problems.append(f"response_before_notification: no response to session/new id {_short(request_id)}")
            continue
        sid = (messages[at].get("result") or {}).get("sessionId") if isinstance(messages[at].get("result"), dict) else None
        if sid is None:
            problems.append(f"response_before_notification: the session/new response has no sessionId")
            continue
        notes = [i for i, m in enumerate(messages) if update_kind(m) == "available_commands_update"
                 and json_equal(m["params"].get("sessionId"), sid)]
        if not notes:
            problems.append(f"response_before_notification: no available_commands_update for {sid}")
        elif notes[0] < at:
            problems.append(f"response_before_notification: available_commands_update (stdout line {notes[0] + 1}) "
                            f"came before the session/new response (stdout line {at + 1})")
    return problems


def _check_no_tool_ran(run: Run, value: Any) -> list[str]:
    problems = _flag("no_tool_ran", value) or []
    for i, m in enumerate(run.messages()):
        kind = update_kind(m)
        if kind == "tool_call_update":
            problems.append(f"no_tool_ran: a tool_call_update was sent (stdout line {i + 1}): {_short(m)}")
        elif kind == "tool_call" and m["params"]["update"].get("status", "pending") not in ("completed", "failed"):
            problems.append(f"no_tool_ran: a live tool_call was announced (stdout line {i + 1}): {_short(m)}")
        elif isinstance(m, dict) and isinstance(m.get("method"), str) and "id" in m:
            problems.append(f"no_tool_ran: mm sent a request of its own (stdout line {i + 1}): {_short(m)}")
    changed = sorted(p for p in set(run.before) | set(run.after) if run.before.get(p) != run.after.get(p))
    if changed:
        problems.append(f"no_tool_ran: the case directory changed: {changed}")
    return problems


def _check_agent_version(run: Run, value: Any) -> list[str]:
    problems = _flag("agentInfo_version_equals_mm_version_output", value) or []
    out = subprocess.run(VERSION_COMMAND, cwd=run.cwd, env=run.env, capture_output=True, text=True, timeout=30)
    version = out.stdout.removesuffix("\n").removeprefix("mm ")
    if out.returncode != 0 or not out.stdout.startswith("mm "):
        return problems + [f"agentInfo version: `mm --version` printed {out.stdout!r} (code {out.returncode})"]
    ids = [obj["id"] for kind, obj in run.sent
           if kind == "json" and isinstance(obj, dict) and obj.get("method") == "initialize" and "id" in obj]
    responses = [m for m in run.messages() if any(is_response_to(m, i) for i in ids) and "result" in m]
    if not responses:
        return problems + ["agentInfo version: no initialize response"]
    got = resolve_path(responses[0], "result.agentInfo.version") if isinstance(responses[0], dict) else MISSING
    if got != version:
        problems.append(f"agentInfo version: {_short(got)} is not {version!r} (mm --version)")
    return problems


def _check_process_alive_after(run: Run, value: Any) -> list[str]:
    problems = _flag("process_alive_after", value) or []
    if run.alive_after is False:
        problems.append("process_alive_after: mm was no longer running after the last step")
    elif run.alive_after is None and run.step_problem is None:
        problems.append("process_alive_after: not checked")
    return problems  # with a step failure, the liveness was not sampled: the step failure is reported


EXPECT_CHECKS = {
    "steps_pass": _check_steps_pass,
    "strict_order": _check_strict_order,
    "stdout_only_jsonrpc": _check_stdout_only_jsonrpc,
    "stderr_contains": _check_stderr_contains,
    "model_requests": _check_model_requests,
    "files_absent": _check_files_absent,
    "response_before_notification": _check_response_before_notification,
    "no_tool_ran": _check_no_tool_ran,
    "agentInfo_version_equals_mm_version_output": _check_agent_version,
    "process_alive_after": _check_process_alive_after,
}


def check_expect(run: Run) -> list[str]:
    """Every problem of the run: the steps' failure first, then each `expect` key's (unknown keys fail)."""
    problems = [f"steps: {run.step_problem}"] if run.step_problem else []
    expect = run.expect
    if not isinstance(expect, dict) or not expect:
        return problems + ["the case has no expect object"]
    for key, value in expect.items():
        check = EXPECT_CHECKS.get(key)
        if check is None:
            problems.append(f"expect.{key}: unknown expectation: the runner cannot check it")
            continue
        try:
            problems += check(run, value)
        except PatternError as err:
            problems.append(f"expect.{key}: malformed: {err}")
    return problems
