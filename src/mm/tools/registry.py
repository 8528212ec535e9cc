"""The tools declared to the model, built from the configuration."""

from __future__ import annotations

from dataclasses import asdict

from mm.config.schema import AgentConfig
from mm.tools.base import Tool, schema_of


class Registry:
    """The declared tools, by name, in declaration order."""

    def __init__(self, tools: list[Tool]):
        self.tools: dict[str, Tool] = {t.name: t for t in tools}
        self._schemas: list[dict] | None = None

    def get(self, name: str) -> Tool | None:
        """The tool called `name`, or None."""
        return self.tools.get(name)

    @property
    def names(self) -> list[str]:
        """The declared tools' names, in order."""
        return list(self.tools)

    def schemas(self) -> list[dict]:
        """The OpenAI `tools` array; a tool with its own `schema()` method provides it (built once)."""
        if self._schemas is None:
            self._schemas = self._build_schemas()
        return self._schemas

    def _build_schemas(self) -> list[dict]:
        out = []
        for tool in self.tools.values():
            custom = getattr(tool, "schema", None)
            out.append(custom() if callable(custom) else schema_of(tool))
        return out


def build_registry(config: AgentConfig) -> Registry:
    """Declare the tools the configuration asks for (mm-tools.md: bashTool, editTools, tools:)."""
    tools: list[Tool] = []
    if config.bashTool:
        from mm.tools.bash import Bash

        tools.append(Bash())
    if config.editTools:
        from mm.tools.edit.tool import EditFile
        from mm.tools.read_file import ReadFile
        from mm.tools.write_file import WriteFile

        tools += [ReadFile(), WriteFile(), EditFile()]
    if config.tools:
        from mm.tools.declared import declared_tool_from_entry

        taken = {t.name for t in tools}
        for entry in config.tools:
            if entry.name not in taken:
                tools.append(declared_tool_from_entry(asdict(entry)))
                taken.add(entry.name)
    return Registry(tools)
