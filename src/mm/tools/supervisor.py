"""mm's command supervisor: the process that starts every command and kills what is left of them.

Run by mm (mm.tools.supervised) as `python -I -S supervisor.py FD`, one per mm process, started
at the first command; FD is its end of a stream socket to mm. Standard library only: it imports
nothing of mm, so it starts in a few tens of milliseconds.

Why a process of its own (docs/tools-bash.md §No command outlives mm): a SIGKILLed mm runs no
code, so the one that kills the commands must outlive it. The supervisor

- is a child subreaper (Linux `PR_SET_CHILD_SUBREAPER`): a job that double-forks or leaves its
  process group or session (`nohup … &`, `setsid`, `set -m`, its own `setpgid`) is re-parented
  to it instead of to init, so every process a command started stays in its process tree;
- starts each command in a new session, with `MM_COMMAND_ID=<supervisor pid>-<n>` in its
  environment, which every descendant inherits unless it clears its environment;
- on `kill` (timeout, cancellation, a flood of output) kills the command's session, its process
  tree and every process carrying its tag, stopping them first so none can fork away;
- when mm is gone (end of file on the socket: the kernel closes it when mm dies, however it
  dies) kills its whole tree and everything tagged by it, then exits;
- keeps the output file of a command whose call has returned while a job still holds it, and
  empties it every 0.25 s (the file is in append mode), so a detached job cannot fill the disk.

Protocol, one JSON object per line. mm → supervisor: `{"op": "run", "id", "argv", "cwd", "env",
"streams"}` with descriptors passed alongside (SCM_RIGHTS): `"streams": 1`, the output file's, for
stdout and stderr both; `2`, stdout's then stderr's (execute_bash keeps them apart); `3`, the
command's stdin, stdout and stderr (pipes whose other ends mm holds: a language server,
docs/lsp.md), closed here once the command started; `{"op": "kill", "id"}`;
`{"op": "done", "id"}` (the call has returned: the output file is the supervisor's).
Supervisor → mm: `{"op": "failed", "id", "step": "cwd" | "exec" | "argument", "errno"}`, or,
once the command's first process ended, `{"op": "exit", "id", "code"}` (negative: killed by that
signal).
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import time

TAG = "MM_COMMAND_ID"
PR_SET_CHILD_SUBREAPER = 36
LINGER_EVERY = 0.25  # seconds between two emptyings of an output file a job still holds
HOLDERS_EVERY = 2.0  # seconds between two looks for the processes that hold such a file
PARENT_EVERY = 1.0  # seconds between two looks at whether mm is still the parent
KILL_ROUNDS = 100  # stop-and-look rounds before the final SIGKILL (a fork bomb is outrun)
HAS_PROC = os.path.isdir("/proc/self/fd")
DEFAULT_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD)


def make_subreaper() -> bool:
    """Become a child subreaper (Linux); returns whether it worked."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


class Snapshot:
    """The processes of the system at one moment: parent, session and environment tag of each."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}
        self.session: dict[int, int] = {}
        self._tags: dict[int, str | None] = {}
        if not HAS_PROC:
            return
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            pid = int(name)
            self.parent[pid] = int(fields[1])
            self.session[pid] = int(fields[3])

    def tag(self, pid: int) -> str | None:
        """The value of MM_COMMAND_ID in the environment `pid` was started with (None: none)."""
        if pid not in self._tags:
            self._tags[pid] = _read_tag(pid)
        return self._tags[pid]

    def descendants(self, roots: set[int]) -> set[int]:
        """Every process under `roots` (the roots themselves excluded)."""
        children: dict[int, list[int]] = {}
        for pid, ppid in self.parent.items():
            children.setdefault(ppid, []).append(pid)
        found: set[int] = set()
        todo = list(roots)
        while todo:
            for child in children.get(todo.pop(), []):
                if child not in found:
                    found.add(child)
                    todo.append(child)
        return found


def _read_tag(pid: int) -> str | None:
    key = TAG.encode() + b"="
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            environ = f.read()
    except OSError:
        return None
    for entry in environ.split(b"\0"):
        if entry.startswith(key):
            return entry[len(key):].decode("ascii", "replace")
    return None


def terminate(select_pids) -> None:
    """Stop every process `select_pids(snapshot)` names, look again until no new one appears
    (a stopped process cannot fork), then SIGKILL them all."""
    me = os.getpid()
    stopped: set[int] = set()
    for _ in range(KILL_ROUNDS):
        found = set(select_pids(Snapshot())) - stopped - {me}
        if not found:
            break
        for pid in found:
            _signal(pid, signal.SIGSTOP)
        stopped |= found
    for pid in stopped:
        _signal(pid, signal.SIGKILL)


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except OSError:  # gone already, or not ours to kill (a setuid program)
        pass


class Supervisor:
    """The supervisor's state: the commands running, the output files kept after their call."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.parent = os.getppid()
        self.prefix = f"{os.getpid()}-"
        self.leaders: dict[int, int] = {}  # pid → command id, while the command's leader runs
        self.started: dict[int, int] = {}  # command id → its leader's pid (= its session), until done
        self.outputs: dict[int, list[int]] = {}  # command id → its output file descriptors, until done
        self.lingering: set[int] = set()  # output files a job still holds after the call returned
        self.buffer = b""
        self.fds: list[int] = []  # descriptors received, in order: one per run request

    # -- messages
    def send(self, message: dict) -> None:
        try:
            self.sock.sendall(json.dumps(message).encode() + b"\n")
        except OSError:  # mm is gone: the main loop sees the end of file
            pass

    def receive(self) -> bool:
        """Read what mm sent and handle each whole message; False at end of file."""
        try:
            data, fds, _, _ = socket.recv_fds(self.sock, 1 << 16, 16)
        except OSError:
            return False
        for fd in fds:
            os.set_inheritable(fd, False)  # never passed on to another command
        self.fds.extend(fds)
        if not data:
            return False
        self.buffer += data
        *lines, self.buffer = self.buffer.split(b"\n")
        for line in lines:
            self.handle(json.loads(line))
        return True

    def handle(self, message: dict) -> None:
        op, cid = message.get("op"), message.get("id")
        if op == "run":
            count = message.get("streams") if message.get("streams") in (1, 2, 3) else 1
            fds, self.fds = self.fds[:count], self.fds[count:]
            self.run(cid, message, fds)
        elif op == "kill":
            self.kill(cid)
        elif op == "done":
            self.done(cid)

    # -- commands
    def run(self, cid: int, message: dict, fds: list[int]) -> None:
        """Start one command in a new session; answer `failed` when it cannot be. `fds`: its
        output file, its stdout and stderr files, or its stdin, stdout and stderr pipes (closed
        here at once: mm holds their other ends)."""
        env = dict(message["env"])
        env[TAG] = f"{self.prefix}{cid}"
        try:
            if len(fds) == 3:
                pid = spawn(message["argv"], message["cwd"], env, fds[1], fds[2], stdin=fds[0])
            else:
                pid = spawn(message["argv"], message["cwd"], env, fds[0], fds[-1])
        except SpawnError as err:
            self.send({"op": "failed", "id": cid, "step": err.step, "errno": err.errno})
            pid = None
        if pid is None or len(fds) == 3:
            for fd in fds:
                os.close(fd)
            if pid is None:
                return
        else:
            self.outputs[cid] = fds
        self.leaders[pid] = cid
        self.started[cid] = pid

    def kill(self, cid: int) -> None:
        """Kill the command `cid`: its session, its tree, every process with its tag.

        A session id is the pid of its first leader, which the kernel does not give to another
        process while the session has members; it is matched in the supervisor's tree only."""
        leader = self.started.get(cid)
        if leader is None:
            return
        tag = f"{self.prefix}{cid}"

        def select_pids(snap: Snapshot) -> set[int]:
            ours = snap.descendants({os.getpid()})
            found = {pid for pid in ours if snap.session.get(pid) == leader or pid == leader}
            found |= {pid for pid in snap.parent if snap.tag(pid) == tag}
            return found | snap.descendants(found)

        if leader in self.leaders:  # not reaped yet: the pid is still the command's
            _killpg(leader)
        if HAS_PROC:
            terminate(select_pids)

    def done(self, cid: int) -> None:
        """The call has returned: keep its output file while a job holds it, else close it."""
        self.started.pop(cid, None)
        fds = self.outputs.pop(cid, None)
        if fds is None:
            return
        held = self.holders(set(fds)) if HAS_PROC and self.reap() else set()
        for fd in fds:
            if fd in held:
                self.lingering.add(fd)
            else:
                os.close(fd)

    def reap(self) -> bool:
        """Collect every child that ended; report the commands' leaders to mm. Returns whether
        a child is left (with none, no process of the tree is left either)."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return False
            if pid == 0:
                return True
            cid = self.leaders.pop(pid, None)
            if cid is not None:
                self.send({"op": "exit", "id": cid, "code": os.waitstatus_to_exitcode(status)})

    # -- output files kept after their call
    def empty_lingering(self) -> None:
        for fd in self.lingering:
            try:
                if os.fstat(fd).st_size:
                    os.ftruncate(fd, 0)
            except OSError:
                pass

    def holders(self, fds: set[int]) -> set[int]:
        """Which of the files open as `fds` a process of the tree holds."""
        wanted = {}
        for fd in fds:
            st = os.fstat(fd)
            wanted[(st.st_dev, st.st_ino)] = fd
        held: set[int] = set()
        me = os.getpid()
        for pid in Snapshot().descendants({me}):
            try:
                names = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for name in names:
                try:
                    st = os.stat(f"/proc/{pid}/fd/{name}")
                except OSError:
                    continue
                fd = wanted.get((st.st_dev, st.st_ino))
                if fd is not None:
                    held.add(fd)
        return held

    def drop_unheld(self) -> None:
        held = self.holders(set(self.lingering))
        for fd in self.lingering - held:
            os.close(fd)
            self.lingering.discard(fd)

    # -- the end
    def shutdown(self) -> None:
        """mm is gone: kill every process of the tree and every one tagged by this supervisor."""
        me = os.getpid()
        for leader in self.leaders:  # not reaped yet: their pids are still theirs
            _killpg(leader)

        def select_pids(snap: Snapshot) -> set[int]:
            ours = snap.descendants({me})
            return ours | {pid for pid in snap.parent if (snap.tag(pid) or "").startswith(self.prefix)}

        if HAS_PROC:
            terminate(select_pids)
        self.reap()


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass


class SpawnError(Exception):
    """A command could not be started: at which step ("cwd", "argument", "exec"), with which errno."""

    def __init__(self, step: str, errno: int) -> None:
        super().__init__(step, errno)
        self.step, self.errno = step, errno


def spawn(argv: list[str], cwd: str, env: dict, out: int, err: int, stdin: int | None = None) -> int:
    """Start `argv` in `cwd` (posix_spawn: no copy of this process), the program looked up in
    `env`'s PATH: a new session, stdin from `stdin` (default /dev/null), stdout to `out` and
    stderr to `err` (the same descriptor, or another), every signal the supervisor changed back to
    its default. Returns the pid; raises SpawnError."""
    first = (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0) if stdin is None else (os.POSIX_SPAWN_DUP2, stdin, 0)
    streams = [first, (os.POSIX_SPAWN_DUP2, out, 1), (os.POSIX_SPAWN_DUP2, err, 2)]
    try:
        os.chdir(cwd)  # posix_spawn has no working-directory action: the supervisor goes there a moment
    except OSError as err:
        raise SpawnError("cwd", err.errno or 0) from None
    if "PATH" in env:  # posix_spawnp looks the program up in this process's PATH
        os.environ["PATH"] = env["PATH"]
    else:
        os.environ.pop("PATH", None)
    try:
        return os.posix_spawnp(argv[0], argv, env, setsid=True, setsigdef=DEFAULT_SIGNALS, file_actions=streams)
    except OSError as err:
        raise SpawnError("exec", err.errno or 0) from None
    except (ValueError, TypeError, IndexError):  # a NUL byte, a lone surrogate, no program
        raise SpawnError("argument", 0) from None
    finally:
        os.chdir("/")


def main(argv: list[str]) -> int:
    sock = socket.socket(fileno=int(argv[0]))
    sock.set_inheritable(False)  # the commands must not hold it: its end of file is the supervisor's end
    sock.setblocking(True)
    make_subreaper()
    os.environ.pop(TAG, None)
    sup = Supervisor(sock)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    stop = []
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    signal.signal(signal.SIGHUP, lambda *_: stop.append(True))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is mm's to handle
    next_holders = next_parent = time.monotonic()
    while not stop:
        wait = LINGER_EVERY if sup.lingering else PARENT_EVERY
        ready, _, _ = select.select([sock, wake_r], [], [], wait)
        if wake_r in ready:
            os.read(wake_r, 4096)
        sup.reap()
        if sock in ready and not sup.receive():
            break
        now = time.monotonic()
        if sup.lingering:
            sup.empty_lingering()
            if now >= next_holders:
                sup.drop_unheld()
                next_holders = now + HOLDERS_EVERY
        if now >= next_parent:
            if os.getppid() != sup.parent:  # mm is gone even if the socket was passed on
                break
            next_parent = now + PARENT_EVERY
    sup.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
