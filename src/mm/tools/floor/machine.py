"""The safety floor's rules on the machine itself (docs/safety.md §Rules): formatting, wiping or
repartitioning a disk, shutting down or restarting, killing every process, fork bombs.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mm.protected_paths import absolute, resolve
from mm.tools.floor.values import Reader, Refused, Value, exact
from mm.tools.floor.writes import EXEMPT_SINKS, check_write, is_device

if TYPE_CHECKING:
    from tree_sitter import Node

    from mm.tools.floor.state import State

DISK = "{program} would format, wipe or repartition {target}"
DISK_UNKNOWN = "{program} would format, wipe or repartition a device the floor cannot know before it runs"
POWER = "{program} would shut down or restart the machine"
KILL_ALL = "{program} would kill {target}"
FORK_BOMB = "{what} starts processes without end (a fork bomb)"
DISK_TOOLS = frozenset({"mkfs", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "mkexfatfs", "mkhfs", "wipefs", "blkdiscard",
                        "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "cgdisk", "parted", "badblocks", "zpool"})
DISK_READ_ONLY = frozenset({"-l", "--list", "-p", "--print", "-s", "--show", "print", "-V", "--version", "-h", "--help",
                            "--no-act", "list", "status", "iostat"})
POWER_TOOLS = frozenset({"shutdown", "reboot", "halt", "poweroff", "kexec"})
POWER_VERBS = frozenset({"poweroff", "reboot", "halt", "kexec", "soft-reboot", "emergency", "rescue",
                         "default", "suspend-then-hibernate"})
POWER_TARGETS = frozenset({"poweroff.target", "reboot.target", "halt.target", "rescue.target", "emergency.target",
                           "kexec.target"})
# Every operand is written: (program, how many leading operands are not paths: chmod's mode…).
INTERPRETERS = re.compile(r"(python[0-9.]*|perl|ruby|node|nodejs|php|lua|deno|bun)")
FORK_LOOP = re.compile(r"\bfork\b.*\b(while|for|loop|each)\b|\b(while|for|loop|until)\b.*\bfork\b|fork\s*while\s*fork",
                       re.S)


def disk(program: str, args: list[Value], st: "State") -> None:
    texts = [a.exact for a in args]
    if any(t in DISK_READ_ONLY for t in texts if t is not None) and program not in ("wipefs", "blkdiscard"):
        return
    if program == "cryptsetup" and not any(t in ("luksFormat", "erase", "luksErase", "reencrypt") for t in texts):
        return
    if program == "badblocks" and not any(t is not None and re.fullmatch(r"-[a-zA-Z]*[wn][a-zA-Z]*", t) for t in texts):
        return
    for arg in args:
        if arg.exact is not None and arg.exact.startswith("-"):
            continue
        if arg.exact is None and program != "shred":
            raise Refused("disk", DISK_UNKNOWN.format(program=program))
        if arg.exact is None:
            continue
        if _names_device(arg.exact, st):
            raise Refused("disk", DISK.format(program=program, target=arg.exact))


def _names_device(text: str, st: "State") -> bool:
    for cwd in st.places:
        path = absolute(text, cwd or "/")
        if path.startswith("/dev/") or is_device(resolve(path, st.links)) or resolve(path, st.links).startswith("/dev/"):
            return True
    return False


def dd(reader: "Reader", args: list[Value], st: "State") -> None:
    for arg in args:
        text = arg.exact
        if text is not None and text.startswith("of="):
            target = text[3:]
            if _names_device(target, st) and absolute(target, "/") not in EXEMPT_SINKS:
                raise Refused("disk", DISK.format(program="dd", target=target))
            check_write(reader, exact(target), st, exempt=True, program="dd")


def power(program: str, args: list[Value]) -> None:
    texts = [a.exact for a in args]
    if program in POWER_TOOLS or program in ("init", "telinit") and texts[:1] in (["0"], ["6"]):
        if program == "shutdown" and "-c" in texts:
            return
        raise Refused("power", POWER.format(program=program))
    if program in ("systemctl", "loginctl") and any(t in POWER_VERBS or t in POWER_TARGETS for t in texts):
        raise Refused("power", POWER.format(program=program))


def kill(program: str, args: list[Value]) -> None:
    """kill of pid -1 (every process the user may signal: all of them, as root) or 1 (init)."""
    if program == "killall5":
        raise Refused("kill_all", KILL_ALL.format(program=program, target="every process"))
    if program != "kill":
        return
    texts = [a.exact for a in args]
    pids: list[str | None] = []
    signal_given, i = False, 0
    while i < len(texts):
        text = texts[i]
        if text == "--":
            pids += texts[i + 1:]
            break
        if text in ("-l", "-L", "--list", "--table"):
            return
        if text in ("-s", "-n", "--signal"):
            signal_given, i = True, i + 2
            continue
        if text is not None and text.startswith("-") and not signal_given and not pids:
            signal_given, i = True, i + 1
            continue
        pids.append(text)
        i += 1
    if "1" in pids or "-1" in pids:
        raise Refused("kill_all", KILL_ALL.format(program=program, target="every process (pid -1) or init (pid 1)"))


def interpreter(program: str, args: list[Value]) -> None:
    for i, arg in enumerate(args):
        if arg.exact in ("-c", "-e", "-E", "-r", "--eval") and i + 1 < len(args) and args[i + 1].exact:
            if FORK_LOOP.search(args[i + 1].exact or ""):
                raise Refused("fork_bomb", FORK_BOMB.format(what=f"{program} {arg.exact} …"))


def check_fork_bomb(reader: "Reader", name: str, body: "Node") -> None:
    """A function that calls itself in a pipeline or in the background: `:(){ :|:& };:`."""
    if not name:
        return
    for node in _walk(body):
        if node.type == "pipeline" and sum(_calls(reader, part, name) for part in node.named_children) >= 1:
            raise Refused("fork_bomb", FORK_BOMB.format(what=f"the function {name}"))
        if node.type == "&" and node.prev_sibling is not None and _calls(reader, node.prev_sibling, name):
            raise Refused("fork_bomb", FORK_BOMB.format(what=f"the function {name}"))


def check_loop_bomb(reader: "Reader", loop: "Node", body: "Node | None") -> None:
    """A loop without end that starts a process in the background at each turn."""
    if body is None:
        return
    condition = loop.child_by_field_name("condition")
    text = reader.expander.text(condition).strip().rstrip(";").strip() if condition is not None else ""
    if loop.type == "while_statement" and text not in ("true", ":", "[ 1 ]", "((1))") or \
            loop.type == "until_statement" and text != "false" or \
            loop.type == "c_style_for_statement" and ";;" not in reader.expander.text(loop).replace(" ", ""):
        return
    if any(child.type == "&" for child in body.children):
        raise Refused("fork_bomb", FORK_BOMB.format(what="a loop without end with a job in the background"))


def _walk(node: "Node"):
    yield node
    for child in node.children:
        yield from _walk(child)


def _calls(reader: "Reader", node: "Node", name: str) -> bool:
    for inner in _walk(node):
        if inner.type == "command_name" and reader.expander.text(inner).strip() == name:
            return True
    return False
