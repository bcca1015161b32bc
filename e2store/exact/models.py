"""The model calls: exact model counting (ganak), SAT enumeration (CaDiCaL) and MaxSAT
(RC2), each over a `Cnf` from `e2store.exact.encode`, each bounded in time (docs/exact.md).

Every call runs in a child process so a time limit is a real limit (the solvers cannot be
interrupted from Python): past it the child is killed and OutOfReachError says how far the
model got.  The solvers come from the `exact` extra (`pip install '.[exact]'`).
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from e2store.errors import ExactInputError, OutOfReachError
from e2store.exact.encode import Cnf

SAT_SOLVERS = ("cadical195", "glucose4", "minisat22")
DEFAULT_SAT = "cadical195"


@dataclass
class ModelResult:
    """What one model call found: a count, solutions (fillings), an optimum."""

    kind: str
    seconds: float
    count: int | None = None
    solutions: list[dict] = field(default_factory=list)
    optimum: int | None = None  # soft clauses satisfied (matched joins) at the optimum
    complete: bool = True  # False: stopped at a --limit of solutions
    first_seconds: float | None = None  # enumeration: when the first solution came


def _need(module: str):
    try:
        return __import__(module, fromlist=["_"])
    except ImportError:
        raise ExactInputError(f"the exact models need {module.split('.')[0]}: pip install "
                              f"'e2store[exact]' (or the project's test extra)") from None


def _count(cnf: Cnf) -> int:
    pyganak = _need("pyganak")
    c = pyganak.Counter(verbose=0, seed=0)
    c.new_vars(cnf.n_vars)
    c.add_clauses(cnf.clauses)
    c.set_sampling_set(cnf.place_vars)
    return int(c.count())


def _enumerate(cnf: Cnf, limit: int | None, solver: str, progress
               ) -> tuple[int, list, bool, float | None]:
    solvers = _need("pysat.solvers")
    found: list[dict] = []
    n = 0
    t0 = time.perf_counter()
    first = None
    with solvers.Solver(name=solver, bootstrap_with=cnf.clauses) as s:
        while s.solve():
            model = s.get_model()
            if first is None:
                first = time.perf_counter() - t0
            found.append({f"{x},{y}": v for (x, y), v in cnf.decode(model).items()})
            n += 1
            if progress is not None:
                progress(n)
            if limit is not None and n >= limit:
                return n, found, False, first
            s.add_clause(cnf.blocking(model))
    return n, found, True, first


def _optimum(cnf: Cnf) -> tuple[int, dict]:
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
        board = {f"{x},{y}": v for (x, y), v in cnf.decode(model).items()}
    return matched, board


def _child(out, kind: str, cnf: Cnf, args: tuple) -> None:
    try:
        t0 = time.perf_counter()
        if kind == "count":
            out.put(("ok", {"count": _count(cnf), "seconds": time.perf_counter() - t0}))
        elif kind == "enumerate":
            limit, solver = args
            last = [0.0]

            def progress(n: int) -> None:
                now = time.perf_counter()
                if now - last[0] > 1.0:
                    last[0] = now
                    out.put(("progress", n))

            n, found, complete, first = _enumerate(cnf, limit, solver, progress)
            out.put(("ok", {"count": n, "solutions": found, "complete": complete,
                            "first_seconds": first, "seconds": time.perf_counter() - t0}))
        else:
            matched, board = _optimum(cnf)
            out.put(("ok", {"optimum": matched, "solutions": [board],
                            "seconds": time.perf_counter() - t0}))
    except Exception as exc:  # reported to the parent, raised there
        out.put(("error", f"{type(exc).__name__}: {exc}"))


def run_model(kind: str, cnf: Cnf, *, seconds: float | None = None, limit: int | None = None,
              solver: str = DEFAULT_SAT,
              progress: Callable[[int], None] | None = None) -> ModelResult:
    """Run one model call ('count', 'enumerate' or 'optimum') on `cnf` in a child process;
    OutOfReachError past `seconds` (how many solutions were found by then, if any)."""
    if kind not in ("count", "enumerate", "optimum"):
        raise ExactInputError(f"unknown model call {kind!r}: count, enumerate or optimum")
    if solver not in SAT_SOLVERS:
        raise ExactInputError(f"unknown SAT solver {solver!r}: one of {', '.join(SAT_SOLVERS)}")
    _need({"count": "pyganak", "enumerate": "pysat.solvers",
           "optimum": "pysat.examples.rc2"}[kind])
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(target=_child, args=(out, kind, cnf, (limit, solver)), daemon=True)
    t0 = time.perf_counter()
    proc.start()
    seen = 0
    try:
        while True:
            left = None if seconds is None else seconds - (time.perf_counter() - t0)
            if left is not None and left <= 0:
                what = f"{seen} solutions found by then" if kind == "enumerate" else \
                    f"{cnf.n_vars:,} variables, {len(cnf.clauses):,} clauses"
                raise OutOfReachError(f"the {kind} model did not finish in {seconds:g} s "
                                      f"({what}; raise --seconds)")
            try:
                tag, value = out.get(timeout=min(left, 0.5) if left is not None else 0.5)
            except queue.Empty:
                if not proc.is_alive() and out.empty():
                    raise OutOfReachError(f"the {kind} model's process died (exit code "
                                          f"{proc.exitcode}): likely out of memory") from None
                continue
            if tag == "progress":
                seen = value
                if progress is not None:
                    progress(value)
            elif tag == "error":
                raise ExactInputError(f"the {kind} model failed: {value}")
            else:
                return ModelResult(kind=kind, **value)
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(timeout=5)
