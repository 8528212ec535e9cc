"""What declaring each tool costs: the tokens of its JSON schema, as sent with every request, counted
with mm's token counter (mm.engine.tokens.count_text) — the figures of docs/tools.md.

Run: .venv/bin/python bench/tool_tokens.py

Prints, per tool group of `toolsets:`, each tool and its cost, then the default set (`core`, with
its tools as the default agent file declares them) and its system prompt.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from mm.config.load import agent_config_adapter
from mm.engine.tokens import count_text
from mm.tools.registry import build_registry, group_names


def cost(schema: dict) -> int:
    """Tokens of one tool's declaration: its `tools[]` entry as JSON."""
    return count_text(json.dumps(schema, ensure_ascii=False))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        for group in group_names():
            config = agent_config_adapter().validate_python({"toolsets": [group]})
            registry = build_registry(config, {}, cwd)
            costs = [(tool["function"]["name"], cost(tool)) for tool in registry.schemas()]
            print(f"{group}: {sum(c for _, c in costs)} tokens")
            for name, tokens in costs:
                print(f"  {name:28} {tokens:5}")
        config = agent_config_adapter().validate_python({})
        tools = sum(cost(tool) for tool in build_registry(config, {}, cwd).schemas())
        prompt = count_text(config.systemPrompt)
        print(f"default set (toolsets: [core]): tools {tools} + system prompt {prompt} = {tools + prompt} tokens")


if __name__ == "__main__":
    main()
