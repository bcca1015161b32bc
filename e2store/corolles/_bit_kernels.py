"""Private numba kernels walking corolles with piece bitsets (issue 27): a counter below
prefixes and a resumable emitter.  Arrays in, arrays out, no I/O.

The same walks, counts, nodes and corolle order as `_kernels.count_prefixes` and
`_kernels.emit_chunk` (their pure-Python twins are `tests/naive.py`'s
`naive_count_prefixes` and `naive_corolles`), written the way the solver's kernel is
(`e2store.solver`'s generic kernel; see its speed notes):

* the used pieces are bits of `W` 64-bit words, `W` a constant of the compiled kernel (one
  kernel per value, so the loops over words unroll; with one word it stays in a register);
* a level's bucket key is `base[l] + shown[i1[l]] * C + shown[i2[l]]`: `shown[l*4 + s]` is
  the colour the placement on level l shows on side s, and `i1`, `i2` point at the sides
  its inner neighbours show towards it, or at a zero slot after the levels when absent;
* a bucket is a piece bitset `bmask[key*W ...]` with `crec[key*n_pieces + p]` the
  placement of piece p in it when no piece appears in it twice (`simple[key]`); otherwise
  its candidate list `cands[bstart[key]:bstart[key+1]]` is walked with the used bits;
* candidates come in ascending placement order: the lowest set bit is the lowest piece,
  which has one placement in a simple bucket, and the lists are ascending;
* the counter does not walk the last level: its candidates are `popcount(layer & ~used)` summed over
  the bucket's layers `lmask[(key*4 + j)*W ...]` (the pieces with more than j placements
  in it), each still one node;
* every index is cast to `uint64`, so numba emits no negative-index wrap-around;
* the two kernels write the next-candidate, undo and open steps out in full instead of
  sharing helpers: the solver measured numba's inlining of such a helper at about -40%.
"""

from __future__ import annotations

import numpy as np
from numba import int64, njit, uint64

from e2store.bits import ctpop, cttz

LAYERS = 4  # a piece shows a bucket's colours in at most its 4 rotations


def n_words(n_pieces: int) -> int:
    """64-bit words of piece bits for `n_pieces` pieces (at least one)."""
    return max(1, (n_pieces + 63) // 64)


def _make(n_words: int):
    """Compile the counter for up to 64 * n_words pieces (n_words a closure constant)."""
    W = n_words

    @njit(cache=True, nogil=True)
    def count(prefixes, n_levels, i1, i2, base, n_colours, bstart, cands, col, bmask, simple,
              crec, lmask, n_pieces):
        """(corolles, nodes) below each prefix (a filling of the first k < L levels)."""
        n_pref, k = prefixes.shape
        counts = np.zeros(n_pref, dtype=np.int64)
        nodes = np.zeros(n_pref, dtype=np.int64)
        shown = np.zeros((n_levels + 1) * 4, dtype=np.int64)  # last 4: the zero slot
        used = np.zeros(W, dtype=np.uint64)
        avail = np.zeros(n_levels * W, dtype=np.uint64)
        bits = np.zeros(n_levels, dtype=np.uint8)
        keys = np.zeros(n_levels, dtype=np.int64)
        pos = np.zeros(n_levels, dtype=np.int64)
        end = np.zeros(n_levels, dtype=np.int64)
        pcs = np.zeros(n_levels, dtype=np.int64)
        one = uint64(1)
        last = n_levels - 1
        C = n_colours
        for b in range(n_pref):
            for w in range(W):
                used[w] = uint64(0)
            for j in range(k):
                v = prefixes[b, j]
                p = uint64(v >> 2)
                used[p >> uint64(6)] |= one << (p & uint64(63))
                for s in range(4):
                    shown[uint64(j * 4 + s)] = col[uint64(v * 4 + s)]
            cnt = int64(0)
            nd = int64(0)
            level = k
            # open level k (the last one is counted at once)
            key = (base[uint64(level)] + shown[uint64(i1[uint64(level)])] * C
                   + shown[uint64(i2[uint64(level)])])
            if level == last:
                for j in range(LAYERS):
                    for w in range(W):
                        cnt += ctpop(lmask[uint64((key * LAYERS + j) * W + w)] & ~used[w])
                counts[b] = cnt
                nodes[b] = cnt
                continue
            keys[uint64(level)] = key
            if simple[uint64(key)] != 0:
                bits[uint64(level)] = 1
                for w in range(W):
                    avail[uint64(level * W + w)] = bmask[uint64(key * W + w)] & ~used[w]
            else:
                bits[uint64(level)] = 0
                pos[uint64(level)] = bstart[uint64(key)]
                end[uint64(level)] = bstart[uint64(key + 1)]
            while True:
                ul = uint64(level)
                v = int64(-1)
                if bits[ul] != 0:
                    o = uint64(level * W)
                    w = 0
                    while w < W and avail[o + uint64(w)] == uint64(0):
                        w += 1
                    if w < W:
                        a = avail[o + uint64(w)]
                        avail[o + uint64(w)] = a & (a - one)
                        v = int64(crec[uint64(keys[ul] * n_pieces + w * 64 + cttz(a))])
                else:
                    i = pos[ul]
                    e = end[ul]
                    while i < e:
                        c = cands[uint64(i)]
                        i += 1
                        p = uint64(c >> 2)
                        if (used[p >> uint64(6)] >> (p & uint64(63))) & one == uint64(0):
                            v = c
                            break
                    pos[ul] = i
                if v < 0:
                    # level exhausted: take back the piece of the level above
                    level -= 1
                    if level < k:
                        break
                    p = uint64(pcs[uint64(level)] >> 2)
                    used[p >> uint64(6)] &= ~(one << (p & uint64(63)))
                    continue
                # place v on this level
                nd += 1
                pcs[ul] = v
                for s in range(4):
                    shown[uint64(level * 4 + s)] = col[uint64(v * 4 + s)]
                p = uint64(v >> 2)
                used[p >> uint64(6)] |= one << (p & uint64(63))
                level += 1
                ul = uint64(level)
                key = (base[ul] + shown[uint64(i1[ul])] * C + shown[uint64(i2[ul])])
                if level == last:
                    for j in range(LAYERS):
                        for w in range(W):
                            cnt += ctpop(lmask[uint64((key * LAYERS + j) * W + w)] & ~used[w])
                    level -= 1
                    used[p >> uint64(6)] &= ~(one << (p & uint64(63)))
                    continue
                keys[ul] = key
                if simple[uint64(key)] != 0:
                    bits[ul] = 1
                    for w in range(W):
                        avail[uint64(level * W + w)] = bmask[uint64(key * W + w)] & ~used[w]
                else:
                    bits[ul] = 0
                    pos[ul] = bstart[uint64(key)]
                    end[ul] = bstart[uint64(key + 1)]
            counts[b] = cnt
            nodes[b] = nd + cnt
        return counts, nodes

    return count


def _make_emit(n_words: int):
    """Compile the emitter for up to 64 * n_words pieces (n_words a closure constant)."""
    W = n_words

    @njit(cache=True, nogil=True)
    def emit(state, used, avail, bits, keys, pos, end, pcs, shown, start_level, n_levels, i1,
             i2, base, n_colours, bstart, cands, col, bmask, simple, crec, n_pieces, slot_of,
             front_level, front_side, cells_out, front_out, seen, marked):
        """Resumable depth-first walk writing corolles column-wise (`emit_chunk`'s
        contract): `state` = [level, fresh, done, nodes]; levels below `start_level` are a
        fixed prefix already in `pcs`, `shown` and `used`; writes at most
        `cells_out.shape[1]` rows and returns how many.

        With a non-empty `seen` ((S, M) bool), also sets `seen[slot, v]` for every
        placement v a slot takes in the rows written (`mark_placements` of them): a
        placement is marked at the first leaf below it, `marked[l]` saying whether level
        l's current placement is (cleared when one is placed), so a leaf costs one mark
        and a check amortised."""
        cap = cells_out.shape[1]
        n_front = front_level.shape[0]
        do_mark = seen.shape[0] > 0
        n = 0
        if state[2] == 1:
            return 0
        one = uint64(1)
        C = n_colours
        level = state[0]
        nodes = state[3]
        last = n_levels - 1
        if state[1] == 1:
            state[1] = 0
            level = start_level
            ul = uint64(level)
            key = base[ul] + shown[uint64(i1[ul])] * C + shown[uint64(i2[ul])]
            keys[ul] = key
            if simple[uint64(key)] != 0:
                bits[ul] = 1
                for w in range(W):
                    avail[uint64(level * W + w)] = bmask[uint64(key * W + w)] & ~used[w]
            else:
                bits[ul] = 0
                pos[ul] = bstart[uint64(key)]
                end[ul] = bstart[uint64(key + 1)]
        while True:
            ul = uint64(level)
            v = int64(-1)
            if bits[ul] != 0:
                o = uint64(level * W)
                w = 0
                while w < W and avail[o + uint64(w)] == uint64(0):
                    w += 1
                if w < W:
                    a = avail[o + uint64(w)]
                    avail[o + uint64(w)] = a & (a - one)
                    v = int64(crec[uint64(keys[ul] * n_pieces + w * 64 + cttz(a))])
            else:
                i = pos[ul]
                e = end[ul]
                while i < e:
                    c = cands[uint64(i)]
                    i += 1
                    p = uint64(c >> 2)
                    if (used[p >> uint64(6)] >> (p & uint64(63))) & one == uint64(0):
                        v = c
                        break
                pos[ul] = i
            if v < 0:
                level -= 1
                if level < start_level:
                    state[2] = 1
                    break
                p = uint64(pcs[uint64(level)] >> 2)
                used[p >> uint64(6)] &= ~(one << (p & uint64(63)))
                continue
            nodes += 1
            pcs[ul] = v
            if level == last:
                for j in range(n_levels):
                    cells_out[uint64(slot_of[uint64(j)]), uint64(n)] = pcs[uint64(j)]
                if do_mark:
                    seen[uint64(slot_of[ul]), uint64(v)] = True
                    j = last - 1
                    while j >= 0 and marked[uint64(j)] == 0:
                        seen[uint64(slot_of[uint64(j)]), uint64(pcs[uint64(j)])] = True
                        marked[uint64(j)] = 1
                        j -= 1
                for f in range(n_front):
                    lv = front_level[uint64(f)]
                    if lv >= 0:
                        front_out[uint64(f), uint64(n)] = col[
                            uint64(pcs[uint64(lv)] * 4 + front_side[uint64(f)])]
                n += 1
                if n == cap:
                    break
                continue
            marked[ul] = 0
            for s in range(4):
                shown[uint64(level * 4 + s)] = col[uint64(v * 4 + s)]
            p = uint64(v >> 2)
            used[p >> uint64(6)] |= one << (p & uint64(63))
            level += 1
            ul = uint64(level)
            key = base[ul] + shown[uint64(i1[ul])] * C + shown[uint64(i2[ul])]
            keys[ul] = key
            if simple[uint64(key)] != 0:
                bits[ul] = 1
                for w in range(W):
                    avail[uint64(level * W + w)] = bmask[uint64(key * W + w)] & ~used[w]
            else:
                bits[ul] = 0
                pos[ul] = bstart[uint64(key)]
                end[ul] = bstart[uint64(key + 1)]
        state[0] = level
        state[3] = nodes
        return n

    return emit


_KERNELS: dict[tuple[str, int], object] = {}


def count_kernel(n_words: int):
    """The counter compiled for `n_words` words of piece bits (one per value, cached)."""
    if ("count", n_words) not in _KERNELS:
        _KERNELS["count", n_words] = _make(n_words)
    return _KERNELS["count", n_words]


def emit_kernel(n_words: int):
    """The emitter compiled for `n_words` words of piece bits (one per value, cached)."""
    if ("emit", n_words) not in _KERNELS:
        _KERNELS["emit", n_words] = _make_emit(n_words)
    return _KERNELS["emit", n_words]
