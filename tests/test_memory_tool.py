"""The `memory` tool of the `memory` group (mnemo-tools.md §Conditional tools; notes/mnemoai.md
§2.11, §4.6; docs/memory.md): every text of the reference through the real engine against the
scripted model server, the cap counted on the file as written, the file in the system prompt at
the start and again after compaction, `/memory-file` in line mode and over ACP. Each weakness
the notes list for the reference's memory has a test here saying mm does not have it."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from harness import RecordingUI, make_conversation
from mm.config.schema import ContextConfig
from mm.tools.memory.store import DELIMITER, MemoryFile, SECTION, render, split_entries

MEMORY = {"toolsets": ["core", "memory"]}


@pytest.fixture
def config_home(tmp_path, monkeypatch) -> Path:
    """XDG_CONFIG_HOME in the test's own folder: MEMORY.md is `<it>/mm/MEMORY.md`."""
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


def call(action=None, **arguments) -> dict:
    return {"name": "memory", "arguments": ({"action": action} if action is not None else {}) | arguments}


async def results(srv, cwd, *calls, conv=None, config=None, answers=None) -> list:
    """The results of `calls`, made in one turn (of `conv`, else a new conversation)."""
    conv = conv or make_conversation(srv.base_url, cwd, config or MEMORY)
    srv.add_tool_calls(list(calls))
    srv.add_reply("ok")
    ui = RecordingUI(answers)
    await conv.run_turn("go", ui)
    return ui.done_calls()


def texts(done) -> list[tuple[str, bool]]:
    return [(d.result.text, d.result.failed) for d in done]


def memory_file(config_home: Path) -> Path:
    return config_home / "mm" / "MEMORY.md"


# ---------------------------------------------------------------------------------------------
# add, replace, remove: every text of notes §2.11


async def test_add_replace_remove(scripted_server, tmp_path, config_home):
    first, second = "[user] Prefers pytest over unittest.", "[project] The API lives in src/api."
    done = await results(scripted_server, tmp_path, call("add", text=first), call("add", text=second),
                         call("replace", old_text="pytest", text="[user] Prefers pytest; concise answers."),
                         call("remove", old_text="src/api"))
    path = memory_file(config_home)
    sizes = [len(render([first])), len(render([first, second])),
             len(render(["[user] Prefers pytest; concise answers.", second])),
             len(render(["[user] Prefers pytest; concise answers."]))]
    assert texts(done) == [(f"Added memory entry ({sizes[0]}/2200 chars used).", False),
                           (f"Added memory entry ({sizes[1]}/2200 chars used).", False),
                           (f"Replaced memory entry ({sizes[2]}/2200 chars used).", False),
                           (f"Removed memory entry ({sizes[3]}/2200 chars used).", False)]
    assert path.read_text() == "[user] Prefers pytest; concise answers.\n"


async def test_entries_are_separated_by_a_markdown_rule(scripted_server, tmp_path, config_home):
    await results(scripted_server, tmp_path, call("add", text="one\nline two"), call("add", text="  three  "))
    assert memory_file(config_home).read_text() == "one\nline two\n\n---\n\nthree\n"
    assert DELIMITER == "\n\n---\n\n"


@pytest.mark.parametrize("calls, expected", [
    ([call("add", text="   ")], "Memory not updated: Refusing to add empty memory text."),
    ([call("add")], "Memory not updated: Refusing to add empty memory text."),
    ([call("add", text="fact"), call("add", text=" fact ")],
     "Memory not updated: That entry already exists; not adding a duplicate."),
    ([call("replace", old_text="x")], "Memory not updated: replace requires both old_text and text (the new entry)."),
    ([call("replace", text="x")], "Memory not updated: replace requires both old_text and text (the new entry)."),
    ([call("remove")], "Memory not updated: remove requires old_text."),
    ([call("add", text="alpha"), call("remove", old_text="beta")], "Memory not updated: No memory entry contains: 'beta'"),
    ([call("add", text="alpha"), call("replace", old_text="beta", text="b")],
     "Memory not updated: No memory entry contains: 'beta'"),
    ([call("add", text="a fact"), call("add", text="another fact"), call("remove", old_text="fact")],
     "Memory not updated: 2 entries match 'fact'; be more specific."),
    ([call("add", text="a fact"), call("add", text="another fact"), call("replace", old_text="fact", text="x")],
     "Memory not updated: 2 entries match 'fact'; be more specific."),
    ([call("delete", old_text="x")], "Unknown action 'delete'. Use 'add', 'replace', or 'remove'."),
    ([call("", text="x")], "Unknown action ''. Use 'add', 'replace', or 'remove'."),
])
async def test_refusals(scripted_server, tmp_path, config_home, calls, expected):
    done = await results(scripted_server, tmp_path, *calls)
    assert (done[-1].result.text, done[-1].result.failed) == (expected, True)


async def test_the_action_is_trimmed_and_lowercased(scripted_server, tmp_path, config_home):
    done = await results(scripted_server, tmp_path, call(" ADD ", text="fact"), call("Remove", old_text="fact"))
    assert [d.result.failed for d in done] == [False, False]
    assert memory_file(config_home).read_text() == ""


async def test_a_refusal_changes_nothing(scripted_server, tmp_path, config_home):
    path = memory_file(config_home)
    path.parent.mkdir(parents=True)
    path.write_text("a fact\n\n---\n\nanother fact\n")
    before = path.stat()
    await results(scripted_server, tmp_path, call("remove", old_text="fact"), call("add", text="a fact"),
                  call("replace", old_text="nothing", text="x"))
    assert path.read_text() == "a fact\n\n---\n\nanother fact\n"
    assert path.stat().st_ino == before.st_ino  # not even rewritten


async def test_an_entry_equal_to_old_text_is_the_one_even_when_others_contain_it(scripted_server, tmp_path,
                                                                                config_home):
    done = await results(scripted_server, tmp_path, call("add", text="[user] Uses vim"),
                         call("add", text="[user] Uses vim and tmux"), call("remove", old_text="[user] Uses vim"))
    assert not done[-1].result.failed
    assert memory_file(config_home).read_text() == "[user] Uses vim and tmux\n"


async def test_replace_refuses_to_make_a_duplicate(scripted_server, tmp_path, config_home):
    done = await results(scripted_server, tmp_path, call("add", text="alpha"), call("add", text="beta"),
                         call("replace", old_text="alpha", text="beta"))
    assert done[-1].result.text == "Memory not updated: That entry already exists; not adding a duplicate."


# ---------------------------------------------------------------------------------------------
# the cap, counted on the file as written


async def test_the_cap_is_the_length_of_the_file_as_written(scripted_server, tmp_path, config_home):
    config = {**MEMORY, "memory": {"maxChars": 200}}
    first = "a" * 100
    fits = "b" * (200 - len(render([first])) - len(DELIMITER))  # exactly 200 with the separator and final newline
    assert len(render([first, fits])) == 200
    done = await results(scripted_server, tmp_path, call("add", text=first), call("add", text=fits),
                         call("add", text="c"), config=config)
    path = memory_file(config_home)
    assert texts(done)[1] == ("Added memory entry (200/200 chars used).", False)
    assert len(path.read_text()) == 200
    assert texts(done)[2] == ("Memory not updated: Adding this would exceed the memory limit (208 > 200 chars). "
                              "Consolidate or remove existing entries first (use replace/remove), then add again.",
                              True)
    done = await results(scripted_server, tmp_path, call("replace", old_text="aaa", text="a" * 101), config=config)
    assert texts(done) == [("Memory not updated: That replacement would exceed the memory limit (201 > 200 chars). "
                            "Make it shorter or remove another entry first.", True)]
    assert len(path.read_text()) == 200


async def test_the_cap_counts_characters_not_bytes(scripted_server, tmp_path, config_home):
    done = await results(scripted_server, tmp_path, call("add", text="é" * 300))
    assert done[0].result.text == "Added memory entry (301/2200 chars used)."


async def test_the_description_says_the_cap(scripted_server, tmp_path, config_home):
    conv = make_conversation(scripted_server.base_url, tmp_path, {**MEMORY, "memory": {"maxChars": 500}})
    assert "capped at 500 characters" in conv.registry.get("memory").description
    assert [p.name for p in conv.registry.get("memory").params] == ["action", "text", "old_text"]


# ---------------------------------------------------------------------------------------------
# the reference's weaknesses (notes §4.6, §2.11) — mm does not have them


async def test_an_entry_holding_a_rule_line_is_refused_not_split_on_the_next_read(scripted_server, tmp_path,
                                                                                 config_home):
    """The reference wrote it and read it back as two entries."""
    done = await results(scripted_server, tmp_path, call("add", text="first part\n---\nsecond part"),
                         call("add", text="x\n§\ny"), call("add", text="ok -- not a rule ---x"))
    expected = ("Memory not updated: an entry cannot hold a line of only dashes (---) or only §: such a line "
                "separates the entries of MEMORY.md — write that line another way.")
    assert texts(done) == [(expected, True), (expected, True),
                           ("Added memory entry (22/2200 chars used).", False)]
    assert split_entries(memory_file(config_home).read_text()) == ["ok -- not a rule ---x"]


async def test_a_hand_written_file_with_old_separators_is_read_as_entries(scripted_server, tmp_path, config_home):
    path = memory_file(config_home)
    path.parent.mkdir(parents=True)
    path.write_text("one\n§\ntwo\n-----\nthree\n")
    done = await results(scripted_server, tmp_path, call("remove", old_text="two"))
    assert done[0].result.text == f"Removed memory entry ({len(render(['one', 'three']))}/2200 chars used)."
    assert path.read_text() == "one\n\n---\n\nthree\n"


async def test_a_file_that_cannot_be_read_is_never_taken_for_empty(scripted_server, tmp_path, config_home):
    """The reference read an unreadable file as "" and the next add wrote over every entry."""
    path = memory_file(config_home)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"[user] caf\xe9 latin-1\n")
    done = await results(scripted_server, tmp_path, call("add", text="new"))
    assert texts(done) == [(f"Memory not updated: {path} is not UTF-8 text; nothing was changed — fix or move "
                            "that file, then try again.", True)]
    assert path.read_bytes() == b"[user] caf\xe9 latin-1\n"


async def test_a_named_pipe_is_neither_waited_on_nor_replaced(scripted_server, tmp_path, config_home):
    path = memory_file(config_home)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    done = await results(scripted_server, tmp_path, call("add", text="new"))
    assert done[0].result.failed
    assert done[0].result.text.startswith(f"Memory not updated: {path} cannot be read (it is a named pipe")
    assert stat.S_ISFIFO(os.lstat(path).st_mode)


async def test_a_device_is_refused(scripted_server, tmp_path, config_home):
    path = memory_file(config_home)
    path.parent.mkdir(parents=True)
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    done = await results(scripted_server, tmp_path, call("add", text="new"))
    assert "character device, not a regular file" in done[0].result.text and done[0].result.failed


async def test_writes_are_atomic_and_keep_the_mode_and_a_link(scripted_server, tmp_path, config_home):
    """A temporary file renamed over the target (a new inode, nothing left behind); a MEMORY.md that is
    a link to the user's dotfiles stays a link and its target is updated."""
    dotfiles = tmp_path / "dotfiles" / "MEMORY.md"
    dotfiles.parent.mkdir()
    dotfiles.write_text("kept\n")
    dotfiles.chmod(0o600)
    path = memory_file(config_home)
    path.parent.mkdir(parents=True)
    path.symlink_to(dotfiles)
    inode = dotfiles.stat().st_ino
    await results(scripted_server, tmp_path, call("add", text="added"))
    assert path.is_symlink() and dotfiles.read_text() == "kept\n\n---\n\nadded\n"
    assert dotfiles.stat().st_ino != inode and stat.S_IMODE(dotfiles.stat().st_mode) == 0o600
    assert sorted(p.name for p in dotfiles.parent.iterdir()) == ["MEMORY.md"]


def test_concurrent_writers_lose_no_entry(tmp_path):
    """Two mm adding at once (here: threads, each with its own lock descriptor) keep every entry;
    the reference's read-modify-write without a lock could drop one."""
    path = tmp_path / "mm" / "MEMORY.md"
    errors: list[Exception] = []

    def add(n: int) -> None:
        try:
            MemoryFile(path, 100_000).apply("add", f"entry {n}", "")
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=add, args=(n,)) for n in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(split_entries(path.read_text())) == sorted(f"entry {n}" for n in range(40))


async def test_the_replace_refusal_names_the_parameter_the_tool_has(scripted_server, tmp_path, config_home):
    """The reference asked for `new_text`, a parameter the tool does not have: mm's refusal names
    `text`, and a call that sends `new_text` all the same is read as `text`."""
    done = await results(scripted_server, tmp_path, call("replace", old_text="x"), call("add", text="old x"),
                         call("replace", old_text="x", new_text="new y"))
    assert "new_text" not in done[0].result.text and "old_text and text" in done[0].result.text
    assert not done[2].result.failed
    assert memory_file(config_home).read_text() == "new y\n"


async def test_a_refusal_is_a_failed_result(scripted_server, tmp_path, config_home):
    """The reference returned its refusals as ordinary results."""
    done = await results(scripted_server, tmp_path, call("add"), call("add", text="x"))
    assert [d.result.failed for d in done] == [True, False]


# ---------------------------------------------------------------------------------------------
# permission, where the file is


async def test_with_yolo_off_the_user_sees_the_change_first(scripted_server, tmp_path, config_home):
    config = {**MEMORY, "yolo": False}
    conv = make_conversation(scripted_server.base_url, tmp_path, config)
    scripted_server.add_tool_calls([call("add", text="[user] likes tea")])
    scripted_server.add_reply("ok")
    ui = RecordingUI(["reject_once"])
    await conv.run_turn("go", ui)
    assert ui.asked == [("memory", {"action": "add", "text": "[user] likes tea", "old_text": ""})]
    assert ui.previews == [f"{memory_file(config_home)}\n@@ -0,0 +1 @@\n+1 │ [user] likes tea"]
    assert not memory_file(config_home).exists()
    done = await results(scripted_server, tmp_path, call("add", text="[user] likes tea"), call("list"), conv=conv,
                         answers=["allow_once"])
    assert memory_file(config_home).read_text() == "[user] likes tea\n"
    assert done[0].result.change.new_text == "[user] likes tea\n"
    assert done[1].result.failed  # an unknown action asks nothing: only one answer was used


async def test_the_user_scope_honours_xdg_config_home(scripted_server, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    await results(scripted_server, tmp_path, call("add", text="x"))
    assert (tmp_path / "xdg" / "mm" / "MEMORY.md").read_text() == "x\n"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/ignored")  # the XDG rule: a relative value is ignored
    await results(scripted_server, tmp_path, call("add", text="y"))
    assert (tmp_path / "home" / ".config" / "mm" / "MEMORY.md").read_text() == "y\n"


async def test_the_project_scope_is_the_repository_s(scripted_server, tmp_path, config_home):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    await results(scripted_server, sub, call("add", text="[project] uses tox"),
                  config={**MEMORY, "memory": {"scope": "project"}})
    assert (repo / ".mm" / "MEMORY.md").read_text() == "[project] uses tox\n"
    assert not memory_file(config_home).exists()
    outside = tmp_path / "plain"
    outside.mkdir()
    await results(scripted_server, outside, call("add", text="here"), config={**MEMORY, "memory": {"scope": "project"}})
    assert (outside / ".mm" / "MEMORY.md").read_text() == "here\n"


# ---------------------------------------------------------------------------------------------
# the system prompt: at the start, frozen during the session, again after compaction and /new


def system_of(request: dict) -> str:
    return request["messages"][0]["content"]


async def test_the_file_is_in_the_system_prompt_and_again_after_compaction(scripted_server, tmp_path, config_home):
    path = memory_file(config_home)
    path.parent.mkdir(parents=True)
    path.write_text("[user] Prefers tabs.\n")
    conv = make_conversation(scripted_server.base_url, tmp_path, MEMORY)
    section = SECTION.format(path=path, used=21, limit=2200, entries="[user] Prefers tabs.")
    assert conv.history[0]["content"].endswith("\n\n" + section)
    await results(scripted_server, tmp_path, call("add", text="[user] Works in Go."), conv=conv)
    scripted_server.add_reply("second")
    await conv.run_turn("again", RecordingUI())
    assert "Works in Go" not in system_of(scripted_server.requests[-1])  # a frozen snapshot during the session
    scripted_server.add_reply("Notes of the session.")
    conv.context = ContextConfig(keepLastTurns=1)
    assert (await conv.compact()).startswith("🗜️ compressed")
    after = SECTION.format(path=path, used=len(render(["[user] Prefers tabs.", "[user] Works in Go."])), limit=2200,
                           entries="[user] Prefers tabs.\n\n---\n\n[user] Works in Go.")
    assert conv.history[0]["content"].endswith("\n\n" + after)
    scripted_server.add_reply("third")
    await conv.run_turn("and now", RecordingUI())
    assert system_of(scripted_server.requests[-1]).endswith(after)
    await results(scripted_server, tmp_path, call("remove", old_text="Go"), conv=conv)
    conv.new()
    assert conv.history == [{"role": "system", "content": conv.system_prompt}]
    assert conv.system_prompt.endswith("\n\n" + section)


async def test_no_section_without_entries_or_without_the_tool(scripted_server, tmp_path, config_home):
    bare = make_conversation(scripted_server.base_url, tmp_path, MEMORY).history[0]["content"]
    assert "# Memory" not in bare
    path = memory_file(config_home)
    path.parent.mkdir(parents=True)
    path.write_text("a fact\n")
    assert "a fact" not in make_conversation(scripted_server.base_url, tmp_path).history[0]["content"]


async def test_a_file_over_the_cap_by_hand_is_cut_in_the_prompt(scripted_server, tmp_path, config_home):
    """The reference injected the file whole, however large a hand edit made it."""
    path = memory_file(config_home)
    path.parent.mkdir(parents=True)
    path.write_text("x" * 5000 + "\n")
    prompt = make_conversation(scripted_server.base_url, tmp_path,
                               {**MEMORY, "memory": {"maxChars": 300}}).history[0]["content"]
    assert "x" * 300 in prompt and "x" * 301 not in prompt
    assert prompt.endswith(f"[mm: {path} holds 5001 characters, more than its cap of 300 (memory.maxChars): the rest "
                           "is left out here — consolidate it with the memory tool's replace and remove]")


@pytest.mark.parametrize("linked", ["file", "folder"])
async def test_a_project_memory_linked_out_of_the_project_is_refused(scripted_server, tmp_path, config_home, linked):
    """A cloned repository's `.mm/MEMORY.md` → `~/.bashrc` (or `.mm` → `~`): neither written by
    `memory add` nor put in the system prompt; the file outside is as it was."""
    from mm.config.places import tilde
    from mm.tools.memory.store import CANNOT_SHOW, LINKED_OUT, NOT_UPDATED

    home = tmp_path / "home"
    home.mkdir()
    bashrc = home / "MEMORY.md" if linked == "folder" else home / ".bashrc"
    bashrc.write_text("export SECRET=1\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    if linked == "file":
        (repo / ".mm").mkdir()
        (repo / ".mm" / "MEMORY.md").symlink_to(bashrc)
    else:
        (repo / ".mm").symlink_to(home)
    config = {**MEMORY, "memory": {"scope": "project"}}
    why = LINKED_OUT.format(path=tilde(repo / ".mm" / "MEMORY.md"), target=tilde(bashrc))
    conv = make_conversation(scripted_server.base_url, repo, config)
    assert conv.history[0]["content"].endswith(CANNOT_SHOW.format(reason=why))
    assert "SECRET" not in conv.history[0]["content"]
    done = await results(scripted_server, repo, call("add", text="x"), conv=conv)
    assert texts(done) == [(NOT_UPDATED.format(reason=why), True)]
    assert bashrc.read_text() == "export SECRET=1\n"


async def test_a_project_memory_linked_inside_the_project_is_followed(scripted_server, tmp_path, config_home):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "docs").mkdir()
    (repo / "docs" / "memory.md").write_text("kept\n")
    (repo / ".mm").mkdir()
    (repo / ".mm" / "MEMORY.md").symlink_to("../docs/memory.md")
    await results(scripted_server, repo, call("add", text="added"), config={**MEMORY, "memory": {"scope": "project"}})
    assert (repo / "docs" / "memory.md").read_text() == "kept\n\n---\n\nadded\n"
    assert (repo / ".mm" / "MEMORY.md").is_symlink()


async def test_an_unreadable_file_is_said_in_the_prompt(scripted_server, tmp_path, config_home):
    path = memory_file(config_home)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xff\xfe\x00bad")
    prompt = make_conversation(scripted_server.base_url, tmp_path, MEMORY).history[0]["content"]
    assert prompt.endswith(f"[mm: your memory file cannot be used: {path} is not UTF-8 text; nothing was changed — "
                           "fix or move that file, then try again.]")


def test_mm_p_sends_the_file_in_its_system_prompt(scripted_server, tmp_path):
    from mm_runs import agent_file, one_shot

    work, config = tmp_path / "work", tmp_path / "config"
    agent_file(work, "toolsets: [core, memory]\n")
    (config / "mm").mkdir(parents=True)
    (config / "mm" / "MEMORY.md").write_text("[user] Answers in French.\n")
    scripted_server.add_tool_calls([call("add", text="[project] uses make")])
    scripted_server.add_reply("Fait.")
    done = one_shot(scripted_server, work, "hello", env={"XDG_CONFIG_HOME": str(config)})
    assert done.returncode == 0, done.stderr
    assert system_of(scripted_server.requests[0]).endswith("\n\n[user] Answers in French.")
    assert (config / "mm" / "MEMORY.md").read_text() == "[user] Answers in French.\n\n---\n\n[project] uses make\n"
