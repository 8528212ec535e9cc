"""git_safe (mnemo-tools.md §Work with git; notes/mnemoai.md §2.9 and §3, Git safety classifier;
docs/tools-git.md): what is blocked outright, what asks first, what is refused because it makes
git run another program, what runs — on real repositories in the test's folder, through the real
engine against the scripted model server; the user's confirmation in line mode on a real
pseudo-terminal, in an editor over a real `mm -acp`, and its refusal in `mm -p`. Each weakness of
the reference's classifier (notes §3, §7) has a row or a test here saying so."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_repos import (AskingUI, bare_remote, call, git, head, new_repo, own_git_config, results)  # noqa: F401
from harness import RecordingUI
from mm.tools.git.argv import LEADING_REFUSED, LEADING_UNEXPECTED, RUNS_A_COMMAND, UNPARSABLE
from mm.tools.git.rules import DESTROYS_RECOVERY, FORCE_PUSH_MAIN, PROGRAM_SETTING, RUNS_PROGRAMS, WARNINGS

RISKY = "This command has potential risks"
BLOCKED_HINT = "If it really is needed, the user can run it in a terminal themselves."
DECLINED = ("The user was shown the risks of this operation and declined it. Do NOT retry with allow_dangerous=True "
            "— ask them how they want to proceed instead.")
NOBODY = ("Nobody can be asked to confirm a dangerous git operation here (mm -p, or a client that cannot ask): it was "
          "not run. Do NOT retry with allow_dangerous=True — say what you would run and why, and let the user run it.")
PROTECTED_ETC = ("Refusing to write under the protected system directory '/etc'. Writes are allowed in your home, "
                 "project, temp, and app directories.")


@pytest.fixture
def repo(tmp_path) -> Path:
    """A repository on main with one commit, a bare `origin` it tracks, and a branch `feature`."""
    work = new_repo(tmp_path / "repo")
    bare_remote(work, tmp_path / "origin.git")
    git(work, "branch", "feature")
    return work


# ---------------------------------------------------------------------------------------------
# the classifier's table: (command, what it gets); nothing in it is ever run but the benign rows

BLOCKED = [
    "push -f origin main", "push --force origin master", "push origin main --force", "push origin main -f",
    'push --for"ce" origin main',  # quoting hides nothing: the argv is scanned
    "push -f upstream main",  # another remote's main too (the reference only asked)
    "push origin +main",  # a forced refspec (the reference ran it)
    "push -f origin feature:main", "push -f origin refs/heads/main", "push -f origin HEAD",  # HEAD is main here
    "push --force", "push -f origin",  # no refspec: the current branch, main (the reference ran them)
    "push --forc origin main",  # an abbreviation git accepts is read as git reads it
    "git push -f origin main",  # a leading `git` is dropped
]
DESTROYS = [("reflog expire --expire=now --all", "reflog expire"), ("reflog delete HEAD@{1}", "reflog delete"),
            ("gc --prune=now", "gc --prune=now"), ("prune", "prune")]
REFUSED = [  # (three identical answers in a row would draw the loop detector's note: the empty ones are apart)
    ("", "No git command provided"),
    ("-c alias.x=!sh x", LEADING_REFUSED.format(option="-c")),
    ("-C /tmp status", LEADING_REFUSED.format(option="-C")),
    ("--git-dir=/tmp/x status", LEADING_REFUSED.format(option="--git-dir")),
    ("--work-tree=/tmp status", LEADING_REFUSED.format(option="--work-tree")),
    ("--exec-path=/tmp status", LEADING_REFUSED.format(option="--exec-path")),
    ("--bare status", LEADING_UNEXPECTED.format(option="--bare")),
    ("git", "No git command provided"),
    ("fetch --upload-pack='touch pwned' origin", RUNS_A_COMMAND.format(option="--upload-pack")),
    ("fetch --upload-pa='touch pwned' origin", RUNS_A_COMMAND.format(option="--upload-pack")),  # abbreviated
    ("push --receive-pack='touch pwned' origin", RUNS_A_COMMAND.format(option="--receive-pack")),
    ("archive --remote=origin --exec='touch pwned' HEAD", RUNS_A_COMMAND.format(option="--exec")),
    ("clone -u 'touch pwned' origin.git copy", RUNS_A_COMMAND.format(option="-u")),
    ("ls-remote -u 'touch pwned' origin", RUNS_A_COMMAND.format(option="-u")),
    ("clone -c core.fsmonitor='touch pwned' origin.git copy", RUNS_A_COMMAND.format(option="-c")),
    ("clone --template=tpl origin.git copy", RUNS_A_COMMAND.format(option="--template")),
    # the reference let these run a program of the model's choosing
    ("rebase -x 'touch pwned' HEAD", RUNS_PROGRAMS.format(what="rebase --exec")),
    ("rebase --exec='touch pwned' HEAD", RUNS_A_COMMAND.format(option="--exec")),
    ("bisect run touch pwned", RUNS_PROGRAMS.format(what="bisect run")),
    ("submodule foreach touch pwned", RUNS_PROGRAMS.format(what="submodule foreach")),
    ("difftool -x 'touch pwned' HEAD", RUNS_PROGRAMS.format(what="difftool --extcmd")),
    ("filter-branch --tree-filter 'touch pwned' HEAD", RUNS_PROGRAMS.format(what="filter-branch")),
    ("config core.pager 'touch pwned'", PROGRAM_SETTING.format(key="core.pager")),
    ("config core.fsmonitor 'touch pwned'", PROGRAM_SETTING.format(key="core.fsmonitor")),
    ("config --local core.hooksPath hooks", PROGRAM_SETTING.format(key="core.hooksPath")),
    ("config alias.p '!touch pwned'", PROGRAM_SETTING.format(key="alias.p")),
    ("config filter.x.clean 'touch pwned'", PROGRAM_SETTING.format(key="filter.x.clean")),
    ("config include.path /tmp/other", PROGRAM_SETTING.format(key="include.path")),
    ("'unbalanced", UNPARSABLE.format(error="No closing quotation")),
    ("   ", "No git command provided"),
]
WRITES = [("archive -o /etc/mm-test.tar HEAD", "archive", "/etc/mm-test.tar"),
          ("format-patch -o /etc/mm-patches HEAD~0", "format-patch", "/etc/mm-patches"),
          ("clone origin.git /etc/mm-copy", "clone", "/etc/mm-copy"),
          ("diff --output=/etc/mm.diff", "diff", "/etc/mm.diff"),
          ("init /etc/mm-repo", "init", "/etc/mm-repo")]
ASKS = [
    ("push --force origin feature", ["force_push"]), ("push -f origin feature", ["force_push_f"]),
    ("push origin +feature", ["force_push"]), ("push origin :feature", ["delete_remote_branch"]),
    ("push -d origin feature", ["delete_remote_branch"]), ("push --delete origin feature", ["delete_remote_branch"]),
    ("push --no-verify origin feature", ["skip_push_hooks"]), ("push --mirror origin", ["mirror_push"]),
    ("reset --hard", ["hard_reset"]), ("reset --hard HEAD~0", ["hard_reset"]), ("reset --har", ["hard_reset"]),
    ("clean -f", ["clean_force"]), ("clean -fd", ["clean_force", "clean_force_dirs"]),
    ("clean --force -d -x", ["clean_force", "clean_force_dirs", "clean_ignored"]),
    ("clean -fdx", ["clean_force", "clean_force_dirs", "clean_ignored"]), ("clean -d", ["clean_force", "clean_force_dirs"]),
    ("branch -D feature", ["force_delete_branch"]), ("branch --delete --force feature", ["force_delete_branch"]),
    ("branch -M feature other", ["force_branch"]), ("branch -f feature HEAD", ["force_branch"]),
    ("rebase main", ["rebase_public"]), ("rebase origin/master", ["rebase_public"]),
    ("rebase --onto develop a b", ["rebase_public"]),
    ("checkout -f feature", ["force_checkout"]), ("checkout -- a.txt", ["discard_changes"]),
    ("checkout .", ["discard_changes"]), ("restore a.txt", ["discard_changes"]),
    ("restore --staged --worktree a.txt", ["discard_changes"]),
    ("switch -f feature", ["force_checkout"]), ("switch --discard-changes feature", ["force_checkout"]),
    ("commit --no-verify -m x", ["skip_hooks"]), ("commit -n -m x", ["skip_hooks"]),  # -n: the reference missed it
    ("commit -anm x", ["skip_hooks"]), ("stash drop", ["stash_drop"]), ("stash clear", ["stash_drop"]),
    ("update-ref -d refs/heads/feature", ["delete_ref"]), ("rm -f a.txt", ["rm_force"]),
    ("worktree remove --force wt", ["worktree_force"]),
]
BENIGN = [  # they run (the reference flagged or refused the starred ones)
    "status --short", "log --oneline -1", "diff", "show --stat HEAD", "stash list", "branch --list",
    "log --oneline --grep='reset --hard'",
    "commit --allow-empty -m 'revert the reset --hard of yesterday'",  # * a message is only a message
    "commit --allow-empty -m 'mention --exec and --upload-pack'",  # * the reference refused it
    "commit --allow-empty -m '-f is a flag'",
    "push --force-with-lease origin feature",  # the safe force
    "checkout -b fix-f",  # * `checkout .*-f` matched the branch name
    "rebase maintenance",  # * `rebase .*main` matched (it fails: no such branch — but it is not flagged)
    "branch -d fix-f", "clean -n", "clean --dry-run -fd", "restore --staged a.txt", "push -n -f origin main",
    "tag v1", "config user.name Someone", "config --get core.pager",
]


async def test_blocked_outright_never_runs(scripted_server, repo):
    remote_main = git(repo / ".." / "origin.git", "rev-parse", "main").strip()
    answers = await results(scripted_server, repo, *[call("git_safe", command=c, allow_dangerous=True,
                                                          reason="the user said so") for c in BLOCKED])
    for command, answer in zip(BLOCKED, answers):
        assert answer["message"] == FORCE_PUSH_MAIN, command
        assert (answer["error"], answer["blocked"], answer["suggestion"]) == (True, True, BLOCKED_HINT), command
    assert git(repo / ".." / "origin.git", "rev-parse", "main").strip() == remote_main


async def test_what_destroys_recovery_data_is_blocked(scripted_server, repo):
    reflog = git(repo, "reflog")
    answers = await results(scripted_server, repo, *[call("git_safe", command=c, allow_dangerous=True, reason="r")
                                                     for c, _ in DESTROYS])
    for (command, what), answer in zip(DESTROYS, answers):
        assert answer == {"error": True, "message": DESTROYS_RECOVERY.format(what=what), "blocked": True,
                          "command": f"git {command}", "suggestion": BLOCKED_HINT}, command
    assert git(repo, "reflog") == reflog


async def test_options_and_settings_that_run_programs_are_refused(scripted_server, repo):
    config = (repo / ".git" / "config").read_text()
    answers = await results(scripted_server, repo, *[call("git_safe", command=c) for c, _ in REFUSED])
    for (command, message), answer in zip(REFUSED, answers):
        assert (answer["error"], answer["blocked"], answer["message"]) == (True, True, message), command
    assert not list(repo.parent.rglob("pwned")) and not (repo / "copy").exists()
    assert (repo / ".git" / "config").read_text() == config


async def test_writes_into_protected_folders_are_refused(scripted_server, repo):
    answers = await results(scripted_server, repo, *[call("git_safe", command=c) for c, _, _ in WRITES])
    for (command, what, path), answer in zip(WRITES, answers):
        assert answer["message"] == f"git {what} would write at {path}: {PROTECTED_ETC}", command
        assert not os.path.exists(path)


async def test_risky_commands_ask_and_change_nothing(scripted_server, repo):
    (repo / "a.txt").write_text("changed\n")
    (repo / "untracked.txt").write_text("new\n")
    before = (head(repo), git(repo, "status", "--porcelain"), git(repo, "branch", "--list"))
    answers = await results(scripted_server, repo, *[call("git_safe", command=c) for c, _ in ASKS])
    for (command, kinds), answer in zip(ASKS, answers):
        assert answer["message"] == RISKY and answer["requires_confirmation"] is True, (command, answer)
        assert [w["type"] for w in answer["warnings"]] == kinds, command
        assert [w["message"] for w in answer["warnings"]] == [WARNINGS[k] for k in kinds]
        assert answer["next_step"] == ("To proceed, call git_safe with allow_dangerous=True and provide a reason "
                                       "explaining why this is intentional.")
    assert (head(repo), git(repo, "status", "--porcelain"), git(repo, "branch", "--list")) == before


async def test_look_alikes_run(scripted_server, repo):
    answers = await results(scripted_server, repo, *[call("git_safe", command=c) for c in BENIGN])
    for command, answer in zip(BENIGN, answers):
        assert "requires_confirmation" not in answer and "blocked" not in answer, (command, answer)
        assert answer["command"] == ("git " + command if not command.startswith("git ") else command), answer
    assert "revert the reset --hard of yesterday" in git(repo, "log", "--format=%s")


async def test_an_alias_is_read_as_what_it_runs(scripted_server, repo):
    """The reference classified the alias's name: `git config alias.ff 'push --force origin main'`
    then `git ff` force-pushed main unwarned, and a shell alias ran anything."""
    git(repo, "config", "alias.sh", "!touch pwned")
    git(repo, "config", "alias.wipe", "reset --hard")
    git(repo, "config", "alias.st", "status --short")
    git(repo, "config", "alias.loop", "loop")
    defined, ff, sh, wipe, st, loop = await results(
        scripted_server, repo, call("git_safe", command="config alias.ff 'push --force origin main'"),
        call("git_safe", command="ff"), call("git_safe", command="sh"), call("git_safe", command="wipe"),
        call("git_safe", command="st"), call("git_safe", command="loop"))
    assert defined["success"] is True
    assert (ff["message"], ff["command"]) == (FORCE_PUSH_MAIN, "git push --force origin main")
    assert sh["message"] == ("The alias sh runs a shell command (!touch pwned): git_safe does not run it. Use a shell "
                             "command if you genuinely need it.")
    assert [w["type"] for w in wipe["warnings"]] == ["hard_reset"]
    assert st["success"] is True and st["command"] == "git status --short"
    assert loop["message"] == "The alias loop expands into itself, or too deeply: nothing was run."
    assert not (repo / "pwned").exists()


# ---------------------------------------------------------------------------------------------
# running


async def test_the_answer_of_a_command_that_ran(scripted_server, repo):
    (repo / "a.txt").write_text("b\n")
    ok, failing, quoted = await results(scripted_server, repo, call("git_safe", command="git status --short"),
                                        call("git_safe", command="checkout nope"),
                                        call("git_safe", command="commit -am 'two words'"))
    assert ok == {"success": True, "command": "git status --short", "stdout": "M a.txt", "stderr": "",
                  "return_code": 0}
    assert (failing["success"], failing["return_code"], failing["stdout"]) == (False, 1, "")
    assert failing["stderr"] == "error: pathspec 'nope' did not match any file(s) known to git"
    assert quoted["success"] is True
    assert git(repo, "log", "-1", "--format=%s").strip() == "two words"  # shlex: quotes survive


async def test_it_runs_in_the_conversation_s_folder_not_mm_s(scripted_server, repo):
    """The reference ran git in its server's own directory (notes §2.9)."""
    [answer] = await results(scripted_server, repo, call("git_safe", command="rev-parse --show-toplevel"))
    assert answer["stdout"] == str(repo)


async def test_nothing_waits_for_an_editor(scripted_server, repo):
    (repo / "a.txt").write_text("b\n")
    git(repo, "add", "a.txt")
    [answer] = await results(scripted_server, repo, call("git_safe", command="commit"))
    assert answer["success"] is False
    assert "Aborting commit due to empty commit message." in answer["stderr"]


async def test_a_long_output_is_cut_within_max_output(scripted_server, repo):
    for n in range(300):
        (repo / f"file-{n:03}.txt").write_text("x\n")
    [answer] = await results(scripted_server, repo, call("git_safe", command="status --short"), maxOutput=4000)
    assert answer["stdout"].startswith("?? file-000.txt\n")
    assert answer["stdout"].endswith(" more characters not shown ...]")


async def test_without_git_on_the_path(scripted_server, repo, monkeypatch):
    monkeypatch.setenv("PATH", str(repo / "nothing-here"))
    [answer] = await results(scripted_server, repo, call("git_safe", command="status"))
    assert answer == {"error": True, "message": "Git is not installed or not in PATH",
                      "suggestion": "Install git and ensure it's available in your system PATH"}


async def test_a_command_is_cancelled_with_the_turn(scripted_server, repo, mark):
    import asyncio

    from harness import make_conversation, marked_left, pids_marked

    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nexport JOB_MARK={mark}\nsleep 1000\n")
    hook.chmod(0o755)
    conv = make_conversation(scripted_server.base_url, repo, {"toolsets": ["core", "git"]})
    scripted_server.add_tool_calls([call("git_safe", command="commit --allow-empty -m x")])
    ui = AskingUI()
    turn = asyncio.ensure_future(conv.run_turn("go", ui))
    for _ in range(1200):
        if pids_marked(mark):
            break
        await asyncio.sleep(0.05)
    conv.cancel()
    done = await asyncio.wait_for(turn, 60)
    assert done.stop_reason == "cancelled"
    assert ui.done_calls()[0].result.text == "[error: cancelled]"
    assert marked_left(mark) == []


# ---------------------------------------------------------------------------------------------
# allow_dangerous: a reason, and the user's word


async def test_allow_dangerous_without_a_reason_is_refused(scripted_server, repo):
    (repo / "a.txt").write_text("mine\n")
    [answer] = await results(scripted_server, repo, call("git_safe", command="reset --hard", allow_dangerous=True))
    assert answer == {"error": True, "message": "When using allow_dangerous=True, you must provide a reason",
                      "command": "git reset --hard",
                      "example": 'git_safe(command="reset --hard", allow_dangerous=True, reason="Explanation here")'}
    assert (repo / "a.txt").read_text() == "mine\n"


async def test_the_user_confirms_or_declines(scripted_server, repo):
    """allow_dangerous is never the model's word alone (notes §7: the model approved its own)."""
    (repo / "a.txt").write_text("mine\n")
    ui = AskingUI(["reject_once"])
    [declined] = await results(scripted_server, repo, call("git_safe", command="reset --hard", allow_dangerous=True,
                                                           reason="drop the experiment"), ui=ui)
    assert declined == {"error": True, "message": DECLINED, "declined_by_user": True, "command": "git reset --hard"}
    assert (repo / "a.txt").read_text() == "mine\n"
    assert ui.asked == [("git_safe: override the safety check",
                         {"command": "reset --hard", "allow_dangerous": True, "reason": "drop the experiment"})]
    assert ui.previews == ["git reset --hard\n⚠️  Hard reset will discard all uncommitted changes permanently.\n"
                           "reason: drop the experiment"]
    ui = AskingUI(["allow_always"])
    [done] = await results(scripted_server, repo, call("git_safe", command="reset --hard", allow_dangerous=True,
                                                       reason="drop the experiment"), ui=ui)
    assert (done["success"], done["warning_acknowledged"], done["reason_provided"]) == (True, True,
                                                                                          "drop the experiment")
    assert (repo / "a.txt").read_text() == "a\n"
    (repo / "a.txt").write_text("mine again\n")
    ui = AskingUI(["reject_once"])  # "for this session" does not carry over: each one is asked
    [again] = await results(scripted_server, repo, call("git_safe", command="reset --hard", allow_dangerous=True,
                                                        reason="again"), ui=ui)
    assert again["declined_by_user"] is True and len(ui.asked) == 1


async def test_with_yolo_false_the_call_then_the_override_are_asked(scripted_server, repo):
    (repo / "a.txt").write_text("mine\n")
    ui = AskingUI(["allow_once", "allow_once"])
    [done] = await results(scripted_server, repo, call("git_safe", command="reset --hard", allow_dangerous=True,
                                                       reason="r"), ui=ui, yolo=False)
    assert done["success"] is True
    assert [name for name, _ in ui.asked] == ["git_safe", "git_safe: override the safety check"]


async def test_a_front_end_that_cannot_ask_refuses(scripted_server, repo):
    (repo / "a.txt").write_text("mine\n")
    ui = RecordingUI(["allow_once"])  # no ask_user: as `mm -p`
    [answer] = await results(scripted_server, repo, call("git_safe", command="reset --hard", allow_dangerous=True,
                                                         reason="r"), ui=ui)
    assert answer == {"error": True, "message": NOBODY, "command": "git reset --hard"}
    assert ui.asked == [] and (repo / "a.txt").read_text() == "mine\n"


def test_mm_p_refuses_a_dangerous_operation(scripted_server, tmp_path):
    from mm_runs import agent_file, one_shot

    repo = new_repo(tmp_path / "repo")
    agent_file(repo, "toolsets: [core, git]\n")
    (repo / "a.txt").write_text("mine\n")
    scripted_server.add_tool_calls([call("git_safe", command="reset --hard", allow_dangerous=True, reason="r")])
    scripted_server.add_reply("Not done.")
    done = one_shot(scripted_server, repo, "reset it")
    assert done.returncode == 0, done.stderr
    assert (repo / "a.txt").read_text() == "mine\n"
    tool_message = scripted_server.requests[-1]["messages"][-1]
    assert tool_message["role"] == "tool" and NOBODY in tool_message["content"]


def test_line_mode_shows_the_risks_and_the_reason_at_the_prompt(scripted_server, tmp_path):
    from mm_runs import agent_file, line_mode

    repo = new_repo(tmp_path / "repo")
    agent_file(repo, "toolsets: [core, git]\n")
    (repo / "a.txt").write_text("mine\n")
    scripted_server.add_tool_calls([call("git_safe", command="reset --hard", allow_dangerous=True,
                                         reason="drop the experiment")])
    scripted_server.add_reply("Reset.")
    with line_mode(scripted_server, repo) as (proc, term):
        term.write("reset it\r")
        shown = term.expect("🔐 git_safe: override the safety check: allow?")
        assert "git_safe: reset --hard" in shown
        assert "⚠️  Hard reset will discard all uncommitted changes permanently." in shown
        assert "reason: drop the experiment" in shown
        term.write("a\r")
        term.expect("Reset.")
        assert (repo / "a.txt").read_text() == "a\n"
        term.expect("›")
        term.write("/quit\r")
        assert proc.wait(30) == 0


async def test_an_editor_s_dialog_shows_the_risks_and_the_reason(tmp_path, scripted_server):
    from test_acp_sdk import ScriptedClient, running_mm, write_agent_file

    repo = new_repo(tmp_path.resolve() / "repo")
    write_agent_file(repo, scripted_server.base_url, toolsets=["core", "git"])
    (repo / "a.txt").write_text("mine\n")
    client = ScriptedClient()
    async with running_mm(repo, scripted_server, client) as mm:
        sid = await mm.new_session()
        for answer in ("reject", "allow"):
            scripted_server.add_tool_calls([call("git_safe", command="reset --hard", allow_dangerous=True,
                                                 reason="drop the experiment")])
            scripted_server.add_reply("done")
            client.permission_answers.append(answer)
            mark = len(mm.wire)
            await mm.prompt(sid, "reset it")
            [asked] = [m for d, m in mm.wire[mark:] if d == "in" and m.get("method") == "session/request_permission"]
            tool_call = asked["params"]["toolCall"]
            assert tool_call["title"] == "git_safe: reset --hard"
            assert tool_call["content"] == [{"type": "content", "content": {"type": "text", "text": (
                "git reset --hard\n⚠️  Hard reset will discard all uncommitted changes permanently.\n"
                "reason: drop the experiment")}}]
            if answer == "reject":
                assert (repo / "a.txt").read_text() == "mine\n"
                assert DECLINED in scripted_server.requests[-1]["messages"][-1]["content"]
    assert (repo / "a.txt").read_text() == "a\n"

