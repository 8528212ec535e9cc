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
