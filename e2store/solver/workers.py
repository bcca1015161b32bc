"""The plain search over several processes, without an openings file.

`solve_workers` walks the top of each root's search (the fixed cells and the first K free
cells of the scan order) with the generic kernel, keeps every partial board of depth K as
the root of a subtree, and solves those subtrees over N processes exactly as openings are
solved (`e2store.solver.parallel.solve_openings`: heaviest first, the generated kernel
where it applies).  K is the first depth with at least `PREFIXES_PER_WORKER` partial
boards per worker, so the work balances.

The report is that of the one-process search: the same solutions (kept in search order),
the same node count (the top walk's nodes plus every subtree's), and `first_nodes`, the
nodes a sequential search spends before its first solution (recomputed by the generic
kernel in the subtree that holds it).  `first_seconds` is the time at which that subtree's
result arrived.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from e2store.errors import SolverError
from e2store.instance.model import Instance
from e2store.query.openings import Openings
from e2store.solver import _kernels as K
from e2store.solver import _unrolled
from e2store.solver.closure import CLOSURE_COUNTS, closure_counts_dict, closure_spec
from e2store.solver.distinct import finish, needs_orbit_check
from e2store.solver.parallel import solve_openings
from e2store.solver.plan import Plan, Seed, board_dtype, build_plan, search_setup
from e2store.solver.search import (
    DEFAULT_MAX_STORED,
    NO_LIMIT,
    Search,
    SolveResult,
    first_nodes_below,
    solve,
    top_order,
)

PREFIXES_PER_WORKER = 64  # subtrees per worker at least: enough to balance uneven subtrees


def top_prefixes(instance: Instance, plan: Plan, want: int, max_depth: int | None = None,
                 ) -> tuple[np.ndarray, np.ndarray, int, int]:
    """The partial boards of the first depth K with at least `want` of them (at most the
    last depth but one, and at most `max_depth`): (boards (n, W*H) with -1 on free cells,
    the top walk's nodes when each was reached, the top walk's total nodes, K)."""
    last = max(1, plan.n_depth - 1 if max_depth is None else min(plan.n_depth - 1, max_depth))
    for k in range(1, last + 1):
        search = Search(build_plan(instance, top_order(plan, k), plan.fixed, plan.distinct), 1)
        boards, at = [], []
        while not search.done:
            found = search.run(NO_LIMIT, False)
            if len(found):
                boards.append(found[0].copy())
                at.append(int(search.state[K.NODES]))
        if len(boards) >= want or k == last:
            n = instance.width * instance.height
            out = (np.array(boards, dtype=board_dtype(instance.n_pieces)) if boards
                   else np.zeros((0, n), dtype=board_dtype(instance.n_pieces)))
            return out, np.array(at, dtype=np.int64), int(search.state[K.NODES]), k
    raise AssertionError("unreachable")


def solve_workers(instance: Instance, scan: str | Path | np.ndarray = "rowscan", *,
                  workers: int = 2, symmetry_break: bool | None = None,
                  seed: Seed | None = None, max_stored: int = DEFAULT_MAX_STORED,
                  progress: bool = False, kernel: str = "auto", closure=None,
                  distinct: bool = False) -> SolveResult:
    """A complete search of `instance` over `workers` processes (module docstring); the
    arguments mean what they mean for `e2store.solver.solve`, whose report this equals.
    `closure`: a block closure table (`open_closure(..., copies=workers)`), probed in every
    subtree when the split leaves the block to them (the report says so either way)."""
    if workers < 1:
        raise SolverError(f"workers {workers} (expected >= 1)")
    _unrolled.check_choice(kernel)
    w, h = instance.width, instance.height
    order, scan_name, fixed_seed, symmetry_break, roots = search_setup(
        instance, scan, seed, symmetry_break, distinct)
    if distinct and (closure is not None or needs_orbit_check(instance, roots, symmetry_break)):
        if closure is not None:
            raise SolverError("a closure table cannot serve a distinct search (its keys are "
                              "sets of pieces, not of classes)")
        one = solve(instance, order, seed=seed, symmetry_break=symmetry_break,
                    max_stored=max_stored, progress=progress, kernel=kernel, distinct=True)
        assert one.distinct is not None  # a distinct search's report has its summary
        one.distinct["kernel"] = ("one process, generic: rotated layouts are merged one "
                                  "solution at a time")
        return one
    result = SolveResult(instance.id, w, h, scan_name, bool(symmetry_break), len(fixed_seed),
                         False)
    t0 = time.perf_counter()
    kept: list[np.ndarray] = []
    n_kept = done_nodes = 0
    counts = np.zeros(len(CLOSURE_COUNTS), np.int64)  # closure probes, cuts, memo counts
    if closure is not None:
        closure.check_instance(instance)
        if kernel == "generic":
            raise SolverError("a closure table is probed by the generated kernel; it cannot "
                              "be used with the generic kernel")
    for root in roots:
        plan = build_plan(instance, order, root, distinct)
        if plan.n_depth < 2:  # nothing to split: the one-process search
            one = solve(instance, order, seed={(c % w, c // w): v for c, v in root.items()},
                        symmetry_break=False, max_stored=max_stored, kernel=kernel,
                        closure=None if closure is None else closure.loaded(),
                        distinct=distinct)
            if distinct:  # its layouts, as the other roots count them
                assert one.distinct is not None
                one.solutions = one.distinct["layouts_found"]
            sols, nodes, boards = one.solutions, one.nodes, one.boards
            if one.closure is not None and one.closure["used"]:
                counts += [one.closure[k] for k in CLOSURE_COUNTS]
            elif one.closure is not None:
                result.closure = one.closure
            first_at = one.first_nodes
        else:
            spec = None if closure is None else closure_spec(plan, closure)[0]
            prefixes, at, top_nodes, _ = top_prefixes(  # the closure probe stays below
                instance, plan, PREFIXES_PER_WORKER * workers,
                None if spec is None else spec.depth)
            if not len(prefixes):  # the top walk found no way through
                done_nodes += top_nodes
                continue
            ops = Openings(instance.id, instance.name, w, h, [], 0, False, prefixes)
            cover_plan = build_plan(instance, order, {c: 0 for c in ops.covered}, distinct)
            use = closure
            if closure is not None:
                spec, why = closure_spec(cover_plan, closure)
                if spec is None:
                    result.closure = {**closure.summary(), "used": False, "reason": why}
                    use = None
            started = time.perf_counter() - t0
            # "auto" decides on the whole search, as `solve` does: the subtrees' plans are
            # shallower than the threshold, their number of searches what pays the compile
            sub_kernel = ("unrolled" if kernel == "auto" and _unrolled.use_unrolled(kernel, plan)
                          else kernel)
            res = solve_openings(instance, ops, workers=workers, scan=order,
                                 max_stored=max(0, max_stored - n_kept), progress=progress,
                                 kernel=sub_kernel, closure=use, distinct=distinct)
            counts += res.closure_counts
            sols, nodes, boards = res.solutions, top_nodes + res.nodes, res.boards
            first_at = None
            hit = np.flatnonzero(res.opening_solutions)
            if len(hit):
                i = int(hit[0])
                if use is None:  # with a closure a plain recount would not match `nodes`
                    first_at = (int(at[i]) + int(res.opening_nodes[:i].sum())
                                + first_nodes_below(cover_plan, prefixes[i]))
                if result.first_seconds is None:
                    result.first_seconds = started + float(res.opening_seconds[i])
        if sols and result.first_nodes is None and first_at is not None:
            result.first_nodes = done_nodes + first_at
            if result.first_seconds is None:
                result.first_seconds = time.perf_counter() - t0
        result.solutions += sols
        done_nodes += nodes
        if len(boards) and n_kept < max_stored:
            kept.append(boards[:max_stored - n_kept])
            n_kept += len(kept[-1])
    result.nodes = done_nodes
    if closure is not None and result.closure is None:
        result.closure = {**closure.summary(), "used": True, **closure_counts_dict(counts)}
    result.complete = True
    result.seconds = time.perf_counter() - t0
    result.boards = (np.concatenate(kept) if kept
                     else np.zeros((0, w * h), dtype=board_dtype(instance.n_pieces)))
    return finish(result, instance, roots, False, None) if distinct else result
