"""Reading a shell command's parse tree (tree-sitter-bash) statement by statement, as bash would
run it: lists, pipelines, subshells, compound commands, functions, redirections, here-documents
(docs/safety.md §How commands are read). Each simple command goes to mm.tools.floor.rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mm.tools.floor.compound import Compound
from mm.tools.floor.rules import check_simple
from mm.tools.floor.state import State
from mm.tools.floor.values import UNKNOWN, Outcome, Redirect, Refused, Simple, Value
from mm.tools.floor.words import Expander
from mm.tools.floor.writes import check_write

if TYPE_CHECKING:
    from tree_sitter import Node

MAX_COMMANDS = 20_000  # simple commands read in one check (loops and nested scripts included)
MAX_DEPTH = 8  # scripts inside scripts (`bash -c`, `eval`, a script file): beyond, refused
OUTPUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&", "&>|"})
PROCESS_FILE = "/dev/fd/63"  # the name bash gives a process substitution (mm.tools.floor.words)
INFINITE = frozenset({"true", ":"})


_parser = None


def parse(text: str):
    """The tree-sitter-bash tree of `text` (the parser is made once)."""
    global _parser
    if _parser is None:
        import tree_sitter
        import tree_sitter_bash

        _parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return _parser.parse(text.encode("utf-8", "surrogateescape"))


class Reader(Compound):
    """Reads one command to its end; raises Refused at the first rule it breaks.

    `workdirs`: the folders whose recursive delete is refused as the working directory's.
    """

    def __init__(self, workdirs: tuple[str, ...]):
        self.workdirs = workdirs
        self.budget = MAX_COMMANDS
        self.depth = 0
        self.calling: set[str] = set()
        self.defining = 0
        self.stdout: str | list[Value] | None = None  # what the last simple command printed, when known

    # -- scripts
    def script(self, text: str, st: State) -> Outcome:
        """Read `text` as a script run in `st` (the state is the caller's: eval, source)."""
        if self.depth >= MAX_DEPTH:
            raise Refused("unreadable", f"scripts nested more than {MAX_DEPTH} deep")
        self.depth += 1
        try:
            source = text.encode("utf-8", "surrogateescape")
            tree = parse(text)
            saved = getattr(self, "expander", None)
            self.expander = Expander(source, self._substitute, self._process_substitution)
            try:
                return self.run(tree.root_node, st)
            finally:
                self.expander = saved
        finally:
            self.depth -= 1

    # -- statements
    def run(self, node: "Node", st: State, stdin: str | list[Value] | None = None) -> Outcome:
        kind = node.type
        if kind == "command":
            return self._command(node, st, stdin, [])
        if kind == "redirected_statement":
            return self._redirected(node, st, stdin)
        if kind == "list":
            return self._list(node, st)
        if kind == "pipeline":
            return self._pipeline(node, st, stdin)
        if kind == "subshell":
            self._sequence(node.children, st.copy())
            return st, st.where
        if kind == "negated_command":
            ok, failed = self._sequence(node.children, st)
            return ok.merge(ok.at(failed)), ok.cwds | failed
        if kind in ("variable_assignment", "variable_assignments"):
            return self._assignments(node, st)
        if kind == "declaration_command":
            return self._declaration(node, st)
        if kind == "unset_command":
            return self._unset(node, st)
        if kind == "function_definition":
            return self._function(node, st)
        if kind == "if_statement":
            return self._if(node, st)
        if kind in ("while_statement", "until_statement", "c_style_for_statement"):
            return self._loop(node, st)
        if kind == "for_statement":
            return self._for(node, st)
        if kind == "case_statement":
            return self._case(node, st)
        if kind in ("comment", "heredoc_body", "heredoc_end", "heredoc_start"):
            return st, st.where
        if kind in ("test_command", "arithmetic_expansion"):
            self.substitutions(node, st)
            return st, st.where
        return self._sequence(node.children, st)  # program, { … }, do … done, an ERROR node…

    def _sequence(self, children: list["Node"], st: State) -> Outcome:
        """Statements one after the other; one followed by `&` runs beside (its state is not kept)."""
        failed: frozenset = st.where
        named = [c for c in children if c.is_named]
        for i, child in enumerate(children):
            if not child.is_named:
                continue
            background = child.next_sibling is not None and child.next_sibling.type == "&"
            if background:
                self.run(child, st.copy())
                continue
            ok, failed = self.run(child, st)
            st = ok if st.errexit or child is named[-1] else ok.merge(ok.at(failed))
        return st, failed

    def _list(self, node: "Node", st: State) -> Outcome:
        left, op, right = node.children[0], node.children[1], node.children[2]
        ok, failed = self.run(left, st)
        if op.type == "&&":
            ok2, failed2 = self.run(right, ok)
            return ok2, failed | failed2
        if op.type == "||":
            ok2, failed2 = self.run(right, ok.at(failed))
            return ok.merge(ok2), failed2
        return self._sequence(node.children, st)

    def _pipeline(self, node: "Node", st: State, stdin) -> Outcome:
        """Each part runs in a subshell, fed what the one before printed when it is known."""
        feed = stdin
        for part in node.named_children:
            self.stdout = None
            self.run(part, st.copy(), feed)
            feed = self.stdout
        self.stdout = feed
        return st, st.where

    def _redirected(self, node: "Node", st: State, stdin) -> Outcome:
        body = node.child_by_field_name("body")
        redirects: list[Redirect] = []
        after: list["Node"] = []
        pipe: "Node | None" = None
        for child in node.children:
            if child is body:
                continue
            if child.type == "heredoc_redirect":
                stdin = self._heredoc(child, st)
                for inner in child.named_children:
                    if inner.type in ("file_redirect", "herestring_redirect"):
                        redirects += self._redirect(inner, st)
                    elif inner.type == "pipeline":
                        pipe = inner
                    elif inner.type not in ("heredoc_start", "heredoc_body", "heredoc_end"):
                        after.append(inner)
            elif child.type == "herestring_redirect":
                stdin = self._herestring(child, st)
            elif child.is_named:
                redirects += self._redirect(child, st)
        if body is None:  # `> /etc/hosts`: a command of redirections only still opens (and truncates) them
            self.check_redirects(redirects, st)
            return st, st.where
        if body.type == "command":
            outcome = self._command(body, st, stdin, redirects)
        else:
            before = st.where
            outcome = self.run(body, st, stdin)
            self.check_redirects(redirects, outcome[0].at(before | outcome[0].where))
        if pipe is not None:
            feed = self.stdout
            for part in pipe.named_children:
                self.stdout = None
                self.run(part, st.copy(), feed)
                feed = self.stdout
        for statement in after:  # `cat <<EOF && next`: the rest of the line sits in the redirection
            outcome = self.run(statement, outcome[0])
        return outcome

    def check_redirects(self, redirects: list[Redirect], st: State) -> None:
        for redirect in redirects:
            check_write(self, redirect.target, st, exempt=True)

    def _redirect(self, node: "Node", st: State) -> list[Redirect]:
        if node.type == "herestring_redirect":
            return []
        op, targets = self.expander.redirection(node)
        if op not in OUTPUT_OPS or not targets:
            for target in targets:  # `< <(cmd)`: the commands inside run
                self.expander.values(target, st)
            return []
        target = targets[0]
        if op in (">&", "<&") and (target.type == "number" or self.expander.text(target) == "-"):
            return []  # 2>&1, >&-: a descriptor, not a file
        values = self.expander.values(target, st)
        return [Redirect(op, values[0] if len(values) == 1 else UNKNOWN)]

    def _heredoc(self, node: "Node", st: State) -> str:
        """The text a here-document feeds; the commands of its `$(…)` run (unquoted delimiter)."""
        body = next((c for c in node.children if c.type == "heredoc_body"), None)
        if body is None:
            return ""
        self.substitutions(body, st)
        return self.expander.text(body)

    def _herestring(self, node: "Node", st: State) -> str | None:
        words = [self.expander.one(c, st) for c in node.named_children]
        return None if not words or words[0].exact is None else words[0].exact + "\n"

    # -- simple commands
    def _command(self, node: "Node", st: State, stdin, redirects: list[Redirect]) -> Outcome:
        self.budget -= 1
        if self.budget < 0:
            raise Refused("unreadable", f"more than {MAX_COMMANDS} commands to read")
        words: list[Value] = []
        prefix: list["Node"] = []
        named = False
        for child in node.named_children:
            if child.type == "variable_assignment" and not named:
                prefix.append(child)
            elif child.type in ("file_redirect", "herestring_redirect"):
                if child.type == "herestring_redirect":
                    stdin = self._herestring(child, st)
                redirects = redirects + self._redirect(child, st)
            elif child.type == "command_name":
                named = True
                for inner in child.named_children:
                    words += self.expander.values(inner, st)
            else:
                words += self.expander.values(child, st)
        if not named:  # only assignments (and redirections): they stay
            outcome = self._assignments_of(prefix, st)
            self.check_redirects(redirects, st)
            return outcome
        for assignment in prefix:  # `X=1 cmd`: only for cmd, but what they run is checked
            self._value_of(assignment, st)
        simple = Simple(words, redirects)
        if isinstance(stdin, list):
            simple.items = stdin
        else:
            simple.stdin = stdin
        self.stdout = None
        return check_simple(self, simple, st)

    def _assignments(self, node: "Node", st: State) -> Outcome:
        nodes = [node] if node.type == "variable_assignment" else \
            [c for c in node.named_children if c.type == "variable_assignment"]
        return self._assignments_of(nodes, st)

    def _assignments_of(self, nodes: list["Node"], st: State) -> Outcome:
        for assignment in nodes:
            name = assignment.child_by_field_name("name")
            value_node = assignment.child_by_field_name("value")
            if name is None:
                continue
            key = self.expander.text(name).replace(" ", "")
            if value_node is not None and value_node.type == "array":  # x=(a b c)
                items: list[str | None] = []
                for child in value_node.named_children:
                    items += [v.exact for v in self.expander.values(child, st)]
                for i, item in enumerate(items):
                    st.assign(f"{key}[{i}]", item)
                st.assign(key, items[0] if items else "")
                st.assign(f"{key}[@]", None if None in items else " ".join(items))  # type: ignore[arg-type]
                st.assign(f"{key}[*]", st.lookup(f"{key}[@]"))
                continue
            value = self._value_of(assignment, st)
            st.assign(key, value)
            if key.endswith("[0]"):
                st.assign(key[:-3], value)
            if "[" in key:
                st.assign(key.split("[", 1)[0] + "[@]", None)
        return st, st.where

    def _value_of(self, assignment: "Node", st: State) -> str | None:
        value = assignment.child_by_field_name("value")
        if value is None:
            return ""
        text = self.expander.text(assignment)
        if "+=" in text.split("=", 1)[0] + "=":
            return None  # x+=…: appended to an unknown
        return self.expander.one(value, st).exact

    def _declaration(self, node: "Node", st: State) -> Outcome:
        for child in node.named_children:
            if child.type == "variable_assignment":
                self._assignments_of([child], st)
            elif child.type != "variable_name":
                self.expander.values(child, st)
        return st, st.where

    def _unset(self, node: "Node", st: State) -> Outcome:
        words = [self.expander.text(c) for c in node.named_children]
        if "-f" not in words:
            for name in words:
                if not name.startswith("-"):
                    st.drop(name)
        return st, st.where

    # -- substitutions
    def substitutions(self, node: "Node", st: State) -> None:
        """Check the commands of every `$(…)`, backtick and `<(…)` inside `node`."""
        for child in node.named_children:
            if child.type == "command_substitution":
                self._substitute(child, st)
            elif child.type == "process_substitution":
                self._process_substitution(child, st)
            else:
                self.substitutions(child, st)

    def _substitute(self, node: "Node", st: State) -> str | None:
        """Read the commands of `$(…)` (they run, in a subshell) and give what they print when
        the floor can work it out (mm.tools.floor.static), else None."""
        inner = st.copy()
        self.stdout = None
        statements = [c for c in node.named_children]
        printed: list[Any] = []
        for statement in statements:
            self.stdout = None
            inner, _ = self.run(statement, inner)
            printed.append(self.stdout)
        self.stdout = None
        if not printed or any(not isinstance(p, str) for p in printed):
            return None
        return "".join(printed)

    def _process_substitution(self, node: "Node", st: State) -> None:
        """Read the commands of `<(…)`; what they print, when known, is the file /dev/fd/63 (for
        `source <(…)`, `bash <(…)`)."""
        out = self._substitute(node, st)
        if out is None:
            st.files.pop(PROCESS_FILE, None)
        else:
            st.files[PROCESS_FILE] = out
