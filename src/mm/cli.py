"""The `mm` command: flags, configuration, and the front end to run.

Heavy modules are imported inside functions: `mm --version` must stay near the interpreter's
own start-up time.
"""

from __future__ import annotations

import sys

from mm import __version__

USAGE = ("mm [-p PROMPT | -acp | --ask AGENT PROMPT] [--resume [ID]] [-c FILE] [--model NAME] [--base-url URL] "
         "[--provider NAME] [--version]\n       mm config [-c FILE] [--model NAME] [--base-url URL] [--provider NAME]")
CONFIG_ALONE = "mm: config takes only -c, --model, --base-url and --provider"
EXIT_OK, EXIT_USAGE, EXIT_INTERRUPTED = 0, 2, 130  # the turn's own statuses (1, 130, 141) are mm.run's
INTERRUPTED = "mm: interrupted"  # Ctrl-C while line mode starts (finding the model server)
RESUME_WITH_PROMPT = "mm: --resume is for line mode: -p runs one turn in a new conversation"


def _parser():
    import argparse

    p = argparse.ArgumentParser(prog="mm", usage=USAGE,
                                description="mm: a local-first coding agent for small local models.")
    p.add_argument("-p", "--prompt", help="run one turn with PROMPT in the working directory and exit")
    p.add_argument("-acp", dest="acp", action="store_true",
                   help="serve the Agent Client Protocol on stdio, as an editor's agent (Zed, JetBrains, Neovim)")
    p.add_argument("--ask", nargs=2, metavar=("AGENT", "PROMPT"),
                   help="hand PROMPT to AGENT (a name of mmConfigs) and print its answer")
    p.add_argument("-c", "--config", metavar="FILE", help="the agent file, read alone (default: the nearest "
                   ".mm/agent.yaml up to the repository root, merged over ~/.config/mm/agent.yaml)")
    p.add_argument("--model", help="the model name, or a .gguf file for the embedded engine")
    p.add_argument("--base-url", dest="base_url", help="the OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1")
    p.add_argument("--provider", help="llamacpp, ollama, dmr, lmstudio, openai or embedded")
    p.add_argument("--resume", nargs="?", const="", metavar="ID",
                   help="line mode: go on with a saved conversation (the latest when no ID is given)")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run mm; returns the exit status (0 ok, 1 failed turn, 2 usage or configuration, 130 interrupted)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--version"]:
        print(f"mm v{__version__}")
        return EXIT_OK
    command = "config" if argv[:1] == ["config"] else None  # `mm config`: the configuration and its origins
    args = _parser().parse_args(argv[1:] if command else argv)
    if command and (args.prompt is not None or args.acp or args.ask or args.resume is not None or args.version):
        print(CONFIG_ALONE, file=sys.stderr)
        return EXIT_USAGE
    if args.version:
        print(f"mm v{__version__}")
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
    if command:
        from mm.config.show import show_config

        return show_config(loaded, Path.cwd())
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

        return run_acp(loaded.config, ", ".join(map(str, loaded.files)) or None)
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
