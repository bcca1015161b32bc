"""Child processes that end with their parent.

A pool worker of `solve --workers N` (spawned by `multiprocessing`) outlives a parent killed
by SIGKILL: nothing tells it.  `die_with_parent()`, run first in each worker, asks Linux to
send the worker SIGKILL when its parent thread exits (`prctl(PR_SET_PDEATHSIG)`), then
checks the parent did not die before that; elsewhere it does nothing (the pool's own
shutdown still ends the workers of a parent that exits normally).

A Ctrl-C in a terminal goes to the whole process group: `quiet_spawn_context()` starts
processes with SIGINT blocked, for pools whose parent stops the work itself.

A command run by a thread of a long-lived process (a Snakemake job's `subprocess`):
`run_watched` has it end with that thread (`parent_death_signal`) or when a process it
watches ends (`ancestor_running`, `process_start`: a pid and its start name one process).
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing.context
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int | None = None) -> bool:
    """Have this process killed when its parent dies (Linux); `parent`, the pid it was
    started by, is checked after (a parent dead already means exit now).  Returns whether
    the request was made."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if parent is not None and os.getppid() != parent:
        os._exit(1)  # the parent died before the request: its run is over
    return True


@contextlib.contextmanager
def sigint_blocked() -> Iterator[None]:
    """While the block runs, SIGINT is blocked in the calling thread (held pending, then
    delivered at the end; a process started here inherits the block, exec or not: the way
    `multiprocessing.resource_tracker` starts its process).  Elsewhere than POSIX it does
    nothing."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class _QuietSpawnProcess(multiprocessing.context.SpawnProcess):
    """A spawned process born with SIGINT blocked (`sigint_blocked`)."""

    def start(self) -> None:
        with sigint_blocked():
            super().start()


class _QuietSpawnContext(multiprocessing.context.SpawnContext):
    Process = _QuietSpawnProcess


def quiet_spawn_context() -> multiprocessing.context.SpawnContext:
    """A "spawn" context whose processes start with SIGINT blocked, for pools whose parent
    stops them its own way (an event): a Ctrl-C in a terminal goes to the whole process
    group, and a worker still importing or unpickling its work would print a
    KeyboardInterrupt traceback and break the pool."""
    return _QuietSpawnContext()


# -- a command that ends with the thread running it, or with a process it watches --------


def parent_death_signal(sig: int = signal.SIGTERM) -> Callable[[], None] | None:
    """A `preexec_fn` for `subprocess.Popen` (Linux): the child asks for `sig` when the
    thread that started it exits (`prctl(PR_SET_PDEATHSIG)`, kept across `exec`: a parent
    killed by SIGKILL ends it too), then exits at once if that parent died before.  None
    elsewhere.  The function only calls `prctl` and `getppid` (run between fork and exec
    of a process with threads, it takes no lock)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent, arg = os.getpid(), ctypes.c_ulong(int(sig))
    zero = ctypes.c_ulong(0)

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, arg, zero, zero, zero)
        if os.getppid() != parent:
            os._exit(1)  # the parent died before the request: nothing to run for

    return preexec


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, start in clock ticks after boot) of process `pid` from Linux's
    /proc/PID/stat; None when it is gone, or elsewhere than Linux."""
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as fh:
            raw = fh.read()
    except (OSError, ValueError):
        return None
    fields = raw[raw.rfind(b")") + 2:].split()  # after the command's name, which may hold ")"
    try:
        return fields[0].decode(), int(fields[1]), int(fields[19])
    except (IndexError, ValueError):
        return None


def process_start(pid: int) -> int | None:
    """When process `pid` started (Linux: clock ticks after boot), None when it is gone
    (a zombie too) or unknown: with its pid it names one process, as a pid is reused."""
    st = _stat(pid)
    return None if st is None or st[0] in ("Z", "X") else st[2]


def still_running(pid: int, start: int) -> bool:
    """Whether the process `pid` that started at `start` (`process_start`) runs."""
    return process_start(pid) == start


def ancestor_running(exe: str | None = None) -> tuple[int, int] | None:
    """The nearest ancestor of this process whose executable is `exe` (default this
    process's own), as (pid, start: `process_start`); the processes between (a shell) are
    passed over.  None when there is none or it cannot be told (not Linux, another user's
    process on the way)."""
    try:
        exe = os.path.realpath(exe or os.readlink("/proc/self/exe"))
    except OSError:
        return None
    pid = os.getppid()
    while pid > 1:
        try:
            here = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            return None
        st = _stat(pid)
        if st is None:
            return None
        if os.path.realpath(here) == exe:
            return pid, st[2]
        pid = st[1]
    return None


def descendants(pid: int | None = None) -> list[int]:
    """The processes `pid` (default this one) started, and those they started, at any
    depth (Linux's /proc; [] elsewhere)."""
    root = os.getpid() if pid is None else pid
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    children: dict[int, list[int]] = {}
    for name in names:
        if name.isdigit() and (st := _stat(int(name))) is not None:
            children.setdefault(st[1], []).append(int(name))
    out: list[int] = []
    todo = list(children.get(root, []))
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def process_argv(pid: int) -> list[str] | None:
    """The command line of process `pid` (Linux's /proc/PID/cmdline), None when gone or
    unknown."""
    try:
        with open(f"/proc/{int(pid)}/cmdline", "rb") as fh:
            raw = fh.read()
    except (OSError, ValueError):
        return None
    raw = raw.rstrip(b"\0")
    return [a.decode(errors="replace") for a in raw.split(b"\0")] if raw else None


def run_watched(cmd: Sequence[str], *, stderr=None, watch: Callable[[], bool] | None = None,
                every: Callable[[], None] | None = None, stop: int = signal.SIGTERM,
                grace: float = 30.0, poll: float = 1.0) -> tuple[int, str, bool]:
    """Run `cmd` to its end (its stdout read, its stderr to `stderr`) so that it never
    outlives its caller: it gets `stop` when the thread running this exits
    (`parent_death_signal`: a SIGKILL of this process too) or raises, and when `watch()`
    (asked every `poll` seconds, `every()` called as often) turns false; SIGKILL when it
    still runs `grace` seconds later.  Returns (exit code: -N for a signal N, stdout,
    whether `watch` stopped it)."""
    import subprocess
    import time

    p = subprocess.Popen(list(cmd), stdout=subprocess.PIPE, stderr=stderr, text=True,
                         preexec_fn=parent_death_signal(stop))
    stopped, until = False, None
    try:
        while True:
            try:
                out, _ = p.communicate(timeout=poll)
                return p.returncode, out or "", stopped
            except subprocess.TimeoutExpired:
                pass
            if every is not None:
                every()
            if until is None and watch is not None and not watch():
                stopped, until = True, time.monotonic() + grace
                p.send_signal(stop)
            elif until is not None and time.monotonic() >= until:
                p.kill()
    finally:
        if p.poll() is None:  # this thread raised: the command ends with it
            p.send_signal(stop)
            try:
                p.wait(grace)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
