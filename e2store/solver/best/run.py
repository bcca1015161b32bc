"""A whole best-score run: restarts of `BestSearch` over one or more processes, until a
node or time limit, a perfect board, or Ctrl-C (at any point of the run: the restarts
that ended kept); each restart's best board kept (`e2store best` without its
boards file, docs/solver.md *Best score*).

Restart k of a run with seed S draws its tie-breaks from (S, k) and runs at most
`restart_nodes` nodes, so a run is reproducible restart by restart whatever the number of
workers (a time limit only decides how many restarts there are, and where the last ones
stop).  Workers are processes (spawn); each builds the plan once.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from e2store.boards.table import Boards, make_boards
from e2store.errors import ChildFailedError, SolverError
from e2store.instance.model import Instance
from e2store.processes import die_with_parent, quiet_spawn_context

from .plan import BestPlan, best_plan
from .schedules import (
    DEFAULT_BREAKS,
    DEFAULT_ORDER,
    DEFAULT_QUOTA,
    DEFAULT_RESTART_NODES,
    DEFAULT_SCAN,
    DEFAULT_SEED,
)
from .search import BestSearch, RestartResult

_WORKER: dict = {}


@dataclass
class BestRun:
    """What a run did: its restarts' results (in the order they ended), nodes, seconds and
    how it ended ("nodes", "time", "perfect", "exhausted", "interrupted")."""

    instance: str
    scan: str
    breaks: tuple[int, ...]
    quota: tuple[int, ...]
    seed: int
    restart_nodes: int
    workers: int
    results: list[RestartResult] = field(default_factory=list)
    nodes: int = 0
    seconds: float = 0.0
    ended: str = "nodes"

    @property
    def best(self) -> RestartResult | None:
        """The deepest board, then the highest score, then the earliest restart."""
        if not self.results:
            return None
        return max(self.results, key=lambda r: (r.depth, r.score, -r.restart))

    @property
    def nodes_per_second(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0

    def depth_counts(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for r in self.results:
            out[r.depth] = out.get(r.depth, 0) + 1
        return dict(sorted(out.items(), reverse=True))

    def boards(self, n_cells: int, joins: int) -> Boards:
        """The restarts' best boards as boards-file rows (source "best")."""
        return make_boards(n_cells, [r.board for r in self.results],
                           [restart_row(r, joins) for r in self.results])

    def to_dict(self) -> dict:
        b = self.best
        return {"instance": self.instance, "scan": self.scan, "breaks": list(self.breaks),
                "quota": list(self.quota),
                "seed": self.seed, "restart_nodes": self.restart_nodes,
                "workers": self.workers, "restarts": len(self.results), "nodes": self.nodes,
                "seconds": round(self.seconds, 3),
                "nodes_per_second": round(self.nodes_per_second, 1), "ended": self.ended,
                "depths": {str(k): v for k, v in self.depth_counts().items()},
                "best": None if b is None else {
                    "depth": b.depth, "score": b.score, "mismatches": b.mismatches,
                    "seed": b.seed, "restart": b.restart, "nodes": b.nodes,
                    "board": b.board.tolist()}}


def restart_row(r: RestartResult, joins: int, source: str = "best", **over) -> dict:
    """A boards-file row of a restart's best board, found now (`over` replaces fields: a
    filled board's score, holes, source; the URL is made as the row is written)."""
    return {"depth": r.depth, "score": r.score, "joins": joins, "mismatches": r.mismatches,
            "holes": int((r.board < 0).sum()), "seed": r.seed, "restart": r.restart,
            "nodes": r.nodes, "seconds": round(r.seconds, 6), "source": source,
            "found": round(time.time(), 3), "url": "", **over}


def _init(plan: BestPlan, kernel: str, stop, parent: int, counts) -> None:
    die_with_parent(parent)  # a parent killed by SIGKILL takes its workers with it
    # born with SIGINT blocked (`quiet_spawn_context`), now deaf to it: the parent stops
    # the run (`stop`), a Ctrl-C sent to the whole process group prints nothing here
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER.update(search=BestSearch(plan, kernel), stop=stop, counts=counts)
    _WORKER["search"].run(0, 0, 1)  # compile (or load) the kernel before any work


def _restart(seed: int, restart: int, budget: int, deadline: float | None,
             slot: int) -> RestartResult:
    """Restart `restart` in a worker, its nodes added to `counts[slot]` slice by slice (the
    parent's live line counts the restarts in flight: `_Progress`)."""
    stop, counts = _WORKER["stop"], _WORKER["counts"]
    left = None if deadline is None else time.monotonic() + (deadline - time.time())

    def tick(nodes: int) -> None:
        counts[slot] += nodes  # one writer per slot at a time: the restart holding it

    return _WORKER["search"].run(seed, restart, budget, deadline=left, stop=stop.is_set,
                                 tick=tick)


class _Progress:
    """The nodes the workers ran so far, restarts in flight included: one shared int64
    per slot (a restart in flight holds one; `_restart` adds each slice's nodes), summed
    by the parent, which passes what is new to `tick`."""

    def __init__(self, ctx, workers: int, tick: Callable[[int], None] | None) -> None:
        self.counts = ctx.Array("q", workers, lock=False)  # aligned int64s: read whole
        self.held: dict = {}  # future -> its slot
        self.tick, self.told = tick, 0

    def slot(self) -> int:
        """A slot no restart in flight holds."""
        return min(set(range(len(self.counts))) - set(self.held.values()))

    def update(self) -> None:
        now = sum(self.counts)
        if self.tick is not None and now > self.told:
            self.tick(now - self.told)
        self.told = max(self.told, now)


def run_best(instance: Instance, *, scan: str | Path | np.ndarray = DEFAULT_SCAN,
             fixed: dict[tuple[int, int], int] | None = None, clues: str | None = None,
             breaks: str | Sequence[int] = DEFAULT_BREAKS,
             quota: str | Sequence[int] | None = DEFAULT_QUOTA, order: str = DEFAULT_ORDER,
             store: str | Path | None = None, piece_rank: np.ndarray | None = None,
             seed: int = DEFAULT_SEED, restart_nodes: int = DEFAULT_RESTART_NODES,
             workers: int = 1, seconds: float | None = None, max_nodes: int | None = None,
             restarts: int | None = None, first_restart: int = 0,
             done: frozenset[int] | set[int] = frozenset(),
             shard: tuple[int, int] | None = None,
             on_result: Callable[[RestartResult, BestRun], None] | None = None,
             tick: Callable[[int], None] | None = None, kernel: str = "auto",
             heartbeat: Callable[[], None] | None = None,
             plan: BestPlan | None = None,
             interrupted: threading.Event | None = None) -> BestRun:
    """`e2store best` without its boards file: the options (`best_plan`, defaults
    the command's) and limits are the command's.  Runs restarts first_restart,
    first_restart+1, ... (skipping those in `done`: a resumed run's finished restarts, so
    none is run twice), or with `shard` (K, N) only those k with k % N == K (the shards of
    one N split a run's restarts: each restart still drawn from (seed, k)), until
    `max_nodes` nodes in all, `seconds` of wall time, `restarts` restarts, a perfect board,
    or Ctrl-C (then the results so far, `ended` "interrupted").  `on_result` sees each
    restart's result as it ends (a caller saves boards there); `tick(nodes)` counts the
    nodes run since its last call, restarts in flight included (slice by slice; with
    workers, their sum about 5 times a second); `heartbeat()` is called about 5 times a
    second while workers run (a live display); `kernel` as for `BestSearch` (the parent
    compiles a generated one before the workers start, so they load it from numba's
    cache); `plan`: one built already (the options then unused).  `interrupted`: an event
    that stops the run as Ctrl-C does (Ctrl-C sets it, from the compile on: a caller's
    `on_result` may read it to cut its own work short); a Ctrl-C during the compile stops
    it (`sigint_raises`) and ends the run, nothing run."""
    if plan is None:
        plan = best_plan(instance, scan, fixed, breaks, quota, piece_rank, clues=clues,
                         order=order, store=store)
    scan_name = scan if isinstance(scan, str) else "custom"
    run = BestRun(instance.id, str(scan_name), plan.breaks, tuple(
        instance.colour_id(c) for c in plan.quota), seed, restart_nodes, workers)
    t0 = time.perf_counter()
    deadline = None if seconds is None else time.time() + seconds
    skip = set(done)
    k_of, n_of = (0, 1) if shard is None else shard
    if not 0 <= k_of < n_of:
        raise SolverError(f"shard {k_of}/{n_of}: expected K/N with 0 <= K < N")

    def first_from(k: int) -> int:
        """The first restart >= k of this shard not done."""
        k += (k_of - k) % n_of
        while k in skip:
            k += n_of
        return k

    next_k = first_from(first_restart)

    def advance() -> None:
        nonlocal next_k
        next_k = first_from(next_k + 1)
    planned = 0

    def budget_left() -> int | None:
        """Nodes the next restart may run (None: no more restarts)."""
        if restarts is not None and planned >= restarts:
            return None
        if deadline is not None and time.time() >= deadline:
            return None
        if max_nodes is None:
            return restart_nodes
        left = max_nodes - run.nodes - in_flight_nodes()
        return min(restart_nodes, left) if left > 0 else None

    flights: dict = {}

    def in_flight_nodes() -> int:
        return sum(flights.values())

    def take(r: RestartResult) -> None:
        run.results.append(r)
        run.nodes += r.nodes
        if on_result is not None:
            on_result(r, run)

    def ended_by(r: RestartResult) -> str | None:
        return {"perfect": "perfect", "exhausted": "exhausted"}.get(r.status)

    interrupted = threading.Event() if interrupted is None else interrupted
    with sigint_sets(interrupted):
        search = _compiled(plan, kernel, interrupted)
        if search is not None and workers == 1:
            while not interrupted.is_set() and (b := budget_left()) is not None:
                planned += 1
                left = None if deadline is None else time.monotonic() + (deadline - time.time())
                r = search.run(seed, next_k, b, deadline=left, tick=tick,
                               stop=interrupted.is_set)
                advance()
                take(r)
                if why := ended_by(r):
                    run.ended = why
                    break
        elif search is not None:
            ctx = quiet_spawn_context()  # workers deaf to Ctrl-C: `stop` ends their restarts
            stop = ctx.Event()
            progress = _Progress(ctx, workers, tick)
            with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init,
                                     initargs=(plan, kernel, stop, os.getpid(),
                                               progress.counts)) as pool:

                def submit_more() -> None:
                    nonlocal planned
                    while (not stop.is_set() and not interrupted.is_set()
                           and len(flights) < workers and (b := budget_left()) is not None):
                        planned += 1
                        slot = progress.slot()
                        f = pool.submit(_restart, seed, next_k, b, deadline, slot)
                        flights[f], progress.held[f] = b, slot
                        advance()

                submit_more()
                while flights:
                    finished, _ = wait(list(flights), timeout=0.2, return_when=FIRST_COMPLETED)
                    progress.update()  # before the restarts that ended are taken
                    if heartbeat is not None:
                        heartbeat()
                    if interrupted.is_set():
                        stop.set()  # the workers end their restarts at their next slice
                    for f in finished:
                        flights.pop(f)
                        progress.held.pop(f)
                        try:
                            r = f.result()
                        except BrokenProcessPool:
                            raise ChildFailedError("a best-score worker process died (out "
                                                   "of memory or killed)") from None
                        take(r)
                        if why := ended_by(r):
                            run.ended = why
                            stop.set()
                    submit_more()
                progress.update()
    if interrupted.is_set():
        run.ended = "interrupted"
    elif run.ended == "nodes" and deadline is not None and time.time() >= deadline:
        run.ended = "time"
    run.seconds = time.perf_counter() - t0
    return run


def _compiled(plan: BestPlan, kernel: str, interrupted: threading.Event) -> BestSearch | None:
    """The plan's search, its kernel compiled (or loaded from numba's cache) before any
    restart: so no restart's seconds count the compile (a campaign's rates are its
    restarts'), and the workers load it from the cache.  None when `interrupted` is set
    before the compile or during it: a Ctrl-C stops the compile midway (`sigint_raises`;
    a cold compile takes seconds, a minute on a busy machine), nothing run."""
    if interrupted.is_set():
        return None
    search = BestSearch(plan, kernel)
    try:
        with sigint_raises():
            search.run(0, 0, 1)
    except BaseException:
        if not interrupted.is_set():
            raise
        return None  # a Ctrl-C's KeyboardInterrupt, or the error numba made of it
    return None if interrupted.is_set() else search


_RAISE = [False]  # a Ctrl-C in `sigint_sets` raises KeyboardInterrupt too (`sigint_raises`)


@contextlib.contextmanager
def sigint_sets(event: threading.Event):
    """While the block runs (in the main thread), Ctrl-C sets `event` instead of raising:
    the search stops at its next slice and the run keeps what it found; no
    KeyboardInterrupt can surface in the middle of a fill or a write (only where
    `sigint_raises` allows it: numba's compile).  Nested blocks of one event are one block
    (`solve_best` around `run_best`)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigint(*_) -> None:
        event.set()
        if _RAISE[0]:
            _RAISE[0] = False  # once: the block's own cleanup is never cut short
            raise KeyboardInterrupt

    old = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


@contextlib.contextmanager
def sigint_raises():
    """Within `sigint_sets`, a Ctrl-C during the block raises KeyboardInterrupt in it (once)
    besides setting the event: for work with no slices to stop between, safe to abandon,
    numba's compile (Python code but for LLVM's passes, a second or so each on a cold
    cache: the interrupt lands when the running one returns).  Raised in a callback of
    LLVM's (ctypes), it cannot leave it: Python would print it as unraisable and numba fail
    later with an error of its own; not printed here, the caller looks at the event.  An
    LLVM object the interrupt left half-built fails in its finalizer (`ObjectRef.__del__`,
    whenever it is collected): after an interrupt such errors are not printed either."""
    if threading.current_thread() is not threading.main_thread():
        yield  # no signal reaches this thread
        return
    previous = sys.unraisablehook

    def hook(u) -> None:
        if not isinstance(u.exc_value, KeyboardInterrupt):
            previous(u)

    sys.unraisablehook = hook
    _RAISE[0] = True
    try:
        yield
    finally:
        fired = not _RAISE[0]  # `on_sigint` raised in the block
        _RAISE[0] = False
        if fired:
            gc.collect()  # the half-built objects' finalizers, under `hook`
        sys.unraisablehook = _quiet_llvm_finalizers(previous) if fired else previous


def _quiet_llvm_finalizers(previous):
    """`previous`, but silent for an error in a finalizer of llvmlite's (a half-built LLVM
    object an interrupted compile left, collected later)."""
    def hook(u) -> None:
        if not str(getattr(u.object, "__module__", "") or "").startswith("llvmlite"):
            previous(u)
    return hook
