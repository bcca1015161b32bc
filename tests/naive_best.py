"""Pure-Python twins of the best-score search and of the score (no numpy in the hot parts,
no code shared with e2store.solver.best or e2store.boards.table).

* `naive_score`: every join of a board counted one by one.
* `twin_search`: the kernel `e2store.solver.best._kernels.best_search` rewritten as a
  recursive function over the same plan tables and candidate lists: the same nodes, the
  same best board, under the same node budget.
* `brute_best`: an independent search of the same space from the rules alone (every
  placement of every cell in scan order whose grey sides are the frame's, at most one
  mismatched join per placement, on inner colours only, the k-th mismatch from scan
  position breaks[k] on): the best (depth, score) over the whole space.
"""

from __future__ import annotations

import random
import sys

from naive import random_board_pieces, shown

GREY = 0


def naive_score(pieces, width, height, board) -> tuple[int, int, int]:
    """(matched joins, joins, holes) of `board` (list of packed placements, -1 holes)."""
    matched = joins = 0
    for y in range(height):
        for x in range(width):
            for dx, dy, side, other in ((1, 0, 2, 0), (0, 1, 3, 1)):
                if x + dx >= width or y + dy >= height:
                    continue
                joins += 1
                a, b = board[y * width + x], board[(y + dy) * width + x + dx]
                if a < 0 or b < 0:
                    continue
                ca = shown(pieces[a // 4], a % 4, side)
                cb = shown(pieces[b // 4], b % 4, other)
                if ca == cb and ca != GREY:
                    matched += 1
    return matched, joins, sum(1 for v in board if v < 0)


def unsolvable_pieces(width, height, seed, n_frame=3, n_inner=4):
    """A random board's pieces with a few inner sides recoloured: usually no perfect
    board, so the best score is below the joins."""
    pieces = [list(p) for p in random_board_pieces(width, height, n_frame, n_inner, seed)]
    rnd = random.Random(seed)
    inner = [i for i, p in enumerate(pieces) if GREY not in p]
    for i in rnd.sample(inner, min(2, len(inner))):
        s = rnd.randrange(4)
        pieces[i][s] = rnd.randint(n_frame + 1, n_frame + n_inner)
    return [tuple(p) for p in pieces]


def twin_search(plan, lists, kstart, kmid, kend, budget):
    """The kernel's search as recursion: returns (nodes, best free depth, best score, best
    mismatches, best board, status) with the kernel's meaning of each."""
    sys.setrecursionlimit(10_000)
    K, n = plan.K, len(plan.cell)
    colk = [int(v) for v in plan.colk]
    placed = [-1] * (plan.instance.width * plan.instance.height)
    used = [False] * plan.instance.n_pieces
    for c, v in plan.fixed.items():
        placed[c] = v
        used[v >> 2] = True
    state = {"nodes": 0, "bd": 0, "bs": -1, "bm": 0, "best": list(placed), "status": "budget"}

    class Stop(Exception):
        pass

    n4 = 4 * len(placed)  # the plan's `scol` indices: cell*4+side, the frame, the wildcard

    def side_colour(idx):
        idx = int(idx)
        return 0 if idx == n4 else (K - 1 if idx == n4 + 4 else colk[placed[idx >> 2] * 4
                                                                    + (idx & 3)])

    hq = [int(v) for v in plan.hq]
    qmin = [int(v) for v in plan.qmin]

    def visit(d, mism, hc):
        ca = side_colour(plan.ia[d])
        cb = side_colour(plan.ib[d])
        key = int(plan.sig[d]) * K * K + ca * K + cb
        end = kend[key] if plan.allow[d] > mism else kmid[key]
        for i in range(kstart[key], end):
            q = int(lists[i])
            if used[q >> 2]:
                continue
            m = 1 if i >= kmid[key] else 0
            ok = True
            for j in range(2):
                if plan.xi[d, j] < 0:
                    break
                want = side_colour(plan.xi[d, j])
                got = colk[q * 4 + plan.xs[d, j]]
                if want != got:
                    if m > 0 or not (plan.inner[want] and plan.inner[got]):
                        ok = False
                        break
                    m += 1
            if not ok or mism + m > plan.allow[d] or hc + hq[q] < qmin[d]:
                continue
            if state["nodes"] >= budget:
                raise Stop
            state["nodes"] += 1
            c = int(plan.cell[d])
            placed[c] = q
            used[q >> 2] = True
            score = int(plan.jf[d + 1]) - (mism + m)
            if d + 1 > state["bd"] or (d + 1 == state["bd"] and score > state["bs"]):
                state.update(bd=d + 1, bs=score, bm=mism + m, best=list(placed))
            if d + 1 == n:
                if score == plan.full:
                    state["status"] = "perfect"
                    raise Stop
            else:
                visit(d + 1, mism + m, hc + hq[q])
            placed[c] = -1
            used[q >> 2] = False

    try:
        if n:
            visit(0, 0, plan.hc0)
        state["status"] = "exhausted"
    except Stop:
        pass
    return (state["nodes"], state["bd"], state["bs"], state["bm"], state["best"],
            state["status"])


def brute_best(pieces, width, height, order, fixed, breaks, frame_colours):
    """Best (depth, score) over every board the rules allow (module docstring): depth in
    scan positions covered, score the matched joins among filled cells."""
    sys.setrecursionlimit(10_000)
    n = width * height
    pos = {c: i for i, c in enumerate(order)}
    free = [c for c in order if c not in fixed]
    board = [-1] * n
    for c, v in fixed.items():
        board[c] = v
    used = {v // 4 for v in fixed.values()}

    def colour(v, side):
        return shown(pieces[v // 4], v % 4, side)

    def inner(c):
        return c != GREY and c not in frame_colours

    def frame_ok(cell, v):
        x, y = cell % width, cell // width
        on_frame = (x == 0, y == 0, x == width - 1, y == height - 1)
        return all((colour(v, s) == GREY) == on_frame[s] for s in range(4))

    def filled_matched():
        m, _, _ = naive_score(pieces, width, height, board)
        return m

    best = [0, -1]

    def visit(k, mism):
        depth = pos[free[k - 1]] + 1 if k else 0
        if k == len(free):
            depth = n
        score = filled_matched()
        if k and (depth > best[0] or (depth == best[0] and score > best[1])):
            best[0], best[1] = depth, score
        if k == len(free):
            return
        cell = free[k]
        x, y = cell % width, cell // width
        allow = sum(1 for b in breaks if b <= pos[cell])
        for v in range(4 * len(pieces)):
            if v // 4 in used or not frame_ok(cell, v):
                continue
            m = 0
            ok = True
            for s, (dx, dy) in enumerate(((-1, 0), (0, -1), (1, 0), (0, 1))):
                if not (0 <= x + dx < width and 0 <= y + dy < height):
                    continue
                o = board[(y + dy) * width + x + dx]
                if o < 0:
                    continue
                a, b = colour(v, s), colour(o, (s + 2) % 4)
                if a != b:
                    if not (inner(a) and inner(b)):
                        ok = False
                        break
                    m += 1
            if not ok or m > 1 or mism + m > allow:
                continue
            board[cell] = v
            used.add(v // 4)
            visit(k + 1, mism + m)
            board[cell] = -1
            used.discard(v // 4)

    visit(0, 0)
    return best[0], best[1]
