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
import shlex
from typing import TYPE_CHECKING, Mapping

from mm.tools.floor.readonly_rules import RULES, NotReadOnly
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
