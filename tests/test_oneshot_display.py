"""What `mm -p` shows: headers, previews, errors once, a closed pipe, an empty answer."""

import os
import subprocess
import sys

from test_oneshot_e2e import run_mm


def mm_p(srv, tmp_path, config: str = "", prompt: str = "go"):
    if config:
        (tmp_path / ".mm").mkdir(exist_ok=True)
        (tmp_path / ".mm" / "agent.yaml").write_text(config)
    return run_mm(["-p", prompt, "--base-url", srv.base_url, "--model", "m"], tmp_path)


def test_calls_that_never_ran_still_get_a_header(scripted_server, tmp_path):
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {"cmd": "ls"}}])
    scripted_server.add_tool_calls([{"name": "run_python", "arguments": {"code": "1"}}])
    scripted_server.add_reply("ok")
    err = mm_p(scripted_server, tmp_path).stderr
    assert '🧰 bash: {"cmd": "ls"}\n   [bash: invalid call, nothing was run — command is missing' in err
    assert '🧰 run_python: {"code": "1"}\n   [error: there is no tool named "run_python"' in err


def test_declared_tool_header_shows_its_argv(scripted_server, tmp_path):
    config = ("tools:\n  - name: greet\n    command: [echo, hello, '{{who}}']\n"
              "    parameters:\n      who: {type: string, description: Who.}\n")
    scripted_server.add_tool_calls([{"name": "greet", "arguments": {"who": "Ada Lovelace"}}])
    scripted_server.add_reply("ok")
    err = mm_p(scripted_server, tmp_path, config).stderr
    assert "🧰 greet: echo hello 'Ada Lovelace'\n   hello Ada Lovelace\n" in err


def test_edit_preview_shows_the_changed_lines(scripted_server, tmp_path):
    (tmp_path / "f.py").write_text("".join(f"x{i} = {i}\n" for i in range(20)))
    scripted_server.add_tool_calls([{"name": "edit_file", "arguments": {"path": "f.py", "edits": [
        {"old": "x10 = 10", "new": "x10 = 100"}]}}])
    scripted_server.add_reply("ok")
    err = mm_p(scripted_server, tmp_path, "previewLines: 3\n").stderr
    assert ("📝 edit_file: f.py\n   f.py: 1 edit applied · +1 -1 lines · first change at line 11\n"
            "   -11 │ x10 = 10\n   +11 │ x10 = 100\n") in err


def test_loop_stop_is_said_once(scripted_server, tmp_path):
    for _ in range(6):
        scripted_server.add_tool_calls([{"name": "read_file", "arguments": {"path": "nope.txt"}}])
    proc = mm_p(scripted_server, tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.count("turn stopped by the loop detector") == 1


def test_server_error_is_prefixed_and_empty_answer_is_said(scripted_server, tmp_path):
    scripted_server.add_json({"error": {"message": "boom"}}, status=500)
    err = mm_p(scripted_server, tmp_path).stderr
    assert err.startswith(f"mm: the model server at {scripted_server.base_url}/chat/completions answered HTTP 500")
    scripted_server.add_reply("")
    proc = mm_p(scripted_server, tmp_path)
    assert proc.returncode == 0 and proc.stdout == ""
    assert "mm: the model's answer was empty\n" in proc.stderr


def test_reader_that_leaves_early_stops_the_turn(scripted_server, tmp_path):
    scripted_server.add_reply("word " * 4 + "".join(f"word{i} " for i in range(20000)))  # not a runaway
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(tmp_path)}
    mm = subprocess.Popen([sys.executable, "-m", "mm", "-p", "talk", "--base-url", scripted_server.base_url,
                           "--model", "m"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    head = mm.stdout.read(20)
    mm.stdout.close()
    err = mm.stderr.read().decode()
    assert mm.wait(timeout=30) == 141
    assert head == b"word word word word "
    assert "Traceback" not in err


def test_unwritable_session_dir_warns_and_keeps_the_answer(scripted_server, tmp_path):
    (tmp_path / "blocker").write_text("a file, not a directory")
    scripted_server.add_reply("the answer")
    proc = mm_p(scripted_server, tmp_path, "sessions:\n  enabled: true\n  dir: blocker/sessions\n")
    assert proc.returncode == 0 and proc.stdout == "the answer\n"
    assert "[warning: the session could not be saved to " in proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_answer_on_a_terminal_shows_its_escape_codes_instead_of_obeying_them():
    """On a terminal the answer's control characters are shown in caret notation (a model steered
    by a page must not clear the screen or set the title); a pipe gets the text as it is."""
    import io
    import os
    import pty

    from mm.events import TextChunk
    from mm.ui.oneshot import OneShotUI

    text = "done \x1b[2J\x1b]0;pwned\x07 end\n"
    main, child = pty.openpty()
    with os.fdopen(child, "w", encoding="utf-8") as screen:
        OneShotUI(5, out=screen, err=io.StringIO()).emit(TextChunk(text))
    shown = os.read(main, 4096).decode()
    os.close(main)
    assert "\x1b" not in shown and "\x07" not in shown and "^[[2J" in shown and "^[]0;pwned^G" in shown
    piped = io.StringIO()
    OneShotUI(5, out=piped, err=io.StringIO()).emit(TextChunk(text))
    assert piped.getvalue() == text


def test_a_preview_line_is_cut_at_the_preview_width():
    from mm.ui.render import PREVIEW_WIDTH, preview

    (line,) = preview("x" * 6000, 5, dim=False).split("\n")
    assert line == "   " + "x" * (PREVIEW_WIDTH - 1) + "…"
