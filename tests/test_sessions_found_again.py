"""Sessions a user can find again (docs/sessions.md §Finding a conversation again): `--continue`
and `--resume ID` with `-p`, the id where scripts read it, `mm "PROMPT"` on a terminal, and the
sessions folder kept out of commits with files only their owner reads."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from test_scripting import env_for, last_user, mm, one_object

SESSIONS = "sessions:\n  enabled: true\n"


def users_of(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def ask(srv, cwd: Path, prompt: str, answer: str, *flags: str) -> dict:
    """One `mm -p PROMPT --output-format json` turn answered with `answer`; its result object."""
    srv.add_reply(answer)
    proc = mm(srv, cwd, "-p", prompt, "--output-format", "json", *flags, config=SESSIONS)
    assert proc.returncode == 0, proc.stderr
    return one_object(proc.stdout)


def test_continue_and_resume_go_on_with_the_right_conversation(scripted_server, tmp_path):
    srv = scripted_server
    first = ask(srv, tmp_path, "first question", "A1")["session_id"]
    second = ask(srv, tmp_path, "other question", "B1")["session_id"]
    assert first and second and first != second

    latest = ask(srv, tmp_path, "go on", "B2", "--continue")  # the latest conversation: the second
    assert latest["session_id"] == second
    assert users_of(srv.requests[-1]) == ["other question", "go on"]

    again = ask(srv, tmp_path, "back to the first", "A2", "--resume", first)
    assert again["session_id"] == first
    assert users_of(srv.requests[-1]) == ["first question", "back to the first"]
    assert srv.requests[-1]["messages"][2] == {"role": "assistant", "content": "A1"}

    saved = json.loads((tmp_path / ".mm" / "sessions" / f"{first}.json").read_text())
    assert [m["content"] for m in saved["messages"][1:]] == ["first question", "A1", "back to the first", "A2"]
    assert ask(srv, tmp_path, "and now", "A3", "--continue")["session_id"] == first  # the one updated last


def test_resume_in_text_mode_says_the_id_on_stderr(scripted_server, tmp_path):
    from mm.ui.oneshot import SESSION_LINE

    first = ask(scripted_server, tmp_path, "first question", "A1")["session_id"]
    scripted_server.add_reply("A2")
    proc = mm(scripted_server, tmp_path, "--resume", first, "-p", "more", config=SESSIONS)
    assert proc.returncode == 0 and proc.stdout == b"A2\n"
    assert proc.stderr.decode().splitlines()[-1] == SESSION_LINE.format(id=first)
    assert users_of(scripted_server.requests[-1]) == ["first question", "more"]


def test_nothing_to_continue_is_a_usage_error(scripted_server, tmp_path):
    from mm.commands.sessions import NO_SUCH_SESSION, NOTHING_TO_RESUME

    proc = mm(scripted_server, tmp_path, "-p", "go on", "--continue", config=SESSIONS)
    directory = tmp_path / ".mm" / "sessions"
    assert proc.returncode == 2 and proc.stderr.decode() == f"mm: {NOTHING_TO_RESUME.format(dir=directory)}\n"
    proc = mm(scripted_server, tmp_path, "-p", "go on", "--resume", "20260101-000000-abcdef12",
              "--output-format", "json")
    result = one_object(proc.stdout)
    assert proc.returncode == 2 and result["subtype"] == "error_usage"
    assert result["error"] == NO_SUCH_SESSION.format(id="20260101-000000-abcdef12", dir=directory)
    assert scripted_server.requests == []


def test_session_files_are_private_and_kept_out_of_commits(scripted_server, tmp_path):
    from mm.sessions.store import GITIGNORE

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    session = ask(scripted_server, tmp_path, "secret question", "secret answer")["session_id"]
    folder = tmp_path / ".mm" / "sessions"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / f"{session}.json").stat().st_mode) == 0o600
    assert (folder / ".gitignore").read_text() == GITIGNORE
    status = subprocess.run(["git", "-C", str(tmp_path), "status", "--porcelain", "--untracked-files=all"],
                            capture_output=True, text=True, check=True).stdout
    assert status.splitlines() == ["?? .mm/agent.yaml"]  # the transcript and the index are not offered


def test_an_older_file_becomes_private_when_saved_again(tmp_path):
    from mm.sessions.store import SessionFile

    s = SessionFile(tmp_path / "sessions")
    s.save([{"role": "user", "content": "x"}], [], {})
    os.chmod(s.path, 0o644)  # as mm wrote it before
    s.save([{"role": "user", "content": "y"}], [], {})
    assert stat.S_IMODE(s.path.stat().st_mode) == 0o600
    s.release()


def test_the_gitignore_never_hides_a_folder_of_other_files(tmp_path):
    """`sessions.dir: .` or a folder the user keeps other files in: no `*` there; and a
    `.gitignore` the user wrote is left as it is."""
    from mm.sessions.store import SessionFile

    (tmp_path / "README.md").write_text("the project\n")
    SessionFile(tmp_path).save([{"role": "user", "content": "x"}], [], {})
    assert not (tmp_path / ".gitignore").exists()
    own = tmp_path / "sessions"
    own.mkdir()
    (own / ".gitignore").write_text("!keep.json\n")
    SessionFile(own).save([{"role": "user", "content": "x"}], [], {})
    assert (own / ".gitignore").read_text() == "!keep.json\n"


def test_write_atomic_gives_the_mode_asked_for_and_keeps_it_otherwise(tmp_path):
    from mm.fs import write_atomic

    path = tmp_path / "f.txt"
    write_atomic(path, "one", mode=0o600)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    os.chmod(path, 0o640)
    write_atomic(path, "two")  # no mode: the file keeps its own
    assert stat.S_IMODE(path.stat().st_mode) == 0o640 and path.read_text() == "two"
    write_atomic(path, "three", mode=0o600)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.read_text() == "three"


def test_a_positional_prompt_starts_line_mode_with_it(scripted_server, tmp_path):
    """`mm "PROMPT"` on a terminal: the prompt runs first, shown as typed, then mm waits for the next."""
    from test_line_mode_scenario import start

    (tmp_path / ".mm").mkdir()
    (tmp_path / ".mm" / "agent.yaml").write_text(SESSIONS)
    scripted_server.add_reply("The first answer.")
    scripted_server.add_reply("The second answer.")
    proc, term = start(scripted_server, tmp_path, "what is this project?")
    try:
        term.expect("› what is this project?", timeout=60)
        term.expect("The first answer.", timeout=60)
        term.expect("›", timeout=60)
        term.write("and then?\r")
        term.expect("The second answer.", timeout=60)
        term.expect("›", timeout=60)
        term.write("/quit\r")
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(term.fd)
    assert users_of(scripted_server.requests[1]) == ["what is this project?", "and then?"]


def test_continue_in_line_mode_goes_on_with_the_latest(scripted_server, tmp_path):
    from mm.ui.line.app import RESUMED

    session = ask(scripted_server, tmp_path, "first question", "A1")["session_id"]
    scripted_server.add_reply("A2")
    proc = subprocess.run([sys.executable, "-m", "mm", "--continue", "--base-url", scripted_server.base_url,
                           "--model", "m"], cwd=tmp_path, env=env_for(tmp_path), input="more\n",
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert RESUMED.format(id=session, n=2) in proc.stdout
    assert last_user(scripted_server.requests[-1]) == "more"
    assert users_of(scripted_server.requests[-1]) == ["first question", "more"]
