"""How the commands the safety floor looks into take their arguments: wrappers that run another
command (`sudo`, `env`, `timeout`, `nohup`…), shells (`bash -c`), `xargs` and `find`
(docs/safety.md §How commands are read). Pure functions over expanded words.
"""

from __future__ import annotations

from mm.tools.floor.values import Value

# Wrappers: program → (options taking a value, how many plain operands come before the command).
WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "sudo": (frozenset({"-u", "-g", "-h", "-p", "-C", "-r", "-t", "-U", "-T", "-D", "--user", "--group",
                        "--host", "--prompt", "--close-from", "--role", "--type", "--other-user",
                        "--command-timeout", "--chdir"}), 0),
    "doas": (frozenset({"-u", "-C"}), 0),
    "env": (frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string", "-a", "--argv0"}), 0),
    "command": (frozenset(), 0), "builtin": (frozenset(), 0), "exec": (frozenset({"-a"}), 0),
    "nohup": (frozenset(), 0), "time": (frozenset({"-f", "--format", "-o", "--output"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0), "ionice": (frozenset({"-c", "-n", "--class", "--classdata"}), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "setsid": (frozenset(), 0), "chrt": (frozenset(), 1), "taskset": (frozenset(), 1),
    "unbuffer": (frozenset(), 0), "fakeroot": (frozenset(), 0), "strace": (frozenset({"-o", "-e", "-p", "-s"}), 0),
    "ltrace": (frozenset({"-o", "-e", "-p", "-s"}), 0), "chroot": (frozenset(), 1),
    "runuser": (frozenset({"-u", "-g", "-G", "--user", "--group"}), 0), "systemd-run": (frozenset({"-p", "-u",
               "--unit", "--property", "--description", "--slice", "-E", "--setenv", "-M", "--machine",
               "--working-directory"}), 0),
    "catchsegv": (frozenset(), 0), "xvfb-run": (frozenset({"-n", "-s", "-f", "-e"}), 0),
    "dbus-run-session": (frozenset(), 0), "flock": (frozenset({"-w", "-E", "--timeout", "--conflict-exit-code"}), 1),
    "watch": (frozenset({"-n", "--interval", "-d", "--differences"}), 0), "firejail": (frozenset(), 0),
    "torsocks": (frozenset(), 0), "proxychains": (frozenset({"-f"}), 0), "proxychains4": (frozenset({"-f"}), 0),
    "busybox": (frozenset(), 0), "coproc": (frozenset(), 0), "caffeinate": (frozenset({"-t", "-w"}), 0), "doit": (frozenset(), 0),
}
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "rbash", "yash", "posh", "lksh", "pdksh"})
SHELL_OPTIONS_WITH_VALUE = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
FIND_EXECS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
FIND_WRITES = frozenset({"-fprint", "-fprint0", "-fprintf", "-fls"})
# Options and actions that do not narrow which files find acts on (`-type f` still names every file).
FIND_UNFILTERED = frozenset({"-maxdepth", "-mindepth", "-depth", "-d", "-xdev", "-mount", "-follow", "-daystart",
                             "-regextype", "-warn", "-nowarn", "-ignore_readdir_race", "-noignore_readdir_race",
                             "-noleaf", "-print", "-print0", "-ls", "-delete", "-prune", "-true", "-type", "-xtype",
                             "-o", "-or", "-a", "-and", "-not", "!", "(", ")", ",", "-help", "--help"})
FIND_VALUED = frozenset({"-maxdepth", "-mindepth", "-regextype", "-type", "-xtype"})
XARGS_VALUED = frozenset({"-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "-n", "--max-args", "-P",
                          "--max-procs", "-s", "--max-chars", "--process-slot-var"})


def unwrap(program: str, words: list[Value]) -> tuple[list[Value], dict[str, Value]] | None:
    """The command a wrapper runs (`sudo -u x rm …` → `rm …`) and the options that matter
    (`-C`/`--chdir` of env: where it runs; `-S` of env, `-c` of flock: a shell string); None
    when `program` is no wrapper. An empty list: it runs nothing (`command -v x`)."""
    spec = WRAPPERS.get(program)
    if spec is None:
        return None
    valued, operands = spec
    options: dict[str, Value] = {}
    i = 1
    while i < len(words):
        text = words[i].exact
        if text is None:
            break
        if text == "--":
            i += 1
            break
        if program == "env" and "=" in text and not text.startswith("-"):
            i += 1
            continue
        if text.startswith("-") and len(text) > 1 and not text[1:].isdigit() or program == "nice" and text[:1] == "-":
            name, _, attached = text.partition("=")
            if name in valued and not attached and i + 1 < len(words):
                options[name] = words[i + 1]
                i += 2
                continue
            options[name] = Value(attached, "exact") if attached else Value("", "exact")
            if program == "command" and name in ("-v", "-V") or program == "ionice" and name == "-p":
                return [], options
            i += 1
            continue
        break
    i += operands
    if program == "flock" and "-c" in options:
        return [], options
    return words[i:], options


def shell_parts(words: list[Value]) -> tuple[str, Value | None, list[Value]]:
    """How a shell is called: ("string", the `-c` string, [$0, $1…]); ("file", the script,
    [$1…]); ("stdin", None, []) when it reads its script on stdin."""
    i, with_c = 1, False
    while i < len(words):
        text = words[i].exact
        if text is None:
            break
        if text == "--" or text == "-":
            i += 1
            break
        if text in SHELL_OPTIONS_WITH_VALUE:
            i += 2
            continue
        if text.startswith("--"):
            i += 1
            continue
        if text[:1] in "-+" and len(text) > 1:
            with_c = with_c or "c" in text[1:]
            if "s" in text[1:] and not with_c:
                return "stdin", None, words[i + 1:]
            i += 1
            continue
        break
    if with_c:
        return "string", (words[i] if i < len(words) else None), words[i + 1:]
    if i < len(words):
        return "file", words[i], words[i + 1:]
    return "stdin", None, []


def find_parts(args: list[Value]) -> tuple[list[Value], bool, list[tuple[str, list[Value]]]]:
    """find's start paths (default `.`), whether a test narrows the files it acts on, and its
    actions that act on files: ("-delete", []), ("-exec", the command's words), ("-fprint", [file])."""
    i = 0
    while i < len(args) and (args[i].exact or "") in ("-H", "-L", "-P") or \
            i < len(args) and (args[i].exact or "").startswith(("-O", "-D")) and args[i].exact not in FIND_UNFILTERED:
        i += 2 if args[i].exact == "-D" else 1
    starts: list[Value] = []
    while i < len(args) and not _find_expression(args[i]):
        starts.append(args[i])
        i += 1
    filtered, actions = False, []
    while i < len(args):
        text = args[i].exact
        if text in FIND_EXECS:
            end = i + 1
            while end < len(args) and args[end].exact not in (";", "+"):
                end += 1
            actions.append(("-exec", args[i + 1:end]))
            i = end + 1
            continue
        if text == "-delete":
            actions.append(("-delete", []))
        elif text in FIND_WRITES and i + 1 < len(args):
            actions.append(("-fprint", [args[i + 1]]))
            i += 1
        elif text in FIND_VALUED:
            i += 1
        elif text not in FIND_UNFILTERED:
            filtered = True
        i += 1
    return starts or [Value(".", "exact")], filtered, actions


def _find_expression(word: Value) -> bool:
    text = word.exact
    return text is not None and (text.startswith("-") and len(text) > 1 or text in ("(", "!", ")", ","))


def xargs_parts(words: list[Value]) -> tuple[list[Value], dict[str, str | None]]:
    """xargs's command (default echo) and its options (`-I` replace string, `-0`, `-d`)."""
    options: dict[str, str | None] = {}
    i = 1
    while i < len(words):
        text = words[i].exact
        if text is None or not text.startswith("-") or text == "-":
            break
        if text == "--":
            i += 1
            break
        name, _, attached = text.partition("=")
        if name in XARGS_VALUED and not attached:
            options[name] = words[i + 1].exact if i + 1 < len(words) else None
            i += 2
            continue
        if name.startswith("-I") and len(name) > 2:
            options["-I"] = name[2:]
        elif name in ("-i", "--replace"):
            options["-I"] = attached or "{}"
        else:
            options[name] = attached
        i += 1
    return words[i:] or [Value("echo", "exact")], options
