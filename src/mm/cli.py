"""The `mm` command: flags, configuration, and the front end to run.

Heavy modules are imported inside functions: `mm --version` must stay near the interpreter's
own start-up time.
"""

from __future__ import annotations

import sys

from mm import __version__

USAGE = ("mm [PROMPT] [-p [PROMPT] [--output-format FORMAT] [--json-schema FILE] | -acp | --ask AGENT PROMPT] "
         "[--continue | --resume [ID]] "
         "[-c FILE] [--model NAME] [--base-url URL] [--provider NAME] [--completion SHELL] [-v]\n"
         "       mm config [-c FILE] [--model NAME] [--base-url URL] [--provider NAME]")
VERSIONS = (["--version"], ["-v"])  # answered before anything is imported (start-up time)
SHELLS = ("bash", "zsh", "fish")  # --completion; the scripts are shtab's, from this parser
FILE_COMPLETION = {"bash": "_shtab_compgen_files", "zsh": "_files", "tcsh": "f"}  # shtab.FILE, without importing it
EPILOG = """\
examples:
  mm                                  line mode in this folder (/help lists the commands)
  mm -p "why does make test fail?"    one turn, then exit (the answer on stdout)
  mm "what does this project do?"     line mode, starting with this prompt
  cat build.log | mm -p "explain the failure"   piped input follows the prompt (mm -p -: all of it)
  mm -p "list the TODOs" --output-format json    one JSON result object (stream-json: a line per event)
  mm -p "list the TODOs" --json-schema todos.json   the answer as JSON that follows that JSON Schema
  mm --resume                         go on with the latest saved conversation of this folder (--continue)
  mm config                           the configuration in effect, and where each value comes from
  mm --base-url http://127.0.0.1:11434/v1 --model qwen2.5-coder:7b
  mm -acp                             serve an editor (Zed, JetBrains, Neovim) over ACP on stdio
  mm --ask reviewer "review the diff of HEAD"
  mm --completion bash > ~/.local/share/bash-completion/completions/mm

environment variables:
  MM_MODEL, MM_BASE_URL, MM_PROVIDER   the model, server and provider (flags win over them)
  MM_YOLO                             true/false: run tool calls without asking (the agent file's yolo)
  OPENAI_BASE_URL, OPENAI_API_BASE     the server when nothing else names one
  OPENAI_API_KEY                      the key when the agent file sets no apiKey
  ENABLE_WEB_CRAWL, ENABLE_WEB_SEARCH  declare web_crawler, web_search (1, true, yes or on)
  BRAVE_API_KEY                       the key of web_search
  VISUAL, EDITOR                      the editor of Ctrl-X Ctrl-E and /edit in line mode
  XDG_CONFIG_HOME                     where the user's folder is (default ~/.config): mm/agent.yaml,
                                      mm/AGENTS.md, mm/skills

configuration files:
  .mm/agent.yaml                      the nearest up to the repository root (or -c FILE, read alone),
                                      merged over ~/.config/mm/agent.yaml; docs/configuration.md
  AGENTS.md (CLAUDE.md)               project instructions, from the repository root down to here
  .mm/skills, .agents/skills, .claude/skills, ~/.config/mm/skills
                                      skills, first found wins (docs/skills.md)
  .mm/sessions/                       saved conversations, with sessions: {enabled: true}
  ~/.local/state/mm/history           line mode's prompt history
  $XDG_STATE_HOME/mm/tasks/           background tasks' logs (toolsets: [tasks]; default under
                                      ~/.local/state), swept after 7 days
  $XDG_STATE_HOME/mm/documents/       the documents index, one file per project (toolsets:
                                      [documents]; /docs add PATH…; docs/documents.md)

exit statuses:
  0    done
  1    the turn failed, or no model server could be used
  2    a usage or configuration error (a bad flag, an agent file that does not validate)
  130  interrupted (Ctrl-C); 141 the output was closed (mm -p | head)
  128+N  line mode ended by signal N (143 SIGTERM, 129 SIGHUP)
"""

CONFIG_ALONE = "mm: config takes only -c, --model, --base-url and --provider"
EXIT_OK, EXIT_USAGE, EXIT_INTERRUPTED = 0, 2, 130  # the turn's own statuses (1, 130, 141) are mm.run's
INTERRUPTED = "mm: interrupted"  # Ctrl-C while line mode starts (finding the model server)
NO_WORKING_DIRECTORY = ("mm: the working directory no longer exists (it was deleted or moved): "
                        "cd to an existing folder and start mm again")
UNREADABLE_WORKING_DIRECTORY = "mm: the working directory cannot be read ({reason}): cd to another folder"
PROMPT_TWICE = "mm: give the prompt once: mm -p \"what to do\" (or mm \"what to do\" for line mode)"
CONTINUE_AND_RESUME = "mm: --continue goes on with the latest conversation, --resume ID with that one: give one of them"
FORMAT_WITHOUT_P = "mm: --output-format is for -p: mm -p \"what to do\" --output-format json"
SCHEMA_WITHOUT_P = "mm: --json-schema is for -p: mm -p \"what to do\" --json-schema schema.json"
SCHEMA_UNREADABLE = "mm: --json-schema: {file} cannot be read ({reason})"
SCHEMA_NOT_JSON = "mm: --json-schema: {file} is not JSON: {error}"
SCHEMA_INVALID = "mm: --json-schema: {file}: {problem}"


def _parser():
    import argparse

    p = argparse.ArgumentParser(prog="mm", usage=USAGE, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                description="mm: a local-first coding agent for small local models.")
    p.add_argument("first", nargs="?", metavar="PROMPT", help="start line mode with PROMPT as its first prompt "
                   "(with -p: the prompt of the turn)")
    p.add_argument("-p", "--prompt", nargs="?", const="", help="run one turn with PROMPT in the working directory "
                   "and exit; what is piped to mm follows the prompt in a fenced block (-p - or -p alone: the "
                   "prompt is what is piped)")
    p.add_argument("--output-format", dest="output_format", choices=("text", "json", "stream-json"),
                   help="with -p: text (the answer on stdout, the default), json (one result object at the end) "
                   "or stream-json (one JSON object per line as the turn happens): docs/scripting.md")
    schema = p.add_argument("--json-schema", dest="json_schema", metavar="FILE",
                            help="with -p: the answer is JSON that follows the JSON Schema in FILE (or the schema "
                            "itself, given inline as {…}); it wins over structuredOutput: in the agent file "
                            "(docs/scripting.md)")
    schema.complete = FILE_COMPLETION  # type: ignore[attr-defined]  # read by shtab for --completion
    p.add_argument("-acp", "--acp", dest="acp", action="store_true",
                   help="serve the Agent Client Protocol on stdio, as an editor's agent (Zed, JetBrains, Neovim)")
    p.add_argument("--ask", nargs=2, metavar=("AGENT", "PROMPT"),
                   help="hand PROMPT to AGENT (a name of mmConfigs) and print its answer")
    config = p.add_argument("-c", "--config", metavar="FILE", help="the agent file, read alone (default: the "
                            "nearest .mm/agent.yaml up to the repository root, merged over ~/.config/mm/agent.yaml)")
    config.complete = FILE_COMPLETION  # type: ignore[attr-defined]  # read by shtab for --completion
    p.add_argument("--model", metavar="NAME", help="the model name, or a .gguf file for the embedded engine")
    p.add_argument("--base-url", dest="base_url", metavar="URL", help="the OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1")
    p.add_argument("--provider", metavar="NAME", help="llamacpp, ollama, dmr, llmman, lmstudio, openai or embedded")
    p.add_argument("--resume", nargs="?", const="", metavar="ID",
                   help="go on with a saved conversation (the latest when no ID is given), in line mode or for "
                   "one more turn with -p")
    p.add_argument("--continue", dest="continue_", action="store_true",
                   help="go on with the latest conversation of the working directory (line mode or -p)")
    p.add_argument("--completion", choices=SHELLS, metavar="SHELL",
                   help="print the completion script of SHELL (bash, zsh or fish) and exit")
    p.add_argument("-v", "--version", action="store_true", help="print the version and exit")
    return p


def completion_script(shell: str) -> str:
    """The completion script of `shell` (SHELLS) for mm's flags, made by shtab from the parser
    (imported only here: start-up time); `-c` completes file names (shtab's `complete` attribute).
    Ends with a line break (shtab's bash script has none), so `>> ~/.bashrc` joins no lines."""
    import shtab

    script = shtab.complete(_parser(), shell=shell)
    return script if script.endswith("\n") else script + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run mm; returns the exit status (0 ok, 1 failed turn, 2 usage or configuration, 130 interrupted)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv in VERSIONS:
        print(f"mm v{__version__}")
        return EXIT_OK
    command = "config" if argv[:1] == ["config"] else None  # `mm config`: the configuration and its origins
    args = _parser().parse_args(argv[1:] if command else argv)
    if command and (args.prompt is not None or args.acp or args.ask or args.resume is not None or args.version
                    or args.first is not None or args.continue_ or args.output_format is not None
                    or args.completion is not None or args.json_schema is not None):
        print(CONFIG_ALONE, file=sys.stderr)
        return EXIT_USAGE
    if args.version:
        print(f"mm v{__version__}")
        return EXIT_OK
    if args.completion is not None:
        sys.stdout.write(completion_script(args.completion))
        return EXIT_OK
    oneshot = args.prompt is not None and args.ask is None and not args.acp
    problem = _flag_problem(args, oneshot)
    if problem is not None:
        return _refuse(args, oneshot, problem)
    resume = "" if args.continue_ else args.resume
    from pathlib import Path

    try:
        cwd = Path.cwd()
    except FileNotFoundError:
        print(NO_WORKING_DIRECTORY, file=sys.stderr)
        return EXIT_USAGE
    except OSError as err:  # a folder above it is not readable
        print(UNREADABLE_WORKING_DIRECTORY.format(reason=(err.strerror or str(err)).lower()), file=sys.stderr)
        return EXIT_USAGE
    from mm.config.load import ConfigError, load_config

    try:
        loaded = load_config(args.config, cwd, {"model": args.model, "baseUrl": args.base_url,
                                                "provider": args.provider})
    except ConfigError as err:
        return _refuse(args, oneshot, f"mm: {err}")
    if command:
        from mm.config.show import show_config

        return show_config(loaded, cwd)
    if args.json_schema is not None:  # -p only (_flag_problem): it replaces structuredOutput
        schema = _json_schema(args.json_schema, cwd)
        if isinstance(schema, str):
            return _refuse(args, oneshot, schema)
        loaded.config.structuredOutput = schema
    if args.ask is not None:
        if args.prompt is not None or args.acp or resume is not None or args.first is not None:
            print("mm: --ask takes no -p, -acp, --resume or --continue", file=sys.stderr)
            return EXIT_USAGE
        if not args.ask[1].strip():
            print(f"mm: the prompt is empty: mm --ask {args.ask[0]} \"what to do\"", file=sys.stderr)
            return EXIT_USAGE
        from mm.ui.handoff import run_ask

        return run_ask(loaded.config, args.ask[0], args.ask[1])
    if args.acp:
        if args.prompt is not None or resume is not None or args.first is not None:
            print("mm: -acp takes no prompt and no --resume: the editor sends them", file=sys.stderr)
            return EXIT_USAGE
        from mm.acp.run import run_acp

        return run_acp(loaded.config, ", ".join(map(str, loaded.files)) or None)
    if not oneshot:
        import asyncio

        from mm.ui.line.app import run_line_mode

        history = Path.home() / ".local" / "state" / "mm" / "history"
        try:
            return asyncio.run(run_line_mode(loaded.config, cwd, history_file=history, resume=resume,
                                             prompt=args.first))
        except KeyboardInterrupt:  # a turn's Ctrl-C cancels the turn: this one came outside any turn
            print(INTERRUPTED, file=sys.stderr)
            return EXIT_INTERRUPTED
    from mm.run import run_oneshot

    prompt = args.prompt if args.prompt.strip() else args.first  # `mm -p --output-format json "PROMPT"`
    return run_oneshot(loaded.config, prompt, args.output_format or "text", resume, cwd)


def _flag_problem(args, oneshot: bool) -> str | None:
    """The usage error in the flags of the -p, --continue and --output-format family, or None."""
    if args.continue_ and args.resume is not None:
        return CONTINUE_AND_RESUME
    if args.output_format is not None and not oneshot:
        return FORMAT_WITHOUT_P
    if args.json_schema is not None and not oneshot:
        return SCHEMA_WITHOUT_P
    if oneshot and args.prompt.strip() and args.first is not None:
        return PROMPT_TWICE
    return None


def _json_schema(value: str, cwd) -> dict | str:
    """The JSON Schema `--json-schema` gives: the file `value` names (relative to `cwd`), or
    `value` itself when it is inline JSON (it starts with `{`, as Claude Code's flag takes it);
    else the one-line error (SCHEMA_UNREADABLE, SCHEMA_NOT_JSON, SCHEMA_INVALID)."""
    import json
    from pathlib import Path

    from mm.answer_schema import schema_problem
    from mm.text import one_line

    inline = value.lstrip().startswith("{")
    shown = "the inline schema" if inline else value
    try:
        text = value if inline else (cwd / Path(value).expanduser()).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        return SCHEMA_UNREADABLE.format(file=value, reason=getattr(err, "strerror", None) or err)
    try:
        schema = json.loads(text)
    except (ValueError, RecursionError) as err:
        return SCHEMA_NOT_JSON.format(file=shown, error=one_line(str(err), 120))
    problem = schema_problem(schema)
    return SCHEMA_INVALID.format(file=shown, problem=problem) if problem else schema


def _refuse(args, oneshot: bool, message: str) -> int:
    """A usage or configuration error: `message` on stderr, and with -p the result object of the
    JSON formats too (docs/scripting.md); returns 2."""
    if oneshot and args.output_format not in (None, "text"):
        from mm.run import refuse_oneshot

        return refuse_oneshot(args.output_format, message.removeprefix("mm: "))
    print(message, file=sys.stderr)
    return EXIT_USAGE


if __name__ == "__main__":
    raise SystemExit(main())
