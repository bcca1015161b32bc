"""The tail of a board re-solved exactly (issue 56, item 1): the cells a best-score search
placed last, where its mismatches land, given back to a branch-and-bound.

`resolve_tail(instance, board, cells)` frees the tail `cells`; the pieces they held and
the leftover pieces (on no cell) are the pool.  It searches every assignment of distinct
pool pieces to the tail cells, each in a rotation legal there (grey exactly on the cell's
frame sides, so a corner, border or inner piece only on a cell of its kind), for the most
matched joins with every other cell fixed.  Exactly one pool piece goes on each tail cell:
the board ends full when it was full or its holes were all in `cells` (a larger pool, when
holes lie outside the tail, leaves its surplus off the board).  The input board's own tail
is the first incumbent, so the result never scores below the input (with holes in the
tail, a full assignment scoring as much as the input replaces it).

The search (`_finish_kernels`, numba): depth first over the tail cells in a static order,
most constrained first (most neighbours holding a piece or placed earlier, ties in the
order of `cells`); at each cell the candidates by gain, highest first.  A branch is cut
when the joins matched so far plus a bound cannot beat the incumbent.

**The bound** ("LEDGER", after raphael-anjou/eternity2), at a node with open (unfilled)
tail cells U.  The joins still to be matched are of two sorts: a *frontier* join between
an open cell and a cell holding a piece, matched only when the pool side placed against
it shows the filled cell's colour c (not grey); an *inner* join between two open cells,
matched only when both pool sides show the same colour.  Let, for colour c and kind k
(inner, border, corner), d[k, c] be the frontier sides of colour c facing open cells of
kind k, s[k, c] the sides of colour c of the unused pool pieces of kind k, S_c their sum
over k, and I the inner joins.  In any completion, let a[k, c] be the matched frontier
joins of colour c at cells of kind k and b_c the matched inner joins of colour c.  Each
matched frontier join uses its own frontier side and its own side of a pool piece, placed
on a cell of kind k, so of kind k: a[k, c] <= min(d[k, c], s[k, c]); summing, a_c <= M_c
:= sum_k min(d[k, c], s[k, c]).  Each matched inner join uses two pool sides of colour c
that no other join uses: a_c + 2 b_c <= S_c, so a_c + b_c <= floor((S_c + a_c) / 2), which
grows with a_c, hence a_c + b_c <= M_c + floor((S_c - M_c) / 2) =: M_c + e_c.  And
sum_c b_c <= I.  So the joins still to match are at most sum_c M_c + min(I, sum_c e_c):
when sum_c e_c <= I, by the per-colour inequality summed; otherwise sum_c a_c + sum_c b_c
<= sum_c M_c + I.  Summing only over what pieces may still do, the bound never falls
below the best completion, so a cut never loses an optimum.  It is never weaker than
the open joins: sum_c M_c <= the frontier joins (grey frontier sides are not counted) and
the second term is at most I.  It holds the colour deficits (a frontier colour the pool
lacks) and parity (a colour with an odd number of sides left leaves one unpaired).

`grow_tail` re-solves the last K cells of a scan order (plus the holes) for growing K
while each search completes within its caps, keeping the best board.  Both take `keep`,
cells never changed (clues).  `tests/naive_finish.py` holds the pure-Python twins: a
brute force over every assignment, and the bound computed from scratch.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from e2store.boards.table import board_cells, score
from e2store.errors import SolverError
from e2store.instance.model import GREY, Instance
from e2store.solver.plan import frame_mask, grey_masks
from e2store.zones.geometry import SIDE_STEP

from . import _finish_kernels as _fk

SLICE = 1 << 14  # nodes per kernel call: the clock is read between calls


@dataclass
class Resolved:
    """A board whose tail was re-solved: the board, its score, the input's score
    (`before`), the tail's size `k`, the nodes and seconds spent (numba's one-off compile
    not counted), and whether the search ended (`complete`: no legal assignment of the
    tail beats the board).  `grow_tail` adds `steps`: each K's own."""

    board: np.ndarray
    score: int
    before: int
    k: int
    nodes: int
    seconds: float
    complete: bool
    steps: tuple[Resolved, ...] = ()


def _cell_list(name: str, cells: Iterable[int], n: int) -> list[int]:
    out = []
    for c in cells:
        if isinstance(c, bool) or not isinstance(c, int | np.integer):
            raise SolverError(f"{name}: cell {c!r} is not a cell index (y*W+x)").about(name)
        if not 0 <= int(c) < n:
            raise SolverError(f"{name}: cell {int(c)} is off the board (0..{n - 1})"
                              ).about(name)
        out.append(int(c))
    if len(set(out)) != len(out):
        dup = next(c for c in out if out.count(c) > 1)
        raise SolverError(f"{name}: cell {dup} is named twice").about(name)
    return out


def _caps(max_nodes: int, seconds: float) -> None:
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int | np.integer) \
            or max_nodes < 0:
        raise SolverError(f"max_nodes {max_nodes!r}: expected an integer >= 0"
                          ).about("max_nodes")
    if not seconds >= 0:  # NaN too
        raise SolverError(f"seconds {seconds!r}: expected a number >= 0").about("seconds")


class _Tail:
    """The search's tables and state for one board and tail (`_finish_kernels`)."""

    def __init__(self, instance: Instance, cells: np.ndarray, tail: list[int]):
        w, h = instance.width, instance.height
        n = w * h
        self.inst, self.n = instance, n
        rot = instance.rotated_table().astype(np.int64)
        self.colk = rot.reshape(-1).copy()
        greys = grey_masks(rot)
        self.nbr = np.full((n, 4), -1, np.int64)
        for c in range(n):
            x, y = c % w, c // w
            for s, (dx, dy) in enumerate(SIDE_STEP):
                if 0 <= x + dx < w and 0 <= y + dy < h:
                    self.nbr[c, s] = (y + dy) * w + x + dx
        fm = np.array([frame_mask(w, h, c) for c in range(n)], np.int64)
        # grey sides, 3 and 4 (boards 1 or 2 wide) counted with 2: a legal piece's kind
        # is its cell's all the same
        self.kind = np.array([min(bin(int(m)).count("1"), 2) for m in fm], np.int64)
        tset = set(tail)
        on_board = {int(v) >> 2 for c, v in enumerate(cells.tolist()) if v >= 0 and c not in tset}
        self.pool = np.array(sorted(set(range(instance.n_pieces)) - on_board), np.int64)
        self.placed = cells.copy()
        self.placed[tail] = -1
        opts: dict[int, list[tuple[int, int]]] = {}
        for c in tail:  # legal placements, rotations showing the same colours once
            seen = set()
            opts[c] = []
            for j, p in enumerate(self.pool.tolist()):
                for r in range(4):
                    v = p * 4 + r
                    key = (p, tuple(rot[v].tolist()))
                    if greys[v] == fm[c] and key not in seen:
                        seen.add(key)
                        opts[c].append((j, v))
        self.tail = self._order(tail)
        flat = [o for c in self.tail for o in opts[c]]
        self.opt_j = np.array([j for j, _ in flat], np.int64)
        self.opt_v = np.array([v for _, v in flat], np.int64)
        sizes = np.array([len(opts[c]) for c in self.tail], np.int64)
        self.oend = np.cumsum(sizes).astype(np.int64)
        self.ostart = self.oend - sizes
        self.openafter = self._open_after()
        self.is_open = np.zeros(n, np.uint8)
        self.is_open[self.tail] = 1
        self.used = np.zeros(self.pool.size, np.uint8)
        nc = instance.n_colours
        self.dcnt = np.zeros((_fk.KINDS, nc), np.int64)
        self.scnt = np.zeros((_fk.KINDS, nc), np.int64)
        for p in self.pool.tolist():
            k = int((instance.pieces[p] == GREY).sum())
            for col in instance.pieces[p].tolist():
                self.scnt[min(k, 2), col] += 1
        self.iopen = 0
        for c in self.tail.tolist():
            for s in range(4):
                o = int(self.nbr[c, s])
                if o < 0:
                    continue
                if self.is_open[o]:
                    self.iopen += 1  # counted from both ends
                elif self.placed[o] >= 0:
                    col = self.colk[self.placed[o] * 4 + (s + 2) % 4]
                    self.dcnt[self.kind[c], col] += 1
        self.iopen //= 2

    def _order(self, tail: list[int]) -> np.ndarray:
        """Most constrained first: most neighbours holding a piece or placed earlier, ties
        in the order of `tail` (`grow_tail`: the scan's, which placed them so).  Ties
        broken toward fewer legal placements instead (frame cells first) took 1.4x the
        nodes on Eternity II's tails."""
        done = {c for c in range(self.n) if self.placed[c] >= 0}
        rest = list(tail)
        out = []
        while rest:
            def key(i: int) -> tuple[int, int]:
                k = sum(1 for o in self.nbr[rest[i]].tolist() if o >= 0 and o in done)
                return (-k, i)

            c = rest.pop(min(range(len(rest)), key=key))
            out.append(c)
            done.add(c)
        return np.array(out, np.int64)

    def _open_after(self) -> np.ndarray:
        """openafter[d]: the joins tail cells d+1.. close (with cells holding a piece or
        earlier tail cells)."""
        at = {c: d for d, c in enumerate(self.tail.tolist())}
        closes = []
        for d, c in enumerate(self.tail.tolist()):
            closes.append(sum(1 for o in self.nbr[c].tolist() if o >= 0 and (
                (o not in at and self.placed[o] >= 0) or (o in at and at[o] < d))))
        after = np.cumsum(closes[::-1])[::-1]
        return np.append(after[1:], 0).astype(np.int64)

    def search(self, incumbent: int, max_nodes: int, deadline: float,
               stop: Callable[[], bool] | None = None) -> tuple[
            np.ndarray | None, int, bool, float]:
        """(best board or None when none beat `incumbent`, nodes, complete, seconds the
        kernel took to compile: `deadline` is pushed back by as much); `stop()` true ends
        the search between slices."""
        nt = self.tail.size
        width = max(1, int((self.oend - self.ostart).max())) if nt else 1
        cand, candj, cgain = (np.zeros((max(nt, 1), width), np.int64) for _ in range(3))
        ncand, ptr, chosen, chosenj = (np.zeros(max(nt, 1), np.int64) for _ in range(4))
        tmpk, tmpg = np.zeros(width, np.int64), np.zeros(width, np.int64)
        got = np.zeros(nt + 1, np.int64)
        bucket = np.zeros(5, np.int64)
        st = np.zeros(6, np.int64)
        st[_fk.ST_BEST], st[_fk.ST_IOPEN] = incumbent, self.iopen
        best = self.placed.copy()
        args = (self.tail, self.ostart, self.oend, self.opt_v, self.opt_j, self.nbr, self.kind,
                self.colk, self.openafter, self.placed, self.is_open, self.used, self.dcnt,
                self.scnt, got, cand, candj, cgain, ncand, ptr, chosen, chosenj, tmpk, tmpg,
                bucket, st, best)
        t = time.perf_counter()
        _fk.tail_search(*args, 0)  # compiled (or loaded from numba's cache) off the clock
        compile_s = time.perf_counter() - t
        deadline += compile_s
        nodes = 0
        while nodes < max_nodes:
            nodes += int(_fk.tail_search(*args, min(SLICE, max_nodes - nodes)))
            if st[_fk.ST_STATUS] == _fk.EXHAUSTED or time.perf_counter() >= deadline or (
                    stop is not None and stop()):
                break
        done = bool(st[_fk.ST_STATUS] == _fk.EXHAUSTED)
        return (best if st[_fk.ST_FOUND] else None), nodes, done, compile_s


def resolve_tail(instance: Instance, board, cells: Sequence[int], *,
                 max_nodes: int = 2_000_000, seconds: float = 3.0,
                 keep: Iterable[int] = (), stop: Callable[[], bool] | None = None,
                 ) -> Resolved:
    """The board with its tail `cells` (indices y*W+x) re-solved (module docstring):
    at most `max_nodes` nodes and about `seconds` of search, or until `stop()` (checked
    between slices of the search) is true (the best found by then, `complete` False).
    `keep`: cells never changed, so none may be in `cells`.  SolverError for a bad board,
    cell list or cap."""
    t0 = time.perf_counter()
    a = board_cells(instance, board)
    n = a.size
    tail = _cell_list("cells", cells, n)
    kept = set(_cell_list("keep", keep, n))
    both = sorted(kept & set(tail))
    if both:
        raise SolverError(f"cells: cell {both[0]} is also kept (keep: never changed)"
                          ).about("cells")
    _caps(max_nodes, seconds)
    before = score(instance, a).matched
    if not tail:
        return Resolved(a.astype(np.int16), before, before, 0, 0,
                        time.perf_counter() - t0, True)
    cleared = a.copy()
    cleared[tail] = -1
    own = before - score(instance, cleared).matched  # joins the input's tail matches
    holes = bool((a[tail] < 0).any())
    prob = _Tail(instance, a, tail)
    # with holes in the tail a full assignment as good as the input replaces it
    found, nodes, done, compile_s = prob.search(own - 1 if holes else own, int(max_nodes),
                                     t0 + float(seconds), stop)
    out, final = a, before
    if found is not None:
        got = score(instance, found).matched
        if got >= before:  # always (the kernel's incumbent), checked all the same
            out, final = found, got
    return Resolved(out.astype(np.int16), final, before, len(tail), nodes,
                    time.perf_counter() - t0 - compile_s, done)


def _order_cells(order, w: int, h: int) -> list[int]:
    arr = np.asarray(order, dtype=np.int64)
    if arr.ndim == 2 and arr.shape[1] == 2:  # (x, y) pairs, as `scan_order` gives them
        if ((arr[:, 0] < 0) | (arr[:, 0] >= w) | (arr[:, 1] < 0) | (arr[:, 1] >= h)).any():
            raise SolverError(f"order: a cell off the {w}x{h} board").about("order")
        arr = arr[:, 1] * w + arr[:, 0]
    elif arr.ndim != 1:
        raise SolverError("order: expected cell indices y*W+x or (x, y) pairs").about("order")
    return _cell_list("order", arr.tolist(), w * h)


def grow_tail(instance: Instance, board, order, *, ks: Sequence[int] = (16, 24, 32),
              max_nodes: int = 2_000_000, seconds: float = 3.0,
              keep: Iterable[int] = (), stop: Callable[[], bool] | None = None) -> Resolved:
    """`resolve_tail` over the last K cells of the scan `order` (cell indices y*W+x, or
    (x, y) pairs; the `keep` cells skipped, so K cells are re-solved) and the board's
    holes, for each K of `ks` in increasing order while each search completes within its
    caps (`max_nodes`, `seconds`: per K) and `stop()` stays false, each on the best board
    so far.  Returns the best
    board (never below the input's score) with `k` the largest K that completed (0: none
    did), `complete` whether every K tried completed, nodes and seconds summed, and
    `steps` each K's `Resolved`."""
    a = board_cells(instance, board)
    w, h = instance.width, instance.height
    kept = set(_cell_list("keep", keep, w * h))
    seq = [c for c in _order_cells(order, w, h) if c not in kept]
    sizes = []
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise SolverError(f"ks: {k!r} is not a tail size >= 1").about("ks")
        sizes.append(min(int(k), len(seq)))
    _caps(max_nodes, seconds)
    before = score(instance, a).matched
    current, best = a, before
    steps: list[Resolved] = []
    reached = 0
    for k in sorted(set(sizes)):
        tail = seq[len(seq) - k:]
        inside = set(tail)
        tail += [c for c in np.flatnonzero(current < 0).tolist()
                 if c not in inside and c not in kept]
        r = resolve_tail(instance, current, tail, max_nodes=max_nodes, seconds=seconds,
                         keep=kept, stop=stop)
        steps.append(r)
        if r.score > best or (r.score == best and (current < 0).any()
                              and not (r.board < 0).any()):
            current, best = np.asarray(r.board, np.int64), r.score
        if not r.complete:
            break
        reached = k
    return Resolved(current.astype(np.int16), best, before, reached,
                    sum(s.nodes for s in steps), sum(s.seconds for s in steps),
                    all(s.complete for s in steps), tuple(steps))
