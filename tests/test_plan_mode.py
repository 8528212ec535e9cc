"""Plan mode and exit_plan_mode (issue 14 point 1; mnemo-tools.md §Ask, plan, and delegate;
notes/mnemoai.md §2.10, §4.3; docs/plan-mode.md), through the real engine against the scripted
model server: no write tool and no write command runs in plan mode — a sentinel file proves
nothing ran, and no permission was even asked — while read-only ones do; the reminder goes with
each request and never into the history; an approved plan switches plan mode off in the same
turn and pre-approves its commands. The front ends are in tests/test_plan_mode_frontends.py."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from git_repos import git, new_repo
from harness import RecordingUI, make_conversation
from mm.tools.floor.readonly import approved_by, read_only_problem
from mm.tools.floor.readonly_rules import AWK_INDIRECT, AWK_OPTION, AWK_WRITES
from mm.tools.plan import gate
from mm.tools.plan.exit import (APPROVED, APPROVED_EDITED, COMMANDS, EMPTY_PLAN, KEEP_PLANNING, NOBODY,
                                NOT_IN_PLAN_MODE)
from mm.tools.plan.state import EXIT_BY_USER, EXIT_WITH_TOOL, PLAN_OFF, PLAN_ON, REMINDER

EVERYTHING = {"toolsets": ["core", "files", "commands", "tasks", "git", "plan"], "yolo": False}
SENTINEL = "sentinel.txt"
KEPT = "the user's own text\n"


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


class PlanUI(RecordingUI):
    """A front end that answers exit_plan_mode's question with the next of `plan_answers`."""

    def __init__(self, plan_answers: list[tuple[str, str]] | None = None, answers: list[str] | None = None):
        super().__init__(answers)
        self.plan_answers = list(plan_answers or [])
        self.plans: list[tuple[str, list[str], Path]] = []

    async def approve_plan(self, plan: str, allowed_bash: list[str], plan_file: Path) -> tuple[str, str]:
        self.plans.append((plan, allowed_bash, plan_file))
        return self.plan_answers.pop(0)


@pytest.fixture
def work(tmp_path, monkeypatch) -> Path:
    """A repository holding the sentinel; the plans and task logs under the test's own XDG_STATE_HOME."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    repo = new_repo(tmp_path / "work", {SENTINEL: KEPT, "notes.md": "# notes\n"})
    return repo


@contextlib.asynccontextmanager
async def planning(srv, work: Path, config: dict):
    """A real conversation for `config` in `work`, in plan mode; closed at the end."""
    conv = make_conversation(srv.base_url, work, config)
    conv.set_plan_mode(True)
    try:
        yield conv
    finally:
        await conv.close()


async def turn(srv, conv, calls: list[dict], ui=None) -> list[str]:
    """One turn whose first answer makes `calls`, then answers "ok"; the calls' results."""
    srv.add_tool_calls(calls)
    srv.add_reply("ok")
    ui = ui or PlanUI()
    await conv.run_turn("go", ui)
    return [done.result.text for done in ui.done_calls()]


def refused_command(why: str, plan_file: Path) -> str:
    return gate.REFUSED_COMMAND.format(why=why, next=gate.NEXT_EXIT.format(plan_file=plan_file))


# ---------------------------------------------------------------------------------------------
# which commands only read: the floor's parser, not a first-word allowlist


@pytest.mark.parametrize("command", [
    "ls -la", "cat sentinel.txt", "cat a | grep x | wc -l", "grep -rn foo . 2>/dev/null", "find . -name '*.py'",
    "git status", "git log --oneline -3", "git diff HEAD~1 -- a.py", "git -C sub show HEAD", "sed -n '1,5p' f",
    "sed 's/a/b/g' f", "awk '{print $1}' f", "awk '$3 >= 2' f", "head -5 f && tail -5 f", "ls; pwd", "env",
    "echo hi >&2", "echo x > /dev/null", "cd src && ls", "ls $(pwd)", "for f in *.py; do wc -l $f; done",
    "cat <<EOF\nhi\nEOF", "date +%s", "date -d yesterday", "sort -u f", "uniq f", "printenv HOME", "rg foo",
    "diff a b", "stat f", "du -sh .", "tree -L 2", "if test -f x; then cat x; fi",
    # options read as the programs read them: arguments, clusters, abbreviations that only read
    "sed -ne '1,3p' f", "sed -n -e p -e '$=' f", "sed -E -l 80 -s 's/a/b/' f", "sed --quiet --expr=p f",
    "sed --reg 's/(a)/\\1/' f", "sed -n ':a;N;$!ba;p' f", "sed -- p f", "awk -F: '{print $1}' f",
    "awk -F : -v x=1 '{print x}' f", "awk -vx=1 -- '{print x}' f", "awk --field-separator=, '{print $2}' f",
    "gawk '$1 ~ /a/' f -", "uniq -c -f 1 f", "uniq --skip-fields 1 -w 3 -- f", "uniq -", "date -u +%F",
    "date --date=yesterday +%s", "date -Iseconds", "date --iso-8601=ns -r f", "sort --reverse -k 2 f",
    "file -b f", "file --mime-type f", "git grep -n foo", "git log --oneline --no-ext-diff",
    "git diff --output-indicator-new=+ HEAD", "git grep -e x -- a", "less -R +G f", "less +/foo f",
])
def test_read_only_commands(command):
    assert read_only_problem(command, "/nonexistent") is None


@pytest.mark.parametrize("command,why", [
    ("env rm -rf x", "env with arguments runs another program"),  # the reference's hole
    ("env -i sh -c 'rm x'", "env with arguments runs another program"),
    ("rm sentinel.txt", "rm is not a read-only program"),
    ("echo x > f", "it redirects output to a file (> f)"),
    ("cat a >> f", "it redirects output to a file (>> f)"),
    ("ls &> out", "it redirects output to a file (&> out)"),
    ("cat <<EOF > f\nhi\nEOF", "it redirects output to a file (> f)"),
    ("sed -i s/a/b/ f", "sed -i edits files in place"),
    ("sed -ni 's/a/b/p' f", "sed -i edits files in place"),
    ('sed "-i" s/a/b/ f', "sed -i edits files in place"),
    ("s\\ed --in-place=.bak s/a/b/ f", "sed -i edits files in place"),
    ("sed 's/a/b/w out' f", "sed's s///w writes a file, s///e runs a command"),
    ("sed -e 1d -e 'w out' f", "sed's w writes a file, e runs a command"),
    ("sed '1e rm x' f", "sed's w writes a file, e runs a command"),
    ("find . -delete", "find -delete changes files or runs commands"),
    ("find . -name x -exec rm {} +", "find -exec changes files or runs commands"),
    ("find . -fprint out", "find -fprint changes files or runs commands"),
    ("awk '{print > \"x\"}' f", "this awk program may write files or run commands (system, getline, |, >)"),
    ("awk 'BEGIN{system(\"rm x\")}'", "this awk program may write files or run commands (system, getline, |, >)"),
    ("git commit -m x", "git commit is not one of git's read-only commands"),
    ("git -c core.pager=rm log", "git -c may change what git runs"),
    ("git diff --output=x", "git diff --output=x writes a file or runs a program"),
    ("ls $(rm x)", "rm is not a read-only program"),
    ("ls `touch x`", "touch is not a read-only program"),
    ("cat <(rm x)", "rm is not a read-only program"),
    ("ls && rm x", "rm is not a read-only program"),
    ("ls | tee x", "tee is not a read-only program"),
    ("ls &", "it runs something in the background (&)"),
    ("X=1 ls", "it sets variables for the program it runs"),
    ("GIT_EXTERNAL_DIFF=rm git diff", "it sets variables for the program it runs"),
    ("f() { rm x; }; f", "it defines functions or sets variables"),
    ("/bin/rm x", "it runs a program by its path (/bin/rm)"),
    ("$(cat f) x", "its program is not known before it runs"),
    ("$HOME/x", "it runs a program by its path (/nonexistent-home/x)"),
    ("bash -c ls", "bash is not a read-only program"),
    ("xargs rm < list", "xargs is not a read-only program"),
    ("sort -o f f", "sort -o writes a file or runs a program"),
    ("uniq in out", "uniq with a second operand writes it"),
    ("date 0101", "date with an operand that is no +FORMAT sets the clock"),
    ("hostname evil", "hostname with these arguments may set the name"),
    ("rg --pre=sh x", "rg --pre=sh runs a program on every file"),
    ("tree -o out", "tree -o writes a file"),
    # long options are taken in any abbreviation; sed's and awk's options are read as they read them
    ("git grep --open=touch\\ x a", "git grep --open=touch x writes a file or runs a program"),
    ("git grep -O a", "git grep -O writes a file or runs a program"),
    ("git grep -nOtouch a", "git grep -O writes a file or runs a program"),
    ("git log --out=x", "git log --out=x writes a file or runs a program"),
    ("git diff --ext", "git diff --ext writes a file or runs a program"),
    ("sort --outp=o1 f", "sort --outp=o1 writes a file or runs a program"),
    ("sort --o o1 f", "sort --o writes a file or runs a program"),
    ("sort --compress=sh f", "sort --compress=sh writes a file or runs a program"),
    ("sed --in s/a/Z/ g", "sed -i edits files in place"),
    ("sed --i s/a/Z/ g", "sed -i edits files in place"),
    ("sed -Ei.bak s/a/Z/ g", "sed -i edits files in place"),
    ("sed --fi=script g", "sed -f runs a script the command does not show"),
    ("sed -nf script g", "sed -f runs a script the command does not show"),
    ("sed --expr='1w o2' p", "sed's w writes a file, e runs a command"),
    ("sed --expression '1w o2' p", "sed's w writes a file, e runs a command"),
    ("sed -l 5 'w o3' f", "sed's w writes a file, e runs a command"),
    ("sed -l5 'w o3' f", "sed's w writes a file, e runs a command"),
    ("sed -ne '1w o4' -e p f", "sed's w writes a file, e runs a command"),
    ("sed -n -e p -e1W\\ o4 f", "sed's w writes a file, e runs a command"),
    ("sed -s -- '1w o' f", "sed's w writes a file, e runs a command"),
    ("sed 'b;w o' f", "sed's w writes a file, e runs a command"),
    ("sed ':a;1w o' f", "sed's w writes a file, e runs a command"),
    ("sed 's/a/b/gw o' f", "sed's s///w writes a file, s///e runs a command"),
    ("sed 'v' f", "a sed script mm cannot follow"),
    ("sed --sand --x p f", "mm does not know sed's option --x"),
    ("sed -X p f", "mm does not know sed's option -X"),
    ("sed --s p f", "mm does not know sed's option --s"),  # --silent, --separate, --sandbox: ambiguous
    ("uniq -- f -o5", "uniq with a second operand writes it"),
    ("uniq -c f o", "uniq with a second operand writes it"),
    ("uniq f -c o", "uniq with a second operand writes it"),
    ("uniq --bogus f", "mm does not know uniq's option --bogus"),
    ("file --comp -m m", "file --comp writes a file"),
    ("file -bC -m m", "file -C writes a file"),
    ("awk -W interactive 'BEGIN{system(\"touch w\")}'", AWK_OPTION.format(option="-W")),
    ("awk -W exec p.awk", AWK_OPTION.format(option="-W")),
    ("awk -f p.awk f", AWK_OPTION.format(option="-f")),
    ("gawk -o out '{print}' f", AWK_OPTION.format(option="-o")),
    ("gawk -oout '{print}' f", AWK_OPTION.format(option="-o")),
    ("gawk --pretty-print=out '{print}' f", AWK_OPTION.format(option="--pretty-print=out")),
    ("gawk -p '{print}' f", AWK_OPTION.format(option="-p")),
    ("gawk -d '{print}' f", AWK_OPTION.format(option="-d")),
    ("gawk --profile=out '{print}' f", AWK_OPTION.format(option="--profile=out")),
    ("gawk --pro '{print}' f", AWK_OPTION.format(option="--pro")),
    ("gawk -e '{print}' -e 'BEGIN{}' f", AWK_OPTION.format(option="-e")),
    ("gawk --source='{print}' f", AWK_OPTION.format(option="--source='{print}'".replace("'", ""))),
    ("gawk -v x=1 -F: -W exec p.awk", AWK_OPTION.format(option="-W")),
    ("gawk -F", "awk -F may run code or write files: only -F, -v and one program text are allowed"),
    ("gawk 'function f(){print} BEGIN{g=\"f\"; @g()}'", AWK_INDIRECT),
    ("gawk '@load \"filefuncs\"; BEGIN{}'", AWK_INDIRECT),
    ("awk -- 'BEGIN{system(\"x\")}'", AWK_WRITES),
    ("awk 'BEGIN{\"date\" | getline d}'", AWK_WRITES),
    ("date --se=2020-01-01", "date -s sets the clock"),
    ("date -us 2020-01-01", "date -s sets the clock"),
    ("date -u 0101", "date with an operand that is no +FORMAT sets the clock"),
    ("date -- 0101", "date with an operand that is no +FORMAT sets the clock"),
    ("date --bogus", "mm does not know date's option --bogus"),
    ("less -o log f", "less -o writes a log file"),
    ("less -RO log f", "less -O writes a log file"),
    ("less --log=log f", "less --log=log writes a log file"),
    ("less '+s saved' f", "less +s saved may save a file or run a command"),
    ("less '+!touch x' f", "less +!touch x may save a file or run a command"),
    ("ls 'unclosed", "the command does not parse"),
    ("", "the command is empty"),
])
def test_commands_that_are_not_read_only(command, why):
    assert read_only_problem(command, "/nonexistent", {"HOME": "/nonexistent-home"}) == why


@pytest.mark.parametrize("command,entries,covered", [
    ("pytest tests/unit", ["pytest"], "pytest"),
    ("pytest", ["pytest"], "pytest"),
    ("'pytest' -q", ["pytest -q"], "pytest -q"),
    ("pytest; rm -rf ~", ["pytest"], None),  # the reference's prefix match ran it
    ("pytest && rm x", ["pytest"], None),
    ("pytest $(rm x)", ["pytest"], None),
    ("pytest > out", ["pytest"], None),
    ("X=1 pytest", ["pytest"], None),
    ("pytestx", ["pytest"], None),
    ("npm test", ["npm run", " ", ""], None),
    ("pytest *", ["pytest"], None),
])
def test_an_approved_plan_covers_one_simple_command_by_its_words(command, entries, covered):
    assert approved_by(command, entries, "/nonexistent") == covered


# ---------------------------------------------------------------------------------------------
# the rule, at the one place every tool call passes


async def test_no_write_tool_and_no_write_command_runs_in_plan_mode(scripted_server, work):
    """Each call is refused with its text, nothing is asked (yolo is off: it would have been), no
    hook runs, and the sentinel and the repository are as they were."""
    srv = scripted_server
    (work / ".mm").mkdir()
    hook_log = work.parent / "hook.log"
    conv = make_conversation(srv.base_url, work, EVERYTHING | {"hooks": {"preToolCall": [
        {"command": f"echo ran >> {hook_log}"}]}})
    try:
        assert conv.set_plan_mode(True) == PLAN_ON.format(path=conv.plan_mode.plan_file)
        plan_file = conv.plan_mode.plan_file
        commit_before = git(work, "rev-parse", "HEAD")
        writes = [
            call("write_file", path=SENTINEL, content="gone"),
            call("edit_file", path=SENTINEL, edits=[{"old": "own", "new": "lost"}]),
            call("fs_write", path=SENTINEL, command="create", file_text="gone"),
            call("file_edit", file_path=SENTINEL, old_string="own", new_string="lost"),
            call("write_file", path="new.txt", content="x"),
        ]
        commands = {
            "env rm -f sentinel.txt": "env with arguments runs another program",
            "rm -f sentinel.txt": "rm is not a read-only program",
            "echo gone > sentinel.txt": "it redirects output to a file (> sentinel.txt)",
            "sed -i s/own/lost/ sentinel.txt": "sed -i edits files in place",
            "find . -name sentinel.txt -delete": "find -delete changes files or runs commands",
            "cat sentinel.txt | tee sentinel.txt": "tee is not a read-only program",
        }
        command_calls = [call("execute_bash", command=c) for c in commands] + \
            [call("bash", command=c) for c in commands]
        others = [call("start_background_task", command="cat sentinel.txt"),
                  call("git_commit_safe", message="sneaky", add_all=True, allow_empty=True),
                  call("git_safe", command="rm --cached sentinel.txt")]
        ui = PlanUI()
        results = await turn(srv, conv, writes + command_calls + others, ui)
        nxt = gate.NEXT_EXIT.format(plan_file=plan_file)
        assert results[:5] == [gate.REFUSED_WRITE.format(tool=c["name"], plan_file=plan_file,
                                                         path=c["arguments"].get("path") or c["arguments"]["file_path"])
                               for c in writes]
        assert results[5:17] == [refused_command(why, plan_file) for why in commands.values()] * 2
        assert results[17:] == [gate.REFUSED_TOOL.format(tool="start_background_task", next=nxt),
                                gate.REFUSED_TOOL.format(tool="git_commit_safe", next=nxt),
                                refused_command("git rm is not one of git's read-only commands", plan_file)]
        assert ui.asked == []  # refused before any permission prompt
        assert not hook_log.exists()  # and before the hooks
        assert (work / SENTINEL).read_text() == KEPT and not (work / "new.txt").exists()
        assert git(work, "rev-parse", "HEAD") == commit_before
        assert git(work, "status", "--porcelain") == "?? .mm/\n" or git(work, "status", "--porcelain") == ""
    finally:
        await conv.close()


async def test_abbreviated_options_are_refused_through_git_safe_and_bash(scripted_server, work):
    """`--open` is git grep's `--open-files-in-pager`, `--outp` sort's `--output`: refused (a
    file `made` in the test's folder would prove they ran)."""
    srv = scripted_server
    async with planning(srv, work, EVERYTHING | {"yolo": True}) as conv:
        plan_file = conv.plan_mode.plan_file
        results = await turn(srv, conv, [call("git_safe", command="grep --open=touch\\ made own"),
                                         call("git_safe", command="grep -Otouch own"),
                                         call("bash", command="sort --outp=made sentinel.txt"),
                                         call("bash", command="sed -ne '1w made' -e p sentinel.txt")])
        assert results == [refused_command("git grep --open=touch made writes a file or runs a program", plan_file),
                           refused_command("git grep -O writes a file or runs a program", plan_file),
                           refused_command("sort --outp=made writes a file or runs a program", plan_file),
                           refused_command("sed's w writes a file, e runs a command", plan_file)]
        assert not (work / "made").exists()


async def test_a_hook_s_rewritten_input_meets_the_gate_again(scripted_server, work):
    """`cat` passes the gate, then a preToolCall hook rewrites it into a write: refused, nothing
    ran, no permission asked."""
    srv = scripted_server
    hook = work.parent / "rewrite.py"
    hook.write_text('import json\nprint(json.dumps({"input": {"command": "touch made"}}))\n')
    import sys

    config = EVERYTHING | {"hooks": {"preToolCall": [{"matcher": "bash", "command": [sys.executable, str(hook)]}]}}
    async with planning(srv, work, config) as conv:
        ui = PlanUI(answers=["allow_once"])
        [result] = await turn(srv, conv, [call("bash", command="cat sentinel.txt")], ui)
        assert result == refused_command("touch is not a read-only program", conv.plan_mode.plan_file)
        assert ui.asked == [] and not (work / "made").exists()


async def test_a_permission_answered_after_plan_mode_was_switched_on_runs_nothing(scripted_server, work):
    """The dialog waits; plan mode is switched on meanwhile (as ACP set_session_mode does); the
    user's `allow` comes after: the call meets the gate again and is refused."""
    srv = scripted_server

    class Switching(PlanUI):
        async def request_permission(self, name, arguments, preview=None):
            conv.set_plan_mode(True)
            return await super().request_permission(name, arguments, preview)

    conv = make_conversation(srv.base_url, work, EVERYTHING)
    try:
        ui = Switching(answers=["allow_once"])
        [result] = await turn(srv, conv, [call("bash", command="touch made")], ui)
        assert [name for name, _ in ui.asked] == ["bash"]
        assert result == refused_command("touch is not a read-only program", conv.plan_mode.plan_file)
        assert not (work / "made").exists()
    finally:
        await conv.close()


async def test_read_only_tools_and_commands_run_and_the_plan_file_is_writable(scripted_server, work):
    srv = scripted_server
    async with planning(srv, work, EVERYTHING | {"yolo": True}) as conv:
        plan_file = conv.plan_mode.plan_file
        results = await turn(srv, conv, [
            call("execute_bash", command="cat sentinel.txt | wc -l"),
            call("bash", command="cat sentinel.txt"),
            call("read_file", path=SENTINEL),
            call("git_safe", command="log --format=%s"),
            call("git_status_safe"),
            call("grep_search", pattern="own"),
            call("write_file", path=str(plan_file), content="# Plan\n1. do it\n"),
            call("edit_file", path=str(plan_file), edits=[{"old": "do it", "new": "do it well"}]),
        ])
        assert results[0].startswith("1") or '"stdout": "1' in results[0] or "1\n" in results[0], results[0]
        assert KEPT.strip() in results[1] and KEPT.strip() in results[2]
        assert "init" in results[3]
        assert not any(r.startswith("[plan mode") for r in results), results
        assert plan_file.read_text() == "# Plan\n1. do it well\n"


async def test_other_tools_are_refused_unless_known_to_read(scripted_server, work):
    """An MCP server's or the agent file's own tools cannot be known to only read: refused."""
    srv = scripted_server
    conv = make_conversation(srv.base_url, work, EVERYTHING | {"tools": [
        {"name": "stamp", "description": "stamp", "command": ["touch", "stamped"]}]})
    try:
        conv.set_plan_mode(True)
        [result] = await turn(srv, conv, [call("stamp")])
        assert result == gate.REFUSED_TOOL.format(tool="stamp", next=gate.NEXT_EXIT.format(
            plan_file=conv.plan_mode.plan_file))
        assert not (work / "stamped").exists()
    finally:
        await conv.close()


async def test_a_conversation_given_the_same_plan_mode_is_held_by_it(scripted_server, work):
    """What a sub-agent inherits: its conversation carries its parent's PlanMode object."""
    srv = scripted_server
    parent = make_conversation(srv.base_url, work, EVERYTHING)
    child = make_conversation(srv.base_url, work, {"toolsets": ["core", "commands"]})
    child.plan_mode = parent.plan_mode
    try:
        parent.set_plan_mode(True)
        [result] = await turn(srv, child, [call("execute_bash", command="env rm -f sentinel.txt")])
        assert result == refused_command("env with arguments runs another program", parent.plan_mode.plan_file)
        assert (work / SENTINEL).read_text() == KEPT
        parent.set_plan_mode(False)
        [result] = await turn(srv, child, [call("execute_bash", command="rm -f sentinel.txt")])
        assert not (work / SENTINEL).exists()
    finally:
        await parent.close()
        await child.close()


# ---------------------------------------------------------------------------------------------
# the reminder


async def test_the_reminder_goes_with_each_request_and_never_into_the_history(scripted_server, work):
    srv = scripted_server
    conv = make_conversation(srv.base_url, work, {"toolsets": ["core"]})  # no exit_plan_mode declared
    try:
        assert conv.set_plan_mode(True).startswith("📋 plan mode on")
        reminder = REMINDER.format(path=conv.plan_mode.plan_file, exit=EXIT_BY_USER)
        await turn(srv, conv, [call("read_file", path=SENTINEL)])
        first, second = srv.requests[-2:]
        for request in (first, second):
            asked = [m for m in request["messages"] if m["role"] == "user"][-1]
            assert asked["content"] == reminder + "\n\ngo"
        assert all("plan-mode-active" not in json.dumps(m) for m in conv.history)
        assert conv.set_plan_mode(False) == PLAN_OFF
        srv.add_reply("fine")
        await conv.run_turn("again", PlanUI())
        assert "plan-mode-active" not in json.dumps(srv.requests[-1]["messages"])
    finally:
        await conv.close()


# ---------------------------------------------------------------------------------------------
# exit_plan_mode


async def test_an_approved_plan_runs_in_the_same_turn_with_its_commands_pre_approved(scripted_server, work):
    srv = scripted_server
    async with planning(srv, work, EVERYTHING) as conv:
        plan_file = conv.plan_mode.plan_file
        reminder = REMINDER.format(path=plan_file, exit=EXIT_WITH_TOOL)
        plan = "# Plan\n1. touch made\n"
        srv.add_tool_calls([call("exit_plan_mode", plan=plan, allowed_bash=["touch", " "])])
        srv.add_tool_calls([call("execute_bash", command="touch made"),
                            call("execute_bash", command="touch made; touch also")])
        srv.add_reply("done")
        ui = PlanUI([("approve", plan)], answers=["reject_once"])
        await conv.run_turn("plan then do", ui)
        approved, ran, asked = [d.result.text for d in ui.done_calls()]
        assert approved == APPROVED.format(path=plan_file, commands=COMMANDS.format(commands="touch"))
        assert ui.plans == [(plan, ["touch"], plan_file)]
        assert plan_file.read_text() == plan
        assert not conv.plan_mode.active
        assert (work / "made").exists()  # pre-approved: nothing asked
        assert [name for name, _ in ui.asked] == ["execute_bash"]  # `;` is not covered by the prefix
        assert ui.asked[0][1]["command"] == "touch made; touch also" and not (work / "also").exists()
        assert srv.requests[-3]["messages"][-1]["content"] == reminder + "\n\nplan then do"
        assert "plan-mode-active" not in json.dumps(srv.requests[-2]["messages"])  # off in the same turn
        conv.new()
        assert conv.plan_mode.approved == []


async def test_an_edited_plan_is_approved_as_edited(scripted_server, work):
    srv = scripted_server
    async with planning(srv, work, EVERYTHING) as conv:
        [result] = await turn(srv, conv, [call("exit_plan_mode", plan="# Plan\n1. a\n")],
                              PlanUI([("edited", "# Plan\n1. b\n")]))
        assert result == APPROVED_EDITED.format(path=conv.plan_mode.plan_file, commands="", plan="# Plan\n1. b\n")
        assert conv.plan_mode.plan_file.read_text() == "# Plan\n1. b\n"


async def test_keep_planning_nobody_empty_and_not_in_plan_mode(scripted_server, work):
    srv = scripted_server
    conv = make_conversation(srv.base_url, work, EVERYTHING)
    try:
        assert await turn(srv, conv, [call("exit_plan_mode", plan="x")]) == [NOT_IN_PLAN_MODE]
        conv.set_plan_mode(True)
        results = await turn(srv, conv, [call("exit_plan_mode", plan="  "), call("exit_plan_mode", plan="# P"),
                                         call("exit_plan_mode", plan="# P")], PlanUI([("keep", ""), ("nobody", "")]))
        assert results == [EMPTY_PLAN, KEEP_PLANNING, NOBODY]
        assert conv.plan_mode.active and not conv.plan_mode.plan_file.exists()
        assert await turn(srv, conv, [call("exit_plan_mode", plan="# P")], RecordingUI()) == [NOBODY]
        [refused] = await turn(srv, conv, [call("write_file", path="x.txt", content="x")])
        assert refused.startswith("[plan mode: write_file may write only the plan file")
    finally:
        await conv.close()
