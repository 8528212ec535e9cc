"""The project's agent file merged over the user's (docs/configuration.md §Where it is found):
key by key, a block (`sessions:`, `context:`…) merged, a list (`tools:`) replaced, an agent of
`mmConfigs` or a server of `mcpServers` replaced as a whole; each key keeps the place of the file it came from."""

from __future__ import annotations

from mm.config.files import Layer

MAX_DEPTH = 16  # deeper mappings (only an alias can make them) are replaced, not merged


def merge_layers(layers: list[Layer]) -> Layer:
    """One Layer of `layers` (lowest precedence first) merged; its path is the last one's.
    The layers' data are not changed."""
    merged = Layer(layers[-1].path, {}, {}, {})
    for layer in layers:
        _merge_into(merged, layer)
    return merged


def _merge_into(low: Layer, high: Layer) -> None:
    replaced: list[tuple] = []
    low.data = _merged(low.data, high.data, (), replaced)
    for loc in replaced:  # what the lower file said below a replaced key is no longer there
        for table in (low.places, low.expanded):
            for stale in [p for p in table if p[:len(loc)] == loc]:
                del table[stale]
    low.places.update(high.places)
    low.expanded.update(high.expanded)


def _merged(low: dict, high: dict, loc: tuple, replaced: list[tuple]) -> dict:
    out = dict(low)
    for key, value in high.items():
        here = loc + (key,)
        if isinstance(value, dict) and isinstance(out.get(key), dict) and _is_block(here):
            out[key] = _merged(out[key], value, here, replaced)
        else:
            out[key] = value
            replaced.append(here)
    return out


def _is_block(loc: tuple) -> bool:
    """Mappings merged key by key: every one but an agent of `mmConfigs` (one agent: its
    `config` and `command` exclude each other), a server of `mcpServers` (its `command` and
    `url` too) and what lies deeper than MAX_DEPTH."""
    return len(loc) <= MAX_DEPTH and not (len(loc) == 2 and loc[0] in ("mmConfigs", "mcpServers"))

