"""Private numba kernels of the hamming-3 count by arms (`e2store.corolles.arms`).
Arrays in, arrays out, no I/O; the level vocabulary is `_kernels`'s.  Pure-Python twin:
`tests/naive.py`
(`naive_arms`, a product of arm configurations).

Given the *core* (rings 0 and 1 and the four diagonal cells of ring 2), the rest of a
hamming-3 corolle is four *arms*: a ring-2 tip, the ring-3 cell beyond it and the two ring-3
cells beside it (each of those touches the tip and one diagonal).  Arms only interact by
piece distinctness: the corolles of a core are the tuples of one configuration per arm with
pairwise disjoint pieces.  The configurations of each arm are listed first; the tuples are
then counted one of two ways, both exact:

* *inclusion-exclusion* (`_count_ie`).  With C_X(F) the configurations of arm X whose pieces
  include the set F,

      sum over J of  prod_p a(|J_p|)  prod_X C_X(F_X),   a(j) = (-1)^(j-1) (j-1),

  where J assigns each piece p a set J_p of at least 2 arms (or none) and F_X are the pieces
  J gives arm X: the identity [p in at most one arm] = sum over J_p of a(|J_p|).  The C_X(F)
  are kept in a hash of (arm, sorted piece subset) keys; the sum is a depth-first walk over
  the pieces that fit several arms, cut wherever some C_X(F_X) is 0.  Cheap when arms share
  few pieces; its walk grows exponentially with the pieces they share.
* *bitsets* (`_count_bits`).  Per arm and piece, the bitset of the arm's configurations that
  hold the piece; arms sorted by size A <= B <= C <= D; for each configuration of A, each of
  B disjoint from it (a bitset of B), each of C disjoint from both, add the popcount of D's
  configurations disjoint from all three.  Its work is the disjoint triples of A, B, C times
  D's words, whatever the arms share: on dense boards (few colours) it is hundreds of times
  faster than the walk.

Measured per core (docs/counting.md), the bitsets win by 30x to 500x where arms share
many pieces and tie where they share few, so `method` BY_BITS takes them whenever every arm
fits in WORDS words, and the walk otherwise; BY_IE always walks (the cross-check).  An
absent arm (its tip off the board) is an arm with one configuration and no pieces.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from e2store.bits import ctpop, cttz
from e2store.corolles._kernels import INT_LIMIT, bucket, flip_piece, has_piece

PIECE_BITS = 11  # bits per piece in a subset key: piece id + 1 < 2048
MAX_PIECES = (1 << PIECE_BITS) - 1
_HMUL = np.uint64(0x9E3779B97F4A7C15)
_AJ = np.array([1, 0, -1, 2, -3], dtype=np.int64)  # a(j) for j = 0..4 arms
BY_BITS, BY_IE = 0, 1  # `method` of count_arms
WORDS = 64  # bitset words per arm: a core with an arm of more configurations takes the walk


@njit(cache=True, nogil=True, inline="always")
def _probe(key, hkey, hgen, gen, shift, mask):
    """The slot of key in the open-addressing hash, or of the empty slot where it goes."""
    s = np.int64((np.uint64(key) * _HMUL) >> shift)
    while hgen[s] == gen and hkey[s] != key:
        s = (s + 1) & mask
    return s


@njit(cache=True, nogil=True, inline="always")
def _lookup(key, hkey, hval, hgen, gen, shift, mask):
    s = _probe(key, hkey, hgen, gen, shift, mask)
    return hval[s] if hgen[s] == gen else 0


@njit(cache=True, nogil=True, inline="always")
def _full(n, w):
    """Word w of the bitset of n configurations, all set."""
    if (w + 1) * 64 <= n:
        return ~np.uint64(0)
    return (np.uint64(1) << np.uint64(n - 64 * w)) - np.uint64(1)


@njit(cache=True, nogil=True)
def _arm_configs(placed, ubits, arm_tip, arm_nleaf, arm_leaf, nb1, ns1, nb2, ns2, base,
                 n_colours, bstart, cands, colours, work, gen):
    """List every arm's configurations below a filled core (`placed`, pieces in `ubits`) as
    rows of sorted pieces (-1 padded), arm by arm, and mark the arms that can hold each
    piece.  Returns the rows, 0 as soon as an arm has none, or -2 when they do not fit."""
    amask, pgen, cfg, clen, arm, sc = work[3], work[4], work[13], work[14], work[19], work[20]
    cap = cfg.shape[0]
    lo, hi, idx, s = sc[0:3], sc[3:6], sc[6:9], sc[9:13]
    n = 0
    for a in range(4):
        arm[0, a] = n
        tl = arm_tip[a]
        if tl < 0:  # absent: one configuration without pieces
            if n >= cap:
                return -2
            cfg[n, :] = -1
            clen[n] = 0
            n += 1
            arm[1, a] = 1
            continue
        nl = arm_nleaf[a]
        key = bucket(tl, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
        for ti in range(bstart[key], bstart[key + 1]):
            t = cands[ti]
            tp = t >> 2
            if has_piece(ubits, tp):
                continue
            placed[tl] = t
            empty = False
            for j in range(nl):
                lk = bucket(arm_leaf[a, j], placed, nb1, ns1, nb2, ns2, base, n_colours,
                             colours)
                lo[j] = bstart[lk]
                hi[j] = bstart[lk + 1]
                idx[j] = lo[j]
                if lo[j] == hi[j]:
                    empty = True
            if empty:
                continue
            while True:
                ok = True
                m = 1
                s[0] = tp
                for j in range(nl):
                    p = cands[idx[j]] >> 2
                    if has_piece(ubits, p):
                        ok = False
                        break
                    for i in range(m):
                        if s[i] == p:
                            ok = False
                    if not ok:
                        break
                    i = m  # insertion into the sorted s[:m]
                    while i > 0 and s[i - 1] > p:
                        s[i] = s[i - 1]
                        i -= 1
                    s[i] = p
                    m += 1
                if ok:
                    if n >= cap:
                        return -2
                    for i in range(4):
                        cfg[n, i] = s[i] if i < m else -1
                    clen[n] = m
                    n += 1
                    for i in range(m):
                        if pgen[s[i]] != gen:
                            pgen[s[i]] = gen
                            amask[s[i]] = 0
                        amask[s[i]] |= 1 << a
                j = nl - 1
                while j >= 0:
                    idx[j] += 1
                    if idx[j] < hi[j]:
                        break
                    idx[j] = lo[j]
                    j -= 1
                if j < 0:
                    break
        arm[1, a] = n - arm[0, a]
        if arm[1, a] == 0:
            return 0
    return n


@njit(cache=True, nogil=True)
def _fill_hash(work, gen, shift, mask):
    """C_X(F) for every arm X and subset F of one of its configurations; False when the
    hash gets more than half full (the caller grows it)."""
    hkey, hval, hgen, cfg, clen, arm = work[0], work[1], work[2], work[13], work[14], work[19]
    filled = 0
    for a in range(4):
        for r in range(arm[0, a], arm[0, a] + arm[1, a]):
            n = clen[r]
            for sub in range(1 << n):
                k = np.int64(a)
                sh = 2
                for i in range(n):
                    if (sub >> i) & 1:
                        k |= (cfg[r, i] + 1) << sh
                        sh += PIECE_BITS
                slot = _probe(k, hkey, hgen, gen, shift, mask)
                if hgen[slot] != gen:
                    hgen[slot] = gen
                    hkey[slot] = k
                    hval[slot] = 0
                    filled += 1
                    if 2 * filled > hkey.shape[0]:
                        return False
                hval[slot] += 1
    return True


@njit(cache=True, nogil=True)
def _count_ie(work, gen, shift, mask):
    """Disjoint tuples by inclusion-exclusion over the shared pieces (needs `_fill_hash`).
    Returns -1 when a term could leave the int64 range."""
    hkey, hval, hgen, amask, pgen, qs = work[0], work[1], work[2], work[3], work[4], work[6]
    fkey, flen, fval = work[7], work[8], work[9]
    sq, ssub, coef = work[10], work[11], work[12]
    n_q = 0  # the pieces some configuration of at least two arms holds, ascending
    for p in range(pgen.shape[0]):
        if pgen[p] == gen:
            m = amask[p]
            if (m & (m - 1)) != 0:
                qs[n_q] = p
                n_q += 1
    total = np.int64(1)
    for a in range(4):
        fkey[0, a] = a
        flen[0, a] = 0
        fval[0, a] = _lookup(np.int64(a), hkey, hval, hgen, gen, shift, mask)
        if float(total) * float(fval[0, a]) > INT_LIMIT:
            return -1
        total *= fval[0, a]
    coef[0] = 1
    sq[0] = 0
    ssub[0] = -1
    d = 0
    while d >= 0:
        if ssub[d] == -1:
            if sq[d] >= n_q:
                d -= 1
                continue
            ssub[d] = amask[qs[sq[d]]]
        sub = ssub[d]
        if sub == 0:
            sq[d] += 1
            ssub[d] = -1
            continue
        m = amask[qs[sq[d]]]
        ssub[d] = (sub - 1) & m
        if (sub & (sub - 1)) == 0:
            continue
        p = qs[sq[d]]
        ok = True
        for a in range(4):
            fkey[d + 1, a] = fkey[d, a]
            flen[d + 1, a] = flen[d, a]
            fval[d + 1, a] = fval[d, a]
            if (sub >> a) & 1:
                if flen[d, a] >= 4:
                    ok = False
                    break
                k = fkey[d, a] | ((p + 1) << (2 + PIECE_BITS * flen[d, a]))
                v = _lookup(k, hkey, hval, hgen, gen, shift, mask)
                if v == 0:
                    ok = False
                    break
                fkey[d + 1, a] = k
                flen[d + 1, a] = flen[d, a] + 1
                fval[d + 1, a] = v
        if not ok:
            continue
        j = 0
        for a in range(4):
            j += (sub >> a) & 1
        c = coef[d] * _AJ[j]
        coef[d + 1] = c
        term = c
        shadow = float(c)
        for a in range(4):
            shadow *= float(fval[d + 1, a])
            term *= fval[d + 1, a]
        if abs(shadow) > INT_LIMIT or abs(float(total) + shadow) > INT_LIMIT:
            return -1
        total += term
        sq[d + 1] = sq[d] + 1
        ssub[d + 1] = -1
        d += 1
    return total


@njit(cache=True, nogil=True)
def _bits_setup(work, gen):
    """Per arm and piece, the bitset of the arm's configurations holding it; the arms in
    ascending size (work row arm[2]).  False when an arm has more than 64 * WORDS
    configurations."""
    cfg, clen, bits, bgen, arm = work[13], work[14], work[15], work[16], work[19]
    for a in range(4):
        if arm[1, a] > 64 * WORDS:
            return False
        arm[2, a] = a
    for a in range(1, 4):  # insertion sort of four arms by size
        i = a
        while i > 0 and arm[1, arm[2, i - 1]] > arm[1, arm[2, i]]:
            arm[2, i - 1], arm[2, i] = arm[2, i], arm[2, i - 1]
            i -= 1
    for a in range(4):
        nw = (arm[1, a] + 63) // 64
        for r in range(arm[0, a], arm[0, a] + arm[1, a]):
            i = r - arm[0, a]
            for t in range(clen[r]):
                p = cfg[r, t]
                if bgen[a, p] != gen:
                    bgen[a, p] = gen
                    for w in range(nw):
                        bits[a, p, w] = 0
                bits[a, p, i >> 6] |= np.uint64(1) << np.uint64(i & 63)
    return True


@njit(cache=True, nogil=True, inline="always")
def _and_not(av, row, src, bits, bgen, gen, x, cfg, clen, r, nw):
    """av[row] = av[src] without the configurations of arm x sharing a piece with row r."""
    for w in range(nw):
        av[row, w] = av[src, w]
    for t in range(clen[r]):
        p = cfg[r, t]
        if bgen[x, p] == gen:
            for w in range(nw):
                av[row, w] &= ~bits[x, p, w]


@njit(cache=True, nogil=True)
def _count_bits(work, gen):
    """Disjoint tuples by bitsets (needs `_bits_setup`): for each configuration of the
    smallest arm A, each of B disjoint from it, each of C disjoint from both, the popcount
    of D's configurations disjoint from the three."""
    cfg, clen, bits, bgen, md, av, arm = (work[13], work[14], work[15], work[16], work[17],
                                          work[18], work[19])
    xa, xb, xc, xd = arm[2, 0], arm[2, 1], arm[2, 2], arm[2, 3]
    sa, sb, sc = arm[0, xa], arm[0, xb], arm[0, xc]
    na, nb, nc, nd = arm[1, xa], arm[1, xb], arm[1, xc], arm[1, xd]
    wb, wc, wd = (nb + 63) // 64, (nc + 63) // 64, (nd + 63) // 64
    for k in range(nc):  # per configuration of C, the configurations of D it excludes
        r = sc + k
        for w in range(wd):
            md[k, w] = 0
        for t in range(clen[r]):
            p = cfg[r, t]
            if bgen[xd, p] == gen:
                for w in range(wd):
                    md[k, w] |= bits[xd, p, w]
    for w in range(WORDS):
        av[5, w] = _full(nb, w) if w < wb else np.uint64(0)
        av[6, w] = _full(nc, w) if w < wc else np.uint64(0)
        av[7, w] = _full(nd, w) if w < wd else np.uint64(0)
    total = np.int64(0)
    for i in range(na):
        _and_not(av, 0, 5, bits, bgen, gen, xb, cfg, clen, sa + i, wb)
        _and_not(av, 1, 6, bits, bgen, gen, xc, cfg, clen, sa + i, wc)
        _and_not(av, 2, 7, bits, bgen, gen, xd, cfg, clen, sa + i, wd)
        for w0 in range(wb):
            m = av[0, w0]
            while m != 0:
                j = w0 * 64 + cttz(m)
                m &= m - np.uint64(1)
                _and_not(av, 3, 1, bits, bgen, gen, xc, cfg, clen, sb + j, wc)
                _and_not(av, 4, 2, bits, bgen, gen, xd, cfg, clen, sb + j, wd)
                for w1 in range(wc):
                    mc = av[3, w1]
                    while mc != 0:
                        k = w1 * 64 + cttz(mc)
                        mc &= mc - np.uint64(1)
                        for w in range(wd):
                            total += ctpop(av[4, w] & ~md[k, w])
    return total


@njit(cache=True, nogil=True)
def _core_count(placed, ubits, arm_tip, arm_nleaf, arm_leaf, nb1, ns1, nb2, ns2, base,
                n_colours, bstart, cands, colours, work, method):
    """Corolles below a filled core (`placed`, pieces in `ubits`).  Returns the count, -1
    when a term could leave the int64 range, or -2 when the scratch is too small (the
    caller grows it and asks again)."""
    stamp = work[5]
    stamp[0] += 1
    gen = stamp[0]
    n = _arm_configs(placed, ubits, arm_tip, arm_nleaf, arm_leaf, nb1, ns1, nb2, ns2, base,
                     n_colours, bstart, cands, colours, work, gen)
    if n <= 0:
        return n
    if method == BY_BITS and _bits_setup(work, gen):
        return _count_bits(work, gen)
    cap = work[0].shape[0]
    shift = np.uint64(64 - int(np.log2(cap)))
    if not _fill_hash(work, gen, shift, cap - 1):
        return -2
    return _count_ie(work, gen, shift, cap - 1)


@njit(cache=True, nogil=True)
def arm_work(n_pieces, bits):
    """Scratch of `_core_count` with a hash of 2**bits slots and room for 2**(bits-1)
    configurations."""
    cap = 1 << bits
    depth = 4 * 4 + 2
    return (np.zeros(cap, dtype=np.int64), np.zeros(cap, dtype=np.int64),
            np.zeros(cap, dtype=np.int64), np.zeros(n_pieces, dtype=np.int64),
            np.zeros(n_pieces, dtype=np.int64), np.zeros(1, dtype=np.int64),
            np.zeros(n_pieces, dtype=np.int64), np.zeros((depth, 4), dtype=np.int64),
            np.zeros((depth, 4), dtype=np.int64), np.zeros((depth, 4), dtype=np.int64),
            np.zeros(depth, dtype=np.int64), np.zeros(depth, dtype=np.int64),
            np.zeros(depth, dtype=np.int64),
            np.zeros((cap // 2, 4), dtype=np.int64), np.zeros(cap // 2, dtype=np.int64),
            np.zeros((4, n_pieces, WORDS), dtype=np.uint64),
            np.zeros((4, n_pieces), dtype=np.int64),
            np.zeros((64 * WORDS, WORDS), dtype=np.uint64),
            np.zeros((8, WORDS), dtype=np.uint64), np.zeros((3, 4), dtype=np.int64),
            np.zeros(16, dtype=np.int64))


@njit(cache=True, nogil=True)
def _core_count_grow(placed, ubits, arm_tip, arm_nleaf, arm_leaf, nb1, ns1, nb2, ns2, base,
                     n_colours, bstart, cands, colours, work, n_pieces, method):
    """`_core_count`, growing the scratch until it fits; returns (count, work)."""
    while True:
        got = _core_count(placed, ubits, arm_tip, arm_nleaf, arm_leaf, nb1, ns1, nb2, ns2,
                          base, n_colours, bstart, cands, colours, work, method)
        if got != -2:
            return got, work
        work = arm_work(n_pieces, int(np.log2(work[0].shape[0])) + 1)


@njit(cache=True, nogil=True)
def count_arms(prefixes, n_core, arm_tip, arm_nleaf, arm_leaf, nb1, ns1, nb2, ns2, base,
               n_colours, bstart, cands, colours, n_pieces, hash_bits, method):
    """Corolles below each core prefix (the first k <= n_core levels fixed) and the cores with
    at least one completion; corolles is -1 for a prefix whose count could leave int64."""
    n_pref, k = prefixes.shape
    n_levels = n_core + 16
    counts = np.zeros(n_pref, dtype=np.int64)
    cores = np.zeros(n_pref, dtype=np.int64)
    ubits = np.zeros((n_pieces + 63) // 64, dtype=np.uint64)
    placed = np.zeros(n_levels, dtype=np.int64)
    pos = np.zeros(n_levels, dtype=np.int64)
    end = np.zeros(n_levels, dtype=np.int64)
    work = arm_work(n_pieces, hash_bits)
    for b in range(n_pref):
        ubits[:] = 0
        for j in range(k):
            placed[j] = prefixes[b, j]
            flip_piece(ubits, placed[j] >> 2)
        if k == n_core:
            got, work = _core_count_grow(placed, ubits, arm_tip, arm_nleaf, arm_leaf, nb1,
                                         ns1, nb2, ns2, base, n_colours, bstart, cands,
                                         colours, work, n_pieces, method)
            counts[b] = got
            cores[b] = 1 if got > 0 else 0
            continue
        cnt = 0
        nc = 0
        level = k
        key = bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
        pos[level] = bstart[key]
        end[level] = bstart[key + 1]
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
            if level + 1 == n_core:
                got, work = _core_count_grow(placed, ubits, arm_tip, arm_nleaf, arm_leaf, nb1,
                                             ns1, nb2, ns2, base, n_colours, bstart, cands,
                                             colours, work, n_pieces, method)
                flip_piece(ubits, c >> 2)
                if got < 0 or float(cnt) + float(got) > INT_LIMIT:
                    cnt = -1
                    break
                cnt += got
                if got > 0:
                    nc += 1
                continue
            level += 1
            key = bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
            pos[level] = bstart[key]
            end[level] = bstart[key + 1]
        counts[b] = cnt
        cores[b] = nc
    return counts, cores
