"""Private numba kernels of the corolle enumerator.  Arrays in, arrays out, no I/O.

Shared vocabulary (built by `e2store.enumerate`):

* a *level* is an on-board slot of the corolle, in ring order; `L` levels in all;
* `nb1[l]`, `nb2[l]`: levels of the 1 or 2 inner neighbours of level l (-1 when absent),
  `ns1[l]`, `ns2[l]`: the side of that neighbour which touches level l;
* candidates of level l live in bucket `base[l] + c1 * C + c2`, where c1, c2 are the colours
  the neighbours show towards it: `cands[bstart[b]:bstart[b+1]]` are the packed placements
  `piece*4 + r` that fit the cell's kind and show c1, c2 on the touching sides, ascending;
* `colours[c, s]` is the colour placement c shows on side s.

The pure-Python twins of these kernels live in `tests/naive.py`.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def _bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours):
    key = base[level]
    a = nb1[level]
    if a >= 0:
        key += colours[placed[a], ns1[level]] * n_colours
        b = nb2[level]
        if b >= 0:
            key += colours[placed[b], ns2[level]]
    return key


@njit(cache=True, nogil=True)
def count_prefixes(prefixes, n_levels, nb1, ns1, nb2, ns2, base, n_colours, bstart, cands,
                   colours, n_pieces):
    """Count the corolles below each prefix (a filling of the first k levels, k < L).

    Returns (counts, nodes) per prefix.  The last level is counted, not walked: its unused
    candidates are added at once (each still counts as one node, i.e. one placement).
    """
    n_pref, k = prefixes.shape
    counts = np.zeros(n_pref, dtype=np.int64)
    nodes = np.zeros(n_pref, dtype=np.int64)
    used = np.zeros(n_pieces, dtype=np.bool_)
    placed = np.zeros(n_levels, dtype=np.int64)
    pos = np.zeros(n_levels, dtype=np.int64)
    end = np.zeros(n_levels, dtype=np.int64)
    last = n_levels - 1
    for b in range(n_pref):
        used[:] = False
        for j in range(k):
            placed[j] = prefixes[b, j]
            used[placed[j] >> 2] = True
        cnt = 0
        nd = 0
        if k == last:
            key = _bucket(last, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
            for t in range(bstart[key], bstart[key + 1]):
                if not used[cands[t] >> 2]:
                    cnt += 1
            counts[b] = cnt
            nodes[b] = cnt
            continue
        level = k
        key = _bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
        pos[level] = bstart[key]
        end[level] = bstart[key + 1]
        while True:
            if pos[level] >= end[level]:
                level -= 1
                if level < k:
                    break
                used[placed[level] >> 2] = False
                continue
            c = cands[pos[level]]
            pos[level] += 1
            if used[c >> 2]:
                continue
            placed[level] = c
            nd += 1
            if level + 1 == last:
                used[c >> 2] = True
                key = _bucket(last, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
                for t in range(bstart[key], bstart[key + 1]):
                    if not used[cands[t] >> 2]:
                        cnt += 1
                used[c >> 2] = False
                continue
            used[c >> 2] = True
            level += 1
            key = _bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
            pos[level] = bstart[key]
            end[level] = bstart[key + 1]
        counts[b] = cnt
        nodes[b] = nd + cnt
    return counts, nodes


@njit(cache=True, nogil=True)
def emit_chunk(state, pos, end, placed, used, start_level, n_levels, nb1, ns1, nb2, ns2, base,
               n_colours, bstart, cands, colours, slot_of, front_level, front_side, cells_out,
               front_out):
    """Resumable depth-first walk writing corolles column-wise into the output buffers.

    `state` = [level, fresh, done, nodes]: call again with the same state arrays to go on
    where the previous call stopped.  Levels below `start_level` are a fixed prefix already
    in `placed`/`used`.  Writes at most `cells_out.shape[1]` rows; returns the number written.
    Off-board rows of `cells_out` and `front_out` are never touched (the caller fills -1).
    """
    cap = cells_out.shape[1]
    n_front = front_level.shape[0]
    n = 0
    if state[2] == 1:
        return 0
    level = state[0]
    nodes = state[3]
    last = n_levels - 1
    if state[1] == 1:
        state[1] = 0
        level = start_level
        key = _bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
        pos[level] = bstart[key]
        end[level] = bstart[key + 1]
    while True:
        if pos[level] >= end[level]:
            level -= 1
            if level < start_level:
                state[2] = 1
                break
            used[placed[level] >> 2] = False
            continue
        c = cands[pos[level]]
        pos[level] += 1
        if used[c >> 2]:
            continue
        placed[level] = c
        nodes += 1
        if level == last:
            for j in range(n_levels):
                cells_out[slot_of[j], n] = placed[j]
            for f in range(n_front):
                lv = front_level[f]
                if lv >= 0:
                    front_out[f, n] = colours[placed[lv], front_side[f]]
            n += 1
            if n == cap:
                break
            continue
        used[c >> 2] = True
        level += 1
        key = _bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
        pos[level] = bstart[key]
        end[level] = bstart[key + 1]
    state[0] = level
    state[3] = nodes
    return n


@njit(cache=True, nogil=True)
def rotate_rows(cells, front, perm, q, front_shift):
    """Turn corolles q quarter turns clockwise: slot i -> perm[i], rotation +q, frontier shift.

    `cells` is (S, n) packed placements (-1 off board), `front` (F, n) colours.
    """
    s, n = cells.shape
    f = front.shape[0]
    out_c = np.empty_like(cells)
    out_f = np.empty_like(front)
    for i in range(s):
        dst = perm[i]
        for j in range(n):
            v = cells[i, j]
            out_c[dst, j] = v if v < 0 else (v & ~3) | ((v + q) & 3)
    for i in range(f):
        dst = (i + front_shift) % f
        for j in range(n):
            out_f[dst, j] = front[i, j]
    return out_c, out_f
