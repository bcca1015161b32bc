"""An exact cover problem with colours (`Xcc`: items, options of (item, colour) pairs) as
the dancing-links table Algorithm C walks, and the walk (`solve_xcc`): the kernel
(`e2store.cover._kernels`) run a slice of options at a time, so progress is shown and a
stop honoured between slices.

Items are numbered from 1: the primary ones 1..P (each covered by exactly one option of a
solution), the secondary ones P+1..P+S (covered at most once, or by options that agree on
its colour).  Colour 0 is "none"; an option's secondary item with a colour > 0 may be
shared by other options of that colour."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from e2store.errors import SolverError

SLICE_SECONDS = 0.25  # a kernel call's length between two looks at a stop (Ctrl-C)
FIRST_SLICE = 1_000  # options tried by the first call; then sized to SLICE_SECONDS


@dataclass(frozen=True)
class Xcc:
    """Options as flat arrays: option o's nodes are `items[starts[o]:starts[o+1]]` (item
    numbers, 1-based) with their `colours` (0 none)."""

    n_primary: int
    n_secondary: int
    items: np.ndarray
    colours: np.ndarray
    starts: np.ndarray

    @property
    def n_options(self) -> int:
        return int(len(self.starts) - 1)

    def check(self, twice: bool = False) -> None:
        """ValueError unless the arrays make options of known items, a primary item without
        a colour; with `twice`, none naming an item twice (a sort of every node: the
        model's options are so by construction)."""
        n = self.n_primary + self.n_secondary
        it, st = np.asarray(self.items), np.asarray(self.starts)
        if len(st) < 1 or st[0] != 0 or st[-1] != len(it) or np.any(np.diff(st) < 1):
            raise ValueError("starts: expected 0, increasing, ending at len(items)")
        if len(it) and (it.min() < 1 or it.max() > n):
            raise ValueError(f"items: expected 1..{n}")
        if np.any((it <= self.n_primary) & (np.asarray(self.colours) != 0)):
            raise ValueError("a primary item with a colour")
        if not twice:
            return
        opt = np.repeat(np.arange(self.n_options, dtype=np.int64), np.diff(st))
        if len(np.unique(opt * (n + 1) + it)) != len(it):
            raise ValueError("an option names an item twice")


@dataclass
class Table:
    """The dancing-links arrays of an `Xcc` (`e2store.cover._kernels`)."""

    llink: np.ndarray
    rlink: np.ndarray
    top: np.ndarray
    ulink: np.ndarray
    dlink: np.ndarray
    color: np.ndarray
    opt_of: np.ndarray

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.llink, self.rlink, self.top, self.ulink, self.dlink,
                                      self.color, self.opt_of))


def table(x: Xcc) -> Table:
    """The table of `x`: headers 1..N, then a spacer, each option's nodes and a spacer."""
    n = x.n_primary + x.n_secondary
    m = np.diff(x.starts).astype(np.int64)
    n_opt = len(m)
    items = np.asarray(x.items, dtype=np.int64)
    spacer = n + 1 + np.concatenate([[0], np.cumsum(m + 1)]).astype(np.int64)  # O+1
    size = int(spacer[-1]) + 1
    opt = np.repeat(np.arange(n_opt, dtype=np.int64), m)
    pos = spacer[opt] + 1 + (np.arange(len(items)) - np.asarray(x.starts[:-1])[opt])
    if size >= 2**31:
        raise SolverError(f"an exact cover of {size:,} nodes: more than the table's 32-bit "
                          f"links hold")
    top = np.zeros(size, dtype=np.int32)
    ulink = np.zeros(size, dtype=np.int32)
    dlink = np.zeros(size, dtype=np.int32)
    color = np.zeros(size, dtype=np.int32)
    opt_of = np.full(size, -1, dtype=np.int32)
    top[pos], color[pos], opt_of[pos] = items, x.colours, opt
    order = np.argsort(items, kind="stable")  # nodes by item, each item's in table order
    sp, si = pos[order], items[order]
    first = np.ones(len(sp), dtype=bool)
    first[1:] = si[1:] != si[:-1]
    last = np.ones(len(sp), dtype=bool)
    last[:-1] = si[1:] != si[:-1]
    up = np.where(first, si, np.roll(sp, 1))
    down = np.where(last, si, np.roll(sp, -1))
    ulink[sp], dlink[sp] = up, down
    heads = np.arange(1, n + 1)
    count = np.bincount(items, minlength=n + 1)[1:]
    top[heads] = count
    ulink[heads] = heads
    dlink[heads] = heads
    ulink[si[last]], dlink[si[first]] = sp[last], sp[first]
    top[spacer] = -np.arange(n_opt + 1)
    ulink[spacer[1:]] = spacer[:-1] + 1
    dlink[spacer[:-1]] = spacer[1:] - 1
    llink = np.zeros(n + 2, dtype=np.int32)
    rlink = np.zeros(n + 2, dtype=np.int32)
    for head, lo, hi in ((0, 1, x.n_primary), (n + 1, x.n_primary + 1, n)):
        ring = [head, *range(lo, hi + 1)]
        for a, b in zip(ring, ring[1:] + ring[:1], strict=True):
            rlink[a], llink[b] = b, a
    return Table(llink, rlink, top, ulink, dlink, color, opt_of)


@dataclass
class XccResult:
    """A walk's count, options tried, the solutions kept (each its options in the order
    chosen), whether it ran to the end, and its seconds."""

    solutions: int = 0
    nodes: int = 0
    kept: list[list[int]] = field(default_factory=list)
    complete: bool = False
    interrupted: bool = False
    seconds: float = 0.0
    first_nodes: int | None = None
    first_seconds: float | None = None


def solve_xcc(x: Xcc, *, first: bool = False, max_nodes: int | None = None, keep: int = 0,
              stop: Callable[[], bool] | None = None,
              tick: Callable[[int, int], None] | None = None) -> XccResult:
    """Every solution of `x` (Algorithm C with the minimum-remaining-values item): counted,
    the first `keep` kept; `first`: stop at the first; `max_nodes`: stop after that many
    options tried (not complete); `stop()` asked between slices (True: stop, interrupted);
    `tick(nodes, solutions)` after each slice."""
    from e2store.cover._kernels import FINISHED, FOUND_FIRST, empty_state, search_slice

    if max_nodes is not None and max_nodes < 1:
        raise SolverError(f"max nodes {max_nodes}: expected 1 or more")
    x.check()
    t = table(x)
    levels = max(1, x.n_primary + 1)
    xs = np.zeros(levels, dtype=np.int32)
    item = np.zeros(levels, dtype=np.int32)
    state = empty_state()
    out = np.full((max(0, keep), levels), -1, dtype=np.int64)
    counters = np.zeros(4, dtype=np.int64)
    res = XccResult()
    t0 = time.perf_counter()
    size = FIRST_SLICE  # options per call: an option's cost varies a thousandfold by model
    while True:
        budget = size if max_nodes is None else min(size, max_nodes - int(counters[1]))
        t1 = time.perf_counter()
        why = search_slice(t.llink, t.rlink, t.top, t.ulink, t.dlink, t.color, t.opt_of, xs,
                           item, state, budget, first, out, counters)
        took = time.perf_counter() - t1
        size = int(min(max(1, size * 4), max(1, size * SLICE_SECONDS / max(took, 1e-6))))
        if counters[0] and res.first_nodes is None:  # its seconds: the slice's end
            res.first_nodes, res.first_seconds = int(counters[3]), time.perf_counter() - t0
        if tick is not None:
            tick(int(counters[1]), int(counters[0]))
        if why == FINISHED:
            res.complete = True
            break
        if why == FOUND_FIRST:
            break
        if max_nodes is not None and counters[1] >= max_nodes:
            break
        if stop is not None and stop():
            res.interrupted = True
            break
    res.solutions, res.nodes = int(counters[0]), int(counters[1])
    res.kept = [[int(o) for o in row if o >= 0] for row in out[:int(counters[2])]]
    res.seconds = time.perf_counter() - t0
    return res
