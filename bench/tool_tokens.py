"""Token cost of each tool's declaration (its JSON schema, as sent with every request), per tool
group, measured with mm's own counter (mm.engine.tokens.count_text); the figures of docs/tools.md.

`core` is counted with its default switches (bash, the file tools, ask_user); every other group of
mm.tools.registry.GROUPS whole. Run: python bench/tool_tokens.py
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from mm.config.load import agent_config_adapter
from mm.engine.tokens import count_text
from mm.tools.registry import GROUPS, build_registry


def group_costs(group: str, cwd: Path) -> list[tuple[str, int]]:
    """`(tool name, tokens)` for each tool `group` declares."""
    config = agent_config_adapter().validate_python({"toolsets": [group]})
    registry = build_registry(config, {"XDG_STATE_HOME": str(cwd)}, cwd)
    return [(schema["function"]["name"], count_text(json.dumps(schema, ensure_ascii=False)))
            for schema in registry.schemas()]


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        for group in ["core", *GROUPS]:
            costs = group_costs(group, Path(folder))
            print(f"{group}: {sum(n for _, n in costs)} tokens")
            for name, tokens in costs:
                print(f"  {name:24} {tokens:5}")


if __name__ == "__main__":
    main()
