"""Finding, reading, merging and validating the agent files, with errors that name file, line and key
(docs/configuration.md)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from mm.config.files import ENV_OVERRIDES, ConfigError, Layer, key_text, place_of
from mm.config.schema import AgentConfig

__all__ = ["ConfigError", "LoadedConfig", "load_config", "agent_config_adapter"]

# The OpenAI SDK's variables, when nothing else names the server or the key (docs/configuration.md
# §Environment variables): the first one set of each list.
OPENAI_BASE_URLS = ("OPENAI_BASE_URL", "OPENAI_API_BASE")
OPENAI_API_KEYS = ("OPENAI_API_KEY",)
FLAGS = {"model": "--model", "baseUrl": "--base-url", "provider": "--provider"}


@dataclass
class LoadedConfig:
    """The validated configuration and where it came from.

    `files`: the agent files read, lowest precedence first (empty: defaults); `places`: key path
    → `<file>:<line>`; `sources`: top-level key → the variable or flag that set it; `expanded`:
    key path → the expressions its value was expanded from (`${VAR}`, `${VAR:-…}`)."""

    config: AgentConfig
    files: list[Path] = field(default_factory=list)
    places: dict[tuple, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    expanded: dict[tuple, list[str]] = field(default_factory=dict)

    @property
    def path(self) -> Path | None:
        """The agent file read last (the project's when there are two), or None."""
        return self.files[-1] if self.files else None

    def origin(self, loc: tuple) -> str:
        """Where the value of the key at path `loc` was decided: a flag or variable name,
        `<file>:<line>`, or "default" (no file sets that very key)."""
        if loc and loc[0] in self.sources:
            return self.sources[loc[0]]
        return self.places.get(loc, "default")


def load_config(explicit: str | None = None, cwd: Path | None = None,
                overrides: dict[str, Any] | None = None, env: Mapping[str, str] | None = None) -> LoadedConfig:
    """Read, merge and validate the agent files, then apply environment variables and flags (flags win).

    Args: explicit — the `-c` path or None (then the user's file and the project's, merged);
    cwd — the working directory; overrides — camelCase keys from command-line flags (None values
    ignored); env — the environment (default os.environ). Raises ConfigError with a one-line
    message naming the file, the line and the key (docs/configuration.md §Errors).
    """
    from mm.config.files import agent_files, read_layer

    cwd = cwd or Path.cwd()
    env = os.environ if env is None else env
    files = agent_files(explicit, cwd, env)
    layers = [read_layer(path, env) for path in files]
    if len(layers) > 1:
        from mm.config.merge import merge_layers

        layer = merge_layers(layers)
    else:
        layer = layers[0] if layers else Layer(cwd, {})
    data, sources = layer.data, {}  # sources: keys set by a variable or a flag, and which
    for var, key in ENV_OVERRIDES.items():
        if env.get(var):
            data[key], sources[key] = env[var], var
    for key, value in (overrides or {}).items():
        if value is not None:
            data[key], sources[key] = value, FLAGS.get(key, key)
    _openai_variables(data, sources, env)
    fallback = str(files[-1]) if files else "configuration"

    def where(loc: tuple) -> str:
        return sources[loc[0]] if loc and loc[0] in sources else place_of(loc, layer.places, fallback)

    config = _validate(data, where, bool(files))
    from mm.config.checks import check

    problem = check(config, where)
    if problem:
        raise ConfigError(problem)
    return LoadedConfig(config, files, layer.places, sources, layer.expanded)


def _openai_variables(data: dict[str, Any], sources: dict[str, str], env: Mapping[str, str]) -> None:
    """`OPENAI_BASE_URL` (or `OPENAI_API_BASE`) when nothing names the server (no baseUrl, no
    provider, no .gguf model), `OPENAI_API_KEY` when no apiKey is set."""
    model = data.get("model")
    names_server = (data.get("baseUrl") is not None or data.get("provider") is not None
                    or (isinstance(model, str) and model.endswith(".gguf")))
    for key, names, wanted in (("baseUrl", OPENAI_BASE_URLS, not names_server),
                               ("apiKey", OPENAI_API_KEYS, data.get("apiKey") is None)):
        var = next((n for n in names if env.get(n)), None)
        if wanted and var is not None:
            data[key], sources[key] = env[var], var


def _validate(data: dict[str, Any], where: Any, from_files: bool) -> AgentConfig:
    if not from_files and _only_names(data):
        return AgentConfig(**data)  # the common case: no file, nothing to check (no pydantic import)
    from pydantic import ValidationError

    try:
        return agent_config_adapter().validate_python(data)
    except ValidationError as err:
        raise ConfigError(_describe(_chosen(err.errors()), where)) from None


def agent_config_adapter() -> Any:
    """The pydantic TypeAdapter that validates an AgentConfig (its annotations resolved first)."""
    from pydantic import TypeAdapter

    from mm.config import schema

    for name, value in schema.constraint_names().items():
        setattr(schema, name, value)
    return TypeAdapter(AgentConfig)


def _only_names(data: dict[str, Any]) -> bool:
    """True when `data` holds only string model/baseUrl/apiKey and a known provider (flags, environment)."""
    from typing import get_args

    from mm.config.schema import Provider

    return (all(k in ("model", "baseUrl", "provider", "apiKey") and isinstance(v, str) for k, v in data.items())
            and data.get("provider", "openai") in get_args(Provider))


def _chosen(errors: list[dict]) -> dict:
    """The error to report: the first, or, when every error is of one member of a union (a
    visionModel that is neither a name nor a `{model, baseUrl, apiKey}`), the member that got
    furthest — the one of the input's kind; pydantic's member tags taken out of its loc."""
    import dataclasses

    from mm.config import schema

    tags = {"str", "constrained-str"} | {n for n, obj in vars(schema).items() if dataclasses.is_dataclass(obj)}
    plain = [dict(e, loc=tuple(p for p in e["loc"] if p not in tags)) for e in errors]
    if len(errors) > 1 and all(set(e["loc"]) & tags for e in errors):
        return max(plain, key=lambda e: len(e["loc"]))
    return plain[0]


def _describe(error: dict, where: Any) -> str:
    loc = tuple(error["loc"])
    if error["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
        problem = "unknown key" + _suggestion(loc)
    else:
        value = error.get("input")
        problem = f"{error['msg'][0].lower()}{error['msg'][1:]} (got {value!r})"
    return f"{where(loc)}: {key_text(loc)}: {problem}"


def _suggestion(loc: tuple) -> str:
    """` (did you mean X?)` for a misspelt key, from the fields of the dataclass that holds it."""
    import dataclasses
    import typing

    cls: Any = AgentConfig
    for part in loc[:-1]:
        if isinstance(part, int) or not dataclasses.is_dataclass(cls):
            continue
        hints = typing.get_type_hints(cls)
        cls = _dataclass_in(hints.get(part))
    if cls is None or not dataclasses.is_dataclass(cls):
        return ""
    import difflib

    names = [f.name for f in dataclasses.fields(cls)]
    close = difflib.get_close_matches(str(loc[-1]), names, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def _dataclass_in(annotation: Any) -> Any:
    """The dataclass inside `annotation` (itself, or the item of a list or dict of it), or None."""
    import dataclasses
    import typing

    if dataclasses.is_dataclass(annotation):
        return annotation
    for arg in typing.get_args(annotation):
        found = _dataclass_in(arg)
        if found is not None:
            return found
    return None
