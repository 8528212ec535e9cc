"""The agent file's schema: every key, its type, its default (docs/configuration.md).

Plain dataclasses, so that building the defaults costs nothing at start-up; `mm.config.load`
validates a file against them with pydantic. The constraints are `annotated_types` markers in
string annotations, resolved only then (`constraint_names`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal

if TYPE_CHECKING:  # imported by mm.config.load only when a file is validated (start-up time)
    from annotated_types import Ge, Gt, Le, MinLen

Provider = Literal["llamacpp", "ollama", "dmr", "llmman", "lmstudio", "openai", "embedded"]
FORBID = {"extra": "forbid"}  # pydantic config: an unknown key is an error

DEFAULT_SYSTEM_PROMPT = """You are mm, a careful coding assistant working in the user's project directory.
Use the tools to read, search, edit and run code; do not guess what a file contains, read it.
Make small, verifiable changes: edit_file with an exact `old` text copied from the file, then run the code or tests with bash to check.
When the task is done, answer briefly: what you changed and how you checked it."""


@dataclass
class DeclaredParameter:
    """One parameter of a declared tool (mm-tools.md §Declared tools)."""

    __pydantic_config__ = FORBID

    type: Literal["string", "integer", "number", "boolean"] = "string"
    description: str = ""
    optional: bool = False
    default: Any = None
    enum: list[Any] | None = None


@dataclass
class DeclaredToolEntry:
    """One entry of the `tools:` block: a command run without a shell."""

    __pydantic_config__ = FORBID
    name: Annotated[str, MinLen(1)]
    command: Annotated[list[str], MinLen(1)]
    description: str = ""
    parameters: dict[str, DeclaredParameter] = field(default_factory=dict)
    timeout: Annotated[float, Gt(0)] | None = None


@dataclass
class SessionsConfig:
    """Where conversations are kept (`sessions:`)."""

    __pydantic_config__ = FORBID
    enabled: bool = False
    dir: str = ".mm/sessions"
    autoSearchMemory: bool = False  # declare the search_memory tool (mm-tools.md §search_memory)
    searchMemory: bool = True  # the /memory <words> command


@dataclass
class ContextConfig:
    """Context compaction (`context:`; docs/configuration.md, docs/engine.md §Context)."""

    __pydantic_config__ = FORBID
    threshold: Annotated[float, Gt(0), Le(1)] = 0.8  # fraction of the context window that triggers it
    keepLastTurns: Annotated[int, Ge(0)] = 2  # turns kept verbatim
    summaryTokens: Annotated[int, Ge(64)] = 512  # max_tokens of the summary request


@dataclass
class WebCrawlerConfig:
    """The `web_crawler` tool (`webCrawler:`; mnemo-tools.md, Conditional tools; docs/web.md)."""

    __pydantic_config__ = FORBID
    enabled: bool | None = None  # None: the variable ENABLE_WEB_CRAWL decides
    allowedHosts: list[str] = field(default_factory=list)  # names, *.names, addresses, CIDR ranges


@dataclass
class WebSearchConfig:
    """The `web_search` tool (`webSearch:`; mnemo-tools.md, Conditional tools; docs/web.md)."""

    __pydantic_config__ = FORBID
    enabled: bool | None = None  # None: the variable ENABLE_WEB_SEARCH decides
    apiKey: str | None = None  # None: the variable BRAVE_API_KEY
    endpoint: str = "https://api.search.brave.com/res/v1/web/search"


@dataclass
class SearchConfig:
    """The `search` tool group (`search:`; mnemo-tools.md §Search; docs/tools-search.md)."""

    __pydantic_config__ = FORBID
    timeout: Annotated[float, Gt(0)] = 30.0  # seconds a glob_search or grep_search may take (the reference's 30 s)


@dataclass
class InstructionsConfig:
    """The project instructions read into the system prompt (`instructions:`; AGENTS.md, CLAUDE.md;
    docs/configuration.md §Project instructions)."""

    __pydantic_config__ = FORBID
    maxTokens: Annotated[int, Ge(0)] = 2000  # the cap of the instructions in the system prompt; 0: none read


@dataclass
class AcpConfig:
    """How mm presents itself to an editor over ACP (`acp:`; mm-acp.md §initialize response)."""

    __pydantic_config__ = FORBID
    name: Annotated[str, MinLen(1)] = "bob"  # agentInfo.name
    title: str = "Bob (bash-first agent)"  # agentInfo.title; "" leaves it out


@dataclass
class AskedAgentEntry:
    """One agent of `mmConfigs` (mm-tools.md §ask_agent): another mm, by its agent file (`config`),
    or any ACP agent, by its command line (`command`). In the file, a bare string stands for
    `config` and a `command` string is split like a shell's (mm.config.load)."""

    __pydantic_config__ = FORBID
    config: str | None = None  # an agent file; relative to the agent file that names it
    command: list[str] | None = None  # an ACP agent's program and arguments
    description: str = ""  # what it is for, shown to the model
    yolo: bool | None = None  # its calls: true run, false asked; unset: this agent's yolo


@dataclass
class HookEntry:
    """One hook (docs/hooks.md): the command run at its event for the calls `matcher` names."""

    __pydantic_config__ = FORBID
    command: Any  # an argv (list of strings), or a line run with `bash -c`: checked by mm.config.checks
    matcher: str | None = None  # a tool name (an agent name for the ask events) or a regular expression; none: all
    timeout: Annotated[float, Gt(0)] = 10.0  # seconds before its process group is killed


@dataclass
class HooksConfig:
    """`hooks:`: each event's hooks, run in this order (docs/hooks.md)."""

    __pydantic_config__ = FORBID
    preToolCall: list[HookEntry] = field(default_factory=list)
    postToolCall: list[HookEntry] = field(default_factory=list)
    preAsk: list[HookEntry] = field(default_factory=list)
    postAsk: list[HookEntry] = field(default_factory=list)
    preGeneration: list[HookEntry] = field(default_factory=list)


@dataclass
class McpServerEntry:
    """One server of `mcpServers` (docs/mcp.md): a program spoken to on stdio (`command`, `args`,
    `env`, `cwd`) or a streamable-HTTP endpoint (`url`, `headers`), as Claude Code, Cursor and
    gemini-cli write them; which of the two it is, and the rest, mm.mcp.servers checks."""

    __pydantic_config__ = FORBID
    command: str | None = None  # the program; looked up on the PATH
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # over mm's own environment
    cwd: str | None = None  # relative to the working directory; none: the working directory
    url: str | None = None  # http:// or https://
    headers: dict[str, str] = field(default_factory=dict)
    type: str | None = None  # Claude Code's `stdio` or `http` (`streamable-http`): read, and checked against the rest
    timeout: Annotated[float, Gt(0)] = 60.0  # seconds a tool call may take
    startupTimeout: Annotated[float, Gt(0)] = 30.0  # seconds to start and list its tools
    allow: list[str] = field(default_factory=list)  # its tools that never ask permission
    permissions: Literal["ask"] | None = None  # ask: every call asks, even with `yolo: true` (mm-acp.md)
    disabled: bool = False  # left out (a server of .mcp.json switched off by name)


@dataclass
class FilesConfig:
    """The `files` tool group: fs_read, fs_write, file_edit (`files:`; mnemo-tools.md; docs/tools-files.md)."""

    __pydantic_config__ = FORBID
    docMaxTokens: Annotated[int, Ge(1)] | None = None  # fs_read's cap in tokens; unset: 8192 (≤ ¼ of the window)


@dataclass
class MemoryConfig:
    """The `memory` tool group's MEMORY.md (`memory:`; notes/mnemoai.md §2.11, §4.6; docs/memory.md)."""

    __pydantic_config__ = FORBID
    scope: Literal["user", "project"] = "user"  # user: ~/.config/mm/MEMORY.md; project: <project>/.mm/MEMORY.md
    maxChars: Annotated[int, Ge(200)] = 2200  # the cap, counted on the file as written (MEMORY.MAX_CHARS)


@dataclass
class DocumentsConfig:
    """The `documents` tool group: list_documents, search_in_documents, clear_documents and the
    index behind them (`documents:`; mnemo-tools.md, Conditional tools; notes/mnemoai.md §5; docs/documents.md)."""

    __pydantic_config__ = FORBID
    chunkTokens: Annotated[int, Ge(16)] = 1024  # tokens of one indexed chunk (RAG.CHUNK_TOKENS)
    maxTokens: Annotated[int, Ge(1)] = 8192  # above it fs_read and web_crawler index a document (RAG.MAX_TOKENS)
    embeddings: bool = True  # search by meaning too when the model server answers /v1/embeddings
    embeddingModel: str | None = None  # the model asked for embeddings; None: the agent's own model


@dataclass
class LspServerEntry:
    """One language server of `lsp.servers` (mm-tools.md §lsp; docs/lsp.md): started over stdio
    as `command` `args…` in the project root, for the files whose names end with one of
    `extensions` (`.py`; the dot may be left out)."""

    __pydantic_config__ = FORBID
    name: Annotated[str, MinLen(1)]
    command: Annotated[str, MinLen(1)]  # looked up on the PATH at start-up
    extensions: Annotated[list[str], MinLen(1)]
    args: list[str] = field(default_factory=list)
    timeout: Annotated[float, Gt(0)] = 60.0  # seconds the server has for each answer, `initialize` included


@dataclass
class LspConfig:
    """`lsp:`: the language servers the `lsp` tool talks to (mm-tools.md §lsp)."""

    __pydantic_config__ = FORBID
    servers: list[LspServerEntry] = field(default_factory=list)


@dataclass
class VisionModelEntry:
    """`visionModel` as `{model, baseUrl, apiKey}`: the vision model describe_image asks, on
    another server (docs/vision.md). Without baseUrl, the agent's own server (and its key)."""

    __pydantic_config__ = FORBID
    model: Annotated[str, MinLen(1)]
    baseUrl: str | None = None  # the server's OpenAI-compatible endpoint; None: the agent's own server
    apiKey: str | None = None  # sent as a Bearer token; None on another server: no key (the agent's is never sent there)


@dataclass
class AgentConfig:
    """The whole agent file. Keys are camelCase, as in the references."""

    __pydantic_config__ = FORBID
    model: str | None = None
    provider: Provider | None = None
    baseUrl: str | None = None
    apiKey: str | None = None
    yolo: bool = True
    bashTool: bool = True
    editTools: bool = True
    askUserTool: bool = True
    saveAnswerTool: bool = False
    planMode: bool = False  # start every conversation in plan mode (docs/plan-mode.md)
    unloadModels: bool = True  # declare unload_model (mm-tools.md §unload_model), except beside structuredOutput
    skillsDir: str | None = ".mm/skills"  # relative to the working directory; "" or null: none (docs/skills.md)
    bashTimeout: Annotated[float, Gt(0)] = 30.0
    maxOutput: Annotated[int, Ge(200)] = 12000
    previewLines: Annotated[int, Ge(0)] = 5
    maxTurns: Annotated[int, Ge(1)] = 40
    watchdogTimeout: Annotated[float, Gt(0)] = 120.0
    contextWindow: Annotated[int, Ge(256)] | None = None
    systemPrompt: str = DEFAULT_SYSTEM_PROMPT
    temperature: Annotated[float, Ge(0), Le(2)] | None = None
    maxTokens: Annotated[int, Ge(1)] | None = None
    tools: list[DeclaredToolEntry] = field(default_factory=list)
    sessions: SessionsConfig = field(default_factory=SessionsConfig)
    context: ContextConfig = field(default_factory=ContextConfig)
    instructions: InstructionsConfig = field(default_factory=InstructionsConfig)
    fetchContentTool: bool = False
    webCrawler: WebCrawlerConfig = field(default_factory=WebCrawlerConfig)
    webSearch: WebSearchConfig = field(default_factory=WebSearchConfig)
    acp: AcpConfig = field(default_factory=AcpConfig)
    mmConfigs: dict[str, AskedAgentEntry] = field(default_factory=dict)  # agents ask_agent can ask
    hooks: HooksConfig = field(default_factory=HooksConfig)  # commands run at tool calls, hand-offs, prompts
    toolsets: list[str] = field(default_factory=lambda: ["core"])  # the tool groups declared (docs/tools.md)
    mcpServers: dict[str, McpServerEntry] = field(default_factory=dict)  # MCP servers whose tools join (docs/mcp.md)
    structuredOutput: dict[str, Any] | None = None  # the JSON Schema the final answer follows (mm.answer_schema)
    files: FilesConfig = field(default_factory=FilesConfig)  # the `files` group's settings
    readBeforeWrite: bool = False  # write_file and edit_file refuse a file not read first (docs/tools-files.md)
    search: SearchConfig = field(default_factory=SearchConfig)  # glob_search, grep_search (toolsets: search)
    lsp: LspConfig = field(default_factory=LspConfig)  # language servers for the lsp tool (docs/lsp.md)
    visionModel: Annotated[str, MinLen(1)] | VisionModelEntry | None = None  # describe_image's model (docs/vision.md)
    memory: MemoryConfig = field(default_factory=MemoryConfig)  # MEMORY.md of the memory tool (toolsets: memory)
    subagentMaxConcurrency: Annotated[int, Ge(1)] = 4  # sub-agents running at once (toolsets: agents, docs/subagents.md)
    documents: DocumentsConfig = field(default_factory=DocumentsConfig)  # the `documents` group (docs/documents.md)


def constraint_names() -> dict[str, Any]:
    """The names the string annotations above use, for resolving them when validating."""
    from annotated_types import Ge, Gt, Le, MinLen

    return {"Ge": Ge, "Gt": Gt, "Le": Le, "MinLen": MinLen}
