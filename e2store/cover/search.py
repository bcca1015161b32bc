"""`e2store solve --engine dlx`: the board solved as an exact cover with colours over its
corolles (`e2store.cover.model`), by dancing links (`e2store.cover.xcc`), reported as the
backtracker reports (a `SolveResult`: solutions, nodes = options tried, seconds, the
boards kept).

The symmetry break is the backtracker's (`e2store.instance.classes.symmetry_roots`: the
lowest corner piece on the north-west corner; on a rectangle, on the north-east corner
too): one search per root, its region's corolles those that agree with it, the counts
summed.  `workers` processes split each root's search at its first level: the primary
item with the fewest options (what the search itself would choose first), its options
dealt round-robin, the others dropped from each worker's table."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from e2store.cover.model import Model, build_model, planned_bytes
from e2store.cover.xcc import Xcc, XccResult, solve_xcc
from e2store.errors import SolverError
from e2store.instance.model import Instance

DEFAULT_HAMMING = 0  # the partition the command takes: the fastest measured (docs/benchmarks.md)


def suits_dlx(instance: Instance) -> str | None:
    """Why `e2store solve --engine auto` takes dlx (hamming 0) on `instance`, or None.  A
    board with identical pieces: on the clue puzzles (7-26 copies) dlx searched the same
    trees 2-8x faster than the backtracker, which walks the whole subtree below each copy
    again, dead ends included, where dlx's fewest-options choice fails a branch as soon as
    a cell or a piece has no option left; on boards of distinct pieces (the benchmark
    boards, generated ones) the backtracker was 10-200x faster (docs/benchmarks.md,
    *Corolles as the pieces of the search*)."""
    from e2store.instance.classes import piece_classes

    classes = piece_classes(np.asarray(instance.pieces))
    copies = len(classes) - len(np.unique(classes))
    return f"{copies} piece{'s' if copies > 1 else ''} identical to another" if copies else None


def model_xcc(model: Model) -> tuple[Xcc, np.ndarray, np.ndarray]:
    """The exact cover of `model` (its module docstring), and per option its region and its
    row among the region's corolles."""
    inst = model.instance
    shown = inst.rotated_table().astype(np.int64)  # (4n, 4): west, north, east, south
    n_regions = len(model.regions)
    n_primary = n_regions + inst.n_pieces
    joins = model.joins()
    items_l, colours_l, region_l, row_l, width_l = [], [], [], [], []
    for k, (g, opts) in enumerate(zip(model.regions, model.options, strict=True)):
        at = {c: j for j, c in enumerate(g.cells)}
        mine = [(n_primary + 1 + q, a, side, b) for q, (a, side, b) in enumerate(joins)
                if a in at or b in at]
        n = len(opts)
        it = np.empty((n, 1 + len(g.cells) + len(mine)), dtype=np.int64)
        co = np.zeros_like(it)
        it[:, 0] = k + 1
        opts64 = opts.astype(np.int64)
        it[:, 1:1 + len(g.cells)] = n_regions + 1 + (opts64 >> 2)
        for j, (item, a, side, b) in enumerate(mine):
            col = 1 + len(g.cells) + j
            it[:, col] = item
            cell, s = (a, side) if a in at else (b, (side + 2) % 4)
            co[:, col] = 1 + shown[opts64[:, at[cell]], s]
        items_l.append(it.reshape(-1))
        colours_l.append(co.reshape(-1))
        region_l.append(np.full(n, k, dtype=np.int64))
        row_l.append(np.arange(n, dtype=np.int64))
        width_l.append(np.full(n, it.shape[1], dtype=np.int64))
    starts = np.concatenate([[0], np.cumsum(np.concatenate(width_l))]).astype(np.int64)
    x = Xcc(n_primary, len(joins), np.concatenate(items_l) if items_l else np.zeros(0, np.int64),
            np.concatenate(colours_l) if colours_l else np.zeros(0, np.int64), starts)
    return x, np.concatenate(region_l), np.concatenate(row_l)


def xcc_bytes(x: Xcc) -> int:
    """Bytes of the table `x` makes (`e2store.cover.xcc.table`: five int32 arrays a node,
    two an item) and of its options (item and colour, int64 a node), stated before it is
    built."""
    n = x.n_primary + x.n_secondary
    nodes = n + 1 + len(x.items) + x.n_options + 1
    return 20 * nodes + 8 * (n + 2) + 16 * len(x.items)


def restricted(model: Model, fixed: Mapping[int, int]) -> Model:
    """`model` with each region's corolles those that agree with `fixed` (cell ->
    placement): a root of the symmetry break, fixed cells.  A corolle placing a fixed
    piece on another cell goes too: it could never be chosen, and a seeded search's table
    shrinks by every region's share of the fixed pieces."""
    fixed_piece = np.full(model.instance.n_pieces, -1, dtype=np.int64)  # piece -> its cell
    for cell, v in fixed.items():
        fixed_piece[v // 4] = cell
    options = []
    for g, o in zip(model.regions, model.options, strict=True):
        for k, cell in enumerate(g.cells):
            if cell in fixed:
                o = o[o[:, k] == fixed[cell]]
            else:
                o = o[fixed_piece[o[:, k] // 4] < 0]
        options.append(o)
    return Model(model.instance, model.hamming, model.regions, options, model.source)


def _split(x: Xcc, parts: int) -> list[tuple[Xcc, np.ndarray]]:
    """`x` dealt over `parts` searches at its first level: the primary item with the
    fewest options, its options round-robin, the others dropped from each part; each part
    with its options' numbers in `x`."""
    opt = np.repeat(np.arange(x.n_options), np.diff(x.starts))
    prim = x.items <= x.n_primary
    counts = np.bincount(x.items[prim], minlength=x.n_primary + 1)[1:]
    item = int(np.argmin(counts)) + 1
    holding = np.unique(opt[x.items == item])
    out = []
    for w in range(parts):
        drop = np.zeros(x.n_options, dtype=bool)
        drop[holding] = True
        drop[holding[w::parts]] = False
        keep_nodes = ~drop[opt]
        m = np.diff(x.starts)[~drop]
        out.append((Xcc(x.n_primary, x.n_secondary, x.items[keep_nodes],
                        x.colours[keep_nodes], np.concatenate([[0], np.cumsum(m)])),
                    np.flatnonzero(~drop)))
    return out


def _walk(x: Xcc, first: bool, max_nodes: int | None, keep: int) -> XccResult:
    """One process's walk (for the pool): nothing to stop it but its end."""
    return solve_xcc(x, first=first, max_nodes=max_nodes, keep=keep)


def solve_cover(instance: Instance, *, hamming: int = DEFAULT_HAMMING,
                store: str | Path | None = None, first: bool = False,
                symmetry_break: bool | None = None,
                fixed: Mapping[tuple[int, int], int] | None = None, keep: int = 0,
                max_nodes: int | None = None, workers: int = 1,
                memory_budget: int | None = None, stop: Callable[[], bool] | None = None,
                tick: Callable[[int, int], None] | None = None,
                log: Callable[[str], None] | None = None):
    """The solutions of `instance` by dancing links over its corolles at `hamming` (from
    `store`, else enumerated): counted, the first `keep` boards kept, as a `SolveResult`
    (`e2store.solver.search`); `fixed` cells ((x, y) -> placement) restrict the regions
    holding them (and, as in the backtracker, turn the symmetry break off unless it is
    asked for); `max_nodes` options tried at most; `memory_budget`: SolverError in one
    line, before the table is built, for a larger table; `stop()`/`tick(nodes,
    solutions)` between slices (one process; counted over the roots)."""
    from e2store.instance.classes import symmetry_roots
    from e2store.solver.search import SolveResult

    if workers > 1 and (first or max_nodes is not None):
        raise SolverError(f"--workers {workers} runs a complete search: it takes no "
                          f"{'--first' if first else '--max-nodes'} (use one process)")
    say = log or (lambda m: None)
    t0 = time.perf_counter()
    w = instance.width
    seeds = {y * w + x: int(v) for (x, y), v in (fixed or {}).items()}
    if symmetry_break is None:
        symmetry_break = not seeds
    roots = symmetry_roots(instance) if symmetry_break else [{}]
    if memory_budget is not None:  # counted before a corolle is enumerated
        planned, need = planned_bytes(instance, hamming)
        _within(need, planned, workers, memory_budget)
    base = build_model(instance, hamming, store=store)
    problems = []
    for root in roots:
        clash = any(c in seeds and seeds[c] != v for c, v in root.items())
        if not clash:
            model = restricted(base, {**seeds, **root})
            problems.append((model, *model_xcc(model)))
    need = max((xcc_bytes(x) for _, x, _, _ in problems), default=0)
    options = sum(x.n_options for _, x, _, _ in problems)
    if memory_budget is not None:
        _within(need, options, workers, memory_budget)
    say(f"dlx: {len(base.regions)} regions of hamming {hamming} ({base.source} corolles), "
        f"{options:,} options, a table of {_mib(need)}")
    total = XccResult()
    boards: list[np.ndarray] = []
    for model, x, region, row in problems:
        left = None if max_nodes is None else max_nodes - total.nodes
        if left is not None and left <= 0:
            break
        began = time.perf_counter() - t0  # this root's start: its first solution's clock
        if workers > 1:
            split = _split(x, workers)
            with ProcessPoolExecutor(workers) as pool:
                parts = list(pool.map(_walk, [p for p, _ in split], [False] * workers,
                                      [None] * workers, [keep] * workers))
            for r, (_, number) in zip(parts, split, strict=True):
                r.kept = [[int(number[o]) for o in sol] for sol in r.kept]
        else:
            parts = [solve_xcc(x, first=first, max_nodes=left, keep=keep, stop=stop,
                               tick=_counted_on(tick, total.nodes, total.solutions))]
        for r in parts:
            if total.first_nodes is None and r.first_nodes is not None:
                total.first_nodes = total.nodes + r.first_nodes
                total.first_seconds = began + (r.first_seconds or 0.0)
            total.solutions += r.solutions
            total.nodes += r.nodes
            total.interrupted |= r.interrupted
            for sol in r.kept:
                if len(boards) < keep:
                    boards.append(_board(model, region, row, sol))
        done = all(r.complete for r in parts)
        if not done or (first and total.solutions):
            break
    else:
        done = True
    complete = bool(problems) and done and not (first and total.solutions) or not problems
    n = instance.width * instance.height
    dtype = np.int16 if instance.n_pieces * 4 <= np.iinfo(np.int16).max else np.int32
    out = np.array(boards, dtype=dtype).reshape(-1, n)
    return SolveResult(instance.id, instance.width, instance.height,
                       f"dlx (hamming {hamming}, {base.source})", bool(symmetry_break),
                       len(seeds), first, nodes=total.nodes, solutions=total.solutions,
                       seconds=time.perf_counter() - t0, first_nodes=total.first_nodes,
                       first_seconds=total.first_seconds, complete=complete,
                       interrupted=total.interrupted, boards=out)


def _counted_on(tick: Callable[[int, int], None] | None, nodes: int, solutions: int,
                ) -> Callable[[int, int], None] | None:
    """`tick` for one root's search, counting on from the roots searched before it."""
    if tick is None:
        return None
    return lambda n, k: tick(nodes + n, solutions + k)


def _within(need: int, options: int, workers: int, budget: int) -> None:
    """SolverError in one line when `need` bytes a process (`workers` of them) is over
    `budget`."""
    if need * max(1, workers) > budget:
        raise SolverError(f"the exact cover takes {_mib(need)} a process ({options:,} "
                          f"options; x{max(1, workers)} processes), over --memory-budget "
                          f"{_mib(budget)}: raise it, or a smaller --hamming"
                          ).about("memory_budget")


def _mib(n: int) -> str:
    """Bytes as MiB (KiB below one MiB)."""
    return f"{n / 2**20:,.1f} MiB" if n >= 2**20 else f"{n / 2**10:,.1f} KiB"


def _board(model: Model, region: np.ndarray, row: np.ndarray, options: list[int]) -> np.ndarray:
    """The board of a solution: each option's corolle in its region's cells."""
    board = np.full(model.instance.width * model.instance.height, -1, dtype=np.int64)
    for o in options:
        g = model.regions[int(region[o])]
        board[list(g.cells)] = model.options[int(region[o])][int(row[o])]
    return board
