"""glob_search through the real engine against the scripted model server, on real file trees
(mnemo-tools.md §Search; notes/mnemoai.md §2.4; docs/tools-search.md §glob_search)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from mm.tools.base import ToolContext
from mm.tools.search.glob_tool import GlobSearch
from search_support import glob, lines, tree

NOISE = [".git", ".idea", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".venv", "__pycache__", "build",
         "dist", "node_modules"]


async def _is_done(task: asyncio.Task) -> bool:
    """Whether `task` had finished when this coroutine first ran."""
    return task.done()


def aged(root: Path, names: list[str]) -> None:
    """Give `names` (relative to `root`) modification times one minute apart, the first the oldest."""
    for age, name in enumerate(reversed(names)):
        stamp = 1_700_000_000 - 60 * age
        os.utime(root / name, (stamp, stamp))


def test_declaration():
    tool = GlobSearch()
    assert (tool.name, tool.kind, tool.needs_permission) == ("glob_search", "search", False)
    assert [(p.name, p.type, p.required, p.default) for p in tool.params] == [
        ("pattern", "string", True, None), ("path", "string", False, None), ("max_results", "integer", False, 1000),
        ("sort_by_mtime", "boolean", False, True), ("include_ignored", "boolean", False, False)]
    assert "Skips hidden files unless the pattern names them" in tool.description
    assert "node_modules, __pycache__, .venv and other noise folders unless include_ignored" in tool.description


async def test_newest_first_by_default(scripted_server, tmp_path):
    tree(tmp_path, {"old.py": "", "src/mid.py": "", "src/deep/new.py": "", "notes.txt": ""})
    aged(tmp_path, ["old.py", "src/mid.py", "src/deep/new.py"])
    result = await glob(scripted_server, tmp_path, pattern="**/*.py")
    assert (result.text, result.failed) == ("src/deep/new.py\nsrc/mid.py\nold.py", False)


async def test_in_path_order_when_not_by_time(scripted_server, tmp_path):
    tree(tmp_path, {"b.py": "", "a/z.py": "", "a.py": "", "c/d/e.py": ""})
    aged(tmp_path, ["c/d/e.py", "b.py", "a.py", "a/z.py"])
    result = await glob(scripted_server, tmp_path, pattern="**/*.py", sort_by_mtime=False)
    assert result.text == "a/z.py\na.py\nb.py\nc/d/e.py"


async def test_a_pattern_without_double_star_is_one_level(scripted_server, tmp_path):
    tree(tmp_path, {"top.py": "", "sub/low.py": "", "sub/x/lower.py": ""})
    assert (await glob(scripted_server, tmp_path, pattern="*.py")).text == "top.py"
    assert (await glob(scripted_server, tmp_path, pattern="*/*.py")).text == "sub/low.py"
    assert (await glob(scripted_server, tmp_path, pattern="sub/**/*.py", sort_by_mtime=False)).text == \
        "sub/low.py\nsub/x/lower.py"
    assert (await glob(scripted_server, tmp_path, pattern="**/x/*", sort_by_mtime=False)).text == "sub/x/lower.py"


async def test_max_results_cuts_the_newest(scripted_server, tmp_path):
    names = [f"f{n}.txt" for n in range(5)]
    tree(tmp_path, {name: "" for name in names})
    aged(tmp_path, names)
    result = await glob(scripted_server, tmp_path, pattern="*.txt", max_results=2)
    assert result.text == ("f4.txt\nf3.txt\n\nShowing 2 of 5 matches (newest first). Increase max_results or use "
                           "max_results=0 for unlimited.")
    result = await glob(scripted_server, tmp_path, pattern="*.txt", max_results=2, sort_by_mtime=False)
    assert result.text == ("f0.txt\nf1.txt\n\nResults limited to 2 (unsorted). Use sort_by_mtime=True for "
                           "newest-first or max_results=0 for unlimited.")
    assert lines((await glob(scripted_server, tmp_path, pattern="*.txt", max_results=0)).text) == names[::-1]
    assert lines((await glob(scripted_server, tmp_path, pattern="*.txt", max_results=5)).text) == names[::-1]


@pytest.mark.parametrize("noise", NOISE)
async def test_the_eleven_noise_folders(scripted_server, tmp_path, noise):
    tree(tmp_path, {f"{noise}/x.js": "", f"pkg/{noise}/y.js": "", "app.js": ""})
    assert (await glob(scripted_server, tmp_path, pattern="**/*.js")).text == "app.js"
    found = await glob(scripted_server, tmp_path, pattern="**/*.js", include_ignored=True, sort_by_mtime=False)
    if noise.startswith("."):  # hidden as well: only a pattern naming it enters it
        assert found.text == "app.js"
    else:
        expected = sorted(["app.js", f"{noise}/x.js", f"pkg/{noise}/y.js"], key=lambda p: p.split("/"))
        assert lines(found.text) == expected
    named = await glob(scripted_server, tmp_path, pattern=f"**/{noise}/*.js", sort_by_mtime=False)
    assert named.text == f"{noise}/x.js\npkg/{noise}/y.js"


async def test_a_folder_named_by_the_pattern_is_searched(scripted_server, tmp_path):
    tree(tmp_path, {"node_modules/lib/index.js": "", "node_modules/lib/node_modules/dep/i.js": ""})
    result = await glob(scripted_server, tmp_path, pattern="node_modules/**/*.js", sort_by_mtime=False)
    assert result.text == "node_modules/lib/index.js\nnode_modules/lib/node_modules/dep/i.js"


async def test_hidden_names_only_when_the_pattern_says_so(scripted_server, tmp_path):
    tree(tmp_path, {".github/workflows/ci.yml": "", "a.yml": "", ".env": "", "sub/.env": ""})
    assert (await glob(scripted_server, tmp_path, pattern="**/*.yml")).text == "a.yml"
    assert (await glob(scripted_server, tmp_path, pattern=".github/**/*.yml")).text == ".github/workflows/ci.yml"
    assert (await glob(scripted_server, tmp_path, pattern="**/.env", sort_by_mtime=False)).text == ".env\nsub/.env"


async def test_braces(scripted_server, tmp_path):
    tree(tmp_path, {"a.ts": "", "b.tsx": "", "c.js": "", "src/d.ts": "", "lib/e.tsx": ""})
    result = await glob(scripted_server, tmp_path, pattern="**/*.{ts,tsx}", sort_by_mtime=False)
    assert result.text == "a.ts\nb.tsx\nlib/e.tsx\nsrc/d.ts"
    result = await glob(scripted_server, tmp_path, pattern="{src,lib}/*", sort_by_mtime=False)
    assert result.text == "lib/e.tsx\nsrc/d.ts"


async def test_symlinks(scripted_server, tmp_path):
    """Symlinked folders are not entered — a link to a parent would make the walk endless (notes §7);
    a symlink to a file is a file."""
    tree(tmp_path, {"real/f.py": "", "g.py": ""})
    (tmp_path / "real" / "up").symlink_to(tmp_path)
    (tmp_path / "dirlink").symlink_to(tmp_path / "real")
    (tmp_path / "link.py").symlink_to(tmp_path / "g.py")
    (tmp_path / "broken.py").symlink_to(tmp_path / "gone.py")
    result = await glob(scripted_server, tmp_path, pattern="**/*.py", sort_by_mtime=False)
    assert result.text == "g.py\nlink.py\nreal/f.py"
    assert (await glob(scripted_server, tmp_path, pattern="*.py", path="dirlink")).text == "dirlink/f.py"


async def test_path_and_absolute_patterns(scripted_server, tmp_path):
    work = tree(tmp_path / "work", {"a.py": ""})
    other = tree(tmp_path / "other", {"b.py": "", "c/d.py": ""})
    assert (await glob(scripted_server, work, pattern="*.py")).text == "a.py"
    assert (await glob(scripted_server, work, pattern="*.py", path="../other")).text == str(other / "b.py")
    result = await glob(scripted_server, work, pattern=f"{other}/**/*.py", path=".", sort_by_mtime=False)
    assert result.text == f"{other / 'b.py'}\n{other / 'c/d.py'}"


async def test_unicode_names(scripted_server, tmp_path):
    tree(tmp_path, {"données/été.md": "", "日本/語.md": ""})
    result = await glob(scripted_server, tmp_path, pattern="**/*.md", sort_by_mtime=False)
    assert result.text == "données/été.md\n日本/語.md"
    assert (await glob(scripted_server, tmp_path, pattern="**/été*")).text == "données/été.md"


async def test_nothing_found_and_bad_paths(scripted_server, tmp_path):
    tree(tmp_path, {"f.txt": ""})
    result = await glob(scripted_server, tmp_path, pattern="**/*.rs")
    assert (result.text, result.failed) == ("No files match '**/*.rs' in the working directory.", False)
    result = await glob(scripted_server, tmp_path, pattern="*", path="nope")
    assert (result.text, result.failed) == ("Path does not exist: nope", True)
    result = await glob(scripted_server, tmp_path, pattern="*", path="f.txt")
    assert (result.text, result.failed) == ("Path is not a directory: f.txt — glob_search looks for files in a folder",
                                            True)
    result = await glob(scripted_server, tmp_path, pattern=" ")
    assert (result.text, result.failed) == ("[glob_search: the pattern is empty — give a glob such as **/*.py]", True)


async def test_a_list_longer_than_max_output(scripted_server, tmp_path):
    tree(tmp_path, {f"file-{n:04}.txt": "" for n in range(300)})
    result = await glob(scripted_server, tmp_path, {"maxOutput": 1000}, pattern="*.txt", sort_by_mtime=False)
    shown = lines(result.text.split("\n\n")[0])
    assert shown == [f"file-{n:04}.txt" for n in range(len(shown))] and 20 <= len(shown) < 300
    assert result.text.endswith(f"\n\nShowing {len(shown)} of 300 files: the list stopped at maxOutput (1000 "
                                "characters). Lower max_results, or narrow the pattern or path.")


async def test_the_scan_ceiling(scripted_server, tmp_path):
    """Newest first collects at most 100,000 matches before sorting (mnemo-tools.md §Search)."""
    folder = tmp_path / "many"
    folder.mkdir()
    for n in range(100_001):
        os.close(os.open(folder / f"{n:06}.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    result = await glob(scripted_server, tmp_path, pattern="many/*.txt", max_results=3)
    assert len(lines(result.text)) == 5
    assert result.text.endswith("\n\nShowing 3 matches from the first 100000 scanned (not globally newest — the tree "
                                "exceeds the scan ceiling). Use a more specific pattern/path to narrow the search.")
    result = await glob(scripted_server, tmp_path, pattern="many/*.txt", max_results=3, sort_by_mtime=False)
    assert result.text.startswith("many/000000.txt\nmany/000001.txt\nmany/000002.txt\n\nResults limited to 3")


async def test_the_walk_stops_at_the_timeout(scripted_server, tmp_path):
    tree(tmp_path, {f"d{n}/f{k}.txt": "" for n in range(20) for k in range(50)})
    result = await glob(scripted_server, tmp_path, {"search": {"timeout": 0.000001}}, pattern="**/*.txt")
    message = result.text.split("\n\n")[-1]
    count = len(lines(result.text)) - 2 if "\n\n" in result.text else 0
    assert message == (f"Scan stopped after 1e-06s with {count} match(es) — the tree is too large to walk fully. "
                       "Narrow the pattern or point path at a subdirectory, or use execute_bash with 'find' for a "
                       "system-wide search.")
    assert count < 1000 and not result.failed


async def test_cancelled(tmp_path):
    tree(tmp_path, {"a.txt": ""})
    ctx = ToolContext(cwd=tmp_path)
    ctx.cancelled.set()
    result = await GlobSearch().run({"pattern": "**/*"}, ctx)
    assert (result.text, result.failed) == ("[error: cancelled]", True)


async def test_the_walk_never_holds_the_event_loop(tmp_path):
    """The reference's tool bodies ran on its single event loop and stalled every other call while
    they walked (notes §7, 1.10.3, 1.12.1): mm walks in a worker thread, so a task scheduled right
    after the call runs while the walk is still going."""
    tree(tmp_path, {f"d{n}/f{k}.txt": "" for n in range(10) for k in range(50)})
    call = asyncio.create_task(GlobSearch().run({"pattern": "**/*.txt"}, ToolContext(cwd=tmp_path)))
    seen = await asyncio.create_task(_is_done(call))
    assert seen is False
    assert len(lines((await call).text)) == 500


async def test_a_nul_byte_in_the_pattern(scripted_server, tmp_path):
    result = await glob(scripted_server, tmp_path, pattern="*.py\0")
    assert (result.text, result.failed) == (
        "[glob_search: pattern: contains a NUL byte (\\u0000), which no file name, command or address can hold — "
        "send it without that character]", True)


async def test_a_list_cut_by_max_output_in_path_order_counts_no_further_than_it_looked(scripted_server, tmp_path):
    """Path order stops after max_results + 1 matches: the message says "more than", not a false total."""
    tree(tmp_path, {f"file-{n:04}.txt": "" for n in range(300)})
    result = await glob(scripted_server, tmp_path, {"maxOutput": 1000}, pattern="*.txt", sort_by_mtime=False,
                        max_results=200)
    shown = lines(result.text.split("\n\n")[0])
    assert result.text.endswith(f"\n\nShowing {len(shown)} of more than 200 files: the list stopped at maxOutput "
                                "(1000 characters). Lower max_results, or narrow the pattern or path.")
