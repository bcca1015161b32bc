"""Knuth's Algorithm C (exact cover with colours, TAOCP 7.2.2.1; dancing links) as a
numba kernel over flat arrays (`e2store.cover.xcc` builds them and wraps it).

The table: items 1..N in `llink`/`rlink` (the primary ones in the circular list headed
by 0, the secondary ones in that headed by N+1); nodes in `top`, `ulink`, `dlink`,
`color` (a header node i per item, its LEN in `top[i]`; an option's nodes between two
spacers, a spacer's `top` <= 0, its `ulink` the previous option's first node, its `dlink`
the next option's last); `opt_of[node]` the option of a node.

The search is a state machine resumable after `budget` options tried (`state`: phase,
level), so a caller can show progress and stop it between slices: nodes = options tried.
The item chosen at each level is the primary item with the fewest options left (the
minimum-remaining-values rule)."""

from __future__ import annotations

import numpy as np
from numba import njit

C2, C5, C6, C8, DONE = 2, 5, 6, 8, 9  # the phases of Algorithm C the state resumes at
RAN_OUT, FOUND_FIRST, FINISHED = 0, 1, 2  # why a slice returns


@njit(cache=True, inline="always")
def _hide(p, top, ulink, dlink, color):
    q = p + 1
    while q != p:
        x = top[q]
        u = ulink[q]
        d = dlink[q]
        if x <= 0:
            q = u  # a spacer: back to the option's first node
        elif color[q] < 0:
            q += 1  # purified: left in its list, restored by unpurify
        else:
            dlink[u] = d
            ulink[d] = u
            top[x] -= 1
            q += 1


@njit(cache=True, inline="always")
def _unhide(p, top, ulink, dlink, color):
    q = p - 1
    while q != p:
        x = top[q]
        u = ulink[q]
        d = dlink[q]
        if x <= 0:
            q = d  # a spacer: on to the option's last node
        elif color[q] < 0:
            q -= 1
        else:
            dlink[u] = q
            ulink[d] = q
            top[x] += 1
            q -= 1


@njit(cache=True)
def _cover(i, llink, rlink, top, ulink, dlink, color):
    p = dlink[i]
    while p != i:
        _hide(p, top, ulink, dlink, color)
        p = dlink[p]
    left = llink[i]
    right = rlink[i]
    rlink[left] = right
    llink[right] = left


@njit(cache=True)
def _uncover(i, llink, rlink, top, ulink, dlink, color):
    left = llink[i]
    right = rlink[i]
    rlink[left] = i
    llink[right] = i
    p = ulink[i]
    while p != i:
        _unhide(p, top, ulink, dlink, color)
        p = ulink[p]


@njit(cache=True)
def _purify(p, top, ulink, dlink, color):
    c = color[p]
    i = top[p]
    color[i] = c  # the header keeps the colour unpurify restores
    q = dlink[i]
    while q != i:
        if q != p:
            if color[q] == c:
                color[q] = -1
            else:
                _hide(q, top, ulink, dlink, color)
        q = dlink[q]


@njit(cache=True)
def _unpurify(p, top, ulink, dlink, color):
    i = top[p]
    c = color[i]
    q = ulink[i]
    while q != i:
        if q != p:
            if color[q] < 0:
                color[q] = c
            else:
                _unhide(q, top, ulink, dlink, color)
        q = ulink[q]


@njit(cache=True)
def _commit(p, j, llink, rlink, top, ulink, dlink, color):
    if color[p] == 0:
        _cover(j, llink, rlink, top, ulink, dlink, color)
    elif color[p] > 0:
        _purify(p, top, ulink, dlink, color)


@njit(cache=True)
def _uncommit(p, j, llink, rlink, top, ulink, dlink, color):
    if color[p] == 0:
        _uncover(j, llink, rlink, top, ulink, dlink, color)
    elif color[p] > 0:
        _unpurify(p, top, ulink, dlink, color)


@njit(cache=True)
def search_slice(llink, rlink, top, ulink, dlink, color, opt_of, x, item, state, budget,
                 first, out, counters):
    """Run Algorithm C from `state` (phase, level) for at most `budget` options tried;
    counters: solutions, nodes (options tried), solutions stored in `out` (k, levels) as
    option numbers, nodes to the first solution.  Returns RAN_OUT, FOUND_FIRST (with
    `first`) or FINISHED."""
    phase = state[0]
    lev = state[1]
    tried = 0
    while True:
        if phase == C2:
            if rlink[0] == 0:  # every primary item covered: a solution
                if counters[2] < out.shape[0]:
                    for k in range(lev):
                        out[counters[2], k] = opt_of[x[k]]
                    counters[2] += 1
                if counters[0] == 0:
                    counters[3] = counters[1]  # options tried to the first solution
                counters[0] += 1
                phase = C8
                if first:
                    state[0] = phase
                    state[1] = lev
                    return FOUND_FIRST
                continue
            i = rlink[0]  # C3: the fewest options left
            best = top[i]
            p = rlink[i]
            while p != 0 and best > 0:
                if top[p] < best:
                    best = top[p]
                    i = p
                p = rlink[p]
            item[lev] = i
            _cover(i, llink, rlink, top, ulink, dlink, color)  # C4
            x[lev] = dlink[i]
            phase = C5
        elif phase == C5:
            i = item[lev]
            if x[lev] == i:  # C7: no option left
                _uncover(i, llink, rlink, top, ulink, dlink, color)
                phase = C8
                continue
            if tried >= budget:
                state[0] = phase
                state[1] = lev
                return RAN_OUT
            tried += 1
            counters[1] += 1
            p = x[lev] + 1
            while p != x[lev]:
                j = top[p]
                if j <= 0:
                    p = ulink[p]
                else:
                    _commit(p, j, llink, rlink, top, ulink, dlink, color)
                    p += 1
            lev += 1
            phase = C2
        elif phase == C6:
            p = x[lev] - 1
            while p != x[lev]:
                j = top[p]
                if j <= 0:
                    p = dlink[p]
                else:
                    _uncommit(p, j, llink, rlink, top, ulink, dlink, color)
                    p -= 1
            x[lev] = dlink[x[lev]]
            phase = C5
        elif phase == C8:
            if lev == 0:
                state[0] = DONE
                state[1] = 0
                return FINISHED
            lev -= 1
            phase = C6
        else:
            return FINISHED


def empty_state() -> np.ndarray:
    """The state of a search not begun: phase C2, level 0."""
    return np.array([C2, 0], dtype=np.int64)
