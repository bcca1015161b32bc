"""Slow, obviously-correct pure-Python twins of the numba kernels (and their helpers).

They share no code with `e2store` beyond numpy, so agreeing with them means something.
"""

from __future__ import annotations

import itertools
import random


def shown(piece: tuple[int, int, int, int], r: int, side: int) -> int:
    """Colour shown on `side` (W=0 N=1 E=2 S=3) by a (W, N, E, S) piece turned r clockwise."""
    return piece[(side - r) % 4]


NEIGHBOUR = {0: (-1, 0), 1: (0, -1), 2: (1, 0), 3: (0, 1)}


def diamond(width: int, height: int, x: int, y: int, h: int) -> list[tuple[int, int]]:
    """On-board cells within Manhattan distance h of (x, y), nearest first."""
    cells = [(cx, cy) for cy in range(height) for cx in range(width)
             if abs(cx - x) + abs(cy - y) <= h]
    return sorted(cells, key=lambda c: abs(c[0] - x) + abs(c[1] - y))


def fits_cell(piece, r, width, height, cx, cy) -> bool:
    """Grey exactly on the sides of (cx, cy) that face the board's frame."""
    for s, (dx, dy) in NEIGHBOUR.items():
        outside = not (0 <= cx + dx < width and 0 <= cy + dy < height)
        if (shown(piece, r, s) == 0) != outside:
            return False
    return True


def naive_corolles(pieces, width, height, x, y, h) -> set[frozenset]:
    """Every corolle as a frozenset of ((cx, cy), piece, r): try every piece and rotation."""
    cells = diamond(width, height, x, y, h)
    region = set(cells)
    out: set[frozenset] = set()
    placed: dict[tuple[int, int], tuple[int, int]] = {}

    def rec(i: int) -> None:
        if i == len(cells):
            out.add(frozenset((c, p, r) for c, (p, r) in placed.items()))
            return
        cx, cy = cells[i]
        used = {p for p, _ in placed.values()}
        for p, piece in enumerate(pieces):
            if p in used:
                continue
            for r in range(4):
                if not fits_cell(piece, r, width, height, cx, cy):
                    continue
                ok = True
                for s, (dx, dy) in NEIGHBOUR.items():
                    nb = (cx + dx, cy + dy)
                    if nb in region and nb in placed:
                        q, rq = placed[nb]
                        if shown(pieces[q], rq, (s + 2) % 4) != shown(piece, r, s):
                            ok = False
                            break
                if ok:
                    placed[(cx, cy)] = (p, r)
                    rec(i + 1)
                    del placed[(cx, cy)]

    rec(0)
    return out


def naive_frontier(pieces, width, height, x, y, h, corolle: dict) -> list[int]:
    """DESIGN.md frontier of one corolle ({(cx, cy): (piece, r)}), computed from scratch.

    Ring-h cells are walked in ring order (east tip, south-west, north-west, north-east,
    south-east); each cell's sides facing distance h+1, clockwise around the diamond.
    """
    ring = [(h, 0)]
    cx, cy = h, 0
    for (sx, sy), steps in (((-1, 1), h), ((-1, -1), h), ((1, -1), h), ((1, 1), h - 1)):
        for _ in range(steps):
            cx, cy = cx + sx, cy + sy
            ring.append((cx, cy))
    if h == 0:
        ring = [(0, 0)]
    out = []
    for dx, dy in ring:
        outward = [s for s in range(4)
                   if abs(dx + NEIGHBOUR[s][0]) + abs(dy + NEIGHBOUR[s][1]) == h + 1]
        if len(outward) == 4:
            order = [1, 2, 3, 0]
        else:  # clockwise, starting after the gap in the cyclic side order
            start = [s for s in outward if (s - 1) % 4 not in outward][0]
            order = [(start + k) % 4 for k in range(len(outward))]
        cell = (x + dx, y + dy)
        for s in order:
            if cell in corolle:
                p, r = corolle[cell]
                out.append(shown(pieces[p], r, s))
            else:
                out.append(-1)
    return out


def naive_count_prefixes(pieces, width, height, x, y, h, level_cells, prefixes) -> list[int]:
    """Twin of `count_prefixes`: corolles whose first levels carry the given placements."""
    all_ = naive_corolles(pieces, width, height, x, y, h)
    counts = []
    for pre in prefixes:
        want = {(level_cells[j], v >> 2, v & 3) for j, v in enumerate(pre)}
        counts.append(sum(1 for c in all_ if want <= c))
    return counts


def naive_rotate(corolle: dict, q: int) -> dict:
    """Twin of `rotate_rows` on one corolle given as {(dx, dy): (piece, r)} offsets."""
    out = {}
    for (dx, dy), (p, r) in corolle.items():
        for _ in range(q):
            dx, dy = -dy, dx
        out[(dx, dy)] = (p, (r + q) % 4)
    return out


def random_board_pieces(width: int, height: int, n_frame: int, n_inner: int, seed: int,
                        ) -> list[tuple[int, int, int, int]]:
    """Pieces of a random solved W x H board (grey rim, few colours: many corolles)."""
    rnd = random.Random(seed)
    # colour of the east side of (x, y) and of its south side
    def join(xa, ya, xb, yb):
        frame = lambda cx, cy: cx in (0, width - 1) or cy in (0, height - 1)  # noqa: E731
        if frame(xa, ya) and frame(xb, yb) and (xa == xb and xa in (0, width - 1)
                                                or ya == yb and ya in (0, height - 1)):
            return rnd.randint(1, n_frame)
        return rnd.randint(n_frame + 1, n_frame + n_inner)

    east = {(cx, cy): join(cx, cy, cx + 1, cy) for cy in range(height) for cx in range(width - 1)}
    south = {(cx, cy): join(cx, cy, cx, cy + 1) for cy in range(height - 1) for cx in range(width)}
    pieces = []
    for cy in range(height):
        for cx in range(width):
            w = east.get((cx - 1, cy), 0)
            n = south.get((cx, cy - 1), 0)
            e = east.get((cx, cy), 0)
            s = south.get((cx, cy), 0)
            piece = (w, n, e, s)
            r = rnd.randrange(4)
            pieces.append(tuple(piece[(k + r) % 4] for k in range(4)))
    rnd.shuffle(pieces)
    return pieces


def naive_factorised(pieces, width, height, x, y, h) -> tuple[int, int]:
    """(corolles, stems) of the factorised count: stems are hamming h-1 corolles, each
    completed by brute-force injective products of the ring-h candidate lists."""
    rows = naive_cartesian(pieces, width, height, x, y, h)
    return sum(n for _, n in rows.values()), len(rows)


def naive_cartesian(pieces, width, height, x, y, h):
    """Cartesian rows as {stem frozenset: (lists per ring-h on-board cell in ring order,
    count)}: stems are hamming h-1 corolles with a completion; lists keep packed p*4+r."""
    import itertools

    from_ring = [c for c in diamond(width, height, x, y, h) if abs(c[0] - x) + abs(c[1] - y) == h]
    stems = [frozenset()] if h == 0 else naive_corolles(pieces, width, height, x, y, h - 1)
    out = {}
    for stem in stems:
        placed = {c: (p, r) for c, p, r in stem}
        used = {p for p, _ in placed.values()}
        lists = []
        for cx, cy in from_ring:
            opts = []
            for p, piece in enumerate(pieces):
                for r in range(4):
                    if p in used or not fits_cell(piece, r, width, height, cx, cy):
                        continue
                    if all(shown(pieces[placed[(cx + dx, cy + dy)][0]],
                                 placed[(cx + dx, cy + dy)][1], (s + 2) % 4) == shown(piece, r, s)
                           for s, (dx, dy) in NEIGHBOUR.items() if (cx + dx, cy + dy) in placed):
                        opts.append(p * 4 + r)
            lists.append((((cx, cy)), opts))
        n = sum(1 for combo in itertools.product(*[o for _, o in lists])
                if len({v >> 2 for v in combo}) == len(combo))
        if n:
            out[stem] = (lists, n)
    return out


def naive_expand(stem_row: list[int], lists: list[list[int]]) -> list[list[int]]:
    """Flat rows of one cartesian row: the product of the lists (-1 = empty slot) keeping
    only the choices whose pieces are distinct from each other and from the stem."""
    import itertools

    stem_pieces = {v >> 2 for v in stem_row if v >= 0}
    rows = []
    for combo in itertools.product(*lists):
        ps = [v >> 2 for v in combo if v >= 0]
        if len(set(ps)) == len(ps) and not stem_pieces & set(ps):
            rows.append(list(stem_row) + list(combo))
    return rows



def naive_placement_sets(cells: list[list[int]], n_placements: int) -> list[set[int]]:
    """Twin of `_kernels.mark_placements`: per slot (row of slot-major cells), the set of
    placements 0..n_placements-1 it takes."""
    return [{v for v in row if 0 <= v < n_placements} for row in cells]


def naive_injective(lists: list[list[int]]) -> int:
    """Choices of one placement (piece*4+r) per list with no piece twice, by brute force."""
    return sum(len({c >> 2 for c in choice}) == len(choice)
               for choice in itertools.product(*lists))


def _fits_neighbours(pieces, placed, cell, p, r) -> bool:
    """(p, r) at cell matches every placed neighbour."""
    for s, (dx, dy) in NEIGHBOUR.items():
        nb = (cell[0] + dx, cell[1] + dy)
        if nb in placed:
            q, rq = placed[nb]
            if shown(pieces[q], rq, (s + 2) % 4) != shown(pieces[p], r, s):
                return False
    return True


def naive_arms(pieces, width, height, x, y, level_cells, prefixes) -> tuple[list, list]:
    """Twin of `count_arms`: per prefix of core placements (`level_cells[j]` is the cell of
    prefix column j), the hamming-3 corolles and the cores (centre, ring 1, the diagonal
    cells) with a completion; each core's four arms (tip (2d), then 3d and 2d +- the
    perpendicular) are enumerated and their product walked, keeping piece-disjoint tuples."""
    on = lambda c: 0 <= c[0] < width and 0 <= c[1] < height  # noqa: E731
    core = [c for c in diamond(width, height, x, y, 2)
            if abs(c[0] - x) + abs(c[1] - y) <= 1 or (c[0] != x and c[1] != y)]
    arms = []
    for dx, dy in ((1, 0), (0, -1), (-1, 0), (0, 1)):
        tip = (x + 2 * dx, y + 2 * dy)
        if on(tip):
            rest = [(x + 3 * dx, y + 3 * dy), (tip[0] + dy, tip[1] + dx),
                    (tip[0] - dy, tip[1] - dx)]
            arms.append([tip] + [c for c in rest if on(c)])

    def fillings(cells, placed, used, fixed):
        """Every filling of cells (in order) around `placed`, pieces not in `used`, with the
        placements `fixed` demands."""
        if not cells:
            yield {}
            return
        cell, rest = cells[0], cells[1:]
        tries = ([fixed[cell]] if cell in fixed else
                 [(p, r) for p in range(len(pieces)) for r in range(4)])
        for p, r in tries:
            if p not in used and fits_cell(pieces[p], r, width, height, *cell) and \
                    _fits_neighbours(pieces, placed, cell, p, r):
                for more in fillings(rest, {**placed, cell: (p, r)}, used | {p}, fixed):
                    yield {cell: (p, r), **more}

    counts, cores = [], []
    for pre in prefixes:
        want = {level_cells[j]: (v >> 2, v & 3) for j, v in enumerate(pre)}
        n = n_cores = 0
        for filled in fillings(core, {}, frozenset(), want):
            used = frozenset(p for p, _ in filled.values())
            configs = [[frozenset(p for p, _ in f.values())
                        for f in fillings(arm, filled, used, {})] for arm in arms]
            got = sum(1 for combo in itertools.product(*configs)
                      if sum(map(len, combo)) == len(frozenset().union(*combo)))
            n += got
            n_cores += got > 0
        counts.append(n)
        cores.append(n_cores)
    return counts, cores


def naive_sample_paths(pieces, width, height, level_cells, prefixes, u) -> tuple[list, list]:
    """Twin of `sample_paths`: below each prefix (placements of the first levels, whose
    cells are `level_cells`), one path per row of u[b]; at each further level the free
    placements p*4+r that fit the cell and its placed neighbours, ascending, of which the
    floor(u * f)-th is taken; the weight is the product of the f (0.0 on a dead end)."""
    paths, weights = [], []
    for b, pre in enumerate(prefixes):
        for us in u[b]:
            placed = {level_cells[i]: (v >> 2, v & 3) for i, v in enumerate(pre)}
            used = {v >> 2 for v in pre}
            row, w = list(pre), 1.0
            for t, ul in enumerate(us):
                cell = level_cells[len(pre) + t]
                opts = [p * 4 + r for p in range(len(pieces)) for r in range(4)
                        if p not in used and fits_cell(pieces[p], r, width, height, *cell)
                        and _fits_neighbours(pieces, placed, cell, p, r)]
                if not opts:
                    w = 0.0
                    break
                c = opts[min(int(ul * len(opts)), len(opts) - 1)]
                row.append(c)
                placed[cell] = (c >> 2, c & 3)
                used.add(c >> 2)
                w *= len(opts)
            paths.append(row)
            weights.append(w)
    return paths, weights


def naive_canonical(cells, cls, same, weight):
    """Twin of `_kernels.canonical_rows`, a row at a time: slot-major (S, n) cells with each
    class's copies renamed lowest first (via `same[placement, rank]`) and the product of the
    renamed pieces' weights."""
    S, n = len(cells), len(cells[0]) if len(cells) else 0
    out = [[-1] * n for _ in range(S)]
    mult = []
    for i in range(n):
        taken: dict[int, int] = {}
        w = 1
        for j in range(S):
            v = int(cells[j][i])
            if v < 0:
                continue
            c = int(cls[v >> 2])
            q = int(same[v][taken.get(c, 0)])
            taken[c] = taken.get(c, 0) + 1
            out[j][i] = q
            w *= int(weight[q >> 2])
        mult.append(w)
    return out, mult
