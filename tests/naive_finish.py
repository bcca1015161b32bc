"""Pure-Python twins of the tail re-solve (`e2store.solver.best.finish`), sharing no code
with e2store: boards are lists of packed `piece*4 + r` values by cell index y*W+x, -1 a
hole; pieces are (W, N, E, S) colour tuples.

* `brute_tail`: the best score over every assignment of the pool (the tail's pieces and
  the leftovers) to the tail cells, each piece in every rotation legal on its cell.
* `twin_bound`: the kernel's bound (`ledger`) on the open cells of a board, computed from
  scratch.
"""

from __future__ import annotations

import itertools

from naive import fits_cell, shown
from naive_best import naive_score

GREY = 0
STEPS = ((-1, 0), (0, -1), (1, 0), (0, 1))  # W N E S


def neighbours(w, h, cell):
    """(side, neighbour cell) of every side of `cell` that faces another cell."""
    x, y = cell % w, cell // w
    return [(s, (y + dy) * w + x + dx) for s, (dx, dy) in enumerate(STEPS)
            if 0 <= x + dx < w and 0 <= y + dy < h]


def kind(piece) -> int:
    """0 inner, 1 border, 2 corner: its grey sides."""
    return min(sum(1 for c in piece if c == GREY), 2)


def legal_rotations(pieces, w, h, cell, p) -> list[int]:
    """The placements of piece p on `cell` with grey exactly on its frame sides."""
    return [p * 4 + r for r in range(4) if fits_cell(pieces[p], r, w, h, cell % w, cell // w)]


def colour(pieces, v, side) -> int:
    return shown(pieces[v // 4], v % 4, side)


def tail_joins(pieces, w, h, board, cells) -> int:
    """Matched joins with at least one end in `cells`, each join counted once."""
    seen = set()
    got = 0
    for c in cells:
        for s, o in neighbours(w, h, c):
            if (min(c, o), max(c, o)) in seen:
                continue
            seen.add((min(c, o), max(c, o)))
            a, b = board[c], board[o]
            if a < 0 or b < 0:
                continue
            ca, cb = colour(pieces, a, s), colour(pieces, b, (s + 2) % 4)
            got += int(ca == cb and ca != GREY)
    return got


def brute_tail(pieces, w, h, board, cells) -> int:
    """The best score of the board over every assignment of pool pieces to `cells`, one
    per cell, in every legal rotation (-1 when no assignment is legal).  A legal piece
    goes only on a cell of its kind, so the assignments are, per kind, the permutations
    of that kind's pool pieces over that kind's tail cells."""
    cells = list(cells)
    tail = set(cells)
    base_board = [-1 if i in tail else v for i, v in enumerate(board)]
    base = naive_score(pieces, w, h, base_board)[0]
    on = {v // 4 for v in base_board if v >= 0}
    pool = [p for p in range(len(pieces)) if p not in on]
    by_kind: dict[int, list[int]] = {}
    for c in cells:
        x, y = c % w, c // w
        k = min(int(x in (0, w - 1)) + int(y in (0, h - 1)), 2)
        by_kind.setdefault(k, []).append(c)
    per_kind = []
    for k, kc in by_kind.items():
        pk = [p for p in pool if kind(pieces[p]) == k]
        per_kind.append([list(zip(kc, perm, strict=True))
                         for perm in itertools.permutations(pk, len(kc))])
    best = -1
    b = list(base_board)
    for parts in itertools.product(*per_kind):
        pairs = [pair for part in parts for pair in part]
        opts = [legal_rotations(pieces, w, h, c, p) for c, p in pairs]
        for choice in itertools.product(*opts):
            for (c, _), v in zip(pairs, choice, strict=True):
                b[c] = v
            best = max(best, base + tail_joins(pieces, w, h, b, cells))
    return best


def twin_bound(pieces, w, h, board, open_cells) -> int:
    """The kernel's bound on the joins the open cells (holes of `board`) can still match:
    per colour c, M_c = sum over kinds k of min(frontier sides of colour c facing open
    cells of kind k, sides of colour c of the leftover pieces of kind k), plus
    min(joins between open cells, sum_c floor((leftover sides of colour c - M_c) / 2))."""
    opened = set(open_cells)
    left = set(range(len(pieces))) - {v // 4 for v in board if v >= 0}
    front: dict[tuple[int, int], int] = {}
    supply: dict[tuple[int, int], int] = {}
    inner = 0
    for c in opened:
        x, y = c % w, c // w
        k = min(int(x in (0, w - 1)) + int(y in (0, h - 1)), 2)
        for s, o in neighbours(w, h, c):
            if o in opened:
                inner += 1
            elif board[o] >= 0:
                col = colour(pieces, board[o], (s + 2) % 4)
                front[k, col] = front.get((k, col), 0) + 1
    inner //= 2
    for p in left:
        for col in pieces[p]:
            supply[kind(pieces[p]), col] = supply.get((kind(pieces[p]), col), 0) + 1
    colours = {col for _, col in front} | {col for _, col in supply}
    matched = spare = 0
    for col in colours - {GREY}:
        m = sum(min(front.get((k, col), 0), supply.get((k, col), 0)) for k in range(3))
        s = sum(supply.get((k, col), 0) for k in range(3))
        matched += m
        spare += (s - m) // 2
    return matched + min(inner, spare)
