"""Private numba kernels of the corolle enumerator.  Arrays in, arrays out, no I/O.

Shared vocabulary (built by `e2store.corolles.enumerate`):

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

from e2store.bits import ctpop


@njit(cache=True, nogil=True, inline="always")
def bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours):
    key = base[level]
    a = nb1[level]
    if a >= 0:
        key += colours[placed[a], ns1[level]] * n_colours
        b = nb2[level]
        if b >= 0:
            key += colours[placed[b], ns2[level]]
    return key


@njit(cache=True, nogil=True, inline="always")
def _take(used, p, nxt, flag):
    """Mark piece p used (`flag` True) or free again; in a distinct walk (`nxt` not None)
    its class's next copy becomes free when it is used, and blocked again after."""
    used[p] = flag
    if nxt is not None:
        q = nxt[p]
        if q >= 0:
            used[q] = not flag


@njit(cache=True, nogil=True)
def count_prefixes(prefixes, n_levels, nb1, ns1, nb2, ns2, base, n_colours, bstart, cands,
                   colours, n_pieces, distinct=None, raw=None):
    """Count the corolles below each prefix (a filling of the first k levels, k < L).

    Returns (counts, nodes) per prefix.  The last level is counted, not walked: its unused
    candidates are added at once (each still counts as one node, i.e. one placement).

    DISTINCT: with `distinct` = (next copy per piece or -1, raw weight per piece, used at
    the start), the copies of a class are placed lowest first (the walk frees each next
    copy as the one before is placed), so each distinct corolle is counted once, and
    `raw[b]` receives the raw corolles they stand for: the sum over them of the product of
    their pieces' weights (`e2store.instance.classes.DistinctPieces`).  The candidates must hold one
    rotation per look.
    """
    n_pref, k = prefixes.shape
    counts = np.zeros(n_pref, dtype=np.int64)
    nodes = np.zeros(n_pref, dtype=np.int64)
    used = np.zeros(n_pieces, dtype=np.bool_)
    placed = np.zeros(n_levels, dtype=np.int64)
    pos = np.zeros(n_levels, dtype=np.int64)
    end = np.zeros(n_levels, dtype=np.int64)
    pw = np.ones(n_levels + 1, dtype=np.int64)  # raw weight of the levels above each one
    last = n_levels - 1
    nxt = None if distinct is None else distinct[0]
    for b in range(n_pref):
        if distinct is None:
            used[:] = False
        else:
            used[:] = distinct[2]
        for j in range(k):
            placed[j] = prefixes[b, j]
            _take(used, placed[j] >> 2, nxt, True)
            if distinct is not None:
                pw[j + 1] = pw[j] * distinct[1][placed[j] >> 2]
        cnt = 0
        nd = 0
        rw = 0
        if k == last:
            key = bucket(last, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
            for t in range(bstart[key], bstart[key + 1]):
                if not used[cands[t] >> 2]:
                    cnt += 1
                    if distinct is not None:
                        rw += pw[k] * distinct[1][cands[t] >> 2]
            counts[b] = cnt
            nodes[b] = cnt
            if raw is not None:
                raw[b] = rw
            continue
        level = k
        key = bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
        pos[level] = bstart[key]
        end[level] = bstart[key + 1]
        while True:
            if pos[level] >= end[level]:
                level -= 1
                if level < k:
                    break
                _take(used, placed[level] >> 2, nxt, False)
                continue
            c = cands[pos[level]]
            pos[level] += 1
            if used[c >> 2]:
                continue
            placed[level] = c
            nd += 1
            if distinct is not None:
                pw[level + 1] = pw[level] * distinct[1][c >> 2]
            if level + 1 == last:
                _take(used, c >> 2, nxt, True)
                key = bucket(last, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
                for t in range(bstart[key], bstart[key + 1]):
                    if not used[cands[t] >> 2]:
                        cnt += 1
                        if distinct is not None:
                            rw += pw[last] * distinct[1][cands[t] >> 2]
                _take(used, c >> 2, nxt, False)
                continue
            _take(used, c >> 2, nxt, True)
            level += 1
            key = bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
            pos[level] = bstart[key]
            end[level] = bstart[key + 1]
        counts[b] = cnt
        nodes[b] = nd + cnt
        if raw is not None:
            raw[b] = rw
    return counts, nodes


@njit(cache=True, nogil=True)
def emit_chunk(state, pos, end, placed, used, start_level, n_levels, nb1, ns1, nb2, ns2, base,
               n_colours, bstart, cands, colours, slot_of, front_level, front_side, cells_out,
               front_out, nxt=None):
    """Resumable depth-first walk writing corolles column-wise into the output buffers.

    `state` = [level, fresh, done, nodes]: call again with the same state arrays to go on
    where the previous call stopped.  Levels below `start_level` are a fixed prefix already
    in `placed`/`used`.  Writes at most `cells_out.shape[1]` rows; returns the number written.
    Off-board rows of `cells_out` and `front_out` are never touched (the caller fills -1).
    With `nxt` (next copy per piece, -1 for the last), a distinct walk: copies of a class
    are placed lowest first, as in `count_prefixes`.
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
        key = bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
        pos[level] = bstart[key]
        end[level] = bstart[key + 1]
    while True:
        if pos[level] >= end[level]:
            level -= 1
            if level < start_level:
                state[2] = 1
                break
            _take(used, placed[level] >> 2, nxt, False)
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
        _take(used, c >> 2, nxt, True)
        level += 1
        key = bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
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
def canonical_rows(cells, cls, same, weight):
    """Distinct corolles in canonical form: per column of `cells` (S, n) (-1 off board),
    each class's copies renamed lowest first in slot order and turned to the rotation below
    the copy's period that shows the same colours (`same[placement, rank]`), and the
    multiplicity, the product of the renamed pieces' `weight`s
    (`e2store.instance.classes.DistinctPieces`)."""
    s, n = cells.shape
    out = np.empty_like(cells)
    mult = np.empty(n, dtype=np.int64)
    seen = np.empty(s, dtype=np.int64)
    for i in range(n):
        w = 1
        k = 0
        for j in range(s):
            v = cells[j, i]
            if v < 0:
                out[j, i] = v
                continue
            c = cls[v >> 2]
            rank = 0
            for t in range(k):
                if seen[t] == c:
                    rank += 1
            seen[k] = c
            k += 1
            q = same[v, rank]
            out[j, i] = q
            w *= weight[q >> 2]
        mult[i] = w
    return out, mult


# ---------------------------------------------------------------------------------------
# Injective choices of the last ring by Moebius inversion over set partitions.
#
# The corolles below a stem are the ways to pick one placement per outer list with all
# pieces distinct.  With w_i(p) the placements of piece p in list i,
#     injective = sum over set partitions P of the lists of  prod_{B in P} mu(B) g(B),
#     g(B) = sum_p prod_{i in B} w_i(p),   mu(B) = (-1)^(|B|-1) (|B|-1)!
# (Moebius inversion on the partition lattice).  A block whose lists share no piece has
# g = 0, so the sum factorises over the connected components of the "shares a piece"
# graph, and only partitions into piece-sharing blocks are visited.  Lists are piece
# bitsets (`pbits[bucket]`, 64 pieces per word) with the stem's pieces masked out; piece
# weights `pwt[bucket, piece]` are only read for the pieces `hbits[bucket]` holds twice.
# ---------------------------------------------------------------------------------------


INT_LIMIT = 4e18  # |partial sums| kept below this: int64 arithmetic never wraps (max 9.2e18)


@njit(cache=True, nogil=True, inline="always")
def _lowest(mask):
    i = 0
    while not (mask >> i) & 1:
        i += 1
    return i


@njit(cache=True, nogil=True, inline="always")
def _list_blocks(i, m, eff, sizes, keys, hbits, pwt, unit, nb, scratch):
    """Link list i to the lists after it and append every block whose lowest list is i
    (with its weight mu(|B|) g(B)) from index `nb`; returns the new block count.

    Lists are taken from the last down: when list i is reached every link between later
    lists is known, so a block only grows by lists linked to all its members.  A list
    with key -1 is a single piece of weight 1 (see `_ring_child`).
    """
    nw = eff.shape[1]
    ints = scratch[1]
    adj = ints[2]
    elem = ints[5]
    cand = ints[6]
    bfirst = ints[10]
    blast = ints[11]
    pmask = ints[12]
    band = scratch[2]
    mu = scratch[3]
    bmask = scratch[4]
    bw = scratch[5]
    hun = scratch[9]
    adj[i] = 0
    for j in range(i + 1, m):
        for w in range(nw):
            if eff[i, w] & eff[j, w]:
                adj[i] |= np.int64(1) << j
                adj[j] |= np.int64(1) << i
                break
    bfirst[i] = nb
    bmask[nb] = np.int64(1) << i
    bw[nb] = sizes[i]
    nb += 1
    for w in range(nw):
        band[0, w] = eff[i, w]
        hun[0, w] = hbits[keys[i], w] if keys[i] >= 0 else np.uint64(0)
    elem[0] = i
    pmask[0] = np.int64(1) << i
    cand[0] = adj[i]
    d = 0
    while d >= 0:
        c = cand[d]
        if c == 0:
            d -= 1
            continue
        low = c & -c
        cand[d] = c ^ low
        j = _lowest(low)
        g = 0
        for w in range(nw):
            v = band[d, w] & eff[j, w]
            band[d + 1, w] = v
            g += ctpop(v)
        if g == 0:
            continue
        elem[d + 1] = j
        if not unit:  # pieces some member holds in several rotations weigh more
            kj = keys[j]
            for w in range(nw):
                hun[d + 1, w] = hun[d, w] | hbits[kj, w] if kj >= 0 else hun[d, w]
                hv = band[d + 1, w] & hun[d + 1, w]
                while hv:
                    lowb = hv & (~hv + np.uint64(1))
                    p = w * 64 + ctpop(lowb - np.uint64(1))
                    prod = 1
                    for t in range(d + 2):
                        if keys[elem[t]] >= 0:
                            prod *= pwt[keys[elem[t]], p]
                    g += prod - 1
                    hv ^= lowb
        pmask[d + 1] = pmask[d] | low
        bmask[nb] = pmask[d + 1]
        if float(mu[d + 2]) * g < -INT_LIMIT or float(mu[d + 2]) * g > INT_LIMIT:
            scratch[8][2] = 1  # the block's weight leaves the int64 range
        bw[nb] = mu[d + 2] * g
        nb += 1
        cand[d + 1] = cand[d] & adj[j]
        d += 1
    blast[i] = nb
    return nb


@njit(cache=True, nogil=True)
def _component_product(m, sizes, scratch, wmask):
    """Product over the components of the piece-sharing graph (`adj`) of their partition
    sums, from the blocks `_list_blocks` listed.  Memo entries of subsets outside `wmask`
    are kept from the last `_ring_parent` (wmask -1: nothing is kept).  Returns -1 when
    a block weight, a partial sum or the product could leave the int64 range."""
    ints = scratch[1]
    adj = ints[2]
    bfirst = ints[10]
    blast = ints[11]
    bw = scratch[5]
    stamp = scratch[8]
    if stamp[2]:
        return -1
    stamp[0] += 1
    if wmask == -1:
        stamp[1] = stamp[0]
    total = 1
    seen = np.int64(0)
    for start in range(m):
        if (seen >> start) & 1:
            continue
        cmask = np.int64(1) << start
        frontier = cmask
        while frontier:
            nxt = np.int64(0)
            f = frontier
            while f:
                low = f & -f
                nxt |= adj[_lowest(low)]
                f ^= low
            frontier = nxt & ~cmask
            cmask |= nxt
        seen |= cmask
        if cmask == np.int64(1) << start:
            part = sizes[start]
        elif blast[start] - bfirst[start] == 2 and ctpop(np.uint64(cmask)) == 2:
            other = sizes[_lowest(cmask ^ (np.int64(1) << start))]
            if float(sizes[start]) * other > INT_LIMIT:
                return -1
            part = sizes[start] * other + bw[bfirst[start] + 1]
        else:
            part = _partition_sum(cmask, scratch, wmask)
            if stamp[2]:
                return -1
        if part == 0:
            return 0
        if float(total) * part > INT_LIMIT:
            return -1
        total *= part
    return total


@njit(cache=True, nogil=True)
def _injective(eff, sizes, keys, hbits, pwt, unit, m, scratch):
    """Injective choices of m lists (piece bitsets `eff`, placements `sizes`): every block
    of lists with a common piece, then the partition sum per component (-1: past int64)."""
    scratch[8][2] = 0
    nb = 0
    for i in range(m - 1, -1, -1):
        nb = _list_blocks(i, m, eff, sizes, keys, hbits, pwt, unit, nb, scratch)
    return _component_product(m, sizes, scratch, -1)


@njit(cache=True, nogil=True)
def _partition_sum(full, scratch, wmask):
    """Sum over the partitions of the component `full` (a mask of lists) into blocks:
    F(S) = sum over the blocks B of S holding S's lowest list of weight(B) F(S - B),
    memoised top-down from the whole component.  F of a subset outside `wmask` carries
    the parent's mark `stamp[1]`: the siblings of a parent share it.  A term or partial
    sum that could leave the int64 range sets the overflow flag `stamp[2]` (result 0)."""
    ints = scratch[1]
    sstate = ints[7]
    sblk = ints[8]
    sacc = ints[9]
    bfirst = ints[10]
    blast = ints[11]
    bmask = scratch[4]
    bw = scratch[5]
    fval = scratch[6]
    fdone = scratch[7]
    mark = scratch[8][0]
    pmark = scratch[8][1]
    sabs = scratch[10]
    if fdone[full] == (mark if full & wmask else pmark):
        return fval[full]
    sp = 0
    sstate[0] = full
    sblk[0] = bfirst[_lowest(full)]
    sacc[0] = 0
    sabs[0] = 0.0
    while sp >= 0:
        s = sstate[sp]
        b = sblk[sp]
        end = blast[_lowest(s)]
        pushed = False
        while b < end:
            blk = bmask[b]
            if blk & ~s == 0:
                rest = s & ~blk
                if rest == 0:
                    sacc[sp] += bw[b]
                    sabs[sp] += abs(float(bw[b]))
                elif fdone[rest] == (mark if rest & wmask else pmark):
                    sabs[sp] += abs(float(bw[b]) * fval[rest])
                    if sabs[sp] > INT_LIMIT:
                        scratch[8][2] = 1
                        return 0
                    sacc[sp] += bw[b] * fval[rest]
                else:
                    sblk[sp] = b
                    sp += 1
                    sstate[sp] = rest
                    sblk[sp] = bfirst[_lowest(rest)]
                    sacc[sp] = 0
                    sabs[sp] = 0.0
                    pushed = True
                    break
            b += 1
        if pushed:
            continue
        fval[s] = sacc[sp]
        fdone[s] = mark if s & wmask else pmark
        sp -= 1
    return fval[full]


@njit(cache=True, nogil=True)
def ring_scratch(m, nw):
    """Scratch arrays of `_outer_ring_mobius` for m outer lists of nw-word piece bitsets:
    (eff, ints, band, mu, block masks, block weights, memo values, memo marks, stamps (the
    current one and the parent's, see `_partition_sum`; the overflow flag), heavy pieces
    along the block walk, magnitudes of the partition sum's accumulators)."""
    mm = max(m, 1)
    mu = np.zeros(mm + 2, dtype=np.int64)
    f = 1
    for s in range(1, mm + 2):
        mu[s] = f if s % 2 == 1 else -f
        f *= s
    return (np.zeros((mm, nw), dtype=np.uint64), np.zeros((13, mm + 2), dtype=np.int64),
            np.zeros((mm + 1, nw), dtype=np.uint64), mu,
            np.zeros(1 << mm, dtype=np.int64), np.zeros(1 << mm, dtype=np.int64),
            np.zeros(1 << mm, dtype=np.int64), np.zeros(1 << mm, dtype=np.int64),
            np.zeros(3, dtype=np.int64), np.zeros((mm + 1, nw), dtype=np.uint64),
            np.zeros(mm + 2, dtype=np.float64))


@njit(cache=True, nogil=True, inline="always")
def _fill_list(i, key, ubits, bstart, pbits, hbits, pwt, unit, eff):
    """Row i of `eff`: bucket `key` as a piece bitset without the pieces in `ubits`;
    returns its placements."""
    s = bstart[key + 1] - bstart[key]
    for w in range(eff.shape[1]):
        v = pbits[key, w]
        hit = v & ubits[w]
        eff[i, w] = v ^ hit
        if hit:
            s -= ctpop(hit)
            if not unit:
                hit &= hbits[key, w]
                while hit:
                    low = hit & (~hit + np.uint64(1))
                    s -= pwt[key, w * 64 + ctpop(low - np.uint64(1))] - 1
                    hit ^= low
    return s


@njit(cache=True, nogil=True)
def _outer_ring_mobius(placed, ubits, n_stem, n_levels, nb1, ns1, nb2, ns2, base, n_colours,
                       bstart, colours, pbits, hbits, pwt, unit, scratch):
    """Injective choices of the last ring given a filled stem (levels < n_stem) whose
    pieces are the bits of `ubits`; nothing is walked but piece-sharing partitions.

    Returns -1 when a term of the partition sum could leave the int64 range.
    """
    m = n_levels - n_stem
    if m == 0:
        return 1
    eff = scratch[0]
    ints = scratch[1]
    keys = ints[0]
    sizes = ints[1]
    for i in range(m):
        key = bucket(n_stem + i, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
        keys[i] = key
        s = _fill_list(i, key, ubits, bstart, pbits, hbits, pwt, unit, eff)
        if s == 0:
            return 0
        sizes[i] = s
    return _injective(eff, sizes, keys, hbits, pwt, unit, m, scratch)


# The stem walk meets every parent (a stem without its last cell) once and then each of
# its children.  Most last-ring lists do not touch the last stem cell: those lists F, their
# links and their blocks are made once per parent (`_ring_parent`).  A child (`_ring_child`)
# makes only the lists V next to its last cell, without the stem's pieces, and one more
# list holding just the last cell's piece p: an injective choice must then give p to that
# list, so no list may use p, and F never needs to lose p.  Combined list indices: V lists
# 0..nV-1, the piece list nV, F lists nV+1..m.


@njit(cache=True, nogil=True)
def ring_plan(n_stem, n_levels, nb1, nb2):
    """Outer levels (offsets from n_stem) touching the last stem level first, then the
    others; and how many touch it."""
    m = n_levels - n_stem
    order = np.zeros(max(m, 1), dtype=np.int64)
    t = 0
    n_v = 0
    for dep in (True, False):
        for i in range(m):
            lvl = n_stem + i
            if (nb1[lvl] == n_stem - 1 or nb2[lvl] == n_stem - 1) == dep:
                order[t] = i
                t += 1
        if dep:
            n_v = t
    return order, n_v


@njit(cache=True, nogil=True, inline="always")
def _fill_ordered(t0, t1, shift, placed, ubits, n_stem, order, nb1, ns1, nb2, ns2, base,
                  n_colours, bstart, colours, pbits, hbits, pwt, unit, scratch):
    """Lists of the outer levels order[t0:t1] into rows t + shift; False if one is empty."""
    eff = scratch[0]
    keys = scratch[1][0]
    sizes = scratch[1][1]
    for t in range(t0, t1):
        i = t + shift
        key = bucket(n_stem + order[t], placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
        keys[i] = key
        s = _fill_list(i, key, ubits, bstart, pbits, hbits, pwt, unit, eff)
        if s == 0:
            return False
        sizes[i] = s
    return True


@njit(cache=True, nogil=True)
def _ring_parent(placed, ubits, n_stem, m, order, n_v, nb1, ns1, nb2, ns2, base, n_colours,
                 bstart, colours, pbits, hbits, pwt, unit, scratch, saved):
    """The lists F of a parent (levels < n_stem - 1 filled), their links and blocks; False
    when one is empty (no child has a completion).  `saved` keeps [blocks, overflow, links]."""
    eff = scratch[0]
    ints = scratch[1]
    keys = ints[0]
    sizes = ints[1]
    adj = ints[2]
    top = m + 1
    if not _fill_ordered(n_v, m, 1, placed, ubits, n_stem, order, nb1, ns1, nb2, ns2, base,
                         n_colours, bstart, colours, pbits, hbits, pwt, unit, scratch):
        return False
    scratch[8][2] = 0
    nb = 0
    for i in range(top - 1, n_v, -1):
        nb = _list_blocks(i, top, eff, sizes, keys, hbits, pwt, unit, nb, scratch)
    saved[0] = nb
    saved[1] = scratch[8][2]
    scratch[8][0] += 1  # a new parent: forget the partition sums of the last one's F
    scratch[8][1] = scratch[8][0]
    for i in range(n_v + 1, top):
        saved[2 + i] = adj[i]
    return True


@njit(cache=True, nogil=True)
def _ring_child(placed, ubits, piece, n_stem, m, order, n_v, nb1, ns1, nb2, ns2, base,
                n_colours, bstart, colours, pbits, hbits, pwt, unit, scratch, saved):
    """Injective choices of the last ring below a child of the parent `_ring_parent` last
    saw, whose last cell holds `piece` (already in `ubits`); -1 past the int64 range."""
    eff = scratch[0]
    ints = scratch[1]
    keys = ints[0]
    sizes = ints[1]
    adj = ints[2]
    top = m + 1
    if not _fill_ordered(0, n_v, 0, placed, ubits, n_stem, order, nb1, ns1, nb2, ns2, base,
                         n_colours, bstart, colours, pbits, hbits, pwt, unit, scratch):
        return 0
    scratch[8][2] = saved[1]
    keys[n_v] = -1
    sizes[n_v] = 1
    for w in range(eff.shape[1]):
        eff[n_v, w] = 0
    eff[n_v, piece >> 6] = np.uint64(1) << np.uint64(piece & 63)
    for i in range(n_v + 1, top):
        adj[i] = saved[2 + i]
    nb = saved[0]
    for i in range(n_v, -1, -1):
        nb = _list_blocks(i, top, eff, sizes, keys, hbits, pwt, unit, nb, scratch)
    return _component_product(top, sizes, scratch, (np.int64(1) << (n_v + 1)) - 1)


@njit(cache=True, nogil=True, inline="always")
def has_piece(ubits, p):
    return (ubits[p >> 6] >> np.uint64(p & 63)) & np.uint64(1)


@njit(cache=True, nogil=True, inline="always")
def flip_piece(ubits, p):
    ubits[p >> 6] ^= np.uint64(1) << np.uint64(p & 63)


@njit(cache=True, nogil=True)
def count_factorised(prefixes, n_stem, n_levels, nb1, ns1, nb2, ns2, base, n_colours, bstart,
                     cands, colours, pbits, hbits, pwt, unit):
    """Count corolles below each stem prefix without walking the last ring.

    The stem is the first `n_stem` levels (rings 0..h-1); each prefix fixes its first k
    levels (k <= n_stem).  Returns (corolles, stems) per prefix, where stems counts the
    fillings of the stem that have at least one completion; corolles is -1 for a prefix
    whose count could leave the int64 range (see `_outer_ring_mobius`).
    """
    n_pref, k = prefixes.shape
    m = n_levels - n_stem
    counts = np.zeros(n_pref, dtype=np.int64)
    stems = np.zeros(n_pref, dtype=np.int64)
    ubits = np.zeros(pbits.shape[1], dtype=np.uint64)
    placed = np.zeros(max(n_levels, 1), dtype=np.int64)
    pos = np.zeros(max(n_levels, 1), dtype=np.int64)
    end = np.zeros(max(n_levels, 1), dtype=np.int64)
    scratch = ring_scratch(m + 1, pbits.shape[1])
    order, n_v = ring_plan(n_stem, n_levels, nb1, nb2)
    saved = np.zeros(m + 3, dtype=np.int64)
    for b in range(n_pref):
        ubits[:] = 0
        for j in range(k):
            placed[j] = prefixes[b, j]
            flip_piece(ubits, placed[j] >> 2)
        cnt = 0
        nst = 0
        if k == n_stem:
            cnt = _outer_ring_mobius(placed, ubits, n_stem, n_levels, nb1, ns1, nb2, ns2,
                                     base, n_colours, bstart, colours, pbits, hbits, pwt,
                                     unit, scratch)
            counts[b] = cnt
            stems[b] = 1 if cnt > 0 else 0
            continue
        shadow = 0.0
        level = k
        key = bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
        pos[level] = bstart[key]
        end[level] = bstart[key + 1]
        if level == n_stem - 1 and not _ring_parent(
                placed, ubits, n_stem, m, order, n_v, nb1, ns1, nb2, ns2, base, n_colours,
                bstart, colours, pbits, hbits, pwt, unit, scratch, saved):
            pos[level] = end[level]
        while True:
            if pos[level] >= end[level]:
                level -= 1
                if level < k:
                    break
                flip_piece(ubits, placed[level] >> 2)
                continue
            c = cands[pos[level]]
            pos[level] += 1
            if has_piece(ubits, c >> 2):
                continue
            placed[level] = c
            flip_piece(ubits, c >> 2)
            if level + 1 == n_stem:
                got = _ring_child(placed, ubits, c >> 2, n_stem, m, order, n_v, nb1, ns1, nb2,
                                  ns2, base, n_colours, bstart, colours, pbits, hbits, pwt,
                                  unit, scratch, saved)
                shadow += got
                if got < 0 or shadow > INT_LIMIT:  # could leave the int64 range: give up
                    cnt = -1
                    break
                cnt += got
                if got > 0:
                    nst += 1
                flip_piece(ubits, c >> 2)
                continue
            level += 1
            key = bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
            pos[level] = bstart[key]
            end[level] = bstart[key + 1]
            if level == n_stem - 1 and not _ring_parent(
                    placed, ubits, n_stem, m, order, n_v, nb1, ns1, nb2, ns2, base, n_colours,
                    bstart, colours, pbits, hbits, pwt, unit, scratch, saved):
                pos[level] = end[level]
        counts[b] = cnt
        stems[b] = nst
    return counts, stems


@njit(cache=True, nogil=True)
def sample_paths(prefixes, u, n_pieces, nb1, ns1, nb2, ns2, base, n_colours, bstart, cands,
                 colours):
    """Random paths of Knuth's estimator below each prefix (its first k levels fixed): path
    j of prefix b goes down u.shape[2] more levels choosing, at level l, free candidate
    `floor(u[b, j, l - k] * f)` of the f free ones (bucket order).  Returns the paths
    (n_pref * n_samp, k + u.shape[2]) and their weights, the product of the f met (0.0 for
    a path that dies; its row is then left as far as it got)."""
    n_pref, k = prefixes.shape
    n_samp, extra = u.shape[1], u.shape[2]
    paths = np.zeros((n_pref * n_samp, k + extra), dtype=np.int64)
    weights = np.zeros(n_pref * n_samp, dtype=np.float64)
    ubits = np.zeros((n_pieces + 63) // 64, dtype=np.uint64)
    for b in range(n_pref):
        for j in range(n_samp):
            row = b * n_samp + j
            placed = paths[row]
            ubits[:] = 0
            for i in range(k):
                placed[i] = prefixes[b, i]
                flip_piece(ubits, placed[i] >> 2)
            w = 1.0
            for level in range(k, k + extra):
                key = bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
                free = 0
                for t in range(bstart[key], bstart[key + 1]):
                    if not has_piece(ubits, cands[t] >> 2):
                        free += 1
                if free == 0:
                    w = 0.0
                    break
                pick = min(int(u[b, j, level - k] * free), free - 1)
                for t in range(bstart[key], bstart[key + 1]):
                    if not has_piece(ubits, cands[t] >> 2):
                        if pick == 0:
                            placed[level] = cands[t]
                            break
                        pick -= 1
                flip_piece(ubits, placed[level] >> 2)
                w *= free
            weights[row] = w
    return paths, weights


@njit(cache=True, nogil=True)
def cartesian_stems(prefixes, n_stem, n_levels, nb1, ns1, nb2, ns2, base, n_colours, bstart,
                    cands, colours, pbits, hbits, pwt, unit, fill, stems_out,
                    counts_out, lens_out, values_out, totals):
    """Stems (fillings of levels < n_stem) with at least one completion, and their last-ring
    candidate lists; the product of the last ring is never walked.

    Two passes: with `fill` False only `totals` = [rows, values of outer level 0, ...] is
    computed; with `fill` True the outputs (sized from the first pass) are written:
    `stems_out` (rows, n_stem) placements per stem level, `counts_out` (rows,) injective
    completions, `lens_out` (rows, m) list lengths per outer level, `values_out` (m, V) the
    candidates (stem pieces removed, ascending) of outer level i, row after row.
    `totals[0]` is -1 when a stem's count could leave the int64 range.
    """
    n_pref, k = prefixes.shape
    m = n_levels - n_stem
    ubits = np.zeros(pbits.shape[1], dtype=np.uint64)
    placed = np.zeros(max(n_levels, 1), dtype=np.int64)
    pos = np.zeros(max(n_levels, 1), dtype=np.int64)
    end = np.zeros(max(n_levels, 1), dtype=np.int64)
    scratch = ring_scratch(m, pbits.shape[1])
    cursor = np.zeros(m + 1, dtype=np.int64)
    row = 0
    for b in range(n_pref):
        ubits[:] = 0
        for j in range(k):
            placed[j] = prefixes[b, j]
            flip_piece(ubits, placed[j] >> 2)
        level = k
        if k < n_stem:
            key = bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
            pos[level] = bstart[key]
            end[level] = bstart[key + 1]
        while True:
            complete = k == n_stem and level == k
            if not complete:
                if pos[level] >= end[level]:
                    level -= 1
                    if level < k:
                        break
                    flip_piece(ubits, placed[level] >> 2)
                    continue
                c = cands[pos[level]]
                pos[level] += 1
                if has_piece(ubits, c >> 2):
                    continue
                placed[level] = c
                flip_piece(ubits, c >> 2)
                if level + 1 < n_stem:
                    level += 1
                    key = bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
                    pos[level] = bstart[key]
                    end[level] = bstart[key + 1]
                    continue
            got = _outer_ring_mobius(placed, ubits, n_stem, n_levels, nb1, ns1, nb2, ns2,
                                     base, n_colours, bstart, colours, pbits, hbits, pwt,
                                     unit, scratch)
            if got < 0:  # out of the int64 range: refuse (the caller raises)
                totals[0] = -1
                return
            if got > 0:
                for i in range(m):
                    key = bucket(n_stem + i, placed, nb1, ns1, nb2, ns2, base, n_colours,
                                  colours)
                    n_i = 0
                    for t in range(bstart[key], bstart[key + 1]):
                        v = cands[t]
                        if not has_piece(ubits, v >> 2):
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
            flip_piece(ubits, placed[level] >> 2)
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
            if write and r < out.shape[0]:
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
                if write and r < out.shape[0]:  # bound check: `out` is sized by the caller
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
    out = np.empty((max(0, int(total)), stems.shape[1] + offsets.shape[0]), dtype=np.int16)
    made = int(_walk_cartesian(stems, offsets, values, n_pieces, out, True).sum())
    if made != total:  # a damaged or crafted `corolles` column: never trust it for a size
        raise ValueError(f"the candidate lists expand to {made} corolles, the stored counts "
                         f"say {total}")
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
        last = -2
        for j in range(n):
            v = cells[i, j]
            if v != last:  # depth-first rows repeat a slot's value in runs
                last = v
                if 0 <= v < m:
                    row[v] = True


@njit(cache=True, nogil=True)
def heavy_bits(pwt, nw):
    """Per bucket, the pieces it holds in several rotations, as nw-word bitsets."""
    out = np.zeros((pwt.shape[0], nw), dtype=np.uint64)
    for b in range(pwt.shape[0]):
        for p in range(pwt.shape[1]):
            if pwt[b, p] > 1:
                out[b, p >> 6] |= np.uint64(1) << np.uint64(p & 63)
    return out


@njit(cache=True, nogil=True)
def injective_choices(eff, sizes, keys, pwt, unit):
    """Injective choices of the lists `eff` (piece bitsets) with `sizes` placements each;
    `pwt[keys[i], p]` is list i's placements of piece p.  The last-ring count on its own."""
    m = eff.shape[0]
    return _injective(eff.copy(), sizes.copy(), keys.copy(), heavy_bits(pwt, eff.shape[1]),
                      pwt, unit, m, ring_scratch(m, eff.shape[1]))
