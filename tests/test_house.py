"""The house (BRIEF: data flows one way, no two modules importing each other), checked on the
engine's imports — at the top, inside functions and under TYPE_CHECKING alike."""

import ast
from pathlib import Path

import mm

SRC = Path(mm.__file__).resolve().parent.parent


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, known: set[str]) -> set[str]:
    """The mm modules `path` imports anywhere in its text."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found & known


def test_no_two_engine_modules_import_each_other():
    files = {module_name(p): p for p in (SRC / "mm").rglob("*.py")}
    graph = {name: imports_of(path, set(files)) - {name} for name, path in files.items()}
    engine = [name for name in graph if name.startswith("mm.engine.")]
    pairs = sorted({tuple(sorted((a, b))) for a in engine for b in graph[a] if a in graph.get(b, set())})
    assert pairs == []
    assert "mm.engine.conversation" not in graph["mm.engine.compaction"]


# The layers, lowest first (BRIEF, "The house": front ends → engine → tools → llm/sessions/webmd).
# A module may import its own layer and those below, never one above. Modules not listed take
# their package's layer.
LAYERS = [
    {"mm", "mm.text", "mm.fs", "mm.sdk_logs", "mm.llm", "mm.sessions", "mm.webmd", "mm.skills", "mm.attach",
     "mm.config.schema", "mm.config.files", "mm.config.places"},
    {"mm.tools", "mm.ask", "mm.events", "mm.mcp"},
    {"mm.engine", "mm.hooks", "mm.instructions"},
    {"mm.cli", "mm.run", "mm.ui", "mm.acp", "mm.commands", "mm.config", "mm.__main__"},
]


def layer_of(module: str) -> int:
    """The layer of `module`: its own entry, else its nearest package's."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        for level, names in enumerate(LAYERS):
            if name in names:
                return level
    raise AssertionError(f"{module} is in no layer: add it to LAYERS")


def test_no_module_imports_a_layer_above_its_own():
    files = {module_name(p): p for p in (SRC / "mm").rglob("*.py")}
    upward = sorted((name, target) for name, path in files.items() for target in imports_of(path, set(files))
                    if layer_of(target) > layer_of(name))
    assert upward == []


def test_no_two_modules_import_each_other():
    files = {module_name(p): p for p in (SRC / "mm").rglob("*.py")}
    graph = {name: imports_of(path, set(files)) - {name} for name, path in files.items()}
    pairs = sorted({tuple(sorted((a, b))) for a in graph for b in graph[a]
                    if a in graph.get(b, set()) and not b.startswith(a + ".") and not a.startswith(b + ".")})
    assert pairs == []
