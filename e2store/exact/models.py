"""The model calls: exact model counting (ganak), SAT enumeration (CaDiCaL) and MaxSAT
(RC2), each over a `Cnf` from `e2store.exact.encode`, each bounded in time (docs/exact.md).

Every call runs in a child process so a time limit is a real limit (the solvers cannot be
interrupted from Python): past it the child is killed and OutOfReachError says how far the
model got.  A call's formula may be built in the child too (a `Cnf` builder: the building
is then inside the limit, and a big formula is never copied between processes).  A
`Deadline` shares one limit between several calls (a command's `--seconds`), and
`run_child` bounds any other step the same way.  The solvers come from the `exact` extra
(`pip install '.[exact]'`).
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import pickle
import queue
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from e2store.errors import ChildFailedError, E2StoreError, ExactInputError, OutOfReachError
from e2store.exact.encode import Cnf
from e2store.processes import die_with_parent

SAT_SOLVERS = ("cadical195", "glucose4", "minisat22")
DEFAULT_SAT = "cadical195"


class Deadline:
    """One time limit over several steps (a command's `--seconds`, started when the
    command starts): each step gets what is left of it.  `hint`: what the message of a
    step past it says to do (a command names its option there)."""

    def __init__(self, seconds: float | None, hint: str = "raise the time limit") -> None:
        if seconds is not None and not (math.isfinite(seconds) and seconds > 0):
            raise ExactInputError(f"time limit {seconds!r}: expected a finite number of "
                                  f"seconds > 0")
        self.seconds = seconds
        self.hint = hint
        self.start = time.monotonic()

    def left(self) -> float | None:
        """Seconds left (0 when spent), or None without a limit."""
        if self.seconds is None:
            return None
        return max(0.0, self.seconds - (time.monotonic() - self.start))

    def late(self, what: str, done: str = "") -> OutOfReachError:
        """The error of `what` not finishing in the limit; `done`: how far it got."""
        return OutOfReachError(f"{what} did not finish in the {self.seconds:g} s time limit"
                               f" ({done + '; ' if done else ''}{self.hint})")


Limit = float | Deadline | None  # a time limit: seconds from now, a shared deadline, none


def as_deadline(limit: Limit) -> Deadline:
    """A `Deadline` for a `Limit` (seconds start now)."""
    return limit if isinstance(limit, Deadline) else Deadline(limit)


@dataclass
class ModelResult:
    """What one model call found: a count, solutions (fillings), an optimum."""

    kind: str
    seconds: float
    count: int | None = None
    cells: list[tuple[int, int]] = field(default_factory=list)  # the cells of `fills`
    fills: list[tuple[int, ...]] = field(default_factory=list)  # placements, per cell
    optimum: int | None = None  # soft clauses satisfied (matched joins) at the optimum
    complete: bool = True  # False: stopped at a --limit of solutions
    first_seconds: float | None = None  # enumeration: when the first solution came

    @property
    def solutions(self) -> list[dict]:
        """The fillings kept, each {"x,y": packed placement}."""
        return [{f"{x},{y}": v for (x, y), v in zip(self.cells, f, strict=True)}
                for f in self.fills]


def _need(module: str):
    try:
        return __import__(module, fromlist=["_"])
    except ImportError:
        raise ExactInputError(f"the exact models need {module.split('.')[0]}: pip install "
                              f"'e2store[exact]' (or the project's test extra)") from None


def require(kind: str) -> None:
    """Refuse at once (ExactInputError naming the extra) a model call whose solver is not
    installed: a command checks this before its other steps, not after them."""
    _need({"count": "pyganak", "enumerate": "pysat.solvers",
           "optimum": "pysat.examples.rc2"}[kind])


def _count(cnf: Cnf) -> int:
    pyganak = _need("pyganak")
    c = pyganak.Counter(verbose=0, seed=0)
    c.new_vars(cnf.n_vars)
    c.add_clauses(cnf.clauses)
    c.set_sampling_set(cnf.place_vars)
    return int(c.count())


def _fill(cnf: Cnf, model) -> tuple[int, ...]:
    """A model's filling as placements in `cnf.cells` order (compact: no dict per board)."""
    board = cnf.decode(model)
    return tuple(board[c] for c in cnf.cells)


def _enumerate(cnf: Cnf, limit: int | None, solver: str, keep: int | None, progress
               ) -> tuple[int, list, bool, float | None]:
    solvers = _need("pysat.solvers")
    found: list[tuple[int, ...]] = []
    n = 0
    t0 = time.perf_counter()
    first = None
    with solvers.Solver(name=solver, bootstrap_with=cnf.clauses) as s:
        while s.solve():
            model = s.get_model()
            if first is None:
                first = time.perf_counter() - t0
            if keep is None or len(found) < keep:
                found.append(_fill(cnf, model))
            n += 1
            if progress is not None:
                progress(n)
            if limit is not None and n >= limit:
                return n, found, False, first
            s.add_clause(cnf.blocking(model))
    return n, found, True, first


def _optimum(cnf: Cnf) -> tuple[int, tuple[int, ...]]:
    _need("pysat.examples.rc2")
    from pysat.examples.rc2 import RC2
    from pysat.formula import WCNF

    wcnf = WCNF()
    for c in cnf.clauses:
        wcnf.append(c)
    for lit in cnf.soft:
        wcnf.append([lit], weight=1)
    with RC2(wcnf) as rc2:
        model = rc2.compute()
        if model is None:
            raise ExactInputError("the board has no filling at all (not a MaxSAT question)")
        true = {lit for lit in model if lit > 0}
        matched = sum(1 for lit in cnf.soft if lit in true)
        fill = _fill(cnf, model)
    return matched, fill


def _model_call(kind: str, cnf: Cnf | Callable[[], Cnf], limit: int | None, solver: str,
                keep: int | None, emit: Callable[[Any], None]) -> dict:
    """One model call in the child: build the formula if given a builder (and say its size),
    then count, enumerate or optimise."""
    if not isinstance(cnf, Cnf):
        cnf = cnf()
        emit(("built", cnf.n_vars, len(cnf.clauses)))
    t0 = time.perf_counter()
    out: dict = {"cells": list(cnf.cells)}
    if kind == "count":
        out["count"] = _count(cnf)
    elif kind == "enumerate":
        last = [0.0]

        def progress(n: int) -> None:
            now = time.perf_counter()
            if now - last[0] > 1.0:
                last[0] = now
                emit(("found", n))

        n, found, complete, first = _enumerate(cnf, limit, solver, keep, progress)
        out.update(count=n, fills=found, complete=complete, first_seconds=first)
    else:
        matched, fill = _optimum(cnf)
        out.update(optimum=matched, fills=[fill])
    out["seconds"] = time.perf_counter() - t0
    return out


def _child(out, parent: int, fn: Callable, args: tuple) -> None:
    """A child process: run `fn(*args, emit)` and put ("ok", value) on `out`, progress as
    ("progress", value), an e2store error as ("raise", exc) (one that does not pickle as
    ("input", text) when it is a problem of the input, a ValueError), running out of
    memory as ("memory", None), any other error as ("error", text)."""
    die_with_parent(parent)  # a parent killed with SIGKILL takes its model call with it
    try:
        out.put(("ok", fn(*args, lambda value: out.put(("progress", value)))))
    except E2StoreError as exc:
        try:
            pickle.loads(pickle.dumps(exc))
            out.put(("raise", exc))
        except Exception:  # an error class that does not pickle: its text
            out.put(("input" if isinstance(exc, ValueError) else "error", str(exc)))
    except MemoryError:
        out.put(("memory", None))
    except Exception as exc:  # reported to the parent, raised there
        out.put(("error", f"{type(exc).__name__}: {exc}"))


def run_child(fn: Callable, args: tuple, *, seconds: Limit, what: str,
              progress: Callable[[Any], None] | None = None,
              done: Callable[[], str] | None = None) -> Any:
    """`fn(*args, emit)` in a child process, killed past the limit `seconds`: its value, or
    OutOfReachError saying `what` did not finish (and `done()`, how far it got).  `fn`
    (a module-level function, its arguments picklable) may call `emit(value)` to report
    progress, which `progress(value)` sees here.  An e2store error in the child is raised
    here as it was; a child that dies (killed, crashed) or fails with another error raises
    ChildFailedError naming `what` (an internal failure, not a problem of the input)."""
    deadline = as_deadline(seconds)
    left = deadline.left()
    if left is not None and left <= 0:
        raise deadline.late(what, "not started")
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(target=_child, args=(out, os.getpid(), fn, args), daemon=True)
    proc.start()
    try:
        while True:
            left = deadline.left()
            if left is not None and left <= 0:
                raise deadline.late(what, done() if done is not None else "")
            try:
                tag, value = out.get(timeout=min(left, 0.5) if left is not None else 0.5)
            except queue.Empty:
                if not proc.is_alive() and out.empty():
                    raise ChildFailedError(f"{what}: its process died "
                                           f"({_death(proc.exitcode)})") from None
                continue
            if tag == "progress":
                if progress is not None:
                    progress(value)
            elif tag == "raise":
                raise value
            elif tag == "input":
                raise ExactInputError(f"{what} failed: {value}")
            elif tag == "error":
                raise ChildFailedError(f"{what} failed: {value}")
            elif tag == "memory":
                raise OutOfReachError(f"{what} ran out of memory")
            else:
                return value
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(timeout=5)
        out.close()
        out.cancel_join_thread()


def _death(exitcode: int | None) -> str:
    """How a child process that said nothing ended: the signal that killed it (SIGKILL:
    likely the kernel's out-of-memory killer), or its exit code."""
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"killed by {name}" + (": out of memory, or killed from outside"
                                      if -exitcode == signal.SIGKILL else "")
    return f"exit code {exitcode}"


def run_model(kind: str, cnf: Cnf | Callable[[], Cnf], *, seconds: Limit = None,
              limit: int | None = None, solver: str = DEFAULT_SAT, keep: int | None = None,
              progress: Callable[[int], None] | None = None) -> ModelResult:
    """Run one model call ('count', 'enumerate' or 'optimum') on `cnf` in a child process;
    OutOfReachError past `seconds` (a number, or a shared `Deadline`), saying how many
    solutions were found by then, if any.  `cnf` may be a picklable builder (a
    `functools.partial` of `encode` or `board_cnf`), run in the child inside the limit.
    `limit`: stop enumerating after that many solutions; `keep`: keep at most that many
    fillings (default all; the count is always whole)."""
    if kind not in ("count", "enumerate", "optimum"):
        raise ExactInputError(f"unknown model call {kind!r}: count, enumerate or optimum")
    if solver not in SAT_SOLVERS:
        raise ExactInputError(f"unknown SAT solver {solver!r}: one of {', '.join(SAT_SOLVERS)}")
    require(kind)
    size = ((f"{cnf.n_vars:,} variables, {len(cnf.clauses):,} clauses") if isinstance(cnf, Cnf)
            else "the formula still being built")
    seen = [0]

    def on_progress(value) -> None:
        nonlocal size
        if value[0] == "built":
            size = f"{value[1]:,} variables, {value[2]:,} clauses"
        else:
            seen[0] = value[1]
            if progress is not None:
                progress(value[1])

    def done() -> str:
        return f"{seen[0]} solutions found by then" if kind == "enumerate" else size

    value = run_child(_model_call, (kind, cnf, limit, solver, keep), seconds=seconds,
                      what=f"the {kind} model", progress=on_progress, done=done)
    return ModelResult(kind=kind, **value)
