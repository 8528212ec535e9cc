"""What a git command does that cannot be undone (blocked outright), may lose work (asks first), or
makes git run another program (refused): the rules git_safe applies to a scanned command
(mnemo-tools.md §Work with git; notes/mnemoai.md §3, Git safety classifier; docs/tools-git.md).

The warning texts are the reference's where it has one; the rules are read on the scanned
arguments (mm.tools.git.argv), not searched in the raw text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mm.tools.git.argv import Scan

PROTECTED_BRANCHES = ("main", "master", "develop", "production", "release")
FORCE_PUSH_BLOCKED_ON = ("main", "master")
PUBLIC_BRANCHES = ("main", "master", "develop")

FORCE_PUSH_MAIN = "Force push to main/master is blocked. This is almost never what you want."
DESTROYS_RECOVERY = ("git {what} destroys what git keeps to recover lost commits (the reflog, unreachable objects). "
                     "This cannot be undone: it is blocked.")
BLOCKED_HINT = "If it really is needed, the user can run it in a terminal themselves."
RUNS_PROGRAMS = ("git {what} is refused: it makes git execute an arbitrary command. Use a shell command if you "
                 "genuinely need it.")
PROGRAM_SETTING = ("Setting {key} is refused: it makes git run a program of its choosing. Use a shell command if you "
                   "genuinely need it.")
PROTECTED_TARGET = "git {what} would write at {path}: {reason}"

WARNINGS = {
    "force_push": "Force push can overwrite remote history. Use --force-with-lease instead for safer force pushes.",
    "force_push_f": "Force push (-f) can overwrite remote history. Use --force-with-lease instead.",
    "hard_reset": "Hard reset will discard all uncommitted changes permanently.",
    "clean_force": "git clean -f will permanently delete untracked files.",
    "clean_force_dirs": "git clean -fd will permanently delete untracked files AND directories.",
    "force_delete_branch": "Force delete (-D) will delete the branch even if not fully merged.",
    "delete_remote_branch": "This will delete a remote branch.",
    "rebase_public": "Rebasing onto public branches can cause issues for collaborators.",
    "force_checkout": "Force checkout will discard local changes.",
    "skip_hooks": "Skipping pre-commit hooks may bypass important checks.",
    "skip_push_hooks": "Skipping push hooks may bypass important checks.",
    "amend": "Amending commits that have been pushed requires force push.",
    # mm's own (the reference does not see these)
    "clean_ignored": "git clean -x also deletes ignored files: build outputs, .env files, virtual environments.",
    "discard_changes": ("This replaces uncommitted changes in the working tree with the committed version; they "
                        "cannot be recovered."),
    "stash_drop": "Dropping a stash deletes the changes it saved; only git fsck can find them again.",
    "force_branch": ("Forcing a branch rename, copy or reset overwrites an existing branch; commits only it held can "
                     "be lost."),
    "mirror_push": "--mirror force-updates every remote ref and deletes the remote refs missing here.",
    "delete_ref": "Deleting a ref can leave the commits only it held unreachable.",
    "rm_force": "git rm -f deletes files even when they have uncommitted changes.",
    "worktree_force": "Removing a worktree with --force deletes its uncommitted changes.",
}
# Settings that make git run a program (and includes of other configuration files).
PROGRAM_KEYS = re.compile(
    r"core\.(pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy|alternaterefscommand)|sequence\.editor"
    r"|diff\.external|(diff|difftool|mergetool|merge|filter|man|browser|guitool)\..+\.(command|textconv|driver|cmd"
    r"|clean|smudge|process|path)|credential\.(.+\.)?helper|gpg\.(.+\.)?program|pager\..+|uploadpack\..+hook"
    r"|sendemail\..+|remote\..+\.(uploadpack|receivepack|vcs)|include\.path|includeif\..+\.path|protocol\..*allow"
    r"|init\.templatedir|web\.browser|instaweb\..+")
CONFIG_VERBS = ("set", "unset", "get", "list", "edit", "rename-section", "remove-section")
CONFIG_READS = ("get", "get-all", "get-regexp", "get-urlmatch", "get-color", "get-colorbool", "list", "-l", "unset",
                "unset-all", "rename-section", "remove-section", "edit", "-e")


@dataclass
class Verdict:
    """What the rules say: `blocked` (never run, whatever anyone says) or `warnings` (run only
    once the user agreed), each `{"type", "message"}`."""

    blocked: str | None = None
    warnings: list[dict[str, str]] = field(default_factory=list)

    def warn(self, kind: str) -> None:
        if all(w["type"] != kind for w in self.warnings):
            self.warnings.append({"type": kind, "message": WARNINGS[kind]})


def program_refusal(sub: str, s: Scan) -> str | None:
    """RUNS_PROGRAMS or PROGRAM_SETTING when the command makes git run another program: rebase's
    `-x`/`--exec`, `bisect run`, `submodule foreach`, difftool's `-x`/`--extcmd`, filter-branch,
    or setting a key that names a program (an alias starting with `!` included)."""
    first = s.positionals[0] if s.positionals else ""
    if sub == "rebase" and s.has("-x", "exec"):
        return RUNS_PROGRAMS.format(what="rebase --exec")
    if sub == "bisect" and first == "run":
        return RUNS_PROGRAMS.format(what="bisect run")
    if sub == "submodule" and "foreach" in s.positionals:
        return RUNS_PROGRAMS.format(what="submodule foreach")
    if sub == "difftool" and s.has("-x", "extcmd"):
        return RUNS_PROGRAMS.format(what="difftool --extcmd")
    if sub == "filter-branch":
        return RUNS_PROGRAMS.format(what="filter-branch")
    if sub == "config":
        return _config_refusal(s)
    return None


def _config_refusal(s: Scan) -> str | None:
    """PROGRAM_SETTING when `git config …` writes a key that names a program."""
    words = list(s.positionals)
    if words and words[0] in CONFIG_VERBS:
        if words[0] != "set":
            return None
        words = words[1:]
    elif s.has(*CONFIG_READS) or len(words) < 2:
        return None
    if len(words) < 2:
        return None
    key, value = words[0], words[1]
    lowered = key.lower()
    if PROGRAM_KEYS.fullmatch(lowered) or (lowered.startswith("alias.") and value.lstrip().startswith("!")):
        return PROGRAM_SETTING.format(key=key)
    return None


def write_targets(sub: str, s: Scan) -> list[str]:
    """The files or folders the command writes outside the repository's own files, as written
    (relative to the working directory): archive/format-patch/diff `--output`, clone's and
    init's folder, bundle create's file, worktree add's folder."""
    first = s.positionals[0] if s.positionals else ""
    found = s.value("output", "output-directory", "separate-git-dir")
    if sub in ("archive", "format-patch"):
        found += s.value("-o")
    if sub == "clone" and len(s.positionals) >= 2:
        found.append(s.positionals[1])
    if sub == "init" and s.positionals:
        found.append(first)
    if sub in ("bundle", "worktree") and first in ("create", "add") and len(s.positionals) >= 2:
        found.append(s.positionals[1])
    return found


def classify(sub: str, s: Scan, branch: str | None) -> Verdict:
    """The verdict on `git <sub> …` (`s`, its scan); `branch` is the current branch (None when
    unknown or detached), which a push without a destination pushes to."""
    verdict = Verdict()
    rule = RULES.get(sub)
    if rule is not None:
        rule(s, branch, verdict)
    return verdict


def _push(s: Scan, branch: str | None, v: Verdict) -> None:
    if s.has("-n", "dry-run"):
        return
    forced = s.has("-f", "force")
    if s.has("mirror"):
        v.warn("mirror_push")
    for target, plus, deleting in _push_targets(s, branch):
        if deleting:
            v.warn("delete_remote_branch")
        elif (forced or plus) and target in FORCE_PUSH_BLOCKED_ON:
            v.blocked = FORCE_PUSH_MAIN
    if s.has("-d", "delete"):
        v.warn("delete_remote_branch")
    if s.has("force"):
        v.warn("force_push")
    if s.has("-f"):
        v.warn("force_push_f")
    if any(plus for _, plus, _ in _push_targets(s, branch)):
        v.warn("force_push")
    if s.has("no-verify"):
        v.warn("skip_push_hooks")


def _push_targets(s: Scan, branch: str | None) -> list[tuple[str | None, bool, bool]]:
    """Each branch the push updates on the remote: `(name, forced by +, deleted)`; the current
    branch when no refspec is given."""
    refspecs = s.positionals[1:]
    if not refspecs:
        return [] if s.has("all", "mirror", "tags") else [(branch, False, False)]
    out = []
    for refspec in refspecs:
        plus = refspec.startswith("+")
        source, colon, destination = refspec.lstrip("+").partition(":")
        destination = destination if colon else source
        if destination in ("HEAD", "@") or (not colon and source in ("HEAD", "@")):
            destination = branch or destination
        name = destination.removeprefix("refs/heads/")
        out.append((name, plus, bool(colon) and not source))
    return out


def _reset(s: Scan, branch: str | None, v: Verdict) -> None:
    if s.has("hard"):
        v.warn("hard_reset")


def _clean(s: Scan, branch: str | None, v: Verdict) -> None:
    if s.has("-n", "dry-run"):
        return
    v.warn("clean_force")
    if s.has("-d"):
        v.warn("clean_force_dirs")
    if s.has("-x", "-X"):
        v.warn("clean_ignored")


def _branch(s: Scan, branch: str | None, v: Verdict) -> None:
    forced = s.has("-f", "force")
    if s.has("-D") or (forced and s.has("-d", "delete")):
        v.warn("force_delete_branch")
    if s.has("-M", "-C") or (forced and (s.has("-m", "-c", "move", "copy") or len(s.positionals) >= 2)):
        v.warn("force_branch")


def _checkout(s: Scan, branch: str | None, v: Verdict) -> None:
    if s.has("-f", "force"):
        v.warn("force_checkout")
    if s.paths or "." in s.positionals:
        v.warn("discard_changes")


def _switch(s: Scan, branch: str | None, v: Verdict) -> None:
    if s.has("-f", "force", "discard-changes"):
        v.warn("force_checkout")
    if s.has("-C", "force-create"):
        v.warn("force_branch")


def _restore(s: Scan, branch: str | None, v: Verdict) -> None:
    if s.has("worktree", "-W") or not s.has("staged", "-S"):
        v.warn("discard_changes")


def _rebase(s: Scan, branch: str | None, v: Verdict) -> None:
    names = s.positionals + s.value("onto")
    if any(n.split("/")[-1] in PUBLIC_BRANCHES for n in names):
        v.warn("rebase_public")


def _commit(s: Scan, branch: str | None, v: Verdict) -> None:
    if s.has("no-verify", "-n"):
        v.warn("skip_hooks")
    if s.has("amend"):
        v.warn("amend")


def _stash(s: Scan, branch: str | None, v: Verdict) -> None:
    if s.positionals[:1] in (["drop"], ["clear"]):
        v.warn("stash_drop")


def _reflog(s: Scan, branch: str | None, v: Verdict) -> None:
    first = s.positionals[:1]
    now = any(x in ("now", "all") for x in s.value("expire", "expire-unreachable"))
    if first == ["delete"] or (first == ["expire"] and now):
        v.blocked = DESTROYS_RECOVERY.format(what=f"reflog {first[0]}")


def _gc(s: Scan, branch: str | None, v: Verdict) -> None:
    if any(x in ("now", "all") for x in s.value("prune")):
        v.blocked = DESTROYS_RECOVERY.format(what="gc --prune=now")


def _prune(s: Scan, branch: str | None, v: Verdict) -> None:
    if not s.has("-n", "dry-run"):
        v.blocked = DESTROYS_RECOVERY.format(what="prune")


def _update_ref(s: Scan, branch: str | None, v: Verdict) -> None:
    if s.has("-d"):
        v.warn("delete_ref")


def _rm(s: Scan, branch: str | None, v: Verdict) -> None:
    if s.has("-f", "force"):
        v.warn("rm_force")


def _worktree(s: Scan, branch: str | None, v: Verdict) -> None:
    if s.positionals[:1] == ["remove"] and s.has("-f", "force"):
        v.warn("worktree_force")


RULES = {"push": _push, "reset": _reset, "clean": _clean, "branch": _branch, "checkout": _checkout,
         "switch": _switch, "restore": _restore, "rebase": _rebase, "commit": _commit, "stash": _stash,
         "reflog": _reflog, "gc": _gc, "prune": _prune, "update-ref": _update_ref, "rm": _rm,
         "worktree": _worktree}

# git's own commands: an alias never shadows them, so only another name is looked up as an alias.
BUILTINS = frozenset((
    "add am annotate apply archive bisect blame branch bugreport bundle cat-file check-attr check-ignore "
    "check-mailmap check-ref-format checkout checkout-index cherry cherry-pick citool clean clone column commit "
    "commit-graph commit-tree config count-objects credential describe diagnose diff diff-files diff-index "
    "diff-tree difftool fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg for-each-ref "
    "for-each-repo format-patch fsck gc get-tar-commit-id grep gui hash-object help index-pack init instaweb "
    "interpret-trailers log ls-files ls-remote ls-tree mailinfo mailsplit maintenance merge merge-base merge-file "
    "merge-index merge-tree mergetool mktag mktree multi-pack-index mv name-rev notes pack-objects pack-redundant "
    "pack-refs patch-id prune prune-packed pull push range-diff read-tree rebase reflog remote repack replace "
    "request-pull rerere reset restore rev-list rev-parse revert rm send-email shortlog show show-branch show-index "
    "show-ref sparse-checkout stage stash status stripspace submodule switch symbolic-ref tag unpack-file "
    "unpack-objects update-index update-ref update-server-info var verify-commit verify-pack verify-tag version "
    "whatchanged worktree write-tree").split())
