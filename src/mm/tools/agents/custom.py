"""Custom agents: one Markdown file per agent in `~/.config/mm/agents/` and the project's
`.mm/agents/` (the project's win), YAML front matter over a body that is the system prompt
(mnemoai.md §4.4; docs/subagents.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

from mm.tools.agents.types import BUILT_IN, AgentType, Catalogue

FILE_BYTES = 256 * 1024  # the most of one agent file read
SKIPPED = "[agents: {path} skipped: {why}]"  # on stderr (§4.4: a bad file is reported and skipped)
NO_FRONTMATTER = "no front matter (a `---` block with a description)"
NO_DESCRIPTION = "its front matter has no description"
EMPTY_BODY = "its body (the system prompt) is empty"
NOT_TEXT = "{key} must be text"
NOT_UTF8 = "it is not UTF-8 text"
BAD_TOOLS = "{key} must be a list of tool names or a comma-separated text"


def agent_folders(cwd: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """The folders searched, the user's first: a project's agent overrides the user's one."""
    from mm.config.places import user_folder

    return [user_folder(env) / "agents", cwd / ".mm" / "agents"]


def load_catalogue(cwd: Path, env: Mapping[str, str] | None = None,
                   warn: Callable[[str], None] | None = None) -> Catalogue:
    """The built-in types, then every readable custom agent over them (a custom type overrides a
    built-in of the same name); each bad file is said through `warn` and skipped."""
    types = dict(BUILT_IN)
    for folder in agent_folders(cwd, env):
        try:
            paths = sorted(p for p in folder.glob("*.md"))
        except OSError:
            continue
        for path in paths:
            found = read_agent(path)
            if isinstance(found, str):
                if warn is not None:
                    warn(SKIPPED.format(path=path, why=found))
                continue
            types[found.name] = found
    return Catalogue(types)


def read_agent(path: Path) -> AgentType | str:
    """The agent of the file at `path`, or why it is skipped (unreadable, bad YAML, no front
    matter, no description, an empty body)."""
    from mm.fs import read_bytes
    from mm.skills import split_frontmatter

    try:
        text = read_bytes(path, FILE_BYTES).decode("utf-8").removeprefix("\ufeff")
    except OSError as err:
        return getattr(err, "reason", None) or (err.strerror or str(err)).lower()
    except UnicodeDecodeError:
        return NOT_UTF8
    if not text.lstrip().startswith("---"):
        return NO_FRONTMATTER
    meta, body, problem = split_frontmatter(text.lstrip())
    if problem:
        return problem
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        return NO_DESCRIPTION
    if not body.strip():
        return EMPTY_BODY
    for key in ("name", "model"):
        if meta.get(key) is not None and not isinstance(meta.get(key), str):
            return NOT_TEXT.format(key=key)
    tools = _names(meta.get("tools"))
    denied = _names(meta.get("disallowed-tools", meta.get("disallowed_tools")))
    if isinstance(tools, str) or isinstance(denied, str):
        return BAD_TOOLS.format(key="tools" if isinstance(tools, str) else "disallowed-tools")
    name = (meta.get("name") or "").strip().lower() or path.stem.lower()
    deny_all = denied is not None and any(d.lower() in ("*", "all") for d in denied)
    allowed = None if tools is None or any(t.lower() in ("*", "all") for t in tools) else tuple(tools)
    return AgentType(name, " ".join(description.split()), body.strip(), allowed, tuple(denied or ()),
                     (meta.get("model") or "").strip(), str(path), deny_all)


def _names(raw: Any) -> list[str] | None | str:
    """A YAML list or a CSV text as tool names; None when absent; "bad" when neither."""
    if raw is None:
        return None
    if isinstance(raw, str):
        return [n.strip() for n in raw.split(",") if n.strip()]
    if isinstance(raw, list) and all(isinstance(n, str) for n in raw):
        return [n.strip() for n in raw if n.strip()]
    return "bad"
