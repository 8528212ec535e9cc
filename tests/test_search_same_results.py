"""Without ripgrep, grep_search's pure-Python search gives ripgrep's results, byte for byte: the
same calls on the same trees through both, compared (docs/tools-search.md §Without ripgrep)."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from mm.tools.base import Settings, ToolContext
from mm.tools.search.grep_tool import GrepSearch
from search_support import tree

WORDS = ["alpha", "beta", "needle", "Needle", "NEEDLE", "café", "日本語", "x1", "42", "", "  indented", "tab\there",
         "foo_bar", "needles", "end."]
NAMES = ["ab", "a.txt", "a-b", "A", "_x", "b.py", "c.md", "é.txt", "日本.txt", "z", "data.json", "~tmp", "10", "9"]
CALLS = [
    {"pattern": "needle"}, {"pattern": "needle", "output_mode": "count"},
    {"pattern": "needle", "output_mode": "content", "max_results": 0},
    {"pattern": "needle", "output_mode": "content", "context_lines": 2, "max_results": 0},
    {"pattern": "needle", "output_mode": "content", "context_before": 1, "context_after": 3, "max_results": 7,
     "offset": 5},
    {"pattern": "needle", "case_insensitive": True, "output_mode": "count", "max_results": 0},
    {"pattern": "^needle$", "output_mode": "content", "max_results": 0}, {"pattern": r"\bx1\b", "max_results": 0},
    {"pattern": "^$", "output_mode": "count", "max_results": 0}, {"pattern": "", "max_results": 5, "offset": 3},
    {"pattern": "[0-9]+", "output_mode": "content", "max_results": 20}, {"pattern": "café|日本語", "max_results": 0},
    {"pattern": r"\w+\s\w+", "output_mode": "count", "max_results": 0}, {"pattern": "(?i)ALPHA", "max_results": 0},
    {"pattern": "needle", "file_pattern": "*.txt", "max_results": 0},
    {"pattern": "needle", "file_pattern": "!*.txt", "max_results": 0},
    {"pattern": "needle", "file_pattern": "*.{py,md}", "output_mode": "count", "max_results": 0},
    {"pattern": "needle", "file_pattern": "s0/**", "max_results": 0},
    {"pattern": "needle", "file_pattern": ".*", "max_results": 0},
    {"pattern": "needle", "path": "s0", "output_mode": "content", "context_lines": 1, "max_results": 0},
    {"pattern": "alpha", "output_mode": "content", "max_results": 3, "offset": 2, "context_lines": 1},
]


def random_tree(root: Path, seed: int) -> None:
    """Folders three deep of files named to sort trickily; hidden ones, ignore files with
    negations, binary files, BOMs, UTF-16, CRLF, names that are not UTF-8, symlinks."""
    rng = random.Random(seed)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    files: dict[str, str | bytes] = {}
    folders = ["", "a", "s0", "s0/deep", "s1", "s1/x", ".hidden", "node_modules", "build"]
    for folder in folders:
        for name in rng.sample(NAMES, 6):
            text = "\n".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12)))
            if rng.random() < 0.8:
                text += "\n"
            data: str | bytes = text
            kind = rng.random()
            if kind < 0.08:
                data = text.encode() + b"\0needle\n"
            elif kind < 0.14:
                data = b"\xef\xbb\xbf" + text.encode()
            elif kind < 0.18:
                data = text.encode("utf-16")
            elif kind < 0.24:
                data = text.replace("\n", "\r\n")
            files[f"{folder}/{name}".lstrip("/")] = data
        if rng.random() < 0.5:
            files[f"{folder}/.gitignore".lstrip("/")] = "\n".join(rng.sample(["*.md", "a", "!c.md", "z", "deep/",
                                                                                "/b.py", "*.json", "!a.txt"], 3)) + "\n"
    files[".ignore"] = "10\n"
    files["s1/.rgignore"] = "!z\n"
    tree(root, files)
    (root / os.fsdecode(b"caf\xe9-needle.txt")).write_bytes(b"needle \xff\n")
    (root / "s1" / "link").symlink_to(root / "s0")
    (root / "s1" / "flink.txt").symlink_to(root / "a.txt")


@pytest.mark.parametrize("seed", [1, 2])
async def test_python_search_gives_ripgreps_answers(tmp_path, seed):
    random_tree(tmp_path, seed)
    ctx = ToolContext(cwd=tmp_path, settings=Settings(max_output=200_000))
    rg = GrepSearch({k: v for k, v in os.environ.items() if k != "MM_RG"})
    python = GrepSearch({"MM_RG": str(tmp_path / "nowhere")})
    for args in CALLS:
        with_rg, without = await rg.run(args, ctx), await python.run(args, ctx)
        assert (without.text, without.failed) == (with_rg.text, with_rg.failed), args
    assert rg._program and python._program is None  # both searchers really ran
