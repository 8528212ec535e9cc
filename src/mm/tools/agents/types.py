"""Sub-agent types: the built-in `general-purpose`, `explore` and `plan`, and custom agents from
Markdown files (mnemoai.md §4.4; docs/subagents.md)."""

from __future__ import annotations

from dataclasses import dataclass, field

# The read-only set of `explore` and `plan` (mnemoai.md §4.4), and mm's own read-only tools.
READ_ONLY = ("fs_read", "glob_search", "grep_search", "search_in_documents", "list_documents", "git_status_safe",
             "web_search", "web_crawler", "describe_image", "read_file", "read_skill", "search_memory")
ALWAYS_ADDED = ("fs_read", "describe_image", "read_file")  # added to any allowlist (§4.4; read_file: mm's read)
# Never in a sub-agent's tool set: they would run one level deeper, or ask a user it has none of.
NEVER = ("spawn_agent", "resume_agent", "ask_user_question")

GENERAL_PROMPT = (
    "You are a sub-agent: another agent handed you one self-contained task. Do it with your tools, on your "
    "own: nobody reads your messages until you finish. When it is done, answer with a short report of what "
    "you did and found — files, results, anything left undone. The report is all the other agent sees."
)
EXPLORE_PROMPT = (
    "You are an explore sub-agent in READ-ONLY MODE: find things out, change nothing. Search and read the "
    "files the task needs; never write, edit or run a command that changes anything. Answer with a short "
    "report of what you found, naming files and lines. The report is all the other agent sees."
)
PLAN_PROMPT = (
    "You are a plan sub-agent in read-only mode: study the code and design how to do the task, changing "
    "nothing. Answer with a step-by-step plan: what to change where, in which order, and the risks. "
    "List 3-5 files most critical for implementing this plan."
)


@dataclass
class AgentType:
    """One type of sub-agent: its name, what it is for, its system prompt, the tools it may use
    (None: all of the parent's), the tools it may not, and its model ("": the parent's)."""

    name: str
    description: str
    prompt: str
    tools: tuple[str, ...] | None = None
    denied: tuple[str, ...] = ()
    model: str = ""
    source: str = "built-in"  # or the path of its file
    deny_all: bool = False  # `disallowed-tools: all`
    label: str = ""  # what its Tools are called in the listing, when not listed one by one


    def allows(self, tool: str) -> bool:
        """Whether a tool called `tool` is in this type's set (NEVER is never)."""
        if tool in NEVER or self.deny_all or tool in self.denied:
            return False
        return self.tools is None or tool in self.tools or tool in ALWAYS_ADDED

    def tools_label(self) -> str:
        """`all`, `none`, or the allowlist as `a, b, c` (mnemoai.md §4.4: `(Tools: all|list)`)."""
        if self.label:
            return self.label
        if self.deny_all:
            return "none"
        if self.tools is None:
            return "all" if not self.denied else "all but " + ", ".join(self.denied)
        return ", ".join(t for t in self.tools if t not in self.denied)


BUILT_IN = {
    "general-purpose": AgentType("general-purpose", "any multi-step task, with all your tools", GENERAL_PROMPT),
    "explore": AgentType("explore", "find and read code", EXPLORE_PROMPT, READ_ONLY, label="read-only"),
    "plan": AgentType("plan", "design an implementation plan", PLAN_PROMPT, READ_ONLY, label="read-only"),
}


@dataclass
class Catalogue:
    """Every agent type by lower-cased name: the built-in ones, then the custom ones over them."""

    types: dict[str, AgentType] = field(default_factory=lambda: dict(BUILT_IN))

    def find(self, name: str) -> AgentType | None:
        """The type called `name`, matched case-insensitively (§2.10), or None."""
        return self.types.get(name.strip().lower())

    @property
    def names(self) -> list[str]:
        return list(self.types)

    def listing(self) -> str:
        """`<available_subagents>` with one `- name: desc (Tools: all|list)` line per type (§4.4)."""
        lines = [f"- {t.name}: {t.description} (Tools: {t.tools_label()})" for t in self.types.values()]
        return "\n".join(["<available_subagents>", *lines, "</available_subagents>"])
