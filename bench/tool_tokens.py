"""The token cost of every tool's declaration, measured on the real registry with mm's token
counter (docs/tools.md; issue 13: the default set stays under 1,500 tokens).

Each group is built alone, with every optional tool of it switched on, and each tool's JSON
schema — what is sent with every request — is counted with mm.engine.tokens.count_text. The
default set is counted as a conversation sends it: the default system prompt and the schemas.

Run:  python bench/tool_tokens.py          (the Markdown rows of docs/tools.md, then the totals)
      python bench/tool_tokens.py --json   (the same figures as JSON, for tests/test_tool_tokens.py)
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from mm.config.load import agent_config_adapter
from mm.engine.tokens import count_text
from mm.tools.registry import build_registry, group_names

# Every optional tool of `core` switched on (docs/configuration.md): the table lists them all.
EVERY_TOOL = {"saveAnswerTool": True, "fetchContentTool": True, "webCrawler": {"enabled": True},
              "webSearch": {"enabled": True, "apiKey": "key"}, "sessions": {"enabled": True, "autoSearchMemory": True},
              "mmConfigs": {"helper": {"command": ["helper-agent"], "description": "An agent to ask."}}}
EVERY_TOOL["visionModel"] = "a-vision-model"  # describe_image (toolsets: vision; docs/vision.md)
SKILL = "---\nname: example\ndescription: An example skill.\n---\nDo the example.\n"


def tokens_of(schema: dict) -> int:
    """Tokens of one tool's declaration, as Conversation.tools_text serialises it."""
    return count_text(json.dumps(schema, ensure_ascii=False))


def _schemas(toolsets: list[str], env: dict, cwd: Path) -> list[dict]:
    """The schemas of the default configuration with `toolsets` declared."""
    return build_registry(agent_config_adapter().validate_python({"toolsets": toolsets}), env, cwd).schemas()


def measure(root: Path) -> dict:
    """{"tools": [{"name", "group", "tokens"}…], "default": {"system", "tools", "total", "names"},
    "notes": tokens the two-tools-of-one-job notes add when core and files are declared together}."""
    skills = root / ".mm" / "skills"
    skills.mkdir(parents=True, exist_ok=True)
    (skills / "example.md").write_text(SKILL)
    env = {"HOME": str(root)}
    rows = []
    for group in group_names():
        config = agent_config_adapter().validate_python({**EVERY_TOOL, "toolsets": [group]})
        for schema in build_registry(config, env, root).schemas():
            rows.append({"name": schema["function"]["name"], "group": group, "tokens": tokens_of(schema)})
    bare = root / "bare"
    bare.mkdir(exist_ok=True)
    default = agent_config_adapter().validate_python({})
    registry = build_registry(default, env, bare)
    system = count_text(default.systemPrompt)
    declared = count_text(json.dumps(registry.schemas(), ensure_ascii=False))
    notes = sum(tokens_of(s) for s in _schemas(["core", "files"], env, bare)) - \
        sum(tokens_of(s) for group in ("core", "files") for s in _schemas([group], env, bare))
    return {"tools": rows, "default": {"system": system, "tools": declared, "total": system + declared,
                                       "names": registry.names}, "notes": notes}


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        figures = measure(Path(tmp))
    if "--json" in argv:
        print(json.dumps(figures))
        return 0
    print("| tool | group | tokens |")
    print("|---|---|---|")
    for row in figures["tools"]:
        print(f"| `{row['name']}` | {row['group']} | {row['tokens']} |")
    d = figures["default"]
    print(f"\ndefault set ({', '.join(d['names'])}): system prompt {d['system']} + declarations {d['tools']} "
          f"= {d['total']} tokens")
    print(f"notes added when core and files are declared together: {figures['notes']} tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
