"""git_commit_safe and git_status_safe (mnemo-tools.md §Work with git; notes/mnemoai.md §2.9;
docs/tools-git.md): every parameter, answer and message on real repositories in the test's folder,
through the real engine against the scripted model server. Each weakness of the reference's two
tools (notes §2.9) has a test here saying so."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from git_repos import AskingUI, bare_remote, call, git, head, identify, new_repo, own_git_config, results  # noqa: F401
from harness import RecordingUI

NEXT_STEP = ("To proceed, call git_commit_safe with allow_dangerous=True and provide a reason explaining why this is "
             "intentional.")
PROTECTED = "You're on protected branch 'main'. Amending here is risky."
PUSHED = "The last commit appears to have been pushed. Amending will require force push."
DECLINED = ("The user was shown the risks of this operation and declined it. Do NOT retry with allow_dangerous=True "
            "— ask them how they want to proceed instead.")


def commit(**arguments) -> dict:
    return call("git_commit_safe", **arguments)


def subjects(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").split("\n")[:-1]


@pytest.fixture
def repo(tmp_path) -> Path:
    return new_repo(tmp_path / "repo")


# ---------------------------------------------------------------------------------------------
# git_commit_safe


async def test_commit_what_is_staged_and_the_answer(scripted_server, repo):
    (repo / "a.txt").write_text("b\n")
    git(repo, "add", "a.txt")
    [answer] = await results(scripted_server, repo, commit(message="Change a"))
    assert answer["success"] is True and answer["message"] == "Commit created successfully"
    assert answer["commit_hash"] == git(repo, "rev-parse", "--short", "HEAD").strip()
    assert (answer["commit_message"], answer["amended"], answer["steps"]) == ("Change a", False, [])
    assert answer["output"].startswith("[main ") and "Change a" in answer["output"]
    assert subjects(repo) == ["Change a", "init"]


async def test_add_all_and_add_files(scripted_server, repo):
    (repo / "a.txt").write_text("b\n")
    (repo / "new.txt").write_text("new\n")
    (repo / "my notes.md").write_text("notes\n")
    [files] = await results(scripted_server, repo, commit(message="Notes", add_files="'my notes.md' new.txt"))
    assert files["steps"] == [{"step": "add_files", "success": True, "files": ["my notes.md", "new.txt"],
                               "output": "Files staged"}]
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split("\n")[:-1] == ["my notes.md", "new.txt"]
    [every] = await results(scripted_server, repo, commit(message="All", add_all=True))
    assert every["steps"] == [{"step": "add_all", "success": True, "output": "All changes staged"}]
    assert git(repo, "status", "--porcelain") == ""


async def test_a_failed_staging_commits_nothing(scripted_server, repo):
    """The reference went on to commit whatever was staged (notes §2.9)."""
    (repo / "a.txt").write_text("b\n")
    git(repo, "add", "a.txt")
    before = head(repo)
    [answer] = await results(scripted_server, repo, commit(message="Half", add_files="missing.txt"))
    assert answer["error"] is True and answer["message"] == "Staging failed: nothing was committed"
    assert answer["steps"][0]["success"] is False
    assert "pathspec 'missing.txt' did not match any files" in answer["steps"][0]["output"]
    assert head(repo) == before


async def test_a_file_name_is_never_an_option(scripted_server, repo):
    """`add_files="-A"` stages a file named -A, not everything (the reference passed it as an option)."""
    (repo / "secret.env").write_text("KEY=1\n")
    [answer] = await results(scripted_server, repo, commit(message="x", add_files="-A"))
    assert answer["message"] == "Staging failed: nothing was committed"
    assert git(repo, "status", "--porcelain") == "?? secret.env\n"


@pytest.mark.parametrize("arguments,message", [
    ({"message": ""}, "Commit message is required"),
    ({"message": "  \n"}, "Commit message is required"),
    ({"message": "x", "add_files": "'unclosed"}, "Could not parse add_files (No closing quotation). Check the quoting."),
])
async def test_bad_arguments(scripted_server, repo, arguments, message):
    [answer] = await results(scripted_server, repo, commit(**arguments))
    assert answer == {"error": True, "message": message}
    assert subjects(repo) == ["init"]


async def test_message_missing_is_an_invalid_call(scripted_server, repo):
    [answer] = await results(scripted_server, repo, commit(add_all=True))
    assert answer.startswith("[git_commit_safe: invalid call, nothing was run — message is missing.")


async def test_nothing_to_commit_and_allow_empty(scripted_server, repo):
    nothing, empty = await results(scripted_server, repo, commit(message="Nothing"),
                                   commit(message="Empty", allow_empty=True))
    assert (nothing["error"], nothing["message"], nothing["steps"]) == (True, "Commit failed", [])
    assert "nothing to commit" in nothing["error_output"]
    assert nothing["suggestions"] == ["No changes are staged. Use add_all=True or add_files='...' to stage changes "
                                      "first."]
    assert empty["success"] is True
    assert subjects(repo) == ["Empty", "init"]


async def test_no_identity(scripted_server, tmp_path):
    repo = new_repo(tmp_path / "repo")
    git(repo, "config", "--unset", "user.name")
    git(repo, "config", "--unset", "user.email")
    git(repo, "config", "user.useConfigOnly", "true")
    [answer] = await results(scripted_server, repo, commit(message="x", allow_empty=True))
    assert answer["message"] == "Commit failed"
    assert answer["suggestions"] == ["Git user not configured. Run: git config --global user.name 'Your Name' && git "
                                     "config --global user.email 'your@email.com'"]


async def test_a_message_that_looks_like_options_is_a_message(scripted_server, repo):
    [answer] = await results(scripted_server, repo, commit(message="--amend --no-verify -n", allow_empty=True))
    assert answer["success"] is True and subjects(repo) == ["--amend --no-verify -n", "init"]


async def test_outside_a_repository(scripted_server, tmp_path):
    folder = tmp_path / "plain"
    folder.mkdir()
    [answer] = await results(scripted_server, folder, commit(message="x"))
    assert answer == {"error": True, "message": f"Not a git repository (or any of its parents): {folder}"}


# amend safety: checked before anything is staged


async def test_amending_a_local_commit_on_a_feature_branch_just_runs(scripted_server, repo):
    git(repo, "switch", "-q", "-c", "feature")
    (repo / "a.txt").write_text("b\n")
    git(repo, "commit", "-qam", "wip")
    [answer] = await results(scripted_server, repo, commit(message="Done", add_all=True, amend=True))
    assert (answer["success"], answer["amended"]) == (True, True)
    assert subjects(repo) == ["Done", "init"]


async def test_amending_on_a_protected_branch_asks_and_stages_nothing(scripted_server, repo):
    (repo / "b.txt").write_text("b\n")
    [answer] = await results(scripted_server, repo, commit(message="Amended", add_all=True, amend=True))
    assert answer == {"error": True, "message": "Amending this commit may cause issues", "requires_confirmation": True,
                      "issues": [PROTECTED], "branch": "main", "is_pushed": False,
                      "suggestion": "If the commit has been pushed, you'll need to force push after amending. "
                                    "Consider creating a new commit instead.",
                      "next_step": NEXT_STEP,
                      "confirmation": "mm then shows the user the risks and the reason, and runs it only if they "
                                      "agree."}
    assert git(repo, "status", "--porcelain") == "?? b.txt\n"  # nothing staged
    assert subjects(repo) == ["init"]


async def test_a_commit_pushed_to_any_remote_is_pushed(scripted_server, tmp_path):
    """The reference looked for "origin" in `git status -sb`: a commit pushed to `upstream` could
    be amended unwarned, and any branch named origin-something was always "pushed"."""
    repo = new_repo(tmp_path / "repo")
    git(repo, "switch", "-q", "-c", "topic")
    bare_remote(repo, tmp_path / "up.git", name="upstream")
    git(repo, "push", "-q", "-u", "upstream", "topic")
    [pushed] = await results(scripted_server, repo, commit(message="x", amend=True))
    assert pushed["issues"] == [PUSHED] and pushed["is_pushed"] is True
    git(repo, "switch", "-q", "-c", "origin-work")
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "b.txt")
    git(repo, "commit", "-q", "-m", "local")
    [local] = await results(scripted_server, repo, commit(message="still local", amend=True))
    assert local.get("success") is True and subjects(repo)[0] == "still local", local


async def test_an_unsafe_amend_needs_a_reason_and_the_user(scripted_server, repo):
    (repo / "b.txt").write_text("b\n")
    [no_reason] = await results(scripted_server, repo, commit(message="A", add_all=True, amend=True,
                                                              allow_dangerous=True))
    assert no_reason == {"error": True, "message": "When using allow_dangerous=True, you must provide a reason"}
    ui = AskingUI(["reject_once"])
    [declined] = await results(scripted_server, repo, commit(message="A", add_all=True, amend=True, allow_dangerous=True,
                                                             reason="fix the typo"), ui=ui)
    assert declined == {"error": True, "message": DECLINED, "declined_by_user": True,
                        "command": "git commit --amend -m A"}
    assert ui.previews == [f"git commit --amend -m A\n⚠️  {PROTECTED}\nreason: fix the typo"]
    assert git(repo, "status", "--porcelain") == "?? b.txt\n"
    [nobody] = await results(scripted_server, repo, commit(message="A", add_all=True, amend=True, allow_dangerous=True,
                                                           reason="r"), ui=RecordingUI(["allow_once"]))
    assert nobody["message"].startswith("Nobody can be asked to confirm a dangerous git operation here")
    ui = AskingUI(["allow_once"])
    [agreed] = await results(scripted_server, repo, commit(message="A", add_all=True, amend=True, allow_dangerous=True,
                                                           reason="fix the typo"), ui=ui)
    assert (agreed["success"], agreed["amended"]) == (True, True)
    assert subjects(repo) == ["A"] and git(repo, "status", "--porcelain") == ""


# ---------------------------------------------------------------------------------------------
# git_status_safe


async def test_status_of_a_clean_repository_on_main(scripted_server, repo):
    [status] = await results(scripted_server, repo, call("git_status_safe"))
    last = status.pop("last_commit")
    assert re.fullmatch(r"[0-9a-f]{7,} init \(Test, .+ ago\)", last)
    assert status == {"branch": "main", "is_protected": True, "uncommitted_changes": 0, "has_changes": False,
                      "commits_ahead": 0, "commits_behind": 0, "has_remote": False, "upstream": None,
                      "warnings": ["On protected branch 'main' - be careful with commits"], "success": True}


async def test_status_lists_ten_changes_and_counts_the_rest(scripted_server, repo):
    (repo / "a.txt").write_text("changed\n")
    git(repo, "add", "a.txt")
    for n in range(11):
        (repo / f"new-{n:02}.txt").write_text("x\n")
    [status] = await results(scripted_server, repo, call("git_status_safe"))
    assert (status["uncommitted_changes"], status["has_changes"], status["more_files"]) == (12, True, 2)
    assert status["changed_files"] == ["M  a.txt"] + [f"?? new-{n:02}.txt" for n in range(9)]


async def test_status_ahead_and_behind(scripted_server, tmp_path):
    repo = new_repo(tmp_path / "repo")
    bare_remote(repo, tmp_path / "origin.git")
    git(repo, "switch", "-q", "-c", "work")
    git(repo, "push", "-q", "-u", "origin", "work")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", "-b", "work", str(tmp_path / "origin.git"), str(other))
    identify(other)
    git(other, "commit", "-q", "--allow-empty", "-m", "theirs")
    git(other, "push", "-q")
    git(repo, "fetch", "-q")
    git(repo, "commit", "-q", "--allow-empty", "-m", "mine")
    (repo / "a.txt").write_text("dirty\n")
    [status] = await results(scripted_server, repo, call("git_status_safe"))
    assert (status["branch"], status["is_protected"], status["upstream"], status["has_remote"]) == (
        "work", False, "origin/work", True)
    assert (status["commits_ahead"], status["commits_behind"]) == (1, 1)
    assert status["warnings"] == ["Branch is 1 commits behind remote - consider pulling",
                                  "You have both uncommitted changes and unpushed commits"]


async def test_status_detached_and_without_commits(scripted_server, tmp_path):
    repo = new_repo(tmp_path / "repo")
    git(repo, "checkout", "-q", "--detach")
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "main")
    [detached] = await results(scripted_server, repo, call("git_status_safe"))
    assert detached["branch"] is None
    assert detached["warnings"] == ["HEAD is detached: commits made here belong to no branch"]
    [fresh] = await results(scripted_server, empty, call("git_status_safe"))
    assert fresh["branch"] == "main" and "last_commit" not in fresh


async def test_status_outside_a_repository_says_so(scripted_server, tmp_path):
    """The reference answered success with nothing in it (notes §2.9)."""
    folder = tmp_path / "plain"
    folder.mkdir()
    [status] = await results(scripted_server, folder, call("git_status_safe"))
    assert status == {"error": True, "message": f"Not a git repository (or any of its parents): {folder}"}


async def test_status_is_of_the_conversation_s_folder(scripted_server, tmp_path):
    repo = new_repo(tmp_path / "repo")
    git(repo, "switch", "-q", "-c", "only-here")
    [status] = await results(scripted_server, repo, call("git_status_safe"))
    assert status["branch"] == "only-here"
