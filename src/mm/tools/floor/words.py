"""Expanding one shell word as bash would, without running anything (docs/safety.md §How commands
are read): quoting and backslashes, `$'…'`, variables (assigned earlier in the command, or from
the environment the command gets; an unset one is empty, as in bash), `${x:-default}`, command
substitutions the floor can evaluate itself (mm.tools.floor.static), brace expansion, `~`, word
splitting of unquoted expansions, and globs (classified, never matched).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable

from mm.tools.floor.parameters import NAME, letter_case, plain_word, substring, trimmed
from mm.tools.floor.values import UNKNOWN, Value, exact

if TYPE_CHECKING:
    from tree_sitter import Node

    from mm.tools.floor.state import State

# A piece of a word: its text and how it came: "lit" (unquoted source: braces, `~` and globs
# apply), "q" (quoted or escaped: taken as it is), "exp" (an unquoted expansion: split on
# blanks, globbed). None: a piece whose value cannot be known.
Piece = tuple[str, str] | None
GLOB_CHARS = "*?["
WHOLE_PATTERN = re.compile(r"[*?.]*\*[*?.]*/?")  # `*`, `.*`, `*.*`, `*/`: every entry of a folder
MAX_BRACE_WORDS = 64
_ANSI_C = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
           "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_PARAMETER = re.compile(r"\$\{" + NAME + r"(?:(?P<op>:?[-=+?]|%%|%|##|#|//|/)(?P<word>.*))?\}", re.S)
_LENGTH = re.compile(r"\$\{#" + NAME + r"\}")


class Expander:
    """Expands words in a State; `substitute(node, state)` gives a command substitution's output
    (str) or None, and checks the commands inside it (they run too)."""

    def __init__(self, source: bytes, substitute: Callable[["Node", "State"], str | None],
                 process: Callable[["Node", "State"], None]):
        self.source = source
        self.substitute = substitute
        self.process = process  # a process substitution `<(…)`: its commands are checked

    def text(self, node: "Node") -> str:
        return self.source[node.start_byte:node.end_byte].decode("utf-8", "surrogateescape")

    def redirection(self, node: "Node") -> tuple[str, list["Node"]]:
        """A file redirection's operator as written between its descriptor and its target, and its
        targets (`2>x` → (">", [x]); `1<>x` → ("<>", [x]): tree-sitter-bash reads `<>` as `<` and
        an error node, the text is what bash reads)."""
        targets = [c for c in node.named_children if c.type not in ("file_descriptor", "ERROR")]
        start = node.start_byte
        for child in node.children:
            if child.type == "file_descriptor":
                start = child.end_byte
        end = targets[0].start_byte if targets else node.end_byte
        return self.source[start:end].decode("utf-8", "surrogateescape").strip(), targets

    def values(self, node: "Node", st: "State") -> list[Value]:
        """The words `node` becomes: several after brace expansion or splitting, none when it is
        an unquoted expansion that is empty."""
        pieces = self.pieces(node, st)
        if any(p is None for p in pieces):
            return [_partly_known(pieces)]
        quoted = any(p[1] != "exp" for p in pieces if p is not None and (p[0] or p[1] == "q"))
        out: list[Value] = []
        for word in _braces(pieces):
            for split in _split(word, quoted):
                out.append(_finish(_tilde(split, st)))
        return out

    def one(self, node: "Node", st: "State") -> Value:
        """The word `node` as one value (an assignment's value: no splitting, no globbing)."""
        pieces = self.pieces(node, st)
        if any(p is None for p in pieces):
            return _partly_known(pieces)
        return exact("".join(c for c, _ in _tilde(_chars(pieces), st)))

    # -- pieces of the parse tree
    def pieces(self, node: "Node", st: "State") -> list[Piece]:
        kind = node.type
        if kind == "word" or kind == "number" or kind not in _HANDLERS and not node.named_children:
            return _unescape(self.text(node))
        handler = _HANDLERS.get(kind)
        if handler is None:  # a node the floor does not know: its text, its commands checked
            for child in node.named_children:
                if child.type in ("command_substitution", "process_substitution"):
                    self.pieces(child, st)
            return [(self.text(node), "lit")]
        return handler(self, node, st)

    def _concatenation(self, node: "Node", st: "State") -> list[Piece]:
        out: list[Piece] = []
        at = node.start_byte
        for child in node.children:
            if child.start_byte > at:
                out += _unescape(self.source[at:child.start_byte].decode("utf-8", "surrogateescape"))
            out += self.pieces(child, st)
            at = child.end_byte
        return out

    def _string(self, node: "Node", st: "State") -> list[Piece]:
        out: list[Piece] = []
        inner = [c for c in node.children if c.type != '"']
        at = node.start_byte + (1 if self.text(node).startswith('"') else 2)  # `"` or `$"`
        end = node.end_byte - 1
        for child in inner:
            if child.start_byte > at:
                out.append((_dquote(self.source[at:child.start_byte].decode("utf-8", "surrogateescape")), "q"))
            if child.type == "string_content":
                out.append((_dquote(self.text(child)), "q"))
            else:
                out += [None if p is None else (p[0], "q") for p in self.pieces(child, st)]
            at = child.end_byte
        if end > at:
            out.append((_dquote(self.source[at:end].decode("utf-8", "surrogateescape")), "q"))
        return out

    def _raw(self, node: "Node", st: "State") -> list[Piece]:
        return [(self.text(node)[1:-1], "q")]

    def _ansi_c(self, node: "Node", st: "State") -> list[Piece]:
        return [(ansi_c(self.text(node)[2:-1]), "q")]

    def _variable(self, node: "Node", st: "State") -> list[Piece]:
        text = self.text(node)
        name = text[1:]
        return _as_expansion(st.lookup(name))

    def _expansion(self, node: "Node", st: "State") -> list[Piece]:
        for child in node.named_children:
            if child.type in ("command_substitution", "process_substitution"):
                self.pieces(child, st)
        text = self.text(node)
        length = _LENGTH.fullmatch(text)
        if length is not None:
            value = st.lookup(length["name"])
            return _as_expansion(None if value is None else str(len(value)))
        worked = substring(text, st) or letter_case(text, st)
        if worked is not None:
            return _as_expansion(worked[0])
        match = _PARAMETER.fullmatch(text)
        if match is None:  # ${x:$n}, ${!x}, ${x@Q}…: not worked out
            return [None]
        value = st.lookup(match["name"])
        op, word = match["op"], match["word"]
        if op is None:
            return _as_expansion(value)
        if value is None:
            return [None]
        if op in ("%", "%%", "#", "##", "/", "//"):
            return _as_expansion(trimmed(value, op, word))
        empty = value == "" if op.startswith(":") else not st.is_set(match["name"])
        if op[-1] in "-=":
            chosen = plain_word(word) if empty else value
        elif op[-1] == "+":
            chosen = "" if empty else plain_word(word)
        else:  # `?`: an error when empty
            chosen = value
        if op[-1] == "=" and empty and chosen is not None:
            st.assign(match["name"], chosen)
        return _as_expansion(chosen)

    def _substitution(self, node: "Node", st: "State") -> list[Piece]:
        out = self.substitute(node, st)
        return _as_expansion(None if out is None else out.rstrip("\n"))

    def _process(self, node: "Node", st: "State") -> list[Piece]:
        self.process(node, st)
        return [("/dev/fd/63", "q")]  # PROCESS_FILE of mm.tools.floor.walk

    def _arithmetic(self, node: "Node", st: "State") -> list[Piece]:
        for child in node.named_children:
            self.pieces(child, st)
        return [None]


_HANDLERS: dict[str, Callable[..., list[Piece]]] = {
    "concatenation": Expander._concatenation, "string": Expander._string,
    "translated_string": Expander._string, "raw_string": Expander._raw, "ansi_c_string": Expander._ansi_c,
    "simple_expansion": Expander._variable, "expansion": Expander._expansion,
    "command_substitution": Expander._substitution, "process_substitution": Expander._process,
    "arithmetic_expansion": Expander._arithmetic,
}


def _as_expansion(value: str | None) -> list[Piece]:
    return [None] if value is None else [(value, "exp")]


def _unescape(text: str) -> list[Piece]:
    """Unquoted source text: a backslash quotes the next character; `\\<newline>` is nothing."""
    out: list[Piece] = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                out.append((text[i + 1], "q"))
            i += 2
            continue
        j = i
        while j < len(text) and text[j] != "\\":
            j += 1
        out.append((text[i:j] if j > i else text[i], "lit"))
        i = max(j, i + 1)
    return out


def _dquote(text: str) -> str:
    """Text between double quotes: a backslash quotes only `$`, backtick, `"`, `\\` and newline."""
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m[1] == "\n" else m[1], text)


def ansi_c(body: str) -> str:
    """The text of `$'body'`: \\n, \\t, \\xHH, \\uHHHH, \\NNN (octal), \\cX…"""
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c != "\\" or i + 1 >= len(body):
            out.append(c)
            i += 1
            continue
        n = body[i + 1]
        if n in _ANSI_C:
            out.append(_ANSI_C[n])
            i += 2
        elif n in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[n]
            digits = re.match(r"[0-9A-Fa-f]{1,%d}" % width, body[i + 2:])
            if digits:
                out.append(chr(int(digits[0], 16)))
                i += 2 + len(digits[0])
            else:
                out.append("\\" + n)
                i += 2
        elif n in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i + 1:])
            out.append(chr(int(digits[0], 8) & 0xFF))
            i += 1 + len(digits[0])
        elif n == "c" and i + 2 < len(body):
            out.append(chr(ord(body[i + 2]) & 0x1F))
            i += 3
        else:
            out.append("\\" + n)
            i += 2
    return "".join(out)


def _partly_known(pieces: list[Piece]) -> Value:
    """A word with a piece that cannot be known: "under" the folder its known start names
    (`/etc/$X`), else unknown."""
    start = ""
    for piece in pieces:
        if piece is None:
            break
        start += piece[0]
    if "/" in start:
        return Value(start[:start.rindex("/")] or "/", "under")
    return UNKNOWN


# -- brace expansion, splitting, tilde, globs (on pieces: only unquoted characters count)
def _chars(pieces: list[Piece]) -> list[tuple[str, str]]:
    return [(c, how) for text, how in pieces for c in text]  # type: ignore[misc]


def _braces(pieces: list[Piece]) -> list[list[tuple[str, str]]]:
    """Brace expansion (`{a,b}`, `{1..3}`) on unquoted braces, at most MAX_BRACE_WORDS words."""
    words = [_chars(pieces)]
    done: list[list[tuple[str, str]]] = []
    while words and len(done) + len(words) <= MAX_BRACE_WORDS:
        word = words.pop(0)
        found = _first_brace(word)
        if found is None:
            done.append(word)
            continue
        start, end, parts = found
        words = [word[:start] + part + word[end + 1:] for part in parts] + words
    return done + words


def _first_brace(word: list[tuple[str, str]]) -> tuple[int, int, list[list[tuple[str, str]]]] | None:
    for start, (c, how) in enumerate(word):
        if c != "{" or how != "lit":
            continue
        depth, commas = 0, []
        for end in range(start, len(word)):
            ch, h = word[end]
            if h != "lit":
                continue
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    inner = word[start + 1:end]
                    if commas:
                        cuts = [start] + commas + [end]
                        return start, end, [word[a + 1:b] for a, b in zip(cuts, cuts[1:])]
                    seq = _sequence("".join(ch for ch, _ in inner))
                    if seq is not None:
                        return start, end, [[(ch, "q") for ch in item] for item in seq]
                    break
            elif ch == "," and depth == 1:
                commas.append(end)
    return None


def _sequence(text: str) -> list[str] | None:
    match = re.fullmatch(r"(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?|([a-zA-Z])\.\.([a-zA-Z])", text)
    if match is None:
        return None
    if match[1] is not None:
        a, b = int(match[1]), int(match[2])
        step = abs(int(match[3] or 1)) or 1
        rng = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [str(n) for n in list(rng)[:MAX_BRACE_WORDS]]
    a, b = ord(match[4]), ord(match[5])
    return [chr(n) for n in (range(a, b + 1) if a <= b else range(a, b - 1, -1))]


def _split(word: list[tuple[str, str]], quoted: bool) -> list[list[tuple[str, str]]]:
    """Word splitting: blanks that came from an unquoted expansion cut the word; a word made only
    of unquoted expansions that are empty is no word at all (`quoted`: it has quoted or literal
    parts, so it stays, even empty: `""`)."""
    out: list[list[tuple[str, str]]] = [[]]
    for c, how in word:
        if how == "exp" and c in " \t\n":
            if out[-1]:
                out.append([])
            continue
        out[-1].append((c, how))
    words = [w for w in out if w]
    return words if words or not quoted else [[]]


def _tilde(chars: list[tuple[str, str]], st: "State") -> list[tuple[str, str]]:
    """`~`, `~/…`, `~user`, `~+`, `~-` at the start of an unquoted word (`chars`: its characters)."""
    if not chars or chars[0] != ("~", "lit"):
        return chars
    end = next((i for i, (c, _) in enumerate(chars) if c == "/"), len(chars))
    name = chars[1:end]
    if any(how != "lit" for _, how in name):
        return chars
    home = st.tilde("".join(c for c, _ in name))
    if home is None:
        return chars
    return [(c, "q") for c in home] + chars[end:]


def _finish(chars: list[tuple[str, str]]) -> Value:
    """The value of an expanded word: exact, or a glob classified by its folder."""
    text = "".join(c for c, _ in chars)
    first = next((i for i, (c, how) in enumerate(chars) if c in GLOB_CHARS and how != "q"), None)
    if first is None:
        return exact(text)
    cut = text.rfind("/", 0, first)
    folder = text[:cut] if cut > 0 else "/" if cut == 0 else "."
    rest = text[cut + 1:]
    return Value(folder, "contents" if WHOLE_PATTERN.fullmatch(rest) else "under")
