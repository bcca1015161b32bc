"""Private numba kernel of the backtracking solver.  Arrays in, arrays out, no I/O.

Vocabulary (built by `e2store.solver.build_plan`):

* the board has `n` cells, index `y*W + x`.  `shown[cell*4 + s]` is the dense colour rank
  (0 = grey) the piece placed on `cell` shows on side s; `shown` has a *virtual* cell `n`
  whose four colours stay 0, so a depth with fewer than two keyed neighbours points the
  missing ones at it and the bucket key is computed without a branch;
* `col[c*4 + s]` is the colour rank placement c (`piece*4 + r`) shows on side s;
* pieces are bits of `n_words` 64-bit words: piece p is bit p & 63 of word p >> 6.
  `used` holds the placed pieces;
* a *depth* is one free cell of the fixed scan order (pre-placed seed cells are not
  depths).  Depth d's row of `dep` (stride `DEP`) holds: the cell; `i1`, `i2`: indices into
  `shown` of the colours its first two placed neighbours show towards it (known statically
  once the order is fixed); `base`: the first bucket of its cell class (frame sides and
  keyed sides); `o3`, `i3`, `o4`, `i4`: for a cell with 3 or 4 placed neighbours, the own
  side that must show colour `shown[i3]` (resp. `shown[i4]`), `o3 = -1` when there is no
  extra check (a cell with exactly 3 repeats check 3 as check 4); `seg`: where its slice
  of `stack` starts; fields 9..15 are free for later per-depth data;
* the bucket of depth d is `k = base + shown[i1] * k_col + shown[i2]`: exactly the
  placements with grey on the cell's frame sides only and the keyed colours on the keyed
  sides.  A bucket is stored twice: as the piece bitset `bmask[k*n_words ...]` with
  `crec[k*n_pieces + p]` the placement of piece p in it (used when no piece appears in
  it twice, `simple[k] = 1`), and as candidate records `cand` (stride `CAND`: placement,
  piece, colours W N E S) `bstart[k] .. bstart[k+1]-1`, ascending.

Search state (all in arrays, so a call can stop after any node and the next call resumes):
`state = [depth, status, nodes, solutions, first_nodes]` with status 0 fresh, 1 running,
2 done; `first_nodes` = nodes when the first solution was placed, -1 before.  *Opening*
depth d computes, once, the candidates it will try: every later change below it is undone
before the search comes back to it, so they stay exact.  Two forms (`mode[d]`):

* bits (the fast path: a simple bucket and no extra check): `avail[d*n_words ...]` =
  bucket bitset AND NOT used; the next candidate is the lowest set bit, which is cleared;
* list (a bucket with a piece in two rotations, or extra checks): the bucket's records
  filtered without branches into `stack[seg:end[d]]`, `pos[d]` the next entry.

Either way candidates come in ascending placement order, as in the pure-Python twin.  A
step either *places* (one node: mark the piece used, write its colours, go one depth down
and open it) or *undoes* (depth exhausted: go one depth up, unmark that depth's piece):
O(1) apart from the opening.  A per-node hook (finals) goes at exactly those two points,
marked PLACE and UNDO.

FINALS (`e2store.query.finals`, only in the kernel built with `finals=True`; without it the
hook is pruned before typing, so the plain kernel is the same code): six trailing arrays
`fmid, fmask, fidx, fval, flev, fcuts`.  Region g's alive corolles at depth d are the
non-zero words `fidx[i]` (word index) / `fval[i]` (bits) for i in `flev[2k], flev[2k+1]`,
k = d * n_reg + g; depth 0's list (the fixed cells applied) comes from Python.  PLACE of v
on `cell` at a depth that is not the last ANDs each region's list with its mask
`fmask[m + word]`, m = `fmid[(cell * 4 * n_pieces + v) * n_reg + g]` (the regions of one
placement side by side: one cache line, no division), into
the list of depth d+1 stacked right after it; m = -1 (SKIP) reuses depth d's list, m = -2
(KILL) and an empty result cut the node: it is counted, `fcuts[g]` is incremented for the
first such region, nothing is marked used and the next candidate of depth d is tried.
UNDO needs nothing: depth d's list is untouched, depth d+1's is rewritten on the next PLACE.

Speed notes (benchmark 6x6 rowscan): indices are cast to `uint64` before indexing, so
numba skips its negative-index wrap-around code (about +40%); opening is written out inside
the loop (`_open` is the same code, used only for depth 0 of a fresh search) because
numba's IR-level inlining of a helper cost about 40%; the number of words is a compile-time
constant (one kernel per value, see `search_kernel`) so the loops over words unroll, worth
about 20% over a run-time count, and with one word (up to 64 pieces) `used` is kept in a
register during a call (about +10%).  Mixing signed and unsigned integers in
numba arithmetic gives floats: every such expression below casts explicitly.

The pure-Python twin of this kernel is `tests/naive_solver.py`.
"""

from __future__ import annotations

from numba import int64, njit, uint64

from e2store.bits import cttz

# state slots, statuses, record strides and the fields of a `dep` row
DEPTH, STATUS, NODES, SOLUTIONS, FIRST_NODES = 0, 1, 2, 3, 4
FRESH, RUNNING, DONE = 0, 1, 2
DEP = 16
CAND = 8
D_CELL, D_I1, D_I2, D_BASE, D_O3, D_I3, D_O4, D_I4, D_SEG = range(9)
LIST, BITS = 0, 1
SKIP_MASK, KILL_MASK = -1, -2  # finals mask ids (e2store.query.finals.SKIP, KILL)


def _make_kernels(n_words: int, finals: bool = False, distinct: bool = False):
    """Compile `search` for boards of up to 64 * n_words pieces.  `n_words` is a constant of
    the closure, so numba unrolls the loops over words (numba caches one kernel per value).
    `finals` (also a constant: without it the hook is pruned before typing) adds the
    finals hook and its six arrays as trailing arguments (see FINALS below).  `distinct`
    (a constant too, never with `finals`) takes two trailing arrays instead, the word and
    bit of each piece's next copy (`Plan.distinct_args`), toggled in `used` when the piece
    is placed and when it is taken back (DISTINCT below)."""
    W = n_words
    FIN = finals
    DIST = distinct

    @njit(cache=True, nogil=True)
    def _open(d, dep, bstart, cand, k_col, bmask, simple, shown, used, mode, keys, avail, pos,
              end, stack):
        """Open depth d (written out again in `search`: keep the two identical)."""
        o = uint64(d * DEP)
        key = dep[o + uint64(D_BASE)] + shown[uint64(dep[o + uint64(D_I1)])] * k_col + shown[
            uint64(dep[o + uint64(D_I2)])]
        keys[uint64(d)] = key
        x3 = dep[o + uint64(D_O3)]
        if x3 < 0 and simple[uint64(key)] != 0:
            mode[uint64(d)] = BITS
            for w in range(W):
                avail[uint64(d * W + w)] = bmask[uint64(key * W + w)] & ~used[uint64(w)]
        else:
            mode[uint64(d)] = LIST
            st = dep[o + uint64(D_SEG)]
            k = st
            lo = bstart[uint64(key)]
            hi = bstart[uint64(key + 1)]
            if x3 < 0:
                for i in range(lo, hi):
                    stack[uint64(k)] = i
                    p = cand[uint64(i * CAND + 1)]
                    k += ((used[uint64(p >> 6)] >> uint64(p & 63)) & uint64(1)) == uint64(0)
            else:
                w3 = shown[uint64(dep[o + uint64(D_I3)])]
                x4 = dep[o + uint64(D_O4)]
                w4 = shown[uint64(dep[o + uint64(D_I4)])]
                for i in range(lo, hi):
                    stack[uint64(k)] = i
                    p = cand[uint64(i * CAND + 1)]
                    k += ((((used[uint64(p >> 6)] >> uint64(p & 63)) & uint64(1))
                           == uint64(0))
                          & (cand[uint64(i * CAND + 2 + x3)] == w3)
                          & (cand[uint64(i * CAND + 2 + x4)] == w4))
            pos[uint64(d)] = st
            end[uint64(d)] = k

    @njit(cache=True, nogil=True)
    def search(state, dep, bstart, cand, k_col, bmask, simple, crec, col, n_pieces, shown,
               placed, used, mode, keys, avail, pos, end, stack, pcs, node_limit, first_only,
               sols, *fin):
        """Run the depth-first search until it ends, `state[NODES]` reaches `node_limit`,
        the first solution is found (the call returns at once so the caller can time it),
        or `sols` is full.  Each solution is written to the next row of `sols` (the board's
        packed cells, from `placed`, which holds the pre-placed cells too); returns the
        number of rows written.  Call again with the same arrays to go on where it stopped.
        """
        n_depth = end.shape[0]
        n_cells = placed.shape[0]
        last = n_depth - 1
        cap = sols.shape[0]
        one = uint64(1)
        n_out = 0
        if state[STATUS] == DONE:
            return 0
        d = state[DEPTH]
        nodes = state[NODES]
        u0 = used[0]  # with a single word, `used` lives in a register until the call ends
        if state[STATUS] == FRESH:
            d = 0
            _open(0, dep, bstart, cand, k_col, bmask, simple, shown, used, mode, keys, avail,
                  pos, end, stack)
            state[STATUS] = RUNNING
        while True:
            ud = uint64(d)
            v = int64(-1)
            if mode[ud] == BITS:
                # the lowest unused piece left in the bucket (consumed words are zero)
                b = uint64(d * W)
                w = 0
                while w < W and avail[b + uint64(w)] == uint64(0):
                    w += 1
                if w < W:
                    a = avail[b + uint64(w)]
                    avail[b + uint64(w)] = a & (a - one)
                    v = int64(crec[uint64(keys[ud] * n_pieces + w * 64 + cttz(a))])
            else:
                i = pos[ud]
                if i < end[ud]:
                    pos[ud] = i + 1
                    v = cand[uint64(stack[uint64(i)] * CAND)]
            if v < 0:
                # UNDO: depth d is exhausted; take back the piece of depth d-1
                d -= 1
                if d < 0:
                    state[STATUS] = DONE
                    d = 0
                    break
                p = pcs[uint64(d)] >> 2
                if W == 1:
                    u0 &= ~(one << uint64(p))
                else:
                    used[uint64(p >> 6)] &= ~(one << uint64(p & 63))
                if DIST:  # the next copy is not free any more
                    nxt_w, nxt_m = fin
                    if W == 1:
                        u0 ^= nxt_m[uint64(p)]
                    else:
                        used[uint64(nxt_w[uint64(p)])] ^= nxt_m[uint64(p)]
                continue
            # PLACE v on the cell of depth d
            cell = dep[uint64(d * DEP + D_CELL)]
            nodes += 1
            placed[uint64(cell)] = v
            if d == last:
                k = state[SOLUTIONS]
                state[SOLUTIONS] = k + 1
                if n_out < cap:
                    for j in range(n_cells):
                        sols[n_out, j] = placed[j]
                    n_out += 1
                if k == 0:
                    state[FIRST_NODES] = nodes
                    if first_only:
                        state[STATUS] = DONE
                    break
                if n_out == cap or nodes >= node_limit:
                    break
                continue
            if FIN:
                # FINALS: region g's alive words at depth d are fidx/fval[s:e] with (s, e) =
                # flev[2 * (d * n_reg + g) ...]; AND them with the placement's mask into the
                # words of depth d+1, stacked after e (undo is free)
                fmid, fmask, fidx, fval, flev, fcuts = fin
                n_reg = fcuts.shape[0]
                mrow = uint64((cell * 4 * n_pieces + v) * n_reg)
                nxt = uint64(2 * n_reg)
                cut = -1
                for g in range(n_reg):
                    m = fmid[mrow + uint64(g)]
                    lo = uint64((d * n_reg + g) * 2)
                    s = flev[lo]
                    e = flev[lo + one]
                    if m == SKIP_MASK:
                        if s == e:  # empty from the start (fixed cells)
                            cut = g
                            break
                        flev[lo + nxt] = s
                        flev[lo + nxt + one] = e
                    elif m == KILL_MASK:
                        cut = g
                        break
                    else:
                        k = e
                        for i in range(s, e):
                            wi = fidx[uint64(i)]
                            x = fval[uint64(i)] & fmask[uint64(m + wi)]
                            fidx[uint64(k)] = wi
                            fval[uint64(k)] = x
                            k += x != uint64(0)
                        if k == e:
                            cut = g
                            break
                        flev[lo + nxt] = e
                        flev[lo + nxt + one] = k
                if cut >= 0:  # CUT: a region has no corolle left; try the next candidate
                    fcuts[cut] += 1
                    if nodes >= node_limit:
                        break
                    continue
            pcs[ud] = v
            p = v >> 2
            if W == 1:
                u0 |= one << uint64(p)
            else:
                used[uint64(p >> 6)] |= one << uint64(p & 63)
            if DIST:
                # DISTINCT: the copies of a class are placed lowest first, so placing one
                # frees the next (its bit was set in `used`: toggling clears it)
                nxt_w, nxt_m = fin
                if W == 1:
                    u0 ^= nxt_m[uint64(p)]
                else:
                    used[uint64(nxt_w[uint64(p)])] ^= nxt_m[uint64(p)]
            q = uint64(cell * 4)
            c = uint64(v * 4)
            shown[q] = col[c]
            shown[q + one] = col[c + one]
            shown[q + uint64(2)] = col[c + uint64(2)]
            shown[q + uint64(3)] = col[c + uint64(3)]
            d += 1
            # open depth d (same code as `_open`)
            o = uint64(d * DEP)
            key = dep[o + uint64(D_BASE)] + shown[uint64(dep[o + uint64(D_I1)])] * k_col + shown[
                uint64(dep[o + uint64(D_I2)])]
            keys[uint64(d)] = key
            x3 = dep[o + uint64(D_O3)]
            if x3 < 0 and simple[uint64(key)] != 0:
                mode[uint64(d)] = BITS
                if W == 1:
                    avail[uint64(d)] = bmask[uint64(key)] & ~u0
                else:
                    for w in range(W):
                        avail[uint64(d * W + w)] = (bmask[uint64(key * W + w)]
                                                    & ~used[uint64(w)])
            else:
                mode[uint64(d)] = LIST
                st = dep[o + uint64(D_SEG)]
                k = st
                lo = bstart[uint64(key)]
                hi = bstart[uint64(key + 1)]
                if x3 < 0:
                    for i in range(lo, hi):
                        stack[uint64(k)] = i
                        p = cand[uint64(i * CAND + 1)]
                        u = u0 if W == 1 else used[uint64(p >> 6)]
                        k += ((u >> uint64(p & 63)) & uint64(1)) == uint64(0)
                else:
                    w3 = shown[uint64(dep[o + uint64(D_I3)])]
                    x4 = dep[o + uint64(D_O4)]
                    w4 = shown[uint64(dep[o + uint64(D_I4)])]
                    for i in range(lo, hi):
                        stack[uint64(k)] = i
                        p = cand[uint64(i * CAND + 1)]
                        u = u0 if W == 1 else used[uint64(p >> 6)]
                        k += ((((u >> uint64(p & 63)) & uint64(1)) == uint64(0))
                              & (cand[uint64(i * CAND + 2 + x3)] == w3)
                              & (cand[uint64(i * CAND + 2 + x4)] == w4))
                pos[uint64(d)] = st
                end[uint64(d)] = k
            if nodes >= node_limit:
                break
        if W == 1:
            used[0] = u0
        state[DEPTH] = d
        state[NODES] = nodes
        return n_out

    return search


_KERNELS: dict[tuple[int, bool, bool], object] = {}


def search_kernel(n_words: int, finals: bool = False, distinct: bool = False):
    """The `search` kernel for boards of up to 64 * n_words pieces, with the finals hook or
    the distinct-copies toggle or neither (built once per combination)."""
    key = (n_words, bool(finals), bool(distinct))
    if key not in _KERNELS:
        _KERNELS[key] = _make_kernels(n_words, bool(finals), bool(distinct))
    return _KERNELS[key]
