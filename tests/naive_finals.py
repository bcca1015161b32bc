"""Slow, obviously-correct pure-Python twin of the solver with finals (`e2store.query.finals`).

Shares no code with `e2store`: the search of `naive_solver.naive_solve`, plus, at every
node that is not a full board, the alive corolles of every region recomputed from scratch
from the partial board; the branch is cut, and counted for the first empty region, when a
region has none left.  A region is a list of corolles, each a dict {(x, y): (piece, r)}.
"""

from __future__ import annotations

from naive_solver import STEP, fits, shown


def corolle_alive(pieces, corolle: dict, board: dict, where: dict) -> bool:
    """The corolle agrees with the partial board: its cells placed alike, none of its pieces
    placed elsewhere, and every placed neighbour outside it showing the colour it shows."""
    for cell, (p, r) in corolle.items():
        if cell in board and board[cell] != (p, r):
            return False
        if p in where and where[p] != cell:
            return False
    for (x, y), (p, r) in corolle.items():
        for s, (dx, dy) in STEP.items():
            nb = (x + dx, y + dy)
            if nb in corolle or nb not in board:
                continue
            q, rq = board[nb]
            if shown(pieces[q], rq, (s + 2) % 4) != shown(pieces[p], r, s):
                return False
    return True


def alive_set(pieces, region: list[dict], board: dict) -> list[int]:
    """Indices of the region's corolles compatible with the partial board {cell: (p, r)}."""
    where = {p: cell for cell, (p, _) in board.items()}
    return [k for k, c in enumerate(region) if corolle_alive(pieces, c, board, where)]


def naive_solve_finals(pieces, width, height, order, regions: list[list[dict]],
                       seed: dict | None = None, first: bool = False):
    """(solutions, nodes, cuts per region), like `naive_solve` with the finals cut."""
    board: dict = dict(seed or {})
    free = [tuple(c) for c in order if tuple(c) not in board]
    used = {p for p, _ in board.values()}
    solutions: list[tuple[int, ...]] = []
    cuts = [0] * len(regions)
    nodes = 0

    def full() -> tuple[int, ...]:
        return tuple(board[(x, y)][0] * 4 + board[(x, y)][1]
                     for y in range(height) for x in range(width))

    def rec(i: int) -> bool:
        nonlocal nodes
        if i == len(free):
            solutions.append(full())
            return first
        x, y = free[i]
        for p in range(len(pieces)):
            if p in used:
                continue
            for r in range(4):
                if not fits(pieces, width, height, board, x, y, p, r):
                    continue
                nodes += 1
                board[(x, y)] = (p, r)
                used.add(p)
                empty = None
                if i + 1 < len(free):
                    empty = next((g for g, reg in enumerate(regions)
                                  if not alive_set(pieces, reg, board)), None)
                if empty is not None:
                    cuts[empty] += 1
                    stop = False
                else:
                    stop = rec(i + 1)
                del board[(x, y)]
                used.discard(p)
                if stop:
                    return True
        return False

    if not free:
        solutions.append(full())
    else:
        rec(0)
    return solutions, nodes, cuts
