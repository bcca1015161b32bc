"""Slow, obviously-correct pure-Python twins of the block closure kernels
(`e2store.query._closure_kernels`) and of the generated kernel's closure probe.

Shares no code with `e2store`: pieces are (W, N, E, S) colour tuples, a rotation r shows
`piece[(side - r) % 4]` on `side`, colour ranks are the sorted distinct colours with grey.
"""

from __future__ import annotations

from naive_solver import STEP, naive_solve, shown

M64 = (1 << 64) - 1
PROBE_BITS = 6


def ranks(pieces) -> dict[int, int]:
    """Colour -> dense rank (grey first)."""
    return {c: i for i, c in enumerate(sorted({0, *(c for p in pieces for c in p)}))}


def interior(pieces) -> list[int]:
    return [p for p, piece in enumerate(pieces) if 0 not in piece]


def block_fillings(pieces, width: int) -> tuple[int, set]:
    """(number of fillings, set of keys) of the (width-2) x 2 block: interior pieces in any
    rotation, inner joins matching; key = (bit set of the pieces, north ranks west to east)."""
    bw = width - 2
    rk = ranks(pieces)
    cells = [(x, y) for y in range(2) for x in range(bw)]
    inner = interior(pieces)
    keys: set = set()
    count = 0
    board: dict = {}

    def rec(i: int) -> None:
        nonlocal count
        if i == len(cells):
            count += 1
            bits = sum(1 << p for p, _ in board.values())
            keys.add((bits, tuple(rk[shown(pieces[board[(x, 0)][0]], board[(x, 0)][1], 1)]
                                  for x in range(bw))))
            return
        x, y = cells[i]
        for p in inner:
            if any(q == p for q, _ in board.values()):
                continue
            for r in range(4):
                ok = True
                for s, (dx, dy) in STEP.items():
                    nb = (x + dx, y + dy)
                    if nb in board:
                        q, rq = board[nb]
                        if shown(pieces[q], rq, (s + 2) % 4) != shown(pieces[p], r, s):
                            ok = False
                if ok:
                    board[(x, y)] = (p, r)
                    rec(i + 1)
                    del board[(x, y)]

    rec(0)
    return count, keys


def mix64(x: int) -> int:
    x = (x * 0x9E3779B97F4A7C15) & M64
    x ^= x >> 29
    x = (x * 0xBF58476D1CE4E5B9) & M64
    return x ^ (x >> 32)


def code_of(north: tuple[int, ...], k_col: int) -> int:
    c = 0
    for v in north:
        c = c * k_col + v
    return c


def key_hash(bits: int, code: int) -> int:
    return mix64(bits ^ mix64((code + 0x632BE59BD9B4E019) & M64))


def bloom_bits(h: int, words: int) -> list[tuple[int, int]]:
    """(word, bit) pairs a key hash sets in a filter of `words` words: six bits, chosen by
    another mix of the hash, in the one word its low bits name."""
    g = mix64(h ^ 0x5555)
    return [(h % words, (g >> (6 * i)) & 63) for i in range(PROBE_BITS)]


def naive_bloom(keys: set, words: int, k_col: int) -> list[int]:
    """The filter holding `keys` (as `block_fillings` returns them)."""
    w = [0] * words
    for bits, north in keys:
        for i, bit in bloom_bits(key_hash(bits, code_of(north, k_col)), words):
            w[i] |= 1 << bit
    return w


def bloom_has(words: list[int], bits: int, code: int) -> bool:
    return all(words[i] >> bit & 1 for i, bit in bloom_bits(key_hash(bits, code), len(words)))


def naive_solve_closure(pieces, width, height, order, words: list[int], seed=None,
                        subtree_depth: int | None = None, memo_slots: int = 0):
    """(solutions, nodes, [probes, cuts, memo cuts, memo records]) of
    `naive_solver.naive_solve` with the closure probe: right after the placement that
    completes every interior cell outside the block and the row above it, the free interior
    pieces and the row's south colour ranks must be a key of the filter `words`, else that
    node is cut.  With `memo_slots` and `subtree_depth` (the free cells the search places
    above its subtrees), the row memo too: where the row's cells come right after the
    border cell west of it, below the subtree depth, a placement on that border cell whose
    key (free interior pieces; its east colour and the south colours above the row) saw no
    probe pass in an earlier subtree below it is cut; the memo is a direct-mapped table of
    `memo_slots` slots (slot by the key's hash), emptied for every subtree."""
    board: dict = dict(seed or {})
    free = [tuple(c) for c in order if tuple(c) not in board]
    block = {(x, y) for y in (height - 3, height - 2) for x in range(1, width - 1)}
    row = [(x, height - 4) for x in range(1, width - 1)]
    above = [(x, y) for y in range(1, height - 1) for x in range(1, width - 1)
             if (x, y) not in block] + row
    inner = interior(pieces)
    rk = ranks(pieces)
    k_col = len(rk)
    at = max((free.index(c) for c in above if c in free), default=-1)
    probe = at if at >= 0 and all(c in free and free.index(c) > at for c in block) else None
    counts = [0, 0, 0, 0]  # probes, cuts, memo cuts, memo records
    west, east = (0, height - 4), (width - 1, height - 4)
    m = None if probe is None else probe - len(row)
    if (memo_slots and subtree_depth is not None and m is not None and m >= subtree_depth
            and free[m] == west and set(free[m + 1:probe + 1]) == set(row)
            and (east not in free[:probe + 1]) and east not in board):
        memo_at = m
    else:
        memo_at = None
    memo: dict = {}
    watching: list = []

    def free_bits(used: set) -> int:
        return sum(1 << q for q in inner if q not in used)

    def colour(placed: dict, cell, side: int) -> int:
        return rk[shown(pieces[placed[cell][0]], placed[cell][1], side)]

    def cut(i: int, placed: dict, used: set) -> bool:
        if subtree_depth is not None and i == subtree_depth - 1:
            memo.clear()  # a new subtree starts below this placement
        if i == memo_at:
            bits = free_bits(used)
            code = code_of((colour(placed, west, 2),
                            *(colour(placed, (x, y - 1), 3) for x, y in row)), k_col)
            slot = key_hash(bits, code) % memo_slots
            if memo.get(slot) == (bits, code):
                counts[2] += 1
                return True
            watching.append((slot, bits, code, counts[0] - counts[1]))
            return False
        if i != probe:
            return False
        counts[0] += 1
        code = code_of(tuple(colour(placed, c, 3) for c in row), k_col)
        if bloom_has(words, free_bits(used), code):
            return False
        counts[1] += 1
        return True

    def after(i: int, placed: dict, used: set) -> None:
        if i == memo_at:
            slot, bits, code, passed = watching.pop()
            if counts[0] - counts[1] == passed:
                memo[slot] = (bits, code)
                counts[3] += 1

    solutions, nodes = naive_solve(pieces, width, height, order, seed, cut=cut, after=after)
    return solutions, nodes, counts
