"""Line mode's commands of issue 11 point 6 on a real pseudo-terminal, against the scripted model
server: /help, /clear, /model, /resume, /cost, /init, /edit; Tab completing commands, skills and
`@path`; `@path` attaching; Ctrl-X Ctrl-E opening $EDITOR (a small script that rewrites the file)."""

import contextlib
import re
import sys

import pytest

from test_line_mode_scenario import ENV, say
from test_line_mode_terminal import Terminal, spawn_on_terminal

from mm.commands.init import INIT_EXISTS, INIT_NO_WRITE, INIT_PROMPT, INIT_STARTED, init_request
from mm.commands.model import NOT_LISTED
from mm.ui.line.commands import NO_WORDS, NOT_DURING_TURN

GREETINGS = "---\ndescription: Greet somebody with a festive message.\n---\nGreet them.\n"
EDITOR = '#!/bin/sh\nprintf "edited: %s" "$(cat "$1")" > "$1"\n'  # what the editor "types": the file rewritten
BIG = {"id": "big", "object": "model", "owned_by": "scripted", "max_model_len": 32768}


def editor_in(cwd) -> dict:
    """The environment of a run whose $EDITOR is EDITOR (VISUAL, which would win, emptied)."""
    script = cwd / "editor.sh"
    script.write_text(EDITOR)
    script.chmod(0o755)
    return {"EDITOR": str(script), "VISUAL": ""}


def start(srv, cwd, env: dict | None = None):
    """`mm` on a pseudo-terminal in `cwd`, talking to `srv`; the user's folders inside `cwd`."""
    argv = [sys.executable, "-m", "mm", "--base-url", srv.base_url, "--model", "m"]
    env = ENV | {"XDG_CONFIG_HOME": str(cwd / "home-config")} | (env or {})
    proc, fd = spawn_on_terminal(argv, cwd, env, size=(50, 200))
    return proc, Terminal(fd)


@contextlib.contextmanager
def on_terminal(srv, cwd, env: dict | None = None):
    """`start`, at the first prompt; on leaving, `/quit` must end mm with status 0."""
    proc, term = start(srv, cwd, env)
    try:
        term.expect("›", timeout=60)  # start-up, on a loaded machine too
        yield term
        term.write("/quit\r")
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_help_model_cost_completion_attachments_and_the_editor(scripted_server, tmp_path):
    srv = scripted_server
    srv.models = ["m", BIG]
    for n in range(1, 5):
        srv.add_reply(f"answer-{n}")
    (tmp_path / ".agents" / "skills").mkdir(parents=True)
    (tmp_path / ".agents" / "skills" / "greetings.md").write_text(GREETINGS)
    (tmp_path / "notes.txt").write_text("notes\n")
    with on_terminal(srv, tmp_path, editor_in(tmp_path)) as term:
        assert "/help lists the commands · Tab completes" in term.seen.decode()  # the banner's help line
        shown = say(term, "/help", "/help ")
        for row in ("/model [NAME]      List the server's models; /model NAME switches to one for the rest of "
                    "the conversation", "/clear             Clear the history and start a new session (as /new)",
                    "/resume [ID]       List the saved conversations; /resume ID goes on with one",
                    "/usage             The session's token totals and the context window's fill (also /cost)",
                    "/cost              The session's token totals and the context window's fill",
                    "/init              Ask the model to write an AGENTS.md for this project (build, test, run)",
                    "/edit [TEXT]       Write the prompt in $EDITOR (also Ctrl-X Ctrl-E)",
                    "skills (/name or $name, then what it needs):",
                    "/greetings         Greet somebody with a festive message.",
                    "Ctrl-X Ctrl-E opens $EDITOR"):
            assert row in shown
        term.write("/he\t")  # Tab completes the command
        term.expect("/help")
        say(term, "", "List the commands, then the skills")
        listed = say(term, "/model", f"models at {srv.base_url}:")
        assert "● m\r\n  big\r\nswitch with /model NAME" in listed
        say(term, "/model nope", NOT_LISTED.format(url=srv.base_url, name="nope"))
        say(term, "/model big", f"🔁 model: OpenAI-compatible big at {srv.base_url} · context window 32768 tokens")
        term.write("look at @no\t")  # Tab completes the file name
        term.expect("@notes.txt")
        say(term, "", f"📎 attached {tmp_path}/notes.txt", "answer-1")
        term.write("$gr\t")  # and a skill
        term.expect("$greetings")
        say(term, " Bob", "answer-2")
        term.write("typed\x18\x05")  # Ctrl-X Ctrl-E: the editor's text comes back to the prompt, Enter sends it
        term.expect("edited: typed")
        say(term, "", "answer-3")
        term.write("/edit draft\r")
        term.expect("edited: draft")
        say(term, "", "answer-4")
        shown = say(term, "/cost", "📊 session: 40 input · 20 output")
        assert "📊 context: " in shown and " / 32768 tokens (" in shown
    assert [r["model"] for r in srv.requests] == ["big"] * 4  # the switch holds for the rest of the conversation
    contents = [r["messages"][-1]["content"] for r in srv.requests]
    assert contents[0] == f"look at @notes.txt\n[attached file: {tmp_path}/notes.txt]"
    assert contents[1].startswith("$greetings Bob\n[mm: \"$greetings\" names the skill greetings")
    assert contents[2:] == ["edited: typed", "edited: draft"]


def test_clear_and_resume(scripted_server, tmp_path):
    srv = scripted_server
    srv.add_reply("Paris.")
    srv.add_reply("Fresh start.")
    srv.add_reply("Rome.")
    (tmp_path / ".mm").mkdir()
    (tmp_path / ".mm" / "agent.yaml").write_text("sessions: {enabled: true}\n")
    with on_terminal(srv, tmp_path) as term:
        say(term, "capital of France?", "Paris.")
        say(term, "/clear", "🆕 New session: 2 message(s) forgotten.")
        say(term, "hello again", "Fresh start.")
        listed = say(term, "/resume", "go on with one: /sessions <id>")
        kept = re.search(r"(\d{8}-\d{6}-[0-9a-f]{8}) · [0-9: -]+ · capital of France\?", term.seen.decode())
        assert kept is not None, listed
        say(term, f"/resume {kept.group(1)}", f"resumed {kept.group(1)}: 2 message(s)")
        say(term, "and Italy?", "Rome.")
    assert [m["content"] for m in srv.requests[1]["messages"][1:]] == ["hello again"]  # /clear forgot
    assert [m["content"] for m in srv.requests[2]["messages"][1:]] == ["capital of France?", "Paris.", "and Italy?"]


def test_init_writes_agents_md_through_write_file_and_its_permission(scripted_server, tmp_path):
    srv = scripted_server
    srv.add_tool_calls([{"name": "write_file", "arguments": {"path": "AGENTS.md", "content": "# Project\n"}}])
    srv.add_reply("AGENTS.md written.")
    (tmp_path / ".mm").mkdir()
    (tmp_path / ".mm" / "agent.yaml").write_text("yolo: false\n")
    with on_terminal(srv, tmp_path) as term:
        say(term, "/init now", NO_WORDS.format(command="/init"))
        term.write("/init\r")
        term.expect(INIT_STARTED)
        term.expect("📝 write_file: AGENTS.md")
        term.expect("🔐 write_file: allow?")
        say(term, "a", "AGENTS.md written.")
        say(term, "/init", INIT_EXISTS.format(path=tmp_path / "AGENTS.md"))  # a second time: left alone
    assert (tmp_path / "AGENTS.md").read_text() == "# Project\n"
    assert len(srv.requests) == 2 and srv.requests[0]["messages"][-1] == {"role": "user", "content": INIT_PROMPT}


def test_init_refusals(tmp_path):
    assert init_request(tmp_path, ["write_file"]) == (INIT_PROMPT, "")
    assert init_request(tmp_path, ["bash"]) == ("", INIT_NO_WRITE)
    (tmp_path / "AGENTS.md").symlink_to(tmp_path / "nowhere")  # a dangling link counts: it is not replaced
    assert init_request(tmp_path, ["write_file"]) == ("", INIT_EXISTS.format(path=tmp_path / "AGENTS.md"))
    assert INIT_NO_WRITE == "/init needs the write_file tool: set `editTools: true` in the agent file"
    assert "call write_file once, with path \"AGENTS.md\"" in INIT_PROMPT
    assert "how to build it, run its tests (the whole suite, and one test) and run it" in INIT_PROMPT


async def test_the_new_commands_at_a_question(scripted_server, tmp_path):
    from test_line_mode import drive

    scripted_server.models = ["m", BIG]
    scripted_server.add_tool_calls([{"id": "q1", "name": "ask_user", "arguments": {"question": "Your name?"}}])
    scripted_server.add_reply("Hello.")
    shown = await drive(scripted_server, tmp_path, ["ask\r", "/help\r", "/cost\r", "/model\r", "/model big\r",
                                                    "/clear\r", "/init\r", "/edit\r", "Bob\r", "/quit\r"])
    assert "List the commands, then the skills" in shown and "📊 session: 10 input" in shown
    assert "● m\n  big\n" in shown
    for command in ("/model", "/clear", "/init", "/edit"):
        assert NOT_DURING_TURN.format(command=command) in shown
    assert scripted_server.requests[1]["model"] == "m"  # /model big did not switch under the turn
    assert scripted_server.requests[1]["messages"][-1]["content"] == "The user answered:\n- Your name? → Bob"


@pytest.mark.parametrize("typed,wanted,replaced", [
    ("/re", ["/resume"], "/re"), ("/CO", ["/compact", "/cost"], "/CO"), ("/gr", ["/greetings"], "/gr"),
    ("say $g", ["$greetings"], "$g"), ("look at @no", ["notes.txt"], "no"), ("@sr", ["src"], "sr"),
    ("no /he", [], ""), ("/help @no", ["notes.txt"], "no"), ("/help /he", [], ""),
])
def test_what_tab_offers(tmp_path, typed, wanted, replaced):
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from harness import make_conversation
    from mm.ui.line.complete import PromptCompleter

    (tmp_path / ".mm" / "skills").mkdir(parents=True)
    (tmp_path / ".mm" / "skills" / "greetings.md").write_text(GREETINGS)
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "src").mkdir()
    conv = make_conversation("http://127.0.0.1:9/v1", tmp_path)
    found = list(PromptCompleter(conv).get_completions(Document(typed), CompleteEvent(completion_requested=True)))
    assert [c.text for c in found] == wanted
    assert {typed[len(typed) + c.start_position:] for c in found} <= {replaced}  # what each completion replaces


async def test_ollama_lists_the_models_it_pulled_and_takes_a_name_without_its_tag(scripted_server, tmp_path):
    from harness import make_conversation
    from mm.commands.model import models_text, switch_model
    from mm.config.load import agent_config_adapter
    from mm.llm.resolve import Endpoint

    config = agent_config_adapter().validate_python({})
    ollama = Endpoint(scripted_server.base_url, "qwen:7b", "ollama")
    assert await models_text(config, ollama, "qwen:7b") == (  # no /api/tags: the OpenAI list
        f"models at {scripted_server.base_url}:\n  m\nswitch with /model NAME")
    scripted_server.tags = {"models": [{"name": "qwen:7b", "size": 1}, {"name": "llama3:latest", "size": 2}]}
    assert await models_text(config, ollama, "qwen:7b") == (
        f"models at {scripted_server.base_url}:\n● qwen:7b\n  llama3:latest\nswitch with /model NAME")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    shown, facts = await switch_model(conv, config, ollama, "llama3")
    assert shown.startswith(f"🔁 model: ollama llama3:latest at {scripted_server.base_url} · context window ")
    assert conv.client.model == "llama3:latest" and conv.context_window == facts.context_window
    assert await switch_model(conv, config, ollama, "llama3:latest") == ("llama3:latest is already the model in use",
                                                                        None)
    gone = Endpoint("http://127.0.0.1:9/v1", "m", "openai")
    shown, facts = await switch_model(conv, config, gone, "m")
    assert facts is None and shown == ("nothing answers at http://127.0.0.1:9/v1/models (connection refused) — is the "
                                      "model server running?")
    assert conv.client.model == "llama3:latest"  # nothing changed
