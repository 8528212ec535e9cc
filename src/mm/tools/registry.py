"""The tools declared to the model, built from the configuration."""

from __future__ import annotations

import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any, Mapping

from mm.config.schema import AgentConfig
from mm.tools.base import Tool, schema_of


class Registry:
    """The declared tools, by name, in declaration order."""

    def __init__(self, tools: list[Tool], joining: Any = None):
        self.tools: dict[str, Tool] = {t.name: t for t in tools}
        self.joining = joining  # tools that join and leave (MCP servers': mm.mcp.tools.McpTools), or None
        self._own = dict(self.tools)
        self._schemas: list[dict] | None = None

    def refresh(self) -> None:
        """Take in the tools that joined since the last call and drop those that left (an MCP
        server ready, or gone: docs/mcp.md §When the tools join). Called before each model
        request, through `schemas()`: the tools of a request stay those of its whole answer."""
        if self.joining is None:
            return
        joined = {t.name: t for t in self.joining.current(set(self._own))}
        if joined.keys() != self.tools.keys() - self._own.keys():
            self.tools = {**self._own, **joined}
            self._schemas = None

    def get(self, name: str) -> Tool | None:
        """The tool called `name`, or None."""
        return self.tools.get(name)

    @property
    def names(self) -> list[str]:
        """The declared tools' names, in order."""
        return list(self.tools)

    async def close(self) -> None:
        """Let the tools that hold resources release them (the agents ask_agent started)."""
        for tool in self.tools.values():
            close = getattr(tool, "close", None)
            if callable(close):
                try:
                    await close()
                except Exception:  # leaving must not fail
                    pass

    def schemas(self) -> list[dict]:
        """The OpenAI `tools` array; a tool with its own `schema()` method provides it (built
        once, again when tools joined or left: `refresh`)."""
        self.refresh()
        if self._schemas is None:
            self._schemas = self._build_schemas()
        return self._schemas

    def _build_schemas(self) -> list[dict]:
        out = []
        for tool in self.tools.values():
            custom = getattr(tool, "schema", None)
            out.append(custom() if callable(custom) else schema_of(tool))
        return out


TRUTHY = ("1", "true", "yes", "on")


def switched_on(key: bool | None, variable: str | None) -> bool:
    """An agent-file switch (`key`, None when unset) wins; unset, the environment `variable`
    (its value, or None) is on when it reads 1, true, yes or on (any case)."""
    if key is not None:
        return key
    return (variable or "").strip().lower() in TRUTHY


# The tool groups `toolsets:` names (issue 13, docs/tools.md): `core` is mm's own tools
# (mm-tools.md); every other group is a module whose `tools(config, env, cwd) -> list[Tool]`
# returns the tools of mnemo-tools.md it holds, imported only when the group is named.
GROUPS: dict[str, str] = {
    "files": "mm.tools.files",
    "commands": "mm.tools.commands",
    "tasks": "mm.tools.tasks",
    "todo": "mm.tools.todo",
    "git": "mm.tools.git",
    "search": "mm.tools.search",
    "vision": "mm.tools.vision",
    "memory": "mm.tools.memory",
    "agents": "mm.tools.agents",
    "documents": "mm.tools.documents",
    "plan": "mm.tools.plan",
}
UNKNOWN_GROUP = "toolsets: {name!r} is not a tool group — the groups are: {names}"
# Two tools of one job declared together (docs/tools.md §Two tools of one job): mm's own is
# preferred for everyday work — it forgives a small model more, and reads back as plain text —
# and the other for what only it does. (mm's tool, the other, the note of each.)
PREFERENCES = (
    ("read_file", "fs_read", " Prefer it to fs_read for text and code; use fs_read for PDF, DOCX, CSV, JSON, "
     "a directory listing or a search in one file.", " For a plain text or code file prefer read_file."),
    ("edit_file", "file_edit", " Prefer it to file_edit: it forgives whitespace mistakes in old.",
     " Prefer edit_file; use file_edit to replace every occurrence (replace_all)."),
    ("write_file", "fs_write", " Prefer it to fs_write's create.",
     " To create or rewrite a whole file prefer write_file; to change part of one, edit_file."),
    ("read_skill", "use_skill", " use_skill loads the same skills, with their $ARGUMENTS filled in.",
     " The same skills as read_skill's; prefer use_skill when the skill takes arguments."),
)


def group_names() -> list[str]:
    """Every group `toolsets:` may name, `core` first."""
    return ["core", *GROUPS]


def build_registry(config: AgentConfig, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Registry:
    """The tools of every group `config.toolsets` names, in that order (`core`: core_tools);
    a name declared twice is declared once, the first time. See core_tools for `env` and `cwd`."""
    import importlib

    env = os.environ if env is None else env
    tools: list[Tool] = []
    for group in dict.fromkeys(config.toolsets):
        found = core_tools(config, env, cwd).tools.values() if group == "core" else \
            importlib.import_module(GROUPS[group]).tools(config, env, cwd)
        taken = {t.name for t in tools}
        tools += [t for t in found if t.name not in taken]
    _say_preferences(tools)
    return Registry(tools, _mcp_tools(config, env, cwd))


def _mcp_tools(config: AgentConfig, env: Mapping[str, str], cwd: Path | None) -> Any:
    """The tools of the MCP servers configured for `cwd` (`mcpServers`, a project's .mcp.json:
    docs/mcp.md), which join the registry as their servers get ready — started now when they do
    not run yet; None when no server is configured (then nothing of MCP is imported)."""
    from mm.mcp import configured

    if cwd is None or not configured(config, cwd):
        return None
    from mm.mcp.hub import HUB
    from mm.tools.mcp_tools import McpTools

    return McpTools(HUB.connect(config, cwd, env))


def _say_preferences(tools: list[Tool]) -> None:
    """Add PREFERENCES' notes to the descriptions of both tools of a pair declared together."""
    by_name = {t.name: t for t in tools}
    for ours, theirs, our_note, their_note in PREFERENCES:
        if ours in by_name and theirs in by_name:
            by_name[ours].description = by_name[ours].description + our_note
            by_name[theirs].description = by_name[theirs].description + their_note


def core_tools(config: AgentConfig, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Registry:
    """Declare the tools the configuration asks for (mm-tools.md: bashTool, skillsDir, editTools,
    lsp.servers, fetchContentTool, sessions.autoSearchMemory, askUserTool and unloadModels (neither beside a
    structuredOutput), mmConfigs, tools:; mnemo-tools.md: web_crawler, web_search).
    `env` (default os.environ) holds ENABLE_WEB_CRAWL, ENABLE_WEB_SEARCH, BRAVE_API_KEY, MM_ASK_DEPTH, and
    XDG_CONFIG_HOME and HOME for the user's skills. `cwd`, the working
    directory, is where a relative skillsDir is found; None: no read_skill (docs/skills.md)."""
    env = os.environ if env is None else env
    tools: list[Tool] = []
    if config.bashTool:
        from mm.tools.bash import Bash

        tools.append(Bash())
    if cwd is not None:
        tools += _skill_tool(config, cwd, env)
    if config.editTools:
        from mm.tools.edit.tool import EditFile
        from mm.tools.read_file import ReadFile
        from mm.tools.write_file import WriteFile

        tools += [ReadFile(), WriteFile(config.readBeforeWrite), EditFile(config.readBeforeWrite)]
    if config.lsp.servers:  # the lsp tool (mm-tools.md §lsp), imported only when servers are configured
        from mm.tools.lsp import lsp_tools

        tools += lsp_tools(config, env, cwd, _say_once)
    tools += _web_tools(config, env, cwd)
    if config.sessions.enabled and config.sessions.autoSearchMemory:
        from mm.tools.search_memory import SearchMemory

        tools.append(SearchMemory(config.sessions.dir))
    if config.askUserTool and config.structuredOutput is None:  # never beside a structuredOutput
        from mm.tools.ask_user.tool import AskUser

        tools.append(AskUser())
    if config.saveAnswerTool:
        from mm.tools.save_answer import SaveAnswer

        tools.append(SaveAnswer())
    tools += _unload_tool(config)
    if config.mmConfigs:
        from mm.ask.agents import ask_depth, asked_agents
        from mm.tools.ask_agent import AskAgent

        tools.append(AskAgent(asked_agents(config, cwd or Path.cwd()), ask_depth(env)))
    if config.tools:
        from mm.tools.declared import declared_tool_from_entry

        taken = {t.name for t in tools}
        for entry in config.tools:
            if entry.name not in taken:
                tools.append(declared_tool_from_entry(asdict(entry)))
                taken.add(entry.name)
    return Registry(tools)


def _unload_tool(config: AgentConfig) -> list[Tool]:
    """unload_model, when `unloadModels` (the default) and no `structuredOutput` (mm-tools.md §unload_model)."""
    if not config.unloadModels or config.structuredOutput is not None:
        return []
    from mm.tools.unload_model import UnloadModel

    return [UnloadModel()]


def _skill_tool(config: AgentConfig, cwd: Path, env: Mapping[str, str]) -> list[Tool]:
    """read_skill, when the skill folders hold at least one skill (mm-tools.md §read_skill:
    skill_catalogue)."""
    present, catalogue = skill_catalogue(config, cwd, env)
    if not catalogue:
        return []
    from mm.tools.read_skill import ReadSkill

    return [ReadSkill(present, catalogue)]


def skill_catalogue(config: AgentConfig, cwd: Path, env: Mapping[str, str]) -> tuple[list[Path], list]:
    """(the skill folders that exist, the skills they hold: first wins) of skillsDir, .agents/skills,
    .claude/skills and the user's (mm.skills.skill_directories), for read_skill and use_skill; each
    skill file skipped or shadowed is said on stderr, once per process. Nothing is scanned in a
    folder that does not exist."""
    from mm.skills import load_catalogues, skill_directories

    present = []
    for directory in skill_directories(config.skillsDir, cwd, env):
        try:
            if directory.is_dir():
                present.append(directory)
        except OSError:  # a parent that cannot be searched, say
            pass
    return present, (load_catalogues(present, warn=_say_once) if present else [])


_said: set[str] = set()


def _say_once(line: str) -> None:
    """`line` on stderr, unless this process said it already (each ACP session builds its tools)."""
    if line not in _said:
        _said.add(line)
        print(line, file=sys.stderr)


def _web_tools(config: AgentConfig, env: Mapping[str, str], cwd: Path | None = None) -> list[Tool]:
    """fetch_content, web_crawler and web_search, each when switched on (imported only then);
    web_crawler indexes large pages in the documents index of `cwd`'s project when the
    `documents` group is declared (docs/documents.md)."""
    tools: list[Tool] = []
    if config.fetchContentTool:
        from mm.tools.web.fetch_content import FetchContent

        tools.append(FetchContent())
    if switched_on(config.webCrawler.enabled, env.get("ENABLE_WEB_CRAWL")):
        from mm.tools.documents import index_for
        from mm.tools.web.web_crawler import WebCrawler

        tools.append(WebCrawler(allowed_hosts=list(config.webCrawler.allowedHosts), 
                                documents=index_for(config, env, cwd)))
    search = config.webSearch
    key = search.apiKey or env.get("BRAVE_API_KEY")
    if key and switched_on(search.enabled, env.get("ENABLE_WEB_SEARCH")):
        from mm.tools.web.web_search import WebSearch

        tools.append(WebSearch(api_key=key, endpoint=search.endpoint))
    return tools
