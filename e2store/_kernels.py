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


@njit(cache=True, nogil=True)
def _outer_ring_count(placed, used, n_stem, n_levels, nb1, ns1, nb2, ns2, base, n_colours,
                      bstart, cands, colours, share, priv, nsh, shared, choice, prod):
    """Injective choices of the last ring given a filled stem (levels < n_stem).

    Each outer level's candidates are split into private ones (their piece fits no other
    outer level) and shared ones; private choices only multiply, so only the shared pieces
    are walked.  Scratch arrays are the caller's; `share` is left all zero.
    """
    m = n_levels - n_stem
    if m == 0:
        return 1
    for i in range(m):
        key = _bucket(n_stem + i, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
        for t in range(bstart[key], bstart[key + 1]):
            p = cands[t] >> 2
            if not used[p]:
                share[p] |= 1 << i
    empty = False
    for i in range(m):
        priv[i] = 0
        nsh[i] = 0
        key = _bucket(n_stem + i, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
        for t in range(bstart[key], bstart[key + 1]):
            p = cands[t] >> 2
            if used[p]:
                continue
            if share[p] == (1 << i):
                priv[i] += 1
            else:
                shared[i, nsh[i]] = p
                nsh[i] += 1
        if priv[i] + nsh[i] == 0:
            empty = True
    for i in range(m):  # leave `share` clean for the next stem
        key = _bucket(n_stem + i, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
        for t in range(bstart[key], bstart[key + 1]):
            share[cands[t] >> 2] = 0
    if empty:
        return 0
    total = 0
    prod[0] = 1
    i = 0
    choice[0] = -2
    while i >= 0:
        if i == m:
            total += prod[m]
            i -= 1
            continue
        c = choice[i]
        if c >= 0:
            used[shared[i, c]] = False
        c += 1
        while c < nsh[i]:
            if c == -1:
                if priv[i] > 0:
                    break
            elif not used[shared[i, c]]:
                break
            c += 1
        choice[i] = c
        if c >= nsh[i]:
            i -= 1
            continue
        if c == -1:
            prod[i + 1] = prod[i] * priv[i]
        else:
            used[shared[i, c]] = True
            prod[i + 1] = prod[i]
        i += 1
        if i < m:
            choice[i] = -2
    return total


@njit(cache=True, nogil=True)
def count_factorised(prefixes, n_stem, n_levels, nb1, ns1, nb2, ns2, base, n_colours, bstart,
                     cands, colours, n_pieces, max_bucket):
    """Count corolles below each stem prefix without walking the last ring.

    The stem is the first `n_stem` levels (rings 0..h-1); each prefix fixes its first k
    levels (k <= n_stem).  Returns (corolles, stems) per prefix, where stems counts the
    fillings of the stem that have at least one completion.
    """
    n_pref, k = prefixes.shape
    m = n_levels - n_stem
    counts = np.zeros(n_pref, dtype=np.int64)
    stems = np.zeros(n_pref, dtype=np.int64)
    used = np.zeros(n_pieces, dtype=np.bool_)
    placed = np.zeros(max(n_levels, 1), dtype=np.int64)
    pos = np.zeros(max(n_levels, 1), dtype=np.int64)
    end = np.zeros(max(n_levels, 1), dtype=np.int64)
    share = np.zeros(n_pieces, dtype=np.int64)
    priv = np.zeros(max(m, 1), dtype=np.int64)
    nsh = np.zeros(max(m, 1), dtype=np.int64)
    shared = np.zeros((max(m, 1), max(max_bucket, 1)), dtype=np.int64)
    choice = np.zeros(max(m, 1), dtype=np.int64)
    prod = np.zeros(m + 1, dtype=np.int64)
    for b in range(n_pref):
        used[:] = False
        for j in range(k):
            placed[j] = prefixes[b, j]
            used[placed[j] >> 2] = True
        cnt = 0
        nst = 0
        if k == n_stem:
            cnt = _outer_ring_count(placed, used, n_stem, n_levels, nb1, ns1, nb2, ns2, base,
                                    n_colours, bstart, cands, colours, share, priv, nsh,
                                    shared, choice, prod)
            counts[b] = cnt
            stems[b] = 1 if cnt > 0 else 0
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
            used[c >> 2] = True
            if level + 1 == n_stem:
                got = _outer_ring_count(placed, used, n_stem, n_levels, nb1, ns1, nb2, ns2,
                                        base, n_colours, bstart, cands, colours, share, priv,
                                        nsh, shared, choice, prod)
                cnt += got
                if got > 0:
                    nst += 1
                used[c >> 2] = False
                continue
            level += 1
            key = _bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
            pos[level] = bstart[key]
            end[level] = bstart[key + 1]
        counts[b] = cnt
        stems[b] = nst
    return counts, stems


@njit(cache=True, nogil=True)
def cartesian_stems(prefixes, n_stem, n_levels, nb1, ns1, nb2, ns2, base, n_colours, bstart,
                    cands, colours, n_pieces, max_bucket, fill, stems_out, counts_out,
                    lens_out, values_out, totals):
    """Stems (fillings of levels < n_stem) with at least one completion, and their last-ring
    candidate lists; the product of the last ring is never walked.

    Two passes: with `fill` False only `totals` = [rows, values of outer level 0, ...] is
    computed; with `fill` True the outputs (sized from the first pass) are written:
    `stems_out` (rows, n_stem) placements per stem level, `counts_out` (rows,) injective
    completions, `lens_out` (rows, m) list lengths per outer level, `values_out` (m, V) the
    candidates (stem pieces removed, ascending) of outer level i, row after row.
    """
    n_pref, k = prefixes.shape
    m = n_levels - n_stem
    used = np.zeros(n_pieces, dtype=np.bool_)
    placed = np.zeros(max(n_levels, 1), dtype=np.int64)
    pos = np.zeros(max(n_levels, 1), dtype=np.int64)
    end = np.zeros(max(n_levels, 1), dtype=np.int64)
    share = np.zeros(n_pieces, dtype=np.int64)
    priv = np.zeros(max(m, 1), dtype=np.int64)
    nsh = np.zeros(max(m, 1), dtype=np.int64)
    shared = np.zeros((max(m, 1), max(max_bucket, 1)), dtype=np.int64)
    choice = np.zeros(max(m, 1), dtype=np.int64)
    prod = np.zeros(m + 1, dtype=np.int64)
    cursor = np.zeros(m + 1, dtype=np.int64)
    row = 0
    for b in range(n_pref):
        used[:] = False
        for j in range(k):
            placed[j] = prefixes[b, j]
            used[placed[j] >> 2] = True
        level = k
        if k < n_stem:
            key = _bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
            pos[level] = bstart[key]
            end[level] = bstart[key + 1]
        while True:
            complete = k == n_stem and level == k
            if not complete:
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
                used[c >> 2] = True
                if level + 1 < n_stem:
                    level += 1
                    key = _bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
                    pos[level] = bstart[key]
                    end[level] = bstart[key + 1]
                    continue
            got = _outer_ring_count(placed, used, n_stem, n_levels, nb1, ns1, nb2, ns2, base,
                                    n_colours, bstart, cands, colours, share, priv, nsh,
                                    shared, choice, prod)
            if got > 0:
                for i in range(m):
                    key = _bucket(n_stem + i, placed, nb1, ns1, nb2, ns2, base, n_colours,
                                  colours)
                    n_i = 0
                    for t in range(bstart[key], bstart[key + 1]):
                        v = cands[t]
                        if not used[v >> 2]:
                            if fill:
                                values_out[i, cursor[i]] = v
                            cursor[i] += 1
                            n_i += 1
                    if fill:
                        lens_out[row, i] = n_i
                if fill:
                    for j in range(n_stem):
                        stems_out[row, j] = placed[j]
                    counts_out[row] = got
                row += 1
            if complete:
                break
            used[placed[level] >> 2] = False
    totals[0] = row
    for i in range(m):
        totals[1 + i] = cursor[i]


@njit(cache=True, nogil=True)
def _walk_cartesian(stems, offsets, values, n_pieces, out, write):
    """Walk every choice of each cartesian row with all pieces distinct (lexicographic in
    the candidate positions); returns the count per row, and with `write` also fills `out`
    (stem slots, then ring h) row after row."""
    n, s_in = stems.shape
    m = offsets.shape[0]
    counts = np.zeros(n, dtype=np.int64)
    used = np.zeros(n_pieces, dtype=np.bool_)
    pick = np.zeros(max(m, 1), dtype=np.int64)
    r = 0
    for j in range(n):
        for s in range(s_in):
            v = stems[j, s]
            if v >= 0:
                used[v >> 2] = True
        cnt = 0
        if m == 0:
            cnt = 1
            if write:
                for s in range(s_in):
                    out[r, s] = stems[j, s]
            r += 1
        else:
            i = 0
            pick[0] = offsets[0, j] - 1
            while i >= 0:
                p = pick[i]
                if p >= offsets[i, j]:
                    v = values[i, p]
                    if v >= 0:
                        used[v >> 2] = False
                p += 1
                while p < offsets[i, j + 1]:
                    v = values[i, p]
                    if v < 0 or not used[v >> 2]:
                        break
                    p += 1
                pick[i] = p
                if p >= offsets[i, j + 1]:
                    i -= 1
                    continue
                v = values[i, p]
                if v >= 0:
                    used[v >> 2] = True
                if i + 1 < m:
                    i += 1
                    pick[i] = offsets[i, j] - 1
                    continue
                if write:
                    for s in range(s_in):
                        out[r, s] = stems[j, s]
                    for q in range(m):
                        out[r, s_in + q] = values[q, pick[q]]
                r += 1
                cnt += 1  # slot i's choice stays marked; the next turn unmarks it
        counts[j] = cnt
        for s in range(s_in):
            v = stems[j, s]
            if v >= 0:
                used[v >> 2] = False
    return counts


@njit(cache=True, nogil=True)
def expand_cartesian(stems, offsets, values, n_pieces, total):
    """Expand cartesian rows into flat cell rows (slot order: stem slots, then ring h).

    `stems` (n, s_in) packed placements (-1 off board); for ring-h slot i and row j the
    candidates are `values[i, offsets[i, j]:offsets[i, j + 1]]` (a single -1 for an
    off-board slot).  Emits, row after row, every choice with all pieces distinct, in
    lexicographic order of the candidate positions; `total` is the number of such rows.
    """
    out = np.empty((total, stems.shape[1] + offsets.shape[0]), dtype=np.int16)
    _walk_cartesian(stems, offsets, values, n_pieces, out, True)
    return out


@njit(cache=True, nogil=True)
def count_cartesian_rows(stems, offsets, values, n_pieces):
    """Per cartesian row, the number of rows `expand_cartesian` would emit (used after the
    candidate lists have been filtered)."""
    out = np.empty((0, stems.shape[1] + offsets.shape[0]), dtype=np.int16)
    return _walk_cartesian(stems, offsets, values, n_pieces, out, False)


@njit(cache=True, nogil=True)
def feasible_candidates(stems, offsets, values, n_pieces):
    """Mark each ring-h candidate that occurs in at least one corolle of its row: the
    other slots then still have a choice with all pieces distinct.  Same layout as
    `expand_cartesian`; returns a bool array shaped like `values`."""
    n, s_in = stems.shape
    m = offsets.shape[0]
    ok = np.zeros(values.shape, dtype=np.bool_)
    used = np.zeros(n_pieces, dtype=np.bool_)
    pick = np.zeros(max(m, 1), dtype=np.int64)
    for j in range(n):
        for s in range(s_in):
            v = stems[j, s]
            if v >= 0:
                used[v >> 2] = True
        for k in range(m):
            for q in range(offsets[k, j], offsets[k, j + 1]):
                vk = values[k, q]
                if vk >= 0:
                    if used[vk >> 2]:
                        continue
                    used[vk >> 2] = True
                # depth-first search for one completion of the other slots
                found = m == 1
                i = 0 if k != 0 else 1
                if i < m:
                    pick[i] = offsets[i, j] - 1
                while not found and i >= 0 and i < m:
                    p = pick[i]
                    if p >= offsets[i, j]:
                        v = values[i, p]
                        if v >= 0:
                            used[v >> 2] = False
                    p += 1
                    while p < offsets[i, j + 1]:
                        v = values[i, p]
                        if v < 0 or not used[v >> 2]:
                            break
                        p += 1
                    pick[i] = p
                    if p >= offsets[i, j + 1]:
                        i -= 1
                        if i == k:
                            i -= 1
                        continue
                    v = values[i, p]
                    if v >= 0:
                        used[v >> 2] = True
                    nxt = i + 1
                    if nxt == k:
                        nxt += 1
                    if nxt >= m:
                        found = True
                        break
                    i = nxt
                    pick[i] = offsets[i, j] - 1
                # a found completion left every other slot's pick marked: undo them
                for t in range(m):
                    if t == k:
                        continue
                    p = pick[t]
                    if offsets[t, j] <= p < offsets[t, j + 1]:
                        v = values[t, p]
                        if v >= 0 and found:
                            used[v >> 2] = False
                if vk >= 0:
                    used[vk >> 2] = False
                ok[k, q] = found
        for s in range(s_in):
            v = stems[j, s]
            if v >= 0:
                used[v >> 2] = False
    return ok


@njit(cache=True, nogil=True)
def mark_placements(seen, cells):
    """Set seen[i, v] for every placement v slot i takes in slot-major `cells` (values
    outside 0..seen.shape[1]-1, such as -1 off the board, are ignored)."""
    s, n = cells.shape
    m = seen.shape[1]
    for i in range(s):
        row = seen[i]
        for j in range(n):
            v = cells[i, j]
            if 0 <= v < m:
                row[v] = True
