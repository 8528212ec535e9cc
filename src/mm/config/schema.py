"""The agent file's schema: every key, its type, its default (docs/configuration.md)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Provider = Literal["llamacpp", "ollama", "dmr", "lmstudio", "openai", "embedded"]

DEFAULT_SYSTEM_PROMPT = """You are mm, a careful coding assistant working in the user's project directory.
Use the tools to read, search, edit and run code; do not guess what a file contains, read it.
Make small, verifiable changes: edit_file with an exact `old` text copied from the file, then run the code or tests with bash to check.
When the task is done, answer briefly: what you changed and how you checked it."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=False)


class DeclaredParameter(_Strict):
    """One parameter of a declared tool (mm-tools.md §Declared tools)."""

    type: Literal["string", "integer", "number", "boolean"] = "string"
    description: str = ""
    optional: bool = False
    default: Any = None
    enum: list[Any] | None = None


class DeclaredToolEntry(_Strict):
    """One entry of the `tools:` block: a command run without a shell."""

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
    description: str = ""
    command: list[str] = Field(min_length=1)
    parameters: dict[str, DeclaredParameter] = Field(default_factory=dict)
    timeout: float | None = Field(default=None, gt=0)


class SessionsConfig(_Strict):
    """Where conversations are kept (`sessions:`)."""

    enabled: bool = False
    dir: str = ".mm/sessions"


class AgentConfig(_Strict):
    """The whole agent file. Keys are camelCase, as in the references."""

    model: str | None = None
    provider: Provider | None = None
    baseUrl: str | None = None
    apiKey: str | None = None
    yolo: bool = True
    bashTool: bool = True
    editTools: bool = True
    bashTimeout: float = Field(default=30.0, gt=0)
    maxOutput: int = Field(default=12000, ge=200)
    previewLines: int = Field(default=5, ge=0)
    maxTurns: int = Field(default=40, ge=1)
    watchdogTimeout: float = Field(default=120.0, gt=0)
    contextWindow: int | None = Field(default=None, ge=256)
    systemPrompt: str = DEFAULT_SYSTEM_PROMPT
    temperature: float | None = Field(default=None, ge=0, le=2)
    maxTokens: int | None = Field(default=None, ge=1)
    tools: list[DeclaredToolEntry] = Field(default_factory=list)
    sessions: SessionsConfig = Field(default_factory=SessionsConfig)
