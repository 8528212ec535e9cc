"""The token cost of each tool's declaration (its JSON schema, as sent in `tools`), counted with
mm's own counter (mm.engine.tokens.count_text), for docs/tools.md; and the default set's cost:
the default system prompt plus the tools `core` declares by default.

Run: python bench/tool_tokens.py   (prints a Markdown table)
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from mm.config.load import agent_config_adapter
from mm.config.schema import DEFAULT_SYSTEM_PROMPT
from mm.engine.tokens import count_text
from mm.tools.registry import GROUPS, build_registry

# Switches that declare every core tool (a declared tool and read_skill need files: left out).
ALL_CORE = {"fetchContentTool": True, "saveAnswerTool": True, "askUserTool": True,
            "mmConfigs": {"helper": {"command": ["helper-agent", "--acp"], "description": "A helper."}},
            "sessions": {"enabled": True, "autoSearchMemory": True}}
ENV = {"ENABLE_WEB_CRAWL": "1", "ENABLE_WEB_SEARCH": "1", "BRAVE_API_KEY": "x"}


def costs(config: dict, env: dict, cwd: Path) -> list[tuple[str, str, int]]:
    """(group, tool, tokens of its schema) for every tool `config` declares."""
    registry = build_registry(agent_config_adapter().validate_python(config), env, cwd)
    out = []
    for name, schema in zip(registry.names, registry.schemas()):
        group = next((g for g in [*GROUPS] if name in _group_names(g, cwd)), "core")
        out.append((group, name, count_text(json.dumps(schema, ensure_ascii=False))))
    return out


def _group_names(group: str, cwd: Path) -> set[str]:
    import importlib

    config = agent_config_adapter().validate_python({})
    return {t.name for t in importlib.import_module(GROUPS[group]).tools(config, {}, cwd)}


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        every = costs({**ALL_CORE, "toolsets": ["core", *GROUPS]}, ENV, cwd)
        default = costs({}, {}, cwd)
    prompt = count_text(DEFAULT_SYSTEM_PROMPT)
    print("| group | tool | tokens |\n| --- | --- | --- |")
    for group, name, tokens in every:
        print(f"| {group} | `{name}` | {tokens} |")
    tools = sum(t for _, _, t in default)
    print(f"\nDefault set ({', '.join(n for _, n, _ in default)}): system prompt {prompt} + tools {tools} "
          f"= {prompt + tools} tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
