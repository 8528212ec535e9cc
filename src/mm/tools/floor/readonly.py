"""Which shell commands only read: plan mode runs these and nothing else (docs/plan-mode.md
§Commands; issue 14 point 1). Read with the safety floor's parser (tree-sitter-bash) and word
expander, so quoting, `$(…)`, pipelines, lists and redirections are seen as bash sees them —
not the reference's first-word allowlist, through which `env <anything>` ran anything
(notes/mnemoai.md §4.3).

- `read_only_problem(command, cwd)`: None when every command in `command` is a read-only
  program used read-only (RULES), without a redirection to a file; else why not, in a few words.
- `approved_by(command, entries, cwd)`: the `allowed_bash` entry of an approved plan that
  covers `command` — one simple command whose words start with the entry's words.
"""

from __future__ import annotations

import os
import re
import shlex
from typing import TYPE_CHECKING, Callable, Mapping

from mm.tools.floor.values import Value

if TYPE_CHECKING:
    from tree_sitter import Node

    from mm.tools.floor.state import State

# Statements read through: their named children are statements, words or redirections.
THROUGH = frozenset({"program", "list", "pipeline", "subshell", "compound_statement", "negated_command",
                     "if_statement", "elif_clause", "else_clause", "while_statement", "for_statement",
                     "c_style_for_statement", "do_group", "case_statement", "case_item"})
STATEMENTS = THROUGH | {"command", "redirected_statement", "comment", "function_definition", "variable_assignment",
                         "variable_assignments", "declaration_command", "unset_command"}
REDIRECTS = ("file_redirect", "heredoc_redirect", "herestring_redirect")
OUTPUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&", "&>|"})
SINKS = frozenset({"/dev/null"})  # an output redirection here writes nothing
MAX_DEPTH = 8  # `$(…)` inside `$(…)`…

GIT_READS = frozenset({"status", "log", "diff", "show", "rev-parse", "describe", "blame", "ls-files", "ls-tree",
                       "cat-file", "shortlog", "grep"})  # the reference's list, and grep
GIT_OPTIONS = frozenset({"--no-pager", "-P", "--no-optional-locks", "--paginate", "-p"})  # before the subcommand
HOSTNAME_OPTIONS = frozenset({"-s", "-f", "-d", "-i", "-I", "-a", "-A", "--short", "--fqdn", "--long", "--domain",
                              "--ip-address", "--all-ip-addresses", "--all-fqdns"})


class NotReadOnly(Exception):
    """`str(err)` says why the command is not read-only."""


# -- the programs and how each may be used (args: the words after the program, expanded)
def _any(args: list[Value]) -> str | None:
    return None


def _known(program: str, args: list[Value]) -> list[str]:
    """The arguments' texts; NotReadOnly when one cannot be known before the command runs."""
    texts = [a.exact for a in args]
    if any(t is None for t in texts):
        raise NotReadOnly(f"an argument of {program} is not known before it runs")
    return texts  # type: ignore[return-value]


def _options(texts: list[str]) -> list[str]:
    """The options among `texts` (before `--`)."""
    out = []
    for t in texts:
        if t == "--":
            break
        if t.startswith("-") and t != "-":
            out.append(t)
    return out


def _short(options: list[str], letter: str) -> bool:
    """Whether a short option cluster holds `letter` (`-ni` holds `i`)."""
    return any(o[1:2] != "-" and letter in o[1:] for o in options)


def _long(options: list[str], *names: str) -> str | None:
    return next((o for o in options if any(o == n or o.startswith(n + "=") for n in names)), None)


def _sed(args: list[Value]) -> str | None:
    texts = _known("sed", args)
    options = _options(texts)
    if _short(options, "i") or _long(options, "--in-place"):
        return "sed -i edits files in place"
    if _short(options, "f") or _long(options, "--file"):
        return "sed -f runs a script the command does not show"
    scripts = [texts[i + 1] for i, t in enumerate(texts[:-1]) if t in ("-e", "--expression")]
    scripts += [t[2:] for t in texts if t.startswith("-e") and len(t) > 2]
    scripts += [t.split("=", 1)[1] for t in texts if t.startswith("--expression=")]
    if not scripts:
        operands = [t for t in texts if not t.startswith("-") or t == "-"]
        scripts = operands[:1]
    for script in scripts:
        problem = sed_script_problem(script)
        if problem:
            return problem
    return None


_SED_PLAIN = set("pPnNdDhHgGxlzF=qQ{}!")


def sed_script_problem(script: str) -> str | None:
    """Why a sed script may write or run something (`w`, `W`, `e`, `s///w`, `s///e`), or None;
    a script mm cannot follow is refused too."""
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;":
            i += 1
        elif c.isdigit() or c in "$,~+":
            i += 1
        elif c in "/\\":  # an address /re/ or \cREc
            delim = "/" if c == "/" else (script[i + 1] if i + 1 < n else "")
            i = _past_delimited(script, i + (1 if c == "/" else 2), delim)
            if i < 0:
                return "a sed script mm cannot follow"
            while i < n and script[i] in "IM":
                i += 1
        elif c in "sy":
            if i + 1 >= n:
                return "a sed script mm cannot follow"
            delim = script[i + 1]
            i = _past_delimited(script, i + 2, delim)
            i = _past_delimited(script, i, delim) if i >= 0 else -1
            if i < 0:
                return "a sed script mm cannot follow"
            flags = re.match(r"[^;\n}]*", script[i:]).group(0)  # type: ignore[union-attr]
            if c == "s" and ("w" in flags or "e" in flags):
                return "sed's s///w writes a file, s///e runs a command"
            i += len(flags)
        elif c in "wWe":
            return "sed's w writes a file, e runs a command"
        elif c in "aicrRbtT:#":  # text, a file read, a label, a comment: to the end of the line
            end = script.find("\n", i)
            i = n if end < 0 else end
        elif c in _SED_PLAIN:
            i += 1
        else:
            return "a sed script mm cannot follow"
    return None


def _past_delimited(text: str, i: int, delim: str) -> int:
    """The index after the `delim` closing the part starting at `i`, or -1."""
    if not delim or delim in "\n\\":
        return -1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == delim:
            return i + 1
        i += 1
    return -1


def _find(args: list[Value]) -> str | None:
    texts = _known("find", args)
    for t in texts:
        if t in ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"):
            return f"find {t} changes files or runs commands"
    return None


def _awk(args: list[Value]) -> str | None:
    texts = _known("awk", args)
    options = _options(texts)
    for o in options:
        if o[:2] in ("-f", "-i", "-l", "-E") or _long([o], "--file", "--include", "--load", "--exec"):
            return f"awk {o} runs a program the command does not show"
    program = next((t for i, t in enumerate(texts) if not t.startswith("-") and
                    (i == 0 or texts[i - 1] not in ("-v", "-F", "--assign", "--field-separator"))), "")
    if re.search(r"system|getline|\||>(?!=)", program):
        return "this awk program may write files or run commands (system, getline, |, >)"
    return None


def _git(args: list[Value]) -> str | None:
    texts = _known("git", args)
    i = 0
    while i < len(texts) and texts[i].startswith("-"):
        if texts[i] == "-C" and i + 1 < len(texts):
            i += 2
            continue
        if texts[i] not in GIT_OPTIONS:
            return f"git {texts[i]} may change what git runs"
        i += 1
    if i >= len(texts) or texts[i] not in GIT_READS:
        return f"git {texts[i] if i < len(texts) else ''} is not one of git's read-only commands".replace("  ", " ")
    rest = _options(texts[i + 1:])
    bad = _long(rest, "--output", "--ext-diff", "--open-files-in-pager") or ("-O" if any(
        o.startswith("-O") for o in rest) else None)
    if bad:
        return f"git {texts[i]} {bad} writes a file or runs a program"
    return None


def _refusing(program: str, *letters: str, longs: tuple[str, ...] = (), why: str = "writes a file") -> Callable:
    def rule(args: list[Value]) -> str | None:
        options = _options(_known(program, args))
        for letter in letters:
            if _short(options, letter):
                return f"{program} -{letter} {why}"
        bad = _long(options, *longs) if longs else None
        return f"{program} {bad} {why}" if bad else None
    return rule


def _at_most(program: str, count: int, why: str) -> Callable:
    """At most `count` operands (uniq's second one is a file it writes)."""
    def rule(args: list[Value]) -> str | None:
        texts = _known(program, args)
        operands = [t for t in texts if not t.startswith("-") or t == "-"]
        return f"{program} {why}" if len(operands) > count else None
    return rule


def _date(args: list[Value]) -> str | None:
    texts = _known("date", args)
    if _short(_options(texts), "s") or _long(_options(texts), "--set"):
        return "date -s sets the clock"
    skip = False
    for t in texts:
        if skip:
            skip = False
        elif t in ("-d", "-r", "-f", "--date", "--reference", "--file"):
            skip = True
        elif not t.startswith(("-", "+")):
            return "date with an operand that is no +FORMAT sets the clock"
    return None


def _hostname(args: list[Value]) -> str | None:
    texts = _known("hostname", args)
    return None if all(t in HOSTNAME_OPTIONS for t in texts) else "hostname with these arguments may set the name"


def _env(args: list[Value]) -> str | None:
    texts = _known("env", args)
    return None if all(t in ("-0", "--null") for t in texts) else "env with arguments runs another program"


RULES: Mapping[str, Callable[[list[Value]], str | None]] = {
    **{name: _any for name in ("ls", "cat", "head", "tail", "less", "more", "pwd", "echo", "grep", "egrep", "fgrep",
                               "wc", "stat", "which", "type", "whoami", "printenv", "ps", "uname", "id", "diff",
                               "cut", "realpath", "readlink", "basename", "dirname", "du", "df", "cd", "true",
                               "false", "test", "[", "nl", "tac", "tr", "printf", "cmp", "md5sum", "sha1sum",
                               "sha256sum")},
    "find": _find, "sed": _sed, "awk": _awk, "gawk": _awk, "mawk": _awk, "git": _git, "date": _date,
    "hostname": _hostname, "env": _env,
    "rg": _refusing("rg", longs=("--pre",), why="runs a program on every file"),
    "sort": _refusing("sort", "o", longs=("--output", "--compress-program"), why="writes a file or runs a program"),
    "tree": _refusing("tree", "o", why="writes a file"),
    "file": _refusing("file", "C", longs=("--compile",), why="writes a file"),
    "uniq": _at_most("uniq", 1, "with a second operand writes it"),
}


# -- reading the command
class _Reader:
    def __init__(self, command: str, st: "State"):
        from mm.tools.floor.words import Expander

        self.source = command.encode("utf-8", "surrogateescape")
        self.st = st
        self.depth = 0
        self.expander = Expander(self.source, self._substitute, self._process)

    def text(self, node: "Node") -> str:
        return self.expander.text(node)

    def statement(self, node: "Node") -> None:
        kind = node.type
        if kind == "comment":
            return
        if kind in THROUGH:
            for child in node.children:
                if not child.is_named and child.type == "&":
                    raise NotReadOnly("it runs something in the background (&)")
            for child in node.named_children:
                if child.type == "variable_name" and kind in ("for_statement", "c_style_for_statement"):
                    continue
                self.part(child)
        elif kind == "command":
            self.command(node)
        elif kind == "redirected_statement":
            self.redirected(node)
        elif kind in ("function_definition", "variable_assignment", "variable_assignments", "declaration_command",
                      "unset_command"):
            raise NotReadOnly("it defines functions or sets variables")
        else:
            raise NotReadOnly(f"mm cannot read its `{self.text(node)[:40]}`")

    def part(self, node: "Node") -> None:
        """A child of a compound statement: a statement, or a word (its substitutions checked)."""
        if node.type in STATEMENTS:
            self.statement(node)
        elif node.type in REDIRECTS:
            self.redirect(node)
        else:
            self.substitutions(node)

    def substitutions(self, node: "Node") -> None:
        for child in node.named_children:
            if child.type == "command_substitution":
                self._substitute(child, self.st)
            elif child.type == "process_substitution":
                self._process(child, self.st)
            else:
                self.substitutions(child)

    def redirected(self, node: "Node") -> None:
        body = node.child_by_field_name("body")
        for child in node.named_children:
            if body is not None and child.id == body.id:  # a new Node object each time: never `is`
                self.statement(child)
            else:
                self.part(child)

    def redirect(self, node: "Node") -> None:
        if node.type == "heredoc_redirect":
            for inner in node.named_children:
                if inner.type == "heredoc_body":
                    self.substitutions(inner)
                elif inner.type not in ("heredoc_start", "heredoc_end"):
                    self.part(inner)
            return
        if node.type == "herestring_redirect":
            self.substitutions(node)
            return
        op, targets = self.expander.redirection(node)
        for target in targets:
            values = self.expander.values(target, self.st)  # `$(…)` inside are checked
            if op not in OUTPUT_OPS:
                continue
            if op in (">&", "<&") and (target.type == "number" or self.text(target) == "-"):
                continue  # 2>&1: a descriptor, not a file
            if len(values) != 1 or values[0].exact not in SINKS:
                raise NotReadOnly(f"it redirects output to a file ({op} {self.text(target)})")

    def command(self, node: "Node") -> None:
        words: list[Value] = []
        named = False
        for child in node.named_children:
            if child.type == "variable_assignment":
                raise NotReadOnly("it sets variables for the program it runs")
            if child.type in REDIRECTS:
                self.redirect(child)
            elif child.type == "command_name":
                named = True
                for inner in child.named_children:
                    words += self.expander.values(inner, self.st)
            else:
                words += self.expander.values(child, self.st)
        if not named or not words:
            return
        program = words[0].exact
        if program is None:
            raise NotReadOnly("its program is not known before it runs")
        if "/" in program:
            raise NotReadOnly(f"it runs a program by its path ({program})")
        rule = RULES.get(program)
        if rule is None:
            raise NotReadOnly(f"{program} is not a read-only program")
        problem = rule(words[1:])
        if problem:
            raise NotReadOnly(problem)

    def _substitute(self, node: "Node", st: "State") -> str | None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise NotReadOnly("it is nested too deep to be read")
        try:
            for child in node.named_children:
                self.part(child)
        finally:
            self.depth -= 1
        return None  # what it prints is not worked out

    def _process(self, node: "Node", st: "State") -> None:
        self._substitute(node, st)


def read_only_problem(command: str, cwd: os.PathLike | str, env: Mapping[str, str] | None = None) -> str | None:
    """None when `command` (str, a bash command run in `cwd`) only reads; else why not (a short
    clause: "rm is not a read-only program", "it redirects output to a file (> out)"). Touches
    nothing; never raises. Rules: RULES, OUTPUT_OPS and SINKS above; docs/plan-mode.md §Commands."""
    from mm.tools.floor.state import start_state
    from mm.tools.floor.walk import parse

    if not command.strip():
        return "the command is empty"
    try:
        tree = parse(command)
        if tree.root_node.has_error:
            return "the command does not parse"
        _Reader(command, start_state(str(cwd), env)).statement(tree.root_node)
    except NotReadOnly as err:
        return str(err)
    except RecursionError:
        return "it is nested too deep to be read"
    except Exception as err:  # a reader bug refuses; it never lets a command through
        return f"mm could not read it ({type(err).__name__})"
    return None


def approved_by(command: str, entries: list[str], cwd: os.PathLike | str,
                env: Mapping[str, str] | None = None) -> str | None:
    """The entry of `entries` (an approved plan's `allowed_bash`) that pre-approves `command`, or
    None. `command` must be ONE simple command with no substitution, no redirection, no variable
    assignment, whose words (quotes removed) start with the entry's words: `pytest` covers
    `pytest tests/unit`, never `pytest; rm -rf ~` (the reference's prefix match did)."""
    from mm.tools.floor.state import start_state
    from mm.tools.floor.walk import parse

    try:
        tree = parse(command)
    except Exception:
        return None
    root = tree.root_node
    if root.has_error or len(root.named_children) != 1 or root.named_children[0].type != "command":
        return None
    node = root.named_children[0]
    if any(c.type not in ("command_name", "word", "string", "raw_string", "number", "concatenation")
           for c in node.named_children) or _has_expansion(node):
        return None
    from mm.tools.floor.words import Expander

    st = start_state(str(cwd), env)
    expander = Expander(command.encode("utf-8", "surrogateescape"), lambda n, s: None, lambda n, s: None)
    words: list[str] = []
    for child in node.named_children:
        for value in expander.values(child.named_children[0] if child.type == "command_name" else child, st):
            if value.exact is None:
                return None
            words.append(value.exact)
    for entry in entries:
        try:
            wanted = shlex.split(entry)
        except ValueError:
            continue
        if wanted and words[:len(wanted)] == wanted:
            return entry
    return None


def _has_expansion(node: "Node") -> bool:
    """Whether `node` holds a `$…`, a substitution, a glob or a brace expansion."""
    for child in node.named_children:
        if child.type in ("simple_expansion", "expansion", "command_substitution", "process_substitution",
                          "arithmetic_expansion", "brace_expression") or _has_expansion(child):
            return True
    if node.type == "word":
        text = node.text.decode("utf-8", "surrogateescape") if node.text else ""
        return any(c in text for c in "*?[{~")
    return False
