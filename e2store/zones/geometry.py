"""Corolle geometry: ring order, slot rotation, frontier layout, cell kinds
(docs/design.md section 2).

Everything here depends only on the hamming `h` (slot layout) or on the board size (cell
kinds), never on pieces.  A cell kind is its *grey mask*: bit `s` is set when side `s`
(W=0, N=1, E=2, S=3) faces the board's frame; interior cells have mask 0, a north border
cell mask 0b0010, the north-west corner mask 0b0011.  Off-board cells have kind -1.
"""

from __future__ import annotations

from functools import cache

import numpy as np

OFF_BOARD = -1
DX = (-1, 0, 1, 0)  # step towards side s: W, N, E, S
DY = (0, -1, 0, 1)
SIDE_STEP = tuple(zip(DX, DY, strict=True))  # (dx, dy) towards side W, N, E, S


def n_slots(h: int) -> int:
    """Number of slots of a hamming-h corolle (cells of the unclipped diamond): 2h(h+1)+1."""
    return 2 * h * (h + 1) + 1


def n_frontier(h: int) -> int:
    """Number of frontier sides of a hamming-h corolle: 8h+4."""
    return 8 * h + 4


@cache
def ring_offsets(h: int) -> np.ndarray:
    """(n_slots, 2) offsets (dx, dy) in ring order: centre, then ring d from its east tip."""
    if h < 0:
        raise ValueError(f"hamming must be >= 0, got {h}")
    out = [(0, 0)]
    for d in range(1, h + 1):
        x, y = d, 0
        out.append((x, y))
        for (sx, sy), steps in (((-1, 1), d), ((-1, -1), d), ((1, -1), d), ((1, 1), d - 1)):
            for _ in range(steps):
                x, y = x + sx, y + sy
                out.append((x, y))
    arr = np.array(out, dtype=np.int64)
    arr.flags.writeable = False
    return arr


def ring_of_slot(h: int) -> np.ndarray:
    """Ring (Manhattan distance to the centre) of every slot."""
    off = ring_offsets(h)
    return np.abs(off[:, 0]) + np.abs(off[:, 1])


@cache
def slot_index(h: int) -> dict[tuple[int, int], int]:
    """Map offset (dx, dy) -> slot."""
    return {(int(dx), int(dy)): i for i, (dx, dy) in enumerate(ring_offsets(h))}


@cache
def rotation_permutation(h: int, q: int) -> np.ndarray:
    """perm[slot] = slot that a cell moves to when the corolle turns q quarter turns clockwise.

    One clockwise turn maps offset (dx, dy) to (-dy, dx), i.e. shifts ring d by d slots.
    """
    idx = slot_index(h)
    perm = np.empty(n_slots(h), dtype=np.int64)
    for i, (dx, dy) in enumerate(ring_offsets(h)):
        x, y = int(dx), int(dy)
        for _ in range(q % 4):
            x, y = -y, x
        perm[i] = idx[(x, y)]
    perm.flags.writeable = False
    return perm


def rotate_mask(mask: int, q: int) -> int:
    """Grey mask of a cell kind after q clockwise quarter turns (side s -> s+q)."""
    if mask < 0:
        return mask
    q %= 4
    return ((mask << q) | (mask >> (4 - q))) & 0xF


@cache
def frontier_layout(h: int) -> tuple[np.ndarray, np.ndarray]:
    """(slots, sides) of the 8h+4 frontier sides, in ring order, each cell's sides clockwise.

    A side is on the frontier when the neighbour beyond it lies at distance h+1.  Tips have
    3 outward sides, other ring-h cells 2; the hamming-0 centre has all 4 (N, E, S, W).  A
    clockwise quarter turn shifts the frontier by 2h+1 positions.
    """
    slots: list[int] = []
    sides: list[int] = []
    off = ring_offsets(h)
    ring = ring_of_slot(h)
    for i in np.nonzero(ring == h)[0]:
        dx, dy = int(off[i, 0]), int(off[i, 1])
        out = [s for s in range(4) if abs(dx + DX[s]) + abs(dy + DY[s]) == h + 1]
        # order clockwise around the outside of the diamond: rotate so the list is contiguous
        # in the cyclic side order and starts just after the gap.
        if len(out) == 4:
            out = [1, 2, 3, 0]
        else:
            start = next(s for s in out if (s - 1) % 4 not in out)
            out = [(start + k) % 4 for k in range(len(out))]
        for s in out:
            slots.append(int(i))
            sides.append(s)
    a, b = np.array(slots, dtype=np.int64), np.array(sides, dtype=np.int64)
    a.flags.writeable = False
    b.flags.writeable = False
    return a, b


def inner_neighbours(h: int) -> list[list[tuple[int, int]]]:
    """For each slot, its neighbours one ring closer to the centre: [(slot, own_side)].

    `own_side` is the side of this cell that touches the neighbour.  The x-direction
    neighbour comes first.  Cells of one ring are never adjacent, so these are all the joins.
    """
    idx = slot_index(h)
    out: list[list[tuple[int, int]]] = []
    for dx, dy in ring_offsets(h):
        dx, dy = int(dx), int(dy)
        nb: list[tuple[int, int]] = []
        if dx != 0:
            nb.append((idx[(dx - (1 if dx > 0 else -1), dy)], 0 if dx > 0 else 2))
        if dy != 0:
            nb.append((idx[(dx, dy - (1 if dy > 0 else -1))], 1 if dy > 0 else 3))
        out.append(nb)
    return out


def cell_kinds(width: int, height: int) -> np.ndarray:
    """(height, width) grey masks of the board's cells."""
    if width < 1 or height < 1:
        raise ValueError(f"board size must be positive, got {width}x{height}")
    k = np.zeros((height, width), dtype=np.int8)
    k[:, 0] |= 1
    k[0, :] |= 2
    k[:, width - 1] |= 4
    k[height - 1, :] |= 8
    return k


def corolle_kinds(width: int, height: int, x: int, y: int, h: int) -> np.ndarray:
    """Kind (grey mask, or -1 off the board) of every slot of the corolle centred on (x, y)."""
    kinds = cell_kinds(width, height)
    off = ring_offsets(h)
    xs, ys = x + off[:, 0], y + off[:, 1]
    on = (xs >= 0) & (xs < width) & (ys >= 0) & (ys < height)
    out = np.full(len(off), OFF_BOARD, dtype=np.int8)
    out[on] = kinds[ys[on], xs[on]]
    return out


def rotate_kinds(kinds: np.ndarray, h: int, q: int) -> np.ndarray:
    """Slot kinds of a corolle shape after q clockwise quarter turns."""
    perm = rotation_permutation(h, q)
    out = np.empty_like(kinds)
    out[perm] = [rotate_mask(int(m), q) for m in kinds]
    return out
