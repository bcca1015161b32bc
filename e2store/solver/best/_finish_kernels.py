"""Private numba kernel of the exact tail re-solve (`e2store.solver.best.finish`): a
depth-first branch-and-bound that gives the open cells of the tail, in a fixed order
(`tail`), distinct pool pieces in the rotations legal there, maximising the joins they
match.

Arrays in, counts out, no I/O.  The search state lives in arrays the caller keeps, so a
call runs at most `budget` nodes and the next call resumes where it stopped (the caller
checks the clock between calls).  A node is one placement made.

Tables (built by the caller): per depth d, `opt_v[ostart[d]:oend[d]]` the legal
placements on cell `tail[d]` and `opt_j` the pool slot of each one's piece; `nbr[c, s]`
the cell across side s of c (-1: the frame); `kind[c]` 0 inner, 1 border, 2 corner (a
piece goes only on a cell of its own kind); `colk[v*4+s]` the colour placement v shows on
side s; `openafter[d]` the joins still open once depth d is placed (joins of later tail
cells with cells holding a piece or earlier tail cells).  State: `placed` the board
(-1 open or a hole), `is_open` (1: a tail cell not filled yet), `used` (per pool slot),
`dcnt[k, c]` the frontier: sides of colour c of filled cells facing an open cell of kind
k; `scnt[k, c]` the sides of colour c of the unused pool pieces of kind k; `got[d]` the
joins matched by depths 0..d-1 (with filled cells and each other); `st` (below).

The bound (`ledger`, proved in `e2store.solver.best.finish`'s docstring) at every node:
a branch is cut when the joins matched so far plus the bound cannot beat the incumbent
`st[ST_BEST]`; candidates are tried by gain (joins matched with filled neighbours),
highest first, so a candidate whose gain plus every join still open cannot beat the
incumbent ends its depth.
"""

from __future__ import annotations

import numba as nb
import numpy as np

# st (int64 state): depth, started, the incumbent's joins, found (1: best_board holds a
# better assignment than the caller's incumbent), status, joins between two open cells
ST_D, ST_STARTED, ST_BEST, ST_FOUND, ST_STATUS, ST_IOPEN = range(6)
RUNNING, EXHAUSTED = range(2)
KINDS = 3  # inner, border, corner


@nb.njit(cache=True, nogil=True, boundscheck=False)
def ledger(dcnt, scnt, iopen):
    """The most joins the open cells can still match: per colour c (grey excluded),
    M_c = sum over kinds k of min(frontier dcnt[k, c], supply scnt[k, c]); the bound is
    sum_c M_c + min(iopen, sum_c floor((sum_k scnt[k, c] - M_c) / 2))."""
    front = 0
    spare = 0
    for c in range(1, dcnt.shape[1]):
        m = 0
        s = 0
        for k in range(dcnt.shape[0]):
            d = dcnt[k, c]
            sk = scnt[k, c]
            m += d if d < sk else sk
            s += sk
        front += m
        spare += (s - m) >> 1
    return front + (spare if spare < iopen else iopen)


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _gain(cell, v, nbr, placed, colk):
    """Joins placement v on cell matches with the neighbours holding a piece."""
    g = 0
    for s in range(4):
        o = nbr[cell, s]
        if o >= 0:
            u = placed[o]
            if u >= 0:
                c = colk[v * 4 + s]
                if c != 0 and c == colk[u * 4 + ((s + 2) & 3)]:
                    g += 1
    return g


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _move(cell, v, j, nbr, kind, colk, placed, is_open, used, dcnt, scnt, sign):
    """Place v (pool slot j) on the open cell (`sign` 1), or undo that placement (`sign`
    -1, the neighbours as they were then); returns the joins between open cells it turns
    into frontier joins, or back (iopen's decrease, or increase)."""
    k = kind[cell]
    for s in range(4):
        scnt[k, colk[v * 4 + s]] -= sign
    di = 0
    for s in range(4):
        o = nbr[cell, s]
        if o < 0:
            continue
        if is_open[o]:
            dcnt[kind[o], colk[v * 4 + s]] += sign
            di += 1
        elif placed[o] >= 0:
            dcnt[k, colk[placed[o] * 4 + ((s + 2) & 3)]] -= sign
    is_open[cell] = 1 if sign < 0 else 0
    placed[cell] = -1 if sign < 0 else v
    used[j] = 0 if sign < 0 else 1
    return di


@nb.njit(cache=True, nogil=True, boundscheck=False)
def _expand(d, cell, ostart, oend, opt_v, opt_j, used, nbr, placed, colk, cand, candj,
            cgain, ncand, tmpk, tmpg, bucket):
    """The candidates of depth d (legal placements of unused pool pieces), by gain,
    highest first (a stable counting sort: equal gains keep the option order)."""
    for g in range(5):
        bucket[g] = 0
    n = 0
    for k in range(ostart[d], oend[d]):
        if used[opt_j[k]]:
            continue
        g = _gain(cell, opt_v[k], nbr, placed, colk)
        tmpk[n] = k
        tmpg[n] = g
        bucket[g] += 1
        n += 1
    at = 0
    for g in range(4, -1, -1):  # bucket[g] becomes the first slot of gain g
        c = bucket[g]
        bucket[g] = at
        at += c
    for i in range(n):
        g = tmpg[i]
        p = bucket[g]
        bucket[g] = p + 1
        cand[d, p] = opt_v[tmpk[i]]
        candj[d, p] = opt_j[tmpk[i]]
        cgain[d, p] = g
    ncand[d] = n


@nb.njit(cache=True, nogil=True, boundscheck=False)
def tail_search(tail, ostart, oend, opt_v, opt_j, nbr, kind, colk, openafter, placed,
                is_open, used, dcnt, scnt, got, cand, candj, cgain, ncand, ptr, chosen,
                chosenj, tmpk, tmpg, bucket, st, best_board, budget):
    """Run at most `budget` nodes of the search (module docstring); returns the nodes run.
    Every full assignment matching more than `st[ST_BEST]` joins becomes the incumbent:
    `best_board` the board, `st[ST_BEST]` its joins, `st[ST_FOUND]` 1.  `st[ST_STATUS]`
    turns EXHAUSTED when no branch is left: the incumbent is then optimal."""
    if budget <= 0 or st[ST_STATUS] != RUNNING:
        return 0
    nt = tail.shape[0]
    best = st[ST_BEST]
    iopen = st[ST_IOPEN]
    nodes = 0
    if st[ST_STARTED] == 0:
        st[ST_STARTED] = 1
        if nt == 0 or got[0] + ledger(dcnt, scnt, iopen) <= best:
            st[ST_STATUS] = EXHAUSTED
            return 0
        _expand(0, tail[0], ostart, oend, opt_v, opt_j, used, nbr, placed, colk, cand,
                candj, cgain, ncand, tmpk, tmpg, bucket)
        ptr[0] = 0
        st[ST_D] = 0
    d = st[ST_D]
    while nodes < budget:
        i = ptr[d]
        if i >= ncand[d]:  # depth d done: back up
            if d == 0:
                st[ST_STATUS] = EXHAUSTED
                break
            d -= 1
            iopen += _move(tail[d], chosen[d], chosenj[d], nbr, kind, colk, placed,
                           is_open, used, dcnt, scnt, -1)
            continue
        g = cgain[d, i]
        if got[d] + g + openafter[d] <= best:  # nor can any later (lower) candidate
            ptr[d] = ncand[d]
            continue
        ptr[d] = i + 1
        v = cand[d, i]
        j = candj[d, i]
        cell = tail[d]
        iopen -= _move(cell, v, j, nbr, kind, colk, placed, is_open, used, dcnt, scnt, 1)
        chosen[d] = v
        chosenj[d] = j
        got[d + 1] = got[d] + g
        nodes += 1
        if d + 1 == nt:  # a full assignment
            if got[nt] > best:
                best = got[nt]
                st[ST_FOUND] = 1
                for c in range(placed.shape[0]):
                    best_board[c] = placed[c]
            iopen += _move(cell, v, j, nbr, kind, colk, placed, is_open, used, dcnt,
                           scnt, -1)
            continue
        if got[d + 1] + ledger(dcnt, scnt, iopen) <= best:
            iopen += _move(cell, v, j, nbr, kind, colk, placed, is_open, used, dcnt,
                           scnt, -1)
            continue
        d += 1
        _expand(d, tail[d], ostart, oend, opt_v, opt_j, used, nbr, placed, colk, cand,
                candj, cgain, ncand, tmpk, tmpg, bucket)
        ptr[d] = 0
    st[ST_D] = d
    st[ST_BEST] = best
    st[ST_IOPEN] = iopen
    return nodes


@nb.njit(cache=True, nogil=True, boundscheck=False)
def bounds_along(cells, vs, js, nbr, kind, colk, placed, is_open, used, dcnt, scnt, iopen):
    """`ledger` before and after each placement (vs[i], pool slot js[i]) on cells[i], the
    state updated as the search updates it (for tests against a bound from scratch)."""
    out = np.empty(cells.shape[0] + 1, np.int64)
    out[0] = ledger(dcnt, scnt, iopen)
    for i in range(cells.shape[0]):
        iopen -= _move(cells[i], vs[i], js[i], nbr, kind, colk, placed, is_open, used,
                       dcnt, scnt, 1)
        out[i + 1] = ledger(dcnt, scnt, iopen)
    return out
