"""Private numba kernel of the best-score search (`e2store.solver.best.search`): a depth-first
search over candidate lists that lets a join mismatch from scheduled depths on.

Arrays in, counts out, no I/O.  The search state lives in arrays the caller keeps, so a
call runs at most `budget` nodes and the next call resumes where it stopped (progress,
Ctrl-C and restarts happen between calls).

Per depth d (the d-th free cell of the scan order, `cell[d]`) the two *key sides* `sa[d]`,
`sb[d]` select the candidate list: key = sig[d]*K*K + ca*K + cb, with ca, cb the colours
the neighbours across those sides show (`ka`/`kb`: 0 the frame, so grey; 1 the neighbour
cell `na`/`nb`, side `oa`/`ob` of its placement; 2 none placed there yet: the wildcard
K-1).  `lists[kstart[key]:kmid[key]]` are the placements matching both (exact), then
`lists[kmid[key]:kend[key]]` those mismatching one key side on an inner colour; a third
and fourth placed neighbour (`xc`, `xs`, `xo`, -1 when none) are checked per candidate and
may mismatch on an inner colour too (`inner[colour]`).  A placement mismatches at most one
join.  A placement is allowed when the
mismatches so far plus its own stay within `allow[d]`, the number of breaks scheduled at
or before its depth.  Candidates are tried in list order, so the caller's shuffle of each
list's exact and mismatching parts is the random tie-break.  The colour quota: a
placement shows `hq[q]` sides of the quota's colours, and is refused when the sides shown
so far (`hcum[d]`, the fixed cells' included) plus its own stay under `qmin[d]`.

A node is one piece placed.  The best board of the search so far (deepest, then highest
score: `jf[d] - mismatches`, the joins among filled cells less the mismatched ones) is
kept in `best`; a full board with `jf[n] == full` matched joins stops the search.
"""

from __future__ import annotations

import numba as nb

# st (int64 state): 0 depth d, 1 started (0: enter depth 0 first), 2 best depth (free cells
# filled), 3 best score, 4 best mismatches, 5 full boards found, 6 status (0 running,
# 1 exhausted, 2 perfect board found)
ST_D, ST_STARTED, ST_BEST_D, ST_BEST_SCORE, ST_BEST_MISM, ST_FULL, ST_STATUS = range(7)
# st[ST_STATUS]: the search goes on, has no node left anywhere, or found a perfect board
RUNNING, EXHAUSTED, PERFECT = range(3)


@nb.njit(cache=True, nogil=True, boundscheck=False)
def best_search(lists, kstart, kmid, kend, colk, inner, K, cell, kbase, ia, ib, xi, xs, allow,
                jf, full, hq, qmin, scol, placed, used, ptr, lim, mid, mism, hcum, st, best,
                budget):
    """Run at most `budget` nodes of the search (module docstring); returns the nodes run.
    `st`, `ptr`, `lim`, `mid`, `mism`, `hcum`, `scol`, `placed`, `used` and `best` carry
    the state from one call to the next.

    `scol[c*4+s]` is the colour placed cell c shows on side s (two more cells: N, the
    frame, shows grey everywhere; N+1, the wildcard, K-1), so the colours a depth must
    match are `scol[ia[d]]`, `scol[ib[d]]` (key sides) and `scol[xi[d, j]]` (extra sides
    `xs[d, j]`; xi -1: none), without a branch on where they come from."""
    n = cell.shape[0]
    nodes = 0
    if st[ST_STATUS] != RUNNING:
        return 0
    d = st[ST_D]
    bd = st[ST_BEST_D]
    bs = st[ST_BEST_SCORE]
    if st[ST_STARTED] == 0:
        st[ST_STARTED] = 1
        d = 0
        mism[0] = 0
        if n == 0:
            st[ST_STATUS] = EXHAUSTED
            return 0
        key = kbase[0] + scol[ia[0]] * K + scol[ib[0]]
        ptr[0] = kstart[key]
        mid[0] = kmid[key]
        lim[0] = kend[key] if allow[0] > 0 else kmid[key]
    while nodes < budget:
        # next candidate at depth d
        p = ptr[d]
        e = lim[d]
        m0 = mid[d]
        left = allow[d] - mism[d]
        need = qmin[d] - hcum[d]
        x0 = xi[d, 0]
        pl = -1
        m = 0
        while p < e:
            q = lists[p]
            p += 1
            if used[q >> 2]:
                continue
            m = 1 if p > m0 else 0
            if x0 >= 0:  # the two extra sides written out: a loop costs the hot path here
                want = scol[x0]
                got = colk[q * 4 + xs[d, 0]]
                if want != got:
                    if m > 0 or not (inner[want] and inner[got]):
                        continue
                    m += 1
                x1 = xi[d, 1]
                if x1 >= 0:
                    want = scol[x1]
                    got = colk[q * 4 + xs[d, 1]]
                    if want != got:
                        if m > 0 or not (inner[want] and inner[got]):
                            continue
                        m += 1
            if m > left or hq[q] < need:
                continue
            pl = q
            break
        ptr[d] = p
        if pl < 0:  # exhausted: back up
            if d == 0:
                st[ST_STATUS] = EXHAUSTED
                st[ST_D] = 0
                st[ST_BEST_D] = bd
                st[ST_BEST_SCORE] = bs
                return nodes
            d -= 1
            cc = cell[d]
            used[placed[cc] >> 2] = 0
            placed[cc] = -1
            continue
        nodes += 1
        c = cell[d]
        placed[c] = pl
        used[pl >> 2] = 1
        b4 = c * 4
        q4 = pl * 4
        scol[b4] = colk[q4]
        scol[b4 + 1] = colk[q4 + 1]
        scol[b4 + 2] = colk[q4 + 2]
        scol[b4 + 3] = colk[q4 + 3]
        mm = mism[d] + m
        mism[d + 1] = mm
        hcum[d + 1] = hcum[d] + hq[pl]
        d += 1
        if d >= bd:
            score = jf[d] - mm
            if d > bd or score > bs:
                bd = d
                bs = score
                st[ST_BEST_MISM] = mm
                for i in range(placed.shape[0]):
                    best[i] = placed[i]
            if d == n:  # a full board
                st[ST_FULL] += 1
                if score == full:
                    st[ST_STATUS] = PERFECT
                    st[ST_D] = d
                    st[ST_BEST_D] = bd
                    st[ST_BEST_SCORE] = bs
                    return nodes
                d -= 1
                used[pl >> 2] = 0
                placed[c] = -1
                continue
        # enter depth d
        key = kbase[d] + scol[ia[d]] * K + scol[ib[d]]
        ptr[d] = kstart[key]
        mid[d] = kmid[key]
        lim[d] = kend[key] if allow[d] > mm else kmid[key]
    st[ST_D] = d
    st[ST_BEST_D] = bd
    st[ST_BEST_SCORE] = bs
    return nodes
