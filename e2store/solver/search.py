"""Backtracking search: the resumable generic runner, the generated-kernel runner and `solve`.

`solve(instance, scan)` fills the board cell by cell in a fixed scan order with the numba
kernel of `e2store.solver._kernels` (iterative, O(1) undo, pre-rotated candidate buckets
per cell class keyed by the colours placed neighbours impose, kept as piece bitsets and
intersected with the used-piece bitset) and reports nodes (one node = one piece placed),
solutions and times.  The kernel runs in slices of nodes and returns to Python between
slices, for progress, Ctrl-C and solution buffers.  A complete search of a board of up to
64 pieces may instead run, below its first few cells, a kernel generated for its plan
(`e2store.solver._unrolled`, `solve_split`): about twice the nodes per second, the same
counts and solutions.  With `distinct`, each distinct layout once (`solver.distinct`).

By default the board's rotational symmetry is broken by fixing the lowest-numbered corner
piece on the north-west corner (0, 0) in its one legal rotation, so a square board's
solutions are counted once per rotation class.  A non-square board maps onto itself only
by a half turn, which swaps the NW and SE corners and the NE and SW ones: there the piece
is fixed on (0, 0) and, in a second subtree, on (W-1, 0), again one solution per class.

Every solution the kernel reports is checked by `check_solutions`, which shares no code
with the kernel.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from tqdm import tqdm

from e2store.boards.solutions import check_solutions
from e2store.errors import SolverError
from e2store.instance.model import Instance
from e2store.progress import progress_interval
from e2store.query.closures import ClosureError, ClosureTable
from e2store.query.finals import FinalsIndex
from e2store.solver import _kernels as K
from e2store.solver import _unrolled
from e2store.solver.closure import ClosureSpec, closure_report, closure_spec
from e2store.solver.defaults import AUTO_MIN_DEPTHS as AUTO_MIN_DEPTHS  # declared there
from e2store.solver.defaults import DEFAULT_MAX_STORED as DEFAULT_MAX_STORED
from e2store.solver.defaults import KERNELS as KERNELS
from e2store.solver.distinct import finish, first_of_orbit, needs_orbit_check
from e2store.solver.plan import Plan, Seed, board_dtype, build_plan, search_setup

DEFAULT_SLICE_NODES = 1 << 25
NO_LIMIT = int(np.iinfo(np.int64).max)  # a node limit that never stops a search


# --------------------------------------------------------------------------- solve


@dataclass
class SolveResult:
    """What a search found and what it cost.  `boards` holds up to `max_stored` solutions,
    (k, W*H) packed `piece*4+r` with cell index y*W+x, in the order they were found."""

    instance: str
    width: int
    height: int
    scan: str
    symmetry_break: bool
    seeded_cells: int
    first_only: bool
    nodes: int = 0
    solutions: int = 0
    seconds: float = 0.0
    first_nodes: int | None = None
    first_seconds: float | None = None
    complete: bool = False
    interrupted: bool = False
    boards: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int16))
    cuts: list[int] | None = None  # with finals: branches cut by each region
    finals_regions: list[tuple[int, int]] | None = None
    finals_hamming: int | None = None
    closure: dict | None = None  # with a closure table: what it did (`closure_report`)
    distinct: dict | None = None  # a distinct search: `e2store.solver.distinct.finish`
    distinct_solutions: int | None = None  # distinct layouts (`solutions`: the raw count)

    @property
    def nodes_per_second(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0

    @property
    def stored(self) -> int:
        return int(self.boards.shape[0])

    def to_dict(self) -> dict:
        """JSON-ready report (the first solution as a list of packed cells, or None)."""
        return {
            "instance": self.instance, "width": self.width, "height": self.height,
            "scan": self.scan, "symmetry_break": self.symmetry_break,
            "seeded_cells": self.seeded_cells, "first_only": self.first_only,
            "complete": self.complete, "interrupted": self.interrupted,
            "solutions": self.solutions, "stored": self.stored,
            "nodes": self.nodes, "seconds": round(self.seconds, 6),
            "nodes_per_second": round(self.nodes_per_second, 1),
            "first_nodes": self.first_nodes,
            "first_seconds": None if self.first_seconds is None else round(self.first_seconds, 6),
            "first_solution": self.boards[0].tolist() if self.stored else None,
            **({} if self.cuts is None else {
                "cuts": list(self.cuts), "finals_hamming": self.finals_hamming,
                "finals_regions": [list(c) for c in self.finals_regions or []]}),
            **({} if self.closure is None else {"closure": self.closure}),
            **({} if self.distinct is None else {
                "distinct_solutions": self.distinct_solutions, "distinct": self.distinct}),
        }


class Search:
    """One subtree: the plan plus the kernel's state arrays (resumable)."""

    def __init__(self, plan: Plan, buffer_rows: int, finals: FinalsIndex | None = None):
        n = plan.width * plan.height
        nd = max(plan.n_depth, 1)
        self.plan = plan
        self.state = np.array([0, K.FRESH, 0, 0, -1], dtype=np.int64)
        self.shown = np.zeros((n + 1) * 4, dtype=np.int64)
        self.placed = np.full(n, -1, dtype=np.int64)
        for cell, v in plan.fixed.items():
            self.placed[cell] = v
            self.shown[cell * 4:cell * 4 + 4] = plan.col[v]
        self.used = plan.used_words([v >> 2 for v in plan.fixed.values()])
        self.mode = np.zeros(nd, dtype=np.uint8)
        self.keys, self.pos, self.end, self.pcs = (
            np.zeros(nd, dtype=np.int64) for _ in range(4))
        self.avail = np.zeros(nd * plan.n_words, dtype=np.uint64)
        self.stack = np.zeros(plan.stack_size, dtype=np.int64)
        self.sols = np.zeros((buffer_rows, n), dtype=board_dtype(plan.n_pieces))
        self.col = np.ascontiguousarray(plan.col.ravel())
        if finals is not None and plan.distinct:
            raise SolverError("finals cannot serve a distinct search (its buckets merge "
                              "identical pieces)")
        self.fin = plan.distinct_args() if finals is None else finals_state(finals, plan)
        self.kernel = K.search_kernel(plan.n_words, finals is not None, plan.distinct)

    def run(self, node_limit: int, first_only: bool) -> np.ndarray:
        """Go on until node_limit (absolute), a first solution, a full buffer or the end;
        returns the solutions found in this call."""
        if self.plan.n_depth == 0:  # every cell fixed: the seed is the one board
            if self.state[K.STATUS] != K.DONE:
                self.state[K.STATUS] = K.DONE
                self.state[K.SOLUTIONS] = 1
                self.state[K.FIRST_NODES] = 0
                return self.placed[None, :].astype(self.sols.dtype)
            return self.sols[:0]
        p = self.plan
        k = self.kernel(self.state, p.dep, p.bstart, p.cand, p.k_col, p.bmask, p.simple,
                        p.crec, self.col, p.n_pieces, self.shown, self.placed, self.used,
                        self.mode, self.keys, self.avail, self.pos, self.end, self.stack,
                        self.pcs, node_limit, first_only, self.sols, *self.fin)
        return self.sols[:k]

    @property
    def done(self) -> bool:
        return int(self.state[K.STATUS]) == K.DONE

    def warm_up(self) -> None:
        """Compile (or load from the numba cache) the kernel before any clock starts: a call
        on a finished state returns at once."""
        if self.plan.n_depth:
            finished = np.array([0, K.DONE, 0, 0, -1], dtype=np.int64)
            p = self.plan
            self.kernel(finished, p.dep, p.bstart, p.cand, p.k_col, p.bmask, p.simple, p.crec,
                        self.col, p.n_pieces, self.shown, self.placed, self.used, self.mode,
                        self.keys, self.avail, self.pos, self.end, self.stack, self.pcs, 0,
                        False, self.sols, *self.fin)

    @property
    def cuts(self) -> np.ndarray:
        """Branches cut by each finals region so far (empty without finals)."""
        return self.fin[-1] if self.fin else np.zeros(0, dtype=np.int64)


class UnrolledSearch:
    """Complete searches of subtrees that all fix the same cells (`plan.fixed`'s keys; its
    values are ignored), by the kernel generated for that plan (`e2store.solver._unrolled`).  Not
    resumable: each call searches one subtree to the end."""

    def __init__(self, instance: Instance, plan: Plan, closure: ClosureTable | None = None):
        self.instance, self.plan = instance, plan
        self.spec: ClosureSpec | None = None
        self.bloom = _unrolled.NO_BLOOM
        if closure is not None:
            spec, why = closure_spec(plan, closure)
            if spec is None:
                raise ClosureError(f"closure table cannot serve this search: {why}")
            assert closure.bloom is not None, "the closure table's filter is not loaded"
            self.spec, self.bloom = spec, closure.bloom
        self.ccount = np.zeros(_unrolled.CCOUNT, dtype=np.int64)  # the kernel's counters
        memo = self.spec is not None and self.spec.memo_depth >= 0
        self.memo = np.zeros(2 * _unrolled.MEMO_SLOTS if memo else 2, dtype=np.uint64)
        self.fn = _unrolled.kernel(plan, self.spec)
        self.colk = _unrolled.colour_table(plan)
        self.records = _unrolled.record_tables(plan)
        self.stash = np.zeros(_unrolled.stash_words(self.spec), dtype=np.uint64)
        _unrolled.warm_up(self.fn, plan, self.colk, self.records, self.bloom, self.spec)
        n = plan.width * plan.height
        self.cells = np.array(sorted(plan.fixed), dtype=np.int64)
        self.shown = np.zeros((n + 1) * 4, dtype=np.uint64)  # fixed cells' colours
        self.placed = np.full(n, -1, dtype=np.int64)
        self.found = np.zeros((0, n), dtype=board_dtype(plan.n_pieces))
        self.n_out = np.zeros(1, dtype=np.int64)

    def solve(self, board: np.ndarray, max_stored: int) -> tuple[int, int, np.ndarray | None]:
        """(solutions, nodes, up to `max_stored` checked solution boards or None) of the
        subtree under `board`'s fixed cells (assumed consistent)."""
        if len(self.found) < max_stored:  # one buffer, grown as needed, reused
            self.found = np.zeros((max_stored, self.placed.shape[0]), dtype=self.found.dtype)
        vals = np.asarray(board)[self.cells].astype(np.int64)
        # the kernel reads only the fixed cells' colours and writes every free cell of
        # `placed` before it copies a solution, so no reset is needed
        self.placed[self.cells] = vals
        self.shown.reshape(-1, 4)[self.cells] = self.plan.col[vals]
        used = int(self.plan.used_words((vals >> 2).tolist())[0])
        self.n_out[0] = 0
        self.ccount[2] += 1  # a new row memo generation: keys of other subtrees never match
        p = self.plan
        nodes, sols = self.fn(p.bmask, p.crec, self.colk, p.bstart, p.cand, *self.records,
                              self.shown, self.placed, self.found[:max_stored], self.n_out,
                              self.bloom, self.ccount, self.memo, self.stash,
                              np.uint64(used))
        boards = None
        if self.n_out[0]:
            boards = self.found[:self.n_out[0]].copy()
            check_solutions(self.instance, boards)
        return int(sols), int(nodes), boards

    @property
    def counts(self) -> np.ndarray:
        """Closure probes, cuts, row memo cuts and row memo records so far."""
        return self.ccount[[0, 1, 3, 4]].copy()


def finals_state(finals: FinalsIndex, plan: Plan) -> tuple[np.ndarray, ...]:
    """The kernel's finals arrays for one subtree: masks, and per region the alive words
    after the fixed cells as depth 0's level, room for one level per depth after it."""
    if (finals.width, finals.height, finals.n_pieces) != (plan.width, plan.height,
                                                           plan.n_pieces):
        raise SolverError(f"finals index for a {finals.width}x{finals.height} board of "
                          f"{finals.n_pieces} pieces, instance is {plan.width}x{plan.height}")
    n_reg, nd = len(finals.regions), plan.n_depth
    flev = np.zeros((nd + 1, n_reg, 2), dtype=np.int64)  # kernel layout: see FINALS
    idx_parts, val_parts = [], []
    base = 0
    for g in range(n_reg):
        alive = finals.alive_after(g, plan.fixed)
        nz = np.flatnonzero(alive)
        cap = (nd + 1) * len(nz) + 1  # levels only shrink; +1 for the branch-free write
        idx = np.zeros(cap, dtype=np.int64)
        val = np.zeros(cap, dtype=np.uint64)
        idx[:len(nz)], val[:len(nz)] = nz, alive[nz]
        flev[0, g] = (base, base + len(nz))
        idx_parts.append(idx)
        val_parts.append(val)
        base += cap
    return (np.ascontiguousarray(finals.mid.T).ravel(), finals.masks, np.concatenate(idx_parts),
            np.concatenate(val_parts), flev.ravel(), np.zeros(n_reg, dtype=np.int64))


def solve(
    instance: Instance,
    scan: str | Path | np.ndarray = "rowscan",
    *,
    first: bool = False,
    symmetry_break: bool | None = None,
    seed: Seed | None = None,
    max_stored: int = DEFAULT_MAX_STORED,
    node_limit: int | None = None,
    slice_nodes: int = DEFAULT_SLICE_NODES,
    progress: bool = False,
    stop_on_interrupt: bool = False,
    finals: FinalsIndex | None = None,
    kernel: str = "auto",
    closure: ClosureTable | None = None,
    distinct: bool = False,
) -> SolveResult:
    """Search `instance` depth-first in the scan order `scan` and report what was found.

    `scan`: a name of `SCAN_ORDERS`, a scan-order file, or an (W*H, 2) array of cells.
    `first`: stop at the first solution.  `symmetry_break`: fix the lowest corner piece
    (module docstring); None means yes without a seed, no with one.  `seed`: cells the
    search must respect, {(x, y): piece*4+r or (piece, r)} or an (H, W) / (W*H,) array with
    -1 for free cells.  At most `max_stored` solutions are kept in `boards`, all are
    counted and checked.  `node_limit` stops the search early (`complete` is then False).
    The kernel runs `slice_nodes` nodes at a time; between slices a tqdm bar is updated
    (with `progress`) and, with `stop_on_interrupt`, Ctrl-C ends the search cleanly
    (`interrupted` True) instead of raising KeyboardInterrupt.  `finals`: a
    `e2store.query.finals.FinalsIndex` (`load_finals`); the search then cuts every branch that
    leaves a region without a compatible corolle and reports `cuts` per region (same
    solutions, fewer nodes).  `kernel` ("auto", "generic" or "unrolled", see
    `e2store.solver._unrolled.use_unrolled`): a complete search (no `first`, `node_limit` or
    `finals`) may run the kernel generated for its plan on subtrees (`solve_split`); the
    counts, boards and `first_nodes` are the same, `first_seconds` is taken when the
    subtree holding the first solution ends.  `closure`: a block closure table
    (`e2store.query.closures.open_closure`) probed by the generated kernel of a complete
    search (same solutions, fewer nodes); `closure` in the report says what it did, or why
    this search could not use it (`used` false).  `distinct`: each distinct layout once;
    `solutions` is then the raw count, `distinct_solutions` theirs, `boards` the layouts.
    """
    w, h = instance.width, instance.height
    order, scan_name, fixed_seed, symmetry_break, roots = search_setup(
        instance, scan, seed, symmetry_break, distinct)
    if distinct and closure is not None:
        raise SolverError("a closure table cannot serve a distinct search (its keys are sets "
                          "of pieces, not of classes)")
    keep = (first_of_orbit(instance, roots)  # merges rotated layouts, one at a time
            if distinct and needs_orbit_check(instance, roots, symmetry_break) else None)
    result = SolveResult(instance.id, w, h, scan_name, bool(symmetry_break), len(fixed_seed),
                         first)
    limit = node_limit if node_limit is not None else NO_LIMIT
    slice_nodes = max(1, int(slice_nodes))
    buffer_rows = max(1, min(4096, max_stored if max_stored > 0 else 1))
    kept: list[np.ndarray] = []
    n_kept = 0
    plans = [build_plan(instance, order, root, distinct) for root in roots]
    _unrolled.check_choice(kernel)
    if closure is not None:
        why = closure_problem(instance, plans, closure, first, node_limit, finals, kernel)
        if why is not None:
            result.closure = {**closure.summary(), "used": False, "reason": why}
            closure = None
        else:
            closure = closure.loaded()  # a table opened for several processes: this one's copy
    generated = (lambda p: _unrolled.use_unrolled(kernel, p)) if closure is None else (
        _unrolled.supported)
    if (not first and node_limit is None and finals is None and plans and keep is None
            and all(generated(p) and p.n_depth >= 2 for p in plans)):
        result = solve_split(instance, order, plans, result, max_stored, progress,
                             stop_on_interrupt, closure)
        return finish(result, instance, roots, False, None) if distinct else result
    searches = [Search(plan, buffer_rows, finals) for plan in plans]
    for search in searches:
        search.warm_up()
    bar = tqdm(desc=f"solve {instance.name}", unit="node", unit_scale=True, disable=not progress,
               delay=1.0, leave=False, mininterval=progress_interval())
    done_nodes = 0  # nodes of finished subtrees
    t0 = time.perf_counter()
    try:
        for si, search in enumerate(searches):
            while not search.done:
                budget = min(limit - done_nodes, int(search.state[K.NODES]) + slice_nodes)
                if budget <= int(search.state[K.NODES]):
                    break
                before = int(search.state[K.NODES])
                found = search.run(budget, first)
                now = time.perf_counter()
                if len(found):
                    check_solutions(instance, found)
                    if keep is not None:  # a distinct search: the first of each orbit only
                        found = found[[keep(b, si) for b in found]]
                        result.distinct_solutions = (result.distinct_solutions or 0) + len(found)
                    if result.first_seconds is None:
                        result.first_seconds = now - t0
                        result.first_nodes = done_nodes + int(search.state[K.FIRST_NODES])
                    take = min(len(found), max_stored - n_kept)
                    if take > 0:
                        kept.append(found[:take].copy())
                        n_kept += take
                bar.update(int(search.state[K.NODES]) - before)
                bar.set_postfix(solutions=result.solutions + int(search.state[K.SOLUTIONS]),
                                refresh=False)
                if first and search.state[K.SOLUTIONS] > 0:
                    break
            done_nodes += int(search.state[K.NODES])
            result.solutions += int(search.state[K.SOLUTIONS])
            if (first and result.solutions) or done_nodes >= limit:
                break
        result.complete = all(s.done for s in searches) or bool(first and result.solutions)
    except KeyboardInterrupt:
        if not stop_on_interrupt:
            raise
        result.interrupted = True
        done_nodes = sum(int(s.state[K.NODES]) for s in searches)
        result.solutions = sum(int(s.state[K.SOLUTIONS]) for s in searches)
    finally:
        bar.close()
    result.seconds = time.perf_counter() - t0
    if finals is not None:
        result.cuts = [int(c) for c in sum((s.cuts for s in searches),
                                           np.zeros(len(finals.regions), dtype=np.int64))]
        result.finals_regions = finals.centres
        result.finals_hamming = finals.hamming
    result.nodes = done_nodes
    result.boards = (np.concatenate(kept) if kept
                     else np.zeros((0, w * h), dtype=board_dtype(instance.n_pieces)))
    note = None if keep is None else "generic: rotated layouts are merged one solution at a time"
    return finish(result, instance, roots, keep is not None, note) if distinct else result


SPLIT_PREFIXES = 256  # `solve_split`: subtrees wanted below the top of the search


def first_nodes_below(plan: Plan, board: np.ndarray) -> int:
    """Nodes a generic search spends before its first solution in the subtree where the
    cells `plan` fixes hold `board`'s placements (the subtree must hold a solution)."""
    seeded = Search(replace(plan, fixed={int(c): int(board[c]) for c in plan.fixed}), 1)
    while not seeded.done and not seeded.state[K.SOLUTIONS]:
        seeded.run(NO_LIMIT, True)
    return int(seeded.state[K.FIRST_NODES])


def top_order(plan: Plan, k: int) -> np.ndarray:
    """(x, y) of the plan's fixed cells and its first k free cells: the top of the search."""
    w = plan.width
    return np.array([(c % w, c // w) for c in list(plan.fixed) + plan.cells[:k].tolist()],
                    dtype=np.int64).reshape(-1, 2)


def split_depth(instance: Instance, plan: Plan) -> int:
    """The first depth with at least `SPLIT_PREFIXES` partial boards (at most the last
    depth but one): enough subtrees for progress and Ctrl-C, few enough that their calls
    cost nothing.  Counted by the generic kernel on the truncated plans (cheap: the
    prefixes are few)."""
    for k in range(1, plan.n_depth - 1):
        search = Search(build_plan(instance, top_order(plan, k), plan.fixed, plan.distinct),
                        4096)
        count = 0
        while not search.done and count < SPLIT_PREFIXES:
            count += len(search.run(NO_LIMIT, False))
        if count >= SPLIT_PREFIXES:
            return k
    return max(1, plan.n_depth - 1)


def closure_problem(instance: Instance, plans: list[Plan], closure: ClosureTable,
                    first: bool, node_limit: int | None, finals: FinalsIndex | None,
                    kernel: str) -> str | None:
    """Why `solve` runs without `closure` (None: it uses it).  SolverError for a request
    that cannot use one at all: a closure is probed by the generated kernel of a complete
    search."""
    closure.check_instance(instance)
    if first or node_limit is not None or finals is not None or kernel == "generic":
        what = ("a first-solution search" if first else "a node limit" if node_limit is not None
                else "finals" if finals is not None else "the generic kernel")
        raise SolverError(f"a closure table is probed by the generated kernel of a complete "
                          f"search; it cannot be used with {what}")
    for p in plans:
        if not _unrolled.supported(p):
            return "no generated kernel for this plan"
        spec, why = closure_spec(p, closure)
        if spec is None:
            return why
    return None


def solve_split(instance: Instance, order: np.ndarray, plans: list[Plan],
                 result: SolveResult, max_stored: int, progress: bool,
                 stop_on_interrupt: bool, closure: ClosureTable | None = None) -> SolveResult:
    """A complete search by subtrees: the generic kernel walks the first K free cells of
    each root's plan and stops at every partial board of depth K; the kernel generated for
    the rest (`UnrolledSearch`) searches its subtree to the end.  Nodes add up as in one search;
    the subtree holding the first solution is searched again by the generic kernel up to
    that solution, so `first_nodes` is exact too."""
    w, h = instance.width, instance.height
    kept: list[np.ndarray] = []
    n_kept = 0
    done_nodes = 0  # nodes of the finished top walks and subtrees
    bar = tqdm(desc=f"solve {instance.name}", unit="node", unit_scale=True, disable=not progress,
               delay=1.0, leave=False, mininterval=progress_interval())
    work = []
    for plan in plans:
        k = split_depth(instance, plan)
        if closure is not None:  # the probe's depth must stay in the subtrees
            spec = closure_spec(plan, closure)[0]
            k = max(1, min(k, spec.depth)) if spec is not None else k
        top_walk = top_order(plan, k)
        walk = Search(build_plan(instance, top_walk, plan.fixed, plan.distinct), 1)
        walk.warm_up()
        top_cells = (top_walk[:, 1] * w + top_walk[:, 0]).tolist()
        sub_plan = build_plan(instance, order, {c: 0 for c in top_cells}, plan.distinct)
        spec, why = (None, None) if closure is None else closure_spec(sub_plan, closure)
        if closure is not None and spec is None:
            result.closure = {**closure.summary(), "used": False, "reason": f"split: {why}"}
            closure = None
        work.append((walk, sub_plan))
    searches = [(walk, UnrolledSearch(instance, sub_plan, closure)) for walk, sub_plan in work]
    t0 = time.perf_counter()
    top_done = 0  # the current root's subtree nodes so far
    top: Search | None = None  # the current root's top walk (None between roots)
    try:
        for top, sub in searches:
            top_done = 0
            while not top.done:
                prefix = top.run(NO_LIMIT, False)
                if not len(prefix):
                    continue
                sols, nodes, boards = sub.solve(prefix[0], max(0, max_stored - n_kept))
                if sols and result.first_seconds is None:
                    result.first_seconds = time.perf_counter() - t0
                    if closure is None:  # with one, a plain recount would not match `nodes`
                        result.first_nodes = (done_nodes + int(top.state[K.NODES]) + top_done
                                              + first_nodes_below(sub.plan, prefix[0]))
                if boards is not None:
                    kept.append(boards)
                    n_kept += len(boards)
                top_done += nodes
                result.solutions += sols
                bar.update(done_nodes + int(top.state[K.NODES]) + top_done - bar.n)
                bar.set_postfix(solutions=result.solutions, refresh=False)
            done_nodes += int(top.state[K.NODES]) + top_done
            top = None
        result.complete = True
    except KeyboardInterrupt:
        if not stop_on_interrupt:
            raise
        result.interrupted = True
        if top is not None:
            done_nodes += int(top.state[K.NODES]) + top_done
    finally:
        bar.close()
    result.seconds = time.perf_counter() - t0
    result.nodes = done_nodes
    if closure is not None:
        result.closure = closure_report(closure, [sub for _, sub in searches])
    result.boards = (np.concatenate(kept) if kept
                     else np.zeros((0, w * h), dtype=board_dtype(instance.n_pieces)))
    return result

