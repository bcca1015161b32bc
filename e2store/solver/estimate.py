"""How big is a search before it is run: the solver's tree size by prefix sampling.

A complete search of a board can take minutes (benchmark 7x7) or far longer than anyone can
wait (8x8 and up), and progress bars cannot say how much is left.  `estimate` answers in
seconds: the scan order's first K free cells are searched exactly, which yields every
*prefix* (the partial board the search reaches at depth K) and the nodes above them; then a
uniform random sample of M prefixes is searched to the end, and the subtrees' nodes and
solutions are extrapolated to all prefixes:

    nodes     = prefix nodes + P * mean(subtree nodes)
    solutions = P * mean(subtree solutions)

Both are unbiased; their standard errors carry the finite-population correction
`sqrt(1 - M/P)`, so when every prefix is sampled (M >= P) the figures are exact and the
errors 0 (the tests check this against `solve`).  K is the first depth with at least
`prefix_factor * M` prefixes (or the last depth but one).  The seconds are the estimated
nodes at the rate the prefix search and the sampled subtrees ran in this process (one
core).

The search is the one `solve` runs: same scan, symmetry break, seed and node definition
(one node = one piece placed), so `nodes` estimates `solve(...).nodes`.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from e2store.errors import SolverError
from e2store.instance.model import Instance
from e2store.progress import progress_interval
from e2store.solver import _kernels as K
from e2store.solver.distinct import raw_per_layout
from e2store.solver.parallel import Subtrees
from e2store.solver.plan import Seed, build_plan, search_setup
from e2store.solver.search import Search

DEFAULT_SAMPLES = 1000
PREFIX_FACTOR = 10
_BUFFER = 65536


@dataclass
class Estimate:
    """An estimated search size (see the module docstring); `exact` when every prefix was
    searched, and then `nodes` and `solutions` are the true counts."""

    instance: str
    width: int
    height: int
    scan: str
    symmetry_break: bool
    depth: int = 0
    prefixes: int = 0
    prefix_nodes: int = 0
    sampled: int = 0
    sample_nodes: int = 0
    sample_solutions: int = 0
    sample_seconds: float = 0.0
    nodes: float = 0.0
    nodes_stderr: float = 0.0
    solutions: float = 0.0
    solutions_stderr: float = 0.0
    seconds: float = 0.0
    exact: bool = False
    rng_seed: int = 0
    raw_per_layout: int | None = None  # a distinct search: raw solutions per layout found

    def to_dict(self) -> dict:
        return asdict(self)


def _prefix_cells(order: np.ndarray, root: dict[int, int], width: int, k: int) -> list[int]:
    """The cells fixed at prefix depth k: the root's and the first k free ones of `order`."""
    free = [y * width + x for x, y in order.tolist() if y * width + x not in root]
    return list(root) + free[:k]


class _Reservoir:
    """A uniform random sample of `size` rows of a stream (Algorithm R, in chunks): row i
    of the stream replaces a kept one with probability size / (i + 1).  Memory O(size)."""

    def __init__(self, size: int, width: int, rng: np.random.Generator):
        self.size, self.rng, self.seen = size, rng, 0
        self.rows = np.zeros((0, width), np.int64)
        self.owner = np.zeros(0, np.int64)

    def add(self, rows: np.ndarray, owner: int) -> None:
        n = len(rows)
        room = max(0, min(n, self.size - len(self.rows)))
        if room:
            self.rows = np.concatenate([self.rows, rows[:room].astype(np.int64)])
            self.owner = np.concatenate([self.owner, np.full(room, owner, np.int64)])
        if room < n:
            i = np.arange(self.seen + room, self.seen + n)  # stream indices of the rest
            j = np.floor(self.rng.random(len(i)) * (i + 1)).astype(np.int64)
            hit = np.flatnonzero(j < self.size)
            # a slot replaced twice keeps the later row, as the one-by-one algorithm does
            slot, last = np.unique(j[hit][::-1], return_index=True)
            src = room + hit[::-1][last]
            self.rows[slot] = rows[src]
            self.owner[slot] = owner
        self.seen += n


def _prefixes(instance: Instance, order: np.ndarray, roots: list[dict[int, int]], k: int,
              keep: _Reservoir, distinct: bool = False) -> tuple[int, int, float]:
    """Walk every partial board of the search at depth k (its first k free cells, in
    `order`, filled below each root), sampling them into `keep`; returns their number,
    the nodes placed to reach them and the seconds taken."""
    w = instance.width
    count = nodes = 0
    seconds = 0.0
    for i, root in enumerate(roots):
        cells = [(c % w, c // w) for c in _prefix_cells(order, root, w, k)]
        search = Search(build_plan(instance, np.array(cells, dtype=np.int64), root, distinct),
                        _BUFFER)
        search.warm_up()
        t0 = time.perf_counter()
        while not search.done:
            found = search.run(np.iinfo(np.int64).max, False)
            keep.add(found, i)
            count += len(found)
        seconds += time.perf_counter() - t0
        nodes += int(search.state[K.NODES])
    return count, nodes, seconds


def estimate(instance: Instance, scan: str | Path | np.ndarray = "rowscan", *,
             samples: int = DEFAULT_SAMPLES, symmetry_break: bool | None = None,
             seed: Seed | None = None, rng_seed: int = 0, depth: int | None = None,
             prefix_factor: int = PREFIX_FACTOR, progress: bool = False,
             kernel: str = "auto", distinct: bool = False) -> Estimate:
    """Estimate nodes, solutions and seconds of `solve(instance, scan, symmetry_break=...,
    seed=...)` by searching `samples` random prefixes to the end (module docstring).
    `depth` fixes the prefix depth K instead (0 .. free cells - 1).  Reproducible: the same
    arguments and `rng_seed` give the same figures (all but the seconds).  `kernel`: that of
    the sampled subtrees (`e2store.query.openings.Subtrees`).  `distinct`: estimate the
    distinct search (`solve(..., distinct=True)`); `solutions` then counts the layouts it
    finds (before rotated ones are merged), each standing for `raw_per_layout` raw ones."""
    if samples < 1:
        raise SolverError(f"samples {samples} (expected >= 1)")
    if prefix_factor < 1:
        raise SolverError(f"prefix factor {prefix_factor} (expected >= 1)")
    w, h = instance.width, instance.height
    order, scan_name, _, symmetry_break, roots = search_setup(instance, scan, seed,
                                                              symmetry_break, distinct)
    est = Estimate(instance.id, w, h, scan_name, symmetry_break, rng_seed=rng_seed)
    if distinct:
        est.raw_per_layout = raw_per_layout(instance, roots[0]) if roots else 1
    n_free = min((w * h - len(r) for r in roots), default=0)
    # the prefix depth: the first with enough prefixes over all roots, at most n_free - 1
    # so that every subtree has a depth of its own (depth 0: the roots are the prefixes)
    target = prefix_factor * samples
    last = max(0, n_free - 1)
    if depth is not None and not 0 <= depth <= last:
        raise SolverError(f"prefix depth {depth} (expected 0..{last}: the search has "
                          f"{n_free} free cells)")
    for k in range(last + 1) if depth is None else [depth]:
        keep = _Reservoir(samples, w * h, np.random.default_rng(rng_seed))
        count, est.prefix_nodes, prefix_seconds = _prefixes(instance, order, roots, k, keep,
                                                            distinct)
        if count >= target or count == 0:
            break
    est.depth, est.prefixes = k, count
    if count == 0:  # no partial board reaches depth k: the prefix search was all of it
        est.nodes, est.exact = float(est.prefix_nodes), True
        return est
    subtrees = {}
    for i in np.unique(keep.owner).tolist():
        sub = Subtrees(instance, order, sorted(_prefix_cells(order, roots[i], w, k)),
                       kernel=kernel, distinct=distinct)
        sub.warm_up(keep.rows[np.flatnonzero(keep.owner == i)[0]])
        subtrees[i] = sub
    m = len(keep.rows)
    nodes = np.zeros(m, np.float64)
    sols = np.zeros(m, np.float64)
    bar = tqdm(total=m, desc=f"estimate {instance.name}", unit=" subtrees",
               disable=not progress, delay=1.0, leave=False, mininterval=progress_interval())
    t0 = time.perf_counter()
    try:
        for j in range(m):
            s, n, _ = subtrees[int(keep.owner[j])].solve(keep.rows[j], checked=True)
            sols[j], nodes[j] = s, n
            bar.update(1)
    finally:
        bar.close()
    est.sample_seconds = time.perf_counter() - t0
    est.sampled = m
    est.sample_nodes = int(nodes.sum())
    est.sample_solutions = int(sols.sum())
    est.exact = m == count
    fpc = math.sqrt(max(0.0, 1.0 - m / count))
    est.nodes = est.prefix_nodes + est.sample_nodes * count / m  # exact when m == count
    est.solutions = est.sample_solutions * count / m
    if m > 1:
        est.nodes_stderr = count * float(nodes.std(ddof=1)) / math.sqrt(m) * fpc
        est.solutions_stderr = count * float(sols.std(ddof=1)) / math.sqrt(m) * fpc
    spent = prefix_seconds + est.sample_seconds
    rate = (est.prefix_nodes + est.sample_nodes) / spent if spent > 0 else 0.0
    est.seconds = est.nodes / rate if rate > 0 else 0.0
    return est
