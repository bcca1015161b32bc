"""Slow, obviously-correct pure-Python twin of the solver kernel (`e2store.solver._kernels`).

Shares no code with `e2store`: plain recursion over the cells in the given scan order,
trying every unused piece in every rotation (ascending piece, then rotation, so solutions
come in the same order as the kernel's), checking the frame and every placed neighbour.
"""

from __future__ import annotations

STEP = {0: (-1, 0), 1: (0, -1), 2: (1, 0), 3: (0, 1)}  # side W N E S -> neighbour offset


def shown(piece, r: int, side: int) -> int:
    """Colour shown on `side` by a (W, N, E, S) piece turned r quarter turns clockwise."""
    return piece[(side - r) % 4]


def fits(pieces, width, height, board: dict, x: int, y: int, p: int, r: int) -> bool:
    """Piece p turned r fits (x, y): grey exactly on frame sides, placed neighbours match."""
    for s, (dx, dy) in STEP.items():
        nx, ny = x + dx, y + dy
        outside = not (0 <= nx < width and 0 <= ny < height)
        colour = shown(pieces[p], r, s)
        if (colour == 0) != outside:
            return False
        if (nx, ny) in board:
            q, rq = board[(nx, ny)]
            if shown(pieces[q], rq, (s + 2) % 4) != colour:
                return False
    return True


def packed(board: dict, width: int, height: int) -> tuple[int, ...]:
    """A full board {(x, y): (piece, r)} as packed `piece*4+r` by cell y*W+x."""
    return tuple(board[(x, y)][0] * 4 + board[(x, y)][1]
                 for y in range(height) for x in range(width))


def naive_solve(pieces, width, height, order, seed: dict | None = None, first: bool = False,
                cut=None, after=None):
    """(solutions, nodes): every solution as a tuple of packed `piece*4+r` by cell y*W+x, in
    search order; nodes = pieces placed (seed cells are not nodes).  `order` lists (x, y)
    cells; `seed` maps (x, y) -> (piece, r) and is assumed consistent.  `cut(i, board,
    used)`, if given, is asked after each placement on free cell i (a counted node) and
    cuts the branch when it returns True (the hook of a pruning twin); `after(i, board,
    used)`, if given, is called when the subtree below an uncut placement on i is done."""
    board: dict = dict(seed or {})
    free = [tuple(c) for c in order if tuple(c) not in board]
    used = {p for p, _ in board.values()}
    solutions: list[tuple[int, ...]] = []
    nodes = 0

    def rec(i: int) -> bool:
        nonlocal nodes
        if i == len(free):
            solutions.append(packed(board, width, height))
            return first
        x, y = free[i]
        for p in range(len(pieces)):
            if p in used:
                continue
            for r in range(4):
                if fits(pieces, width, height, board, x, y, p, r):
                    nodes += 1
                    board[(x, y)] = (p, r)
                    used.add(p)
                    cut_here = cut is not None and cut(i, board, used)
                    stop = False if cut_here else rec(i + 1)
                    if after is not None and not cut_here:
                        after(i, board, used)
                    del board[(x, y)]
                    used.discard(p)
                    if stop:
                        return True
        return False

    if not free:
        solutions.append(packed(board, width, height))
    else:
        rec(0)
    return solutions, nodes


def lowest_corner_nw(pieces) -> tuple[int, int]:
    """(piece, r) of the lowest-numbered piece with two adjacent grey sides, turned so they
    face west and north."""
    for p, piece in enumerate(pieces):
        for r in range(4):
            if [shown(piece, r, s) == 0 for s in range(4)] == [True, True, False, False]:
                return p, r
    raise ValueError("no corner piece")


def symmetry_class_representative(solution, pieces, width, height) -> bool:
    """True when the solution is the one the symmetry break keeps: the lowest corner piece
    on (0, 0), or, on a non-square board, on (0, 0) or (W-1, 0)."""
    p, _ = lowest_corner_nw(pieces)
    keep = [0] if width == height else [0, width - 1]
    return any(solution[c] >> 2 == p for c in keep)
