"""The `mm` command: flags, configuration, and the front end to run.

Heavy modules are imported inside functions: `mm --version` must stay near the interpreter's
own start-up time.
"""

from __future__ import annotations

import sys

from mm import __version__

USAGE = ("mm [-p PROMPT | -acp | --ask AGENT PROMPT] [--resume [ID]] [-c FILE] [--model NAME] [--base-url URL] "
         "[--provider NAME] [--completion SHELL] [-v]")
VERSIONS = (["--version"], ["-v"])  # answered before anything is imported (start-up time)
SHELLS = ("bash", "zsh", "fish")  # --completion; the scripts are shtab's, from this parser
EPILOG = """\
examples:
  mm                                  line mode in this folder (/help lists the commands)
  mm -p "why does make test fail?"    one turn, then exit (the answer on stdout)
  mm --resume                         go on with the latest saved conversation of this folder
  mm --base-url http://127.0.0.1:11434/v1 --model qwen2.5-coder:7b
  mm -acp                             serve an editor (Zed, JetBrains, Neovim) over ACP on stdio
  mm --ask reviewer "review the diff of HEAD"
  mm --completion bash > ~/.local/share/bash-completion/completions/mm

environment variables:
  MM_MODEL, MM_BASE_URL, MM_PROVIDER   the model, server and provider (flags win over them)
  MM_YOLO                             true/false: run tool calls without asking (the agent file's yolo)
  ENABLE_WEB_CRAWL, ENABLE_WEB_SEARCH  declare web_crawler, web_search (1, true, yes or on)
  BRAVE_API_KEY                       the key of web_search
  VISUAL, EDITOR                      the editor of Ctrl-X Ctrl-E and /edit in line mode
  XDG_CONFIG_HOME                     where the user's folder is (default ~/.config): mm/skills

configuration files:
  .mm/agent.yaml                      the agent file of this folder (or -c FILE); docs/configuration.md
  ~/.config/mm/agent.yaml             the user's agent file, when the folder has none
  .mm/skills, .agents/skills, .claude/skills, ~/.config/mm/skills
                                      skills, first found wins (docs/skills.md)
  .mm/sessions/                       saved conversations, with sessions: {enabled: true}
  ~/.local/state/mm/history           line mode's prompt history

exit statuses:
  0    done
  1    the turn failed, or no model server could be used
  2    a usage or configuration error (a bad flag, an agent file that does not validate)
  130  interrupted (Ctrl-C); 141 the output was closed (mm -p | head)
  128+N  line mode ended by signal N (143 SIGTERM, 129 SIGHUP)
"""
EXIT_OK, EXIT_USAGE, EXIT_INTERRUPTED = 0, 2, 130  # the turn's own statuses (1, 130, 141) are mm.run's
INTERRUPTED = "mm: interrupted"  # Ctrl-C while line mode starts (finding the model server)
RESUME_WITH_PROMPT = "mm: --resume is for line mode: -p runs one turn in a new conversation"


def _parser():
    import argparse

    p = argparse.ArgumentParser(prog="mm", usage=USAGE, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                description="mm: a local-first coding agent for small local models.")
    p.add_argument("-p", "--prompt", help="run one turn with PROMPT in the working directory and exit")
    p.add_argument("-acp", "--acp", dest="acp", action="store_true",
                   help="serve the Agent Client Protocol on stdio, as an editor's agent (Zed, JetBrains, Neovim)")
    p.add_argument("--ask", nargs=2, metavar=("AGENT", "PROMPT"),
                   help="hand PROMPT to AGENT (a name of mmConfigs) and print its answer")
    p.add_argument("-c", "--config", metavar="FILE", help="the agent file (default: .mm/agent.yaml, "
                   "then ~/.config/mm/agent.yaml)")
    p.add_argument("--model", metavar="NAME", help="the model name, or a .gguf file for the embedded engine")
    p.add_argument("--base-url", dest="base_url", metavar="URL", help="the OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1")
    p.add_argument("--provider", metavar="NAME", help="llamacpp, ollama, dmr, lmstudio, openai or embedded")
    p.add_argument("--resume", nargs="?", const="", metavar="ID",
                   help="line mode: go on with a saved conversation (the latest when no ID is given)")
    p.add_argument("--completion", choices=SHELLS, metavar="SHELL",
                   help="print the completion script of SHELL (bash, zsh or fish) and exit")
    p.add_argument("-v", "--version", action="store_true", help="print the version and exit")
    return p


def completion_script(shell: str) -> str:
    """The completion script of `shell` (SHELLS) for mm's flags, made by shtab from the parser
    (imported only here: start-up time)."""
    import shtab

    parser = _parser()
    for action in parser._actions:  # argparse's list of arguments, which shtab reads too
        if action.dest == "config":
            action.complete = shtab.FILE  # type: ignore[attr-defined]
    return shtab.complete(parser, shell=shell)


def main(argv: list[str] | None = None) -> int:
    """Run mm; returns the exit status (0 ok, 1 failed turn, 2 usage or configuration, 130 interrupted)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv in VERSIONS:
        print(f"mm v{__version__}")
        return EXIT_OK
    args = _parser().parse_args(argv)
    if args.version:
        print(f"mm v{__version__}")
        return EXIT_OK
    if args.completion is not None:
        sys.stdout.write(completion_script(args.completion))
        return EXIT_OK
    if args.prompt is not None and args.resume is not None and args.ask is None and not args.acp:
        print(RESUME_WITH_PROMPT, file=sys.stderr)
        return EXIT_USAGE
    from pathlib import Path

    from mm.config.load import ConfigError, load_config

    try:
        loaded = load_config(args.config, Path.cwd(), {"model": args.model, "baseUrl": args.base_url,
                                                        "provider": args.provider})
    except ConfigError as err:
        print(f"mm: {err}", file=sys.stderr)
        return EXIT_USAGE
    if args.ask is not None:
        if args.prompt is not None or args.acp or args.resume is not None:
            print("mm: --ask takes no -p, -acp or --resume", file=sys.stderr)
            return EXIT_USAGE
        if not args.ask[1].strip():
            print(f"mm: the prompt is empty: mm --ask {args.ask[0]} \"what to do\"", file=sys.stderr)
            return EXIT_USAGE
        from mm.ask.direct import run_ask

        return run_ask(loaded.config, args.ask[0], args.ask[1])
    if args.acp:
        if args.prompt is not None or args.resume is not None:
            print("mm: -acp takes no prompt and no --resume: the editor sends them", file=sys.stderr)
            return EXIT_USAGE
        from mm.acp.run import run_acp

        return run_acp(loaded.config, loaded.path)
    if args.prompt is None:
        import asyncio

        from mm.ui.line.app import run_line_mode

        history = Path.home() / ".local" / "state" / "mm" / "history"
        try:
            return asyncio.run(run_line_mode(loaded.config, Path.cwd(), history_file=history, resume=args.resume))
        except KeyboardInterrupt:  # a turn's Ctrl-C cancels the turn: this one came outside any turn
            print(INTERRUPTED, file=sys.stderr)
            return EXIT_INTERRUPTED
    if not args.prompt.strip():
        print("mm: the prompt is empty: mm -p \"what to do\"", file=sys.stderr)
        return EXIT_USAGE
    from mm.run import run_oneshot

    return run_oneshot(loaded.config, args.prompt)


if __name__ == "__main__":
    raise SystemExit(main())
