"""Every case of tests/cases/tool-args/ through the real coercer and tools
(cases/README.md §tool-args/, mm-tools.md §Declared tools)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mm.tools.base import Param, ToolContext
from mm.tools.bash import Bash
from mm.tools.coerce import coerce_arguments, coerce_tool_args
from mm.tools.declared import DeclaredTool, declared_tool_from_entry
from mm.tools.read_file import ReadFile
from mm.tools.write_file import WriteFile
from mm.llm.args import parse_arguments
from harness import CASES_DIR




CASES = sorted((CASES_DIR / "tool-args").glob("*.json"))
BUILT_IN = {"bash": Bash, "read_file": ReadFile, "write_file": WriteFile}


def check_output(out: str, expect: dict) -> None:
    for s in expect.get("output_contains", []):
        assert s in out, f"{s!r} not in {out!r}"
    for s in expect.get("output_not_contains", []):
        assert s not in out, f"{s!r} in {out!r}"
    for pattern in expect.get("output_regex", []):
        assert re.search(pattern, out), f"{pattern!r} does not match {out!r}"


@pytest.mark.parametrize("case_file", CASES, ids=lambda p: p.stem)
async def test_tool_args_case(case_file: Path, tmp_path: Path) -> None:
    case = json.loads(case_file.read_text())
    expect = case["expect"]
    for name, content in case.get("files", {}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content)
    arguments = case.get("arguments")
    if "arguments_raw" in case:  # what the model client makes of a non-JSON arguments string
        arguments, error = parse_arguments(case["arguments_raw"])
        assert error is None and arguments == expect["parsed_arguments"]

    if "declared_tool" in case:
        tool = declared_tool_from_entry(case["declared_tool"])
    else:
        tool = BUILT_IN[case["tool"]]()
    args, message = coerce_tool_args(tool, arguments)

    if not expect["runs"]:
        assert args is None and message is not None
        check_output(message, expect)
        for name in expect.get("files_absent", []):
            assert not (tmp_path / name).exists()
        return

    assert message is None, message
    if "argv" in expect:
        assert isinstance(tool, DeclaredTool)
        assert tool.argv_for(args) == expect["argv"]
    result = await tool.run(args, ToolContext(cwd=tmp_path))
    assert not result.failed, result.text
    check_output(result.text, expect)
    if "file" in expect:  # args-06: an object sent as content is written as JSON text
        written = (tmp_path / expect["file"]).read_text()
        assert json.loads(written) == expect["file_json_equals"]
        assert written.endswith("\n") == expect["file_ends_with_newline"]


# The coercer's rules beyond the cases (docs/tools-bash.md).

NUMBERS = [Param("i", "integer", "I.", required=False), Param("n", "number", "N.", required=False)]


@pytest.mark.parametrize("sent, coerced", [
    ({"i": "3"}, {"i": 3}),
    ({"i": " -3 "}, {"i": -3}),
    ({"i": "3.0"}, {"i": 3}),
    ({"i": 4.0}, {"i": 4}),
    ({"n": "2.5"}, {"n": 2.5}),
    ({"n": "2"}, {"n": 2}),
    ({"n": 7}, {"n": 7}),
    ({"i": None}, {}),
])
def test_numbers(sent: dict, coerced: dict) -> None:
    assert coerce_arguments("t", NUMBERS, sent) == (coerced, None)


@pytest.mark.parametrize("sent, fault", [
    ({"i": "3.5"}, 'i: "3.5" is not an integer'),
    ({"i": 3.5}, "i: 3.5 is not an integer"),
    ({"i": True}, "i: true is not an integer"),
    ({"n": "nan"}, 'n: "nan" is not a number'),
    ({"n": ""}, 'n: "" is not a number'),
    ({"n": [1]}, "n: [1] is not a number"),
])
def test_number_faults(sent: dict, fault: str) -> None:
    args, message = coerce_arguments("t", NUMBERS, sent)
    assert args is None and f"— {fault}. You sent: " in message


def test_arrays_and_objects_sent_as_json_text() -> None:
    params = [Param("a", "array", "A."), Param("o", "object", "O.")]
    assert coerce_arguments("t", params, {"a": '[{"old": "x"}]', "o": '{"k": 1}'}) == (
        {"a": [{"old": "x"}], "o": {"k": 1}}, None)
    _, message = coerce_arguments("t", params, {"a": "x", "o": "[]"})
    assert 'a: "x" is not an array; o: "[]" is not an object' in message


def test_json_text_for_a_string_only_when_asked() -> None:
    params = [Param("content", "string", "C.")]
    args, _ = coerce_arguments("w", params, {"content": {"a": [1]}}, json_text={"content"})
    assert args == {"content": '{\n  "a": [\n    1\n  ]\n}\n'}
    _, message = coerce_arguments("w", params, {"content": {"a": [1]}})
    assert 'content: {"a": [1]} is not a string' in message


def test_arguments_that_are_not_an_object() -> None:
    args, message = coerce_arguments("t", NUMBERS, ["x"])  # type: ignore[arg-type]
    assert args is None
    assert message.startswith('[t: invalid call, nothing was run — the arguments are not an object. You sent: ["x"].')


def test_bash_empty_call() -> None:
    _, message = coerce_tool_args(Bash(), {})
    assert message == (
        "[bash: invalid call, nothing was run — command is missing. You sent: {}. "
        "Expected: command (string): The shell command to run. "
        "Call bash again with each parameter as its own field.]"
    )
