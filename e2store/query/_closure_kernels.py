"""Private numba kernels of the block closure table (`e2store.query.closures`).  Arrays in,
arrays out, no I/O; the pure-Python twins are in `tests/naive_closure.py`.

Vocabulary: the *block* is `bw` x 2 interior cells filled row by row; `rot[v, s]` is the
colour rank placement v (`piece*4 + r`) shows on side s (W N E S); `istart`/`icand` list
the interior placements by bucket `west * k_col + north`, ascending.  A filling's *key* is
`closure_key(pieces, code)`: `pieces` the 64-bit set of its pieces, `code` its north
colours read west to east as a base-`k_col` number.  The table is a word-blocked Bloom
filter (`bloom`, a power-of-two number of 64-bit words): a key sets six bits of one word,
so a probe is one load and a mask test, and an add is one (atomic) or.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from e2store.bits import atomic_or, prefetch_write

PROBE_BITS = 6  # bits a key sets in its word
RING = 32  # keys a filling walk holds back while their words load (must be a power of 2)


@njit(cache=True, nogil=True, inline="always")
def mix64(x):
    """A 64-bit finaliser (splitmix64's): every input bit moves every output bit."""
    x = x * uint64(0x9E3779B97F4A7C15)
    x ^= x >> uint64(29)
    x *= uint64(0xBF58476D1CE4E5B9)
    return x ^ (x >> uint64(32))


@njit(cache=True, nogil=True, inline="always")
def closure_key(pieces, code):
    """The 64-bit hash of a block's key (its piece set and north colour code)."""
    return mix64(pieces ^ mix64(code + uint64(0x632BE59BD9B4E019)))


@njit(cache=True, nogil=True, inline="always")
def word_of(bloom, h):
    """The index of the word key hash `h` sets its bits in (the filter has 2^k words)."""
    return h & uint64(bloom.shape[0] - 1)


@njit(cache=True, nogil=True, inline="always")
def key_mask(h):
    """The `PROBE_BITS` bits key hash `h` sets in its word (6 bits of another mix of h)."""
    g = mix64(h ^ uint64(0x5555))
    m = uint64(0)
    for i in range(PROBE_BITS):
        m |= uint64(1) << ((g >> uint64(6 * i)) & uint64(63))
    return m


@njit(cache=True, nogil=True, inline="always")
def bloom_has(bloom, h):
    """True when every bit of key hash `h` is set (a key never added is absent with
    probability about the false-positive rate).  One load, no branch on the bits."""
    m = key_mask(h)
    return bloom[word_of(bloom, h)] & m == m


@njit(cache=True, nogil=True, inline="always")
def bloom_add(bloom, h, shared):
    """Set the bits of key hash `h` (those `bloom_has` tests); `shared`: other threads add
    to the same filter, so the word is or-ed atomically."""
    i = word_of(bloom, h)
    if shared:
        atomic_or(bloom, i, key_mask(h))
    else:
        bloom[i] |= key_mask(h)


@njit(cache=True, nogil=True)
def walk_block(rot, istart, icand, k_col, bw, pieces, code_in, bloom, part, parts, count_cap):
    """Walk the fillings of the bw x 2 block.  Modes: `pieces` == 0: every filling, any
    north colours, or with `parts` > 1 only those whose second cell's placement is number
    `part` modulo `parts` of that depth (threads walking disjoint shares); each one's key
    goes into `bloom` (atomically when `parts` > 1: the threads share it), or, with an empty
    `bloom`, it is only counted (the walk stops past `count_cap`).  Keys are added `RING`
    fillings late, their words prefetched meanwhile: the adds then overlap instead of
    waiting for memory one by one.  `pieces` != 0: fillings taking exactly those pieces
    under north colours `code_in` (most significant = west); returns 1 at the first one.
    Returns the number of fillings walked (or 0/1)."""
    nb = bw * 2
    every = pieces == uint64(0)
    north = np.zeros(bw, np.int64)
    c = code_in
    for j in range(bw - 1, -1, -1):
        north[j] = c % uint64(k_col)
        c //= uint64(k_col)
    placed = np.full(nb, -1, np.int64)
    pos = np.zeros(nb, np.int64)
    hi = np.zeros(nb, np.int64)
    wcur = np.zeros(nb, np.int64)
    ncur = np.zeros(nb, np.int64)
    used = uint64(0)
    fills = 0
    ring = np.zeros(RING, np.uint64)
    shared = parts > 1
    share = 0  # placements of the second cell so far (the split point)
    d = 0
    ncur[0] = 0 if every else north[0]
    k = ncur[0]
    pos[0] = istart[k]
    hi[0] = istart[k + 1]
    while True:
        if pos[d] >= hi[d]:
            # exhausted: the next free west colour (first column) or north colour (top row)
            col = d % bw
            adv = False
            if col == 0 and wcur[d] < k_col - 1:
                wcur[d] += 1
                adv = True
            elif d < bw and every and ncur[d] < k_col - 1:
                ncur[d] += 1
                wcur[d] = 0
                adv = True
            if adv:
                wc = wcur[d] if col == 0 else rot[placed[d - 1], 2]
                k = wc * k_col + (ncur[d] if d < bw else rot[placed[d - bw], 3])
                pos[d] = istart[k]
                hi[d] = istart[k + 1]
                continue
            d -= 1
            if d < 0:
                break
            used &= ~(uint64(1) << uint64(placed[d] >> 2))
            continue
        v = icand[pos[d]]
        pos[d] += 1
        p = uint64(v >> 2)
        if (used >> p) & uint64(1):
            continue
        if not every and (pieces >> p) & uint64(1) == uint64(0):
            continue
        if every and d == 1 and parts > 1:
            share += 1
            if (share - 1) % parts != part:
                continue
        placed[d] = v
        if d == nb - 1:
            if not every:
                return 1
            if bloom.shape[0]:
                code = uint64(0)
                for j in range(bw):
                    code = code * uint64(k_col) + uint64(rot[placed[j], 1])
                h = closure_key(used | (uint64(1) << p), code)
                slot = fills & (RING - 1)
                if fills >= RING:
                    bloom_add(bloom, ring[slot], shared)
                ring[slot] = h
                prefetch_write(bloom, word_of(bloom, h))
            elif fills >= count_cap:
                return fills + 1
            fills += 1
            continue
        used |= uint64(1) << p
        d += 1
        col = d % bw
        wcur[d] = 0
        ncur[d] = (0 if every else north[col]) if d < bw else 0
        wc = 0 if col == 0 else rot[placed[d - 1], 2]
        k = wc * k_col + (ncur[d] if d < bw else rot[placed[d - bw], 3])
        pos[d] = istart[k]
        hi[d] = istart[k + 1]
    if not every:
        return 0
    if bloom.shape[0]:  # the keys still held back
        for i in range(max(0, fills - RING), fills):
            bloom_add(bloom, ring[i & (RING - 1)], shared)
    return fills


def count_fillings(rot, istart, icand, k_col, bw, cap, part=0, parts=1):
    """Fillings of the block in share `part` of `parts` (see `walk_block`); counting stops
    just past `cap`."""
    return int(walk_block(rot, istart, icand, k_col, bw, np.uint64(0), np.uint64(0),
                           np.zeros(0, np.uint64), part, parts, cap))


def fill_bloom(rot, istart, icand, k_col, bw, bloom, part, parts):
    """Add the key of every filling in share `part` of `parts` to `bloom` (shares of
    several threads together: every filling once); returns that share's fillings."""
    return int(walk_block(rot, istart, icand, k_col, bw, np.uint64(0), np.uint64(0), bloom,
                           part, parts, 0))


def block_fillable(rot, istart, icand, k_col, bw, pieces, code):
    """True when the block can take exactly `pieces` under north colour code `code`."""
    return bool(walk_block(rot, istart, icand, k_col, bw, np.uint64(pieces), np.uint64(code),
                            np.zeros(0, np.uint64), 0, 1, 0))


@njit(cache=True, nogil=True)
def probe_keys(bloom, pieces, codes):
    """`bloom_has` of many keys (1 = maybe present, 0 = absent)."""
    out = np.zeros(pieces.shape[0], np.uint8)
    for i in range(pieces.shape[0]):
        out[i] = bloom_has(bloom, closure_key(pieces[i], codes[i]))
    return out
