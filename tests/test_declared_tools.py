"""Declared tools (mm-tools.md §Declared tools; decisions in docs/tools-bash.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mm.tools.base import Settings, ToolContext
from harness import assert_none_left
from mm.tools.coerce import coerce_tool_args
from mm.tools.declared import declared_tool_from_entry, parse_timeout

GREET = {
    "name": "greet",
    "description": "Print a greeting.",
    "command": ["echo", "{{name}}", "{{count}}", "{{loud}}"],
    "parameters": {
        "name": {"type": "string", "description": "Who to greet."},
        "count": {"type": "integer", "description": "How many times.", "optional": True, "default": 1},
        "loud": {"type": "boolean", "description": "Shout it.", "optional": True, "default": False},
        "mode": {"type": "string", "description": "How.", "optional": True, "enum": ["plain", "fancy"]},
    },
}


def tool_of(command: list[str], parameters: dict | None = None, **extra):
    return declared_tool_from_entry({"name": "t", "description": "A test.", "command": command,
                                     "parameters": parameters or {}, **extra})


def context(tmp_path: Path, timeout: float = 10, max_output: int = 20000) -> ToolContext:
    return ToolContext(cwd=tmp_path, settings=Settings(max_output=max_output, bash_timeout=timeout))




def test_schema_has_no_required_or_enum_keywords() -> None:
    tool = declared_tool_from_entry(GREET)
    assert (tool.kind, tool.needs_permission) == ("execute", True)
    schema = tool.schema()
    assert schema["function"]["description"] == (
        "Print a greeting. Required parameters: name. Give each parameter as its own field."
    )
    assert schema["function"]["parameters"] == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Who to greet."},
            "count": {"type": "integer", "description": "How many times. Optional, default 1."},
            "loud": {"type": "boolean", "description": "Shout it. Optional, default false."},
            "mode": {"type": "string", "description": "How. One of: plain, fancy. Optional."},
        },
    }


def test_description_without_required_parameters() -> None:
    tool = tool_of(["true"])
    assert tool.description == "A test. Give each parameter as its own field."


def test_config_model_dump_shape() -> None:
    """The configuration hands entries with every key present, unset ones as None."""
    tool = declared_tool_from_entry({
        "name": "t", "description": "", "command": ["echo", "{{x}}"], "timeout": None,
        "parameters": {"x": {"type": "string", "description": "", "optional": False,
                             "default": None, "enum": None}},
    })
    assert tool.timeout is None and tool.params[0].required and tool.enums == {}


def test_rendering() -> None:
    tool = tool_of(["p", "{{n}}", "{{i}}", "{{b}}", "{{s}}"], {
        "n": {"type": "number"}, "i": {"type": "integer"}, "b": {"type": "boolean"}, "s": {"type": "string"},
    })
    args, _ = coerce_tool_args(tool, {"n": 1e-7, "i": "42", "b": "False", "s": 2.5})
    assert tool.argv_for(args) == ["p", "0.0000001", "42", "false", "2.5"]
    args, _ = coerce_tool_args(tool, {"n": 3.0, "i": 7.0, "b": True, "s": True})
    assert tool.argv_for(args) == ["p", "3", "7", "true", "true"]


def test_optional_without_default_left_out() -> None:
    tool = tool_of(["grep", "{{flags}}", "--max-count={{max}}", "{{pattern}}"], {
        "flags": {"type": "string", "optional": True},
        "max": {"type": "integer", "optional": True},
        "pattern": {"type": "string"},
    })
    args, _ = coerce_tool_args(tool, {"pattern": "x"})
    assert tool.argv_for(args) == ["grep", "--max-count=", "x"]
    args, _ = coerce_tool_args(tool, {"pattern": "x", "flags": "-i", "max": 0})
    assert tool.argv_for(args) == ["grep", "-i", "--max-count=0", "x"]


def test_title() -> None:
    tool = declared_tool_from_entry(GREET)
    args, _ = coerce_tool_args(tool, {"name": "big world"})
    assert tool.title(args) == "greet: echo 'big world' 1 false"


async def test_a_value_never_adds_an_argument_or_a_pipe(tmp_path: Path) -> None:
    tool = tool_of(["printf", "[%s]\\n", "{{text}}"], {"text": {"type": "string"}})
    text = "a b; touch pwned | cat > out $(id)"
    result = await tool.run({"text": text}, context(tmp_path))
    assert result.text == f"[{text}]\n"
    assert list(tmp_path.iterdir()) == []


def test_enum_fault() -> None:
    tool = declared_tool_from_entry(GREET)
    args, message = coerce_tool_args(tool, {"name": "x", "mode": "wild"})
    assert args is None
    assert message.startswith(
        "[greet: invalid call, nothing was run — mode: wild is not one of plain, fancy. You sent: "
    )
    assert "mode (string): How. One of: plain, fancy. Optional" in message


def test_every_fault_listed_with_the_full_text() -> None:
    tool = declared_tool_from_entry(GREET)
    _, message = coerce_tool_args(tool, {"count": "many", "loud": "yes", "extra": 1})
    assert message == (
        "[greet: invalid call, nothing was run — name is missing; count: \"many\" is not an integer; "
        "loud: \"yes\" is not a boolean; \"extra\" is not a parameter of this tool. "
        "You sent: {\"count\": \"many\", \"loud\": \"yes\", \"extra\": 1}. "
        "Expected: name (string): Who to greet.; count (integer): How many times. Optional, default 1.; "
        "loud (boolean): Shout it. Optional, default false.; mode (string): How. One of: plain, fancy. "
        "Optional. Call greet again with each parameter as its own field.]"
    )


async def test_run_refuses_uncoerced_invalid_arguments(tmp_path: Path) -> None:
    tool = tool_of(["touch", "{{f}}"], {"f": {"type": "string"}})
    result = await tool.run({"g": "x"}, context(tmp_path))
    assert result.failed and "nothing was run" in result.text
    assert list(tmp_path.iterdir()) == []


async def test_non_zero_exit(tmp_path: Path) -> None:
    tool = tool_of(["sh", "-c", "echo hi; exit {{code}}"], {"code": {"type": "integer"}})
    result = await tool.run({"code": 3}, context(tmp_path))
    assert (result.text, result.failed) == ("hi\n[exit code: exit status 3]", True)


async def test_entry_timeout_wins_over_bash_timeout(tmp_path: Path) -> None:
    tool = tool_of(["sleep", "7305"], timeout=0.5)
    result = await tool.run({}, context(tmp_path, timeout=60))
    assert result.text == "[error: 0.5s timeout exceeded]"
    await assert_none_left("sleep 7305")


async def test_bash_timeout_when_the_entry_has_none(tmp_path: Path) -> None:
    tool = tool_of(["sleep", "7306"])
    result = await tool.run({}, context(tmp_path, timeout=0.5))
    assert result.text == "[error: 0.5s timeout exceeded]"
    await assert_none_left("sleep 7306")


async def test_cancellation(tmp_path: Path) -> None:
    tool = tool_of(["sh", "-c", "touch started; sleep 7307"])
    ctx = context(tmp_path, timeout=60)
    task = asyncio.ensure_future(tool.run({}, ctx))
    while not (tmp_path / "started").exists():
        await asyncio.sleep(0.02)
    ctx.cancelled.set()
    assert (await task).text == "[error: cancelled]"
    await assert_none_left("sleep 7307")


async def test_program_not_found(tmp_path: Path) -> None:
    result = await tool_of(["mm-no-such-program", "x"]).run({}, context(tmp_path))
    assert result.text == "[error: mm-no-such-program cannot be started: executable file not found in $PATH]"
    assert result.failed


async def test_program_path_not_found(tmp_path: Path) -> None:
    result = await tool_of(["./missing"]).run({}, context(tmp_path))
    assert result.text == "[error: ./missing cannot be started: no such file or directory]"


async def test_program_not_executable(tmp_path: Path) -> None:
    (tmp_path / "script").write_text("echo hi\n")
    result = await tool_of(["./script"]).run({}, context(tmp_path))
    assert result.text == "[error: ./script cannot be started: permission denied]"


@pytest.mark.parametrize("entry, fragment", [
    ({"name": "", "command": ["x"]}, "no name"),
    ({"name": "t", "command": []}, "non-empty list"),
    ({"name": "t", "command": ["echo", "{{nope}}"]}, "{{nope}} in command is not a parameter"),
    ({"name": "t", "command": ["x"], "parameters": {"p": {"type": "date"}}}, "use string, integer"),
    ({"name": "t", "command": ["x"], "parameters": {"p": {"type": "integer", "default": "a"}}}, "not of type"),
    ({"name": "t", "command": ["x"], "timeout": "soon"}, "timeout"),
])
def test_bad_entries(entry: dict, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment.replace("{", r"\{").replace("}", r"\}")):
        declared_tool_from_entry(entry)


def test_parse_timeout() -> None:
    assert [parse_timeout(v) for v in (None, 5, 2.5, "7", "10s", "1m30s", "500ms")] == [
        None, 5.0, 2.5, 7.0, 10.0, 90.0, 0.5,
    ]


def test_entries_that_cannot_work_are_refused_when_built() -> None:
    with pytest.raises(ValueError, match="the default 'b' is not one of its enum values"):
        declared_tool_from_entry({"name": "t", "command": ["echo", "{{m}}"], "parameters": {
            "m": {"type": "string", "optional": True, "enum": ["a"], "default": "b"}}})
    with pytest.raises(ValueError, match="enum is empty"):
        declared_tool_from_entry({"name": "t", "command": ["echo", "{{m}}"], "parameters": {
            "m": {"type": "string", "enum": []}}})
    with pytest.raises(ValueError, match="the command's program \\(its first item\\) is empty"):
        declared_tool_from_entry({"name": "t", "command": [""]})


async def test_an_empty_program_name_is_said_plainly(tmp_path: Path) -> None:
    tool = declared_tool_from_entry({"name": "t", "command": ["{{prog}}"], "parameters": {
        "prog": {"type": "string", "description": "Program."}}})
    args, _ = coerce_tool_args(tool, {"prog": ""})
    result = await tool.run(args, context(tmp_path))
    assert result.failed and result.text.startswith('[error: "" cannot be started: the program name is empty]')
