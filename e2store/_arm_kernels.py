"""Private numba kernels of the hamming-3 count by arms (`e2store.arms`).  Arrays in, arrays
out, no I/O; the level vocabulary is `_kernels`'s.  Pure-Python twin: `tests/naive.py`
(`arms_count_prefixes`, a product of arm configurations instead of the inclusion-exclusion).

Given the *core* (rings 0 and 1 and the four diagonal cells of ring 2), the rest of a
hamming-3 corolle is four *arms*: a ring-2 tip, the ring-3 cell beyond it and the two ring-3
cells beside it (each of those touches the tip and one diagonal).  Arms only interact by
piece distinctness, so with C_X(F) the configurations of arm X whose pieces include the set
F, the corolles of a core are (inclusion-exclusion over the pieces shared by arms)

    sum over J of  prod_p a(|J_p|)  prod_X C_X(F_X),   a(j) = (-1)^(j-1) (j-1),

where J assigns each piece p a set J_p of at least 2 arms (or none) and F_X are the pieces
J gives arm X: the identity [p in at most one arm] = sum over J_p of a(|J_p|).  The C_X(F)
are kept in a hash of (arm, sorted piece subset) keys; the sum is a depth-first walk over
the pieces that fit several arms, cut wherever some C_X(F_X) is 0.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels import INT_LIMIT, _bucket, _flip, _has

PIECE_BITS = 11  # bits per piece in a subset key: piece id + 1 < 2048
MAX_PIECES = (1 << PIECE_BITS) - 1
_HMUL = np.uint64(0x9E3779B97F4A7C15)
_AJ = np.array([1, 0, -1, 2, -3], dtype=np.int64)  # a(j) for j = 0..4 arms


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


@njit(cache=True, nogil=True)
def _core_count(placed, ubits, arm_tip, arm_nleaf, arm_leaf, nb1, ns1, nb2, ns2, base,
                n_colours, bstart, cands, colours, work):
    """Corolles below a filled core (`placed`, pieces in `ubits`).  Returns the count, -1
    when a term could leave the int64 range, or -2 when the hash is too small (the caller
    grows it and asks again)."""
    hkey, hval, hgen, amask, pgen, stamp = work[0], work[1], work[2], work[3], work[4], work[5]
    stamp[0] += 1
    gen = stamp[0]
    cap = hkey.shape[0]
    mask = cap - 1
    shift = np.uint64(64 - int(np.log2(cap)))
    filled = 0
    lo = np.zeros(3, dtype=np.int64)
    hi = np.zeros(3, dtype=np.int64)
    idx = np.zeros(3, dtype=np.int64)
    s = np.zeros(4, dtype=np.int64)
    n_arms = 0
    for a in range(4):
        tl = arm_tip[a]
        if tl < 0:
            continue
        n_arms += 1
        nl = arm_nleaf[a]
        ncfg = 0
        key = _bucket(tl, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
        for ti in range(bstart[key], bstart[key + 1]):
            t = cands[ti]
            tp = t >> 2
            if _has(ubits, tp):
                continue
            placed[tl] = t
            empty = False
            for j in range(nl):
                lk = _bucket(arm_leaf[a, j], placed, nb1, ns1, nb2, ns2, base, n_colours,
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
                n = 1
                s[0] = tp
                for j in range(nl):
                    p = cands[idx[j]] >> 2
                    if _has(ubits, p):
                        ok = False
                        break
                    for i in range(n):
                        if s[i] == p:
                            ok = False
                    if not ok:
                        break
                    # insertion into the sorted s[:n]
                    i = n
                    while i > 0 and s[i - 1] > p:
                        s[i] = s[i - 1]
                        i -= 1
                    s[i] = p
                    n += 1
                if ok:
                    ncfg += 1
                    for sub in range(1 << n):
                        k = np.int64(a)
                        sh = 2
                        for i in range(n):
                            if (sub >> i) & 1:
                                k |= (s[i] + 1) << sh
                                sh += PIECE_BITS
                        slot = _probe(k, hkey, hgen, gen, shift, mask)
                        if hgen[slot] != gen:
                            hgen[slot] = gen
                            hkey[slot] = k
                            hval[slot] = 0
                            filled += 1
                            if 2 * filled > cap:
                                return -2
                        hval[slot] += 1
                    for i in range(n):
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
        if ncfg == 0:
            return 0
    # the pieces some configuration of at least two arms holds, ascending
    n_q = 0
    qs = work[6]
    for p in range(pgen.shape[0]):
        if pgen[p] == gen:
            m = amask[p]
            if (m & (m - 1)) != 0:
                qs[n_q] = p
                n_q += 1
    fkey, flen, fval = work[7], work[8], work[9]
    sq, ssub, coef = work[10], work[11], work[12]
    total = np.int64(1)
    for a in range(4):
        fkey[0, a] = a
        flen[0, a] = 0
        fval[0, a] = _lookup(np.int64(a), hkey, hval, hgen, gen, shift, mask) \
            if arm_tip[a] >= 0 else 1
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
def arm_work(n_pieces, bits):
    """Scratch of `_core_count` with a hash of 2**bits slots."""
    cap = 1 << bits
    depth = 4 * 4 + 2
    return (np.zeros(cap, dtype=np.int64), np.zeros(cap, dtype=np.int64),
            np.zeros(cap, dtype=np.int64), np.zeros(n_pieces, dtype=np.int64),
            np.zeros(n_pieces, dtype=np.int64), np.zeros(1, dtype=np.int64),
            np.zeros(n_pieces, dtype=np.int64), np.zeros((depth, 4), dtype=np.int64),
            np.zeros((depth, 4), dtype=np.int64), np.zeros((depth, 4), dtype=np.int64),
            np.zeros(depth, dtype=np.int64), np.zeros(depth, dtype=np.int64),
            np.zeros(depth, dtype=np.int64))


@njit(cache=True, nogil=True)
def _core_count_grow(placed, ubits, arm_tip, arm_nleaf, arm_leaf, nb1, ns1, nb2, ns2, base,
                     n_colours, bstart, cands, colours, work, n_pieces):
    """`_core_count`, growing the hash until it fits; returns (count, work)."""
    while True:
        got = _core_count(placed, ubits, arm_tip, arm_nleaf, arm_leaf, nb1, ns1, nb2, ns2,
                          base, n_colours, bstart, cands, colours, work)
        if got != -2:
            return got, work
        work = arm_work(n_pieces, int(np.log2(work[0].shape[0])) + 1)


@njit(cache=True, nogil=True)
def count_arms(prefixes, n_core, arm_tip, arm_nleaf, arm_leaf, nb1, ns1, nb2, ns2, base,
               n_colours, bstart, cands, colours, n_pieces, hash_bits):
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
            _flip(ubits, placed[j] >> 2)
        if k == n_core:
            got, work = _core_count_grow(placed, ubits, arm_tip, arm_nleaf, arm_leaf, nb1,
                                         ns1, nb2, ns2, base, n_colours, bstart, cands,
                                         colours, work, n_pieces)
            counts[b] = got
            cores[b] = 1 if got > 0 else 0
            continue
        cnt = 0
        nc = 0
        level = k
        key = _bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
        pos[level] = bstart[key]
        end[level] = bstart[key + 1]
        while True:
            if pos[level] >= end[level]:
                level -= 1
                if level < k:
                    break
                _flip(ubits, placed[level] >> 2)
                continue
            c = cands[pos[level]]
            pos[level] += 1
            if _has(ubits, c >> 2):
                continue
            placed[level] = c
            _flip(ubits, c >> 2)
            if level + 1 == n_core:
                got, work = _core_count_grow(placed, ubits, arm_tip, arm_nleaf, arm_leaf, nb1,
                                             ns1, nb2, ns2, base, n_colours, bstart, cands,
                                             colours, work, n_pieces)
                _flip(ubits, c >> 2)
                if got < 0 or float(cnt) + float(got) > INT_LIMIT:
                    cnt = -1
                    break
                cnt += got
                if got > 0:
                    nc += 1
                continue
            level += 1
            key = _bucket(level, placed, nb1, ns1, nb2, ns2, base, n_colours, colours)
            pos[level] = bstart[key]
            end[level] = bstart[key + 1]
        counts[b] = cnt
        cores[b] = nc
    return counts, cores
