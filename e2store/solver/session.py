"""`e2store solve` (the exact search) as one library call: which pruning a store gives
(`method`), the finals or closure table it opens, and which runner searches (one process,
`--workers` processes, or the openings of a file); the command line parses its options
and calls `solve_search`.  The best-score mode is `e2store.solver.best.solve_best`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from e2store.errors import SolverError
from e2store.instance.model import Instance
from e2store.solver.defaults import DEFAULT_SCAN

METHODS = ("auto", "closure", "finals")  # how a store prunes the search
DEFAULT_METHOD = "auto"  # closure for a complete search, else finals
DEFAULT_FINALS_REGIONS = ("corners",)


def search_method(method: str, *, store: str | Path | None, partial: bool,
                  finals_given: bool = False) -> str | None:
    """What a store prunes with: None without a store; `auto`: the finals when the search
    is partial (the first solution, a node limit) or finals regions are given, else the
    block closure table (complete searches: the fastest measured).  SolverError for the
    closure table in a partial search."""
    if method not in METHODS:
        raise SolverError(f"pruning method {method!r}: expected one of "
                          f"{', '.join(METHODS)}").about("method")
    if store is None:
        return None
    if method == "auto":
        return "finals" if finals_given or partial else "closure"
    if method == "closure" and (finals_given or partial):
        raise SolverError("the closure table is probed in complete searches: not with the "
                          "first solution only, a node limit or finals regions (use the "
                          "finals)").about("method")
    return method


def solve_search(instance: Instance, scan: str | Path | np.ndarray = DEFAULT_SCAN, *,
                 first: bool = False, symmetry_break: bool | None = None,
                 fixed: dict[tuple[int, int], int] | None = None, keep: int | None = None,
                 max_nodes: int | None = None, workers: int = 1,
                 store: str | Path | None = None, method: str = DEFAULT_METHOD,
                 memory_budget: int | None = None,
                 finals_regions: Sequence[str] | None = None, finals_hamming: int | None = None,
                 openings: str | Path | None = None, shard: tuple[int, int] | None = None,
                 save: str | Path | None = None, kernel: str = "auto", distinct: bool = False,
                 progress: bool = False, stop_on_interrupt: bool = False,
                 log: Callable[[str], None] | None = None):
    """`e2store solve INSTANCE` without `--best`, `--estimate` or `--engine sat`: the
    search the options ask for (`e2store.solver.solve`'s arguments; `fixed` its seed,
    `keep` its max_stored), pruned by the `store` (`search_method`: finals regions at
    `finals_hamming`, or the closure table within `memory_budget` bytes over every
    process), run in one process, over `workers` processes (a complete search), or over
    the openings of the file `openings` (its shard `shard`); with `save`, the solutions
    kept written there.  Returns the `SolveResult` (the `OpeningsResult` with openings)."""
    from e2store.query.finals import DEFAULT_FINALS_HAMMING
    from e2store.solver.search import DEFAULT_MAX_STORED

    keep = DEFAULT_MAX_STORED if keep is None else keep
    partial = first or max_nodes is not None
    how = search_method(method, store=store, partial=partial,
                        finals_given=finals_regions is not None)
    fin = clo = None
    if how == "finals":
        from e2store.query.finals import load_finals

        assert store is not None
        fin = load_finals(store, instance, list(finals_regions or DEFAULT_FINALS_REGIONS),
                          DEFAULT_FINALS_HAMMING if finals_hamming is None else finals_hamming)
    elif how == "closure":
        from e2store.query.closures import DEFAULT_BUDGET, open_closure

        assert store is not None
        clo = open_closure(store, instance,
                           DEFAULT_BUDGET if memory_budget is None else memory_budget,
                           copies=max(1, workers), log=log)
    if openings is not None:
        from e2store.solver.parallel import solve_with_openings

        if fixed is not None or symmetry_break is False or max_nodes is not None:
            raise SolverError("the openings file sets the fixed cells and the symmetry break, "
                              "and its openings are searched whole: no fixed cells, no "
                              "symmetry break off, no node limit").about("openings")
        return solve_with_openings(instance, openings, workers=workers, scan=scan,
                                   first=first, shard=shard, save=save, keep=keep,
                                   progress=progress, finals=fin, kernel=kernel, closure=clo)
    if shard is not None:
        raise SolverError("a shard is a share of the openings of a file: give the "
                          "openings").about("shard")
    if workers > 1:
        from e2store.solver.workers import solve_workers

        refused = [what for what, on in (("the first solution only", first),
                                         ("a node limit", max_nodes is not None),
                                         ("finals", fin is not None)) if on]
        if refused:
            raise SolverError(f"{workers} workers run a complete search: not with "
                              f"{', '.join(refused)} (use one process, or openings)"
                              ).about("workers")
        result = solve_workers(instance, scan, workers=workers, symmetry_break=symmetry_break,
                               seed=fixed, max_stored=keep, progress=progress, kernel=kernel,
                               closure=clo, distinct=distinct)
    else:
        from e2store.solver.search import solve

        result = solve(instance, scan, first=first, symmetry_break=symmetry_break, seed=fixed,
                       max_stored=keep, node_limit=max_nodes, progress=progress,
                       stop_on_interrupt=stop_on_interrupt, finals=fin, kernel=kernel,
                       closure=clo, distinct=distinct)
    if save is not None:
        from e2store.boards.solutions import write_solutions

        write_solutions(save, result.boards, instance, result.scan)
    return result
