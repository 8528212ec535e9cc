"""The compound commands of a shell script, read as bash runs them (docs/safety.md §How commands
are read): functions (and fork bombs), if, loops (and loops that fork without end), for, case.
A mixin of mm.tools.floor.walk.Reader, whose `run`, `_sequence` and `expander` it uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mm.tools.floor.machine import check_fork_bomb, check_loop_bomb
from mm.tools.floor.state import State
from mm.tools.floor.values import Outcome, Value, exact

if TYPE_CHECKING:
    from tree_sitter import Node

ARGUMENTS = 9  # $1…$9 unknown while a function's body is read where it is defined
_PATTERN_TYPES = frozenset({"word", "concatenation", "string", "raw_string", "extglob_pattern", "simple_expansion",
                            "expansion", "number", "regex"})


class Compound:
    """Reading compound commands (mixed into the Reader)."""

    expander: Any
    defining: int

    def run(self, node: "Node", st: State, stdin: Any = None) -> Outcome:
        raise NotImplementedError

    def _sequence(self, children: list["Node"], st: State) -> Outcome:
        raise NotImplementedError

    def _function(self, node: "Node", st: State) -> Outcome:
        """A function's body is read where it is defined, its arguments unknown (for the calls the
        floor does not see: `trap f EXIT`, `$name`); a target known only from them breaks no rule
        there. Each call it sees reads it again with the call's words (mm.tools.floor.rules)."""
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        name = self.expander.text(name_node) if name_node is not None else ""
        if body is not None:
            check_fork_bomb(self, name, body)
            st.functions[name] = body
            inner = st.copy()
            inner.positional = [name] + [None] * ARGUMENTS
            self.defining += 1
            try:
                self.run(body, inner)
            finally:
                self.defining -= 1
        return st, st.where

    def _if(self, node: "Node", st: State) -> Outcome:
        """`if c; then a; elif d; then b; else e; fi`: each branch from where the conditions left it."""
        section, condition, branch, clauses = "if", [], [], []
        for child in node.children:
            if child.type in ("if", "elif", "then", "fi", ";", "\n"):
                section = "then" if child.type == "then" else section
            elif child.type in ("elif_clause", "else_clause"):
                clauses.append(child)
            elif section == "if":
                condition.append(child)
            else:
                branch.append(child)
        ok, failed = self._sequence(condition, st)
        end, _ = self._sequence(branch, ok)
        rest = st.at(failed)
        for clause in clauses:
            if clause.type == "else_clause":
                clause_ok, clause_failed = self._sequence(clause.children, rest)
            else:
                clause_ok, clause_failed = self._if(clause, rest)
            end = end.merge(clause_ok)
            rest = rest.at(clause_failed)
        if not any(c.type == "else_clause" for c in clauses):
            end = end.merge(rest)
        return end, end.where

    def _loop(self, node: "Node", st: State) -> Outcome:
        body = node.child_by_field_name("body")
        check_loop_bomb(self, node, body)
        for child in node.children:
            if child.is_named and child is not body:
                self.run(child, st)
        if body is None:
            return st, st.where
        end, _ = self.run(body, st.copy())
        merged = st.merge(end)
        return merged, merged.where

    def _for(self, node: "Node", st: State) -> Outcome:
        variable = node.child_by_field_name("variable")
        body = node.child_by_field_name("body")
        values: list[Value] = []
        has_in = any(c.type == "in" for c in node.children)
        for child in node.children_by_field_name("value"):
            values += self.expander.values(child, st)
        if not has_in:
            values = [exact(p) if p is not None else Value(None, "unknown") for p in st.positional[1:]]
        name = self.expander.text(variable) if variable is not None else ""
        end = st
        for value in values[:16] or [Value(None, "unknown")]:
            inner = st.copy()
            inner.assign(name, value.exact)
            if body is not None:
                done, _ = self.run(body, inner)
                end = end.merge(done)
        return end, end.where

    def _case(self, node: "Node", st: State) -> Outcome:
        end = st
        for child in node.named_children:
            if child.type != "case_item":
                self.expander.values(child, st) if child.type != "comment" else None
                continue
            statements = [c for c in child.named_children if c.type not in _PATTERN_TYPES]
            done, _ = self._sequence(statements, st.copy())
            end = end.merge(done)
        return end, end.where
