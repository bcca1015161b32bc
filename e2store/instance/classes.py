"""Identical pieces and symmetric pieces: what a search over *distinct layouts* merges.

Two pieces are *similar* (DESIGN.md: a group of similar pieces) when one is the other
turned; a *class* is a maximal set of similar pieces, its *multiplicity* the number of
pieces in it.  A piece's *rotation period* is the smallest number of quarter turns that
leaves it unchanged: 1 (all four sides alike: quarter-turn symmetric), 2 (half-turn
symmetric) or 4 (no symmetry); rotations r and r + period show the same colours.

A *distinct layout* is a board of classes and the colours they show: identical pieces are
interchangeable and the rotations of a symmetric piece that look alike are one.  Every
distinct layout stands for the same number of layouts that keep every distinction (the
*raw* layouts): the free copies of each class permuted among their cells, times the
equivalent rotations of every free piece (`layout_factor`).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import factorial

import numpy as np

from e2store.errors import SolverError
from e2store.instance.model import GREY, Instance
from e2store.instance.validate import canonical_rotation


def rotation_period(pieces: np.ndarray) -> np.ndarray:
    """Per piece: 1, 2 or 4, the quarter turns after which it looks the same again."""
    p = np.asarray(pieces)
    quarter = (p == np.roll(p, 1, axis=1)).all(axis=1)
    half = (p == np.roll(p, 2, axis=1)).all(axis=1)
    return np.where(quarter, 1, np.where(half, 2, 4)).astype(np.int64)


def piece_classes(pieces: np.ndarray) -> np.ndarray:
    """Per piece: its class, named by the lowest piece id in it."""
    first: dict[tuple[int, ...], int] = {}
    return np.array([first.setdefault(canonical_rotation(piece), i)
                     for i, piece in enumerate(np.asarray(pieces))], dtype=np.int64)


def next_copy(pieces: np.ndarray) -> np.ndarray:
    """Per piece: the next higher piece id of its class, or -1 for the last one.

    A search over distinct layouts places the copies of a class in this order (the first
    free copy is the only one it may place), so each distinct layout is met once."""
    cls = piece_classes(pieces)
    out = np.full(len(cls), -1, dtype=np.int64)
    last: dict[int, int] = {}
    for i, c in enumerate(cls.tolist()):
        if c in last:
            out[last[c]] = i
        last[c] = i
    return out


def layout_factor(pieces: np.ndarray, fixed: list[int] | tuple[int, ...] = ()) -> int:
    """Raw layouts per distinct layout when the pieces `fixed` are placed already: the
    product over classes of (free copies)! times the product over free pieces of their
    equivalent rotations (4 / period)."""
    cls = piece_classes(pieces)
    period = rotation_period(pieces)
    free = np.ones(len(cls), dtype=bool)
    free[list(fixed)] = False
    out = 1
    for c, m in zip(*np.unique(cls[free], return_counts=True), strict=True):
        del c
        out *= factorial(int(m))
    for q in period[free].tolist():
        out *= 4 // q
    return out


def class_summary(pieces: np.ndarray) -> dict:
    """Classes of two or more pieces and symmetric pieces, for `e2store stats`: the lists
    and, per multiplicity, how many classes have it."""
    cls = piece_classes(pieces)
    period = rotation_period(pieces)
    members: dict[int, list[int]] = {}
    for i, c in enumerate(cls.tolist()):
        members.setdefault(c, []).append(i)
    sizes = [len(m) for m in members.values()]
    by_size = {m: sizes.count(m) for m in sorted(set(sizes))}
    return {
        "classes": len(members),
        "classes_by_multiplicity": by_size,
        "identical_classes": [m for m in members.values() if len(m) > 1],
        "quarter_turn_pieces": [int(i) for i in np.flatnonzero(period == 1)],
        "half_turn_pieces": [int(i) for i in np.flatnonzero(period == 2)],
    }


@dataclass(frozen=True)
class DistinctPieces:
    """What a walk over distinct fillings needs per piece: `nxt`, its class's next copy
    (-1 for the last); `index`, its rank among the copies; `cls`, its class; `weight`, the
    raw fillings one placement of it stands for when the copies before it are placed,
    (multiplicity - index) * (4 / period); `blocked`, the pieces a walk starts with marked
    used (every copy but the first of its class); `period`, its rotation period; `same`,
    per placement `piece*4+r` and rank j, the placement of its class's j-th copy that shows
    the same colours with a rotation below that copy's period (copies may be stored turned
    against each other); `alike`, per placement, every placement of its class showing the
    same colours (padded with -1)."""

    nxt: np.ndarray
    index: np.ndarray
    cls: np.ndarray
    weight: np.ndarray
    blocked: np.ndarray
    period: np.ndarray
    same: np.ndarray
    alike: np.ndarray

    @classmethod
    def of(cls_, instance) -> DistinctPieces:
        pieces = instance.pieces
        cls = piece_classes(pieces)
        mult = np.bincount(cls, minlength=len(cls))
        index = np.zeros(len(cls), dtype=np.int64)
        seen: dict[int, int] = {}
        for p, c in enumerate(cls.tolist()):
            index[p] = seen.get(c, 0)
            seen[c] = index[p] + 1
        period = rotation_period(pieces)
        weight = (mult[cls] - index) * (4 // period)
        shown = [tuple(c) for c in np.asarray(instance.rotated_table()).tolist()]
        n = len(cls)
        group: dict[tuple, list[int]] = {}  # (class, colours shown) -> its placements
        for a in range(4 * n):
            group.setdefault((int(cls[a >> 2]), shown[a]), []).append(a)
        same = np.full((4 * n, int(mult.max(initial=1))), -1, dtype=np.int64)
        alike = np.full((4 * n, 4 * same.shape[1]), -1, dtype=np.int64)
        for a in range(4 * n):
            got = group[(int(cls[a >> 2]), shown[a])]  # ascending: by copy, then rotation
            alike[a, :len(got)] = got
            for b in got:
                if b & 3 < period[b >> 2] and same[a, index[b >> 2]] < 0:
                    same[a, index[b >> 2]] = b
        return cls_(next_copy(pieces), index, cls, weight.astype(np.int64), index > 0, period,
                    same, alike)

    def kernel_args(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The `distinct` tuple of `e2store.corolles._kernels.count_prefixes`."""
        return self.nxt, self.weight, self.blocked

    def lowest_first(self, rows: np.ndarray) -> np.ndarray:
        """Per row of piece ids (n, k): whether each class's copies in it come lowest
        first, in column order (the fillings a distinct walk makes)."""
        rows = np.asarray(rows, dtype=np.int64)
        c = self.cls[rows]
        before = (c[:, :, None] == c[:, None, :]) & np.tri(rows.shape[1], k=-1, dtype=bool).T[None]
        return (before.sum(axis=1) == self.index[rows]).all(axis=1)

    def canonical(self, rows: np.ndarray) -> np.ndarray:
        """Per row of placements `piece*4+r` (n, k), -1 for an empty cell: the distinct
        filling it belongs to, written the way a distinct walk in column order writes it
        (each class's copies lowest first, each rotation below its piece's period).  Two
        raw fillings are the same distinct filling exactly when their canonical rows are
        equal; this is how a distinct row is named, whatever produced it."""
        a = np.asarray(rows, dtype=np.int64)
        on = a >= 0
        piece = np.where(on, a >> 2, 0)
        c = np.where(on, self.cls[piece], -1)
        out = np.full(a.shape, -1, dtype=np.int64)
        for j in range(a.shape[1]):
            rank = np.where(on[:, j], (c[:, :j] == c[:, j:j + 1]).sum(axis=1), 0)
            out[:, j] = np.where(on[:, j], self.same[np.maximum(a[:, j], 0), rank], -1)
        return out.astype(np.asarray(rows).dtype)

    def multiplicity(self, rows: np.ndarray) -> np.ndarray:
        """Per canonical row (n, k) of placements (-1 empty): the raw fillings it stands
        for, the product of its pieces' weights."""
        a = np.asarray(rows, dtype=np.int64)
        w = np.where(a >= 0, self.weight[np.maximum(a, 0) >> 2], 1)
        return w.prod(axis=1, dtype=np.int64)

    def expand(self, rows: np.ndarray) -> np.ndarray:
        """Every raw filling of the distinct rows (n, k) (-1 empty): each cell given, in
        turn, every piece of its class that shows its colours and no earlier cell holds.
        The inverse of `canonical`: row i gives `multiplicity` rows."""
        out = np.asarray(rows, dtype=np.int64)
        width = self.alike.shape[1]
        for j in range(out.shape[1]):
            v = out[:, j]
            on = v >= 0
            opts = np.where(on[:, None], self.alike[np.maximum(v, 0)],
                            np.where(np.arange(width) == 0, -1, -2)[None, :])
            ok = np.where(on[:, None], opts >= 0, opts == -1)
            earlier = out[:, :j]
            clash = ((opts[:, :, None] >> 2) == (earlier[:, None, :] >> 2)) & (
                earlier[:, None, :] >= 0)
            ok &= ~(clash.any(axis=2) & (opts >= 0))
            r, c = np.nonzero(ok)
            out = out[r]
            out[:, j] = opts[r, c]
        return out.astype(np.asarray(rows).dtype)


def lowest_corner(inst: Instance, distinct: bool = False) -> tuple[int, int]:
    """(piece, r): the lowest-numbered corner piece and its rotation on the NW corner.
    With `distinct`, the lowest corner piece that has no identical copy, if there is one:
    then every class of board rotations of a distinct layout has exactly one member with
    that piece on the corner, so no two layouts found are rotations of each other."""
    rot = inst.rotated_table()
    pieces = list(range(inst.n_pieces))
    if distinct:
        cls = piece_classes(inst.pieces)
        alone = np.bincount(cls, minlength=inst.n_pieces)[cls] == 1
        pieces.sort(key=lambda p: (not alone[p], p))
    for piece in pieces:
        for r in range(4):
            shown = rot[piece * 4 + r]
            if shown[0] == GREY and shown[1] == GREY and shown[2] != GREY and shown[3] != GREY:
                return piece, r
    raise SolverError(f"instance {inst.name!r} has no corner piece: no symmetry break possible")


def symmetry_roots(inst: Instance, distinct: bool = False) -> list[dict[int, int]]:
    """The fixed cells of each subtree of the symmetry break (see the module docstring)."""
    piece, r = lowest_corner(inst, distinct)
    roots = [{0: piece * 4 + r}]
    if inst.width != inst.height:
        roots.append({inst.width - 1: piece * 4 + (r + 1) % 4})  # NE corner: a quarter turn
    return roots
