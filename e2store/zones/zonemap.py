"""Zones: cells whose corolles have the same shape up to translation and rotation
(docs/design.md section 3).

A cell's *shape* at hamming h is the kind (grey mask, or off-board) of every slot of its
clipped diamond, in ring order.  Two cells are in one zone when one shape is a quarter-turn
rotation of the other.  Corolles are enumerated once per zone, at its canonical cell, and
turned onto every other member: the corolles at member `(x, y)` are the canonical ones
turned `rotation` quarter turns clockwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from e2store.errors import ZoneError
from e2store.zones.geometry import corolle_kinds, rotate_kinds


@dataclass(frozen=True)
class Member:
    """A cell of a zone and the clockwise quarter turns mapping the canonical shape onto it."""

    x: int
    y: int
    rotation: int


@dataclass(frozen=True)
class Zone:
    """One zone: id, canonical cell (in the north-west quadrant when it has a member there)."""

    id: int
    x: int
    y: int
    members: tuple[Member, ...]
    kinds: np.ndarray = field(repr=False, compare=False)

    @property
    def rotations(self) -> tuple[int, ...]:
        """Distinct rotations needed to cover every member (0 always first)."""
        return tuple(sorted({m.rotation for m in self.members}))

    @property
    def symmetry(self) -> int:
        """Order of the shape's rotational symmetry: 1, 2 or 4."""
        return sum(
            1 for q in range(4) if np.array_equal(rotate_kinds(self.kinds, self._h, q), self.kinds)
        )

    @property
    def _h(self) -> int:
        return int(round((math.sqrt(2 * len(self.kinds) - 1) - 1) / 2))


@dataclass(frozen=True)
class ZoneMap:
    """All zones of a W x H board at hamming h, with per-cell zone id and rotation."""

    width: int
    height: int
    hamming: int
    zones: tuple[Zone, ...]
    zone_of: np.ndarray = field(repr=False)
    rotation_of: np.ndarray = field(repr=False)

    def zone_at(self, x: int, y: int) -> Zone:
        """The zone of cell (x, y); raises ZoneError for a cell off the board."""
        self.check_cell(x, y)
        return self.zones[int(self.zone_of[y, x])]

    def rotation_at(self, x: int, y: int) -> int:
        self.check_cell(x, y)
        return int(self.rotation_of[y, x])

    def check_cell(self, x: int, y: int) -> None:
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise ZoneError(
                f"cell ({x}, {y}) is off the {self.width}x{self.height} board "
                f"(expected 0 <= x < {self.width} and 0 <= y < {self.height})"
            )

    def grid(self) -> str:
        """The board as a grid of zone ids (rotation as a suffix letter when not 0)."""
        w = max(2, len(str(len(self.zones) - 1)) + 1)
        rows = []
        for y in range(self.height):
            cells = []
            for x in range(self.width):
                r = int(self.rotation_of[y, x])
                cells.append(f"{int(self.zone_of[y, x])}{'abcd'[r] if r else ''}".rjust(w + 1))
            rows.append("".join(cells))
        return "\n".join(rows)

    def to_dict(self) -> dict:
        return {
            "width": self.width,
            "height": self.height,
            "hamming": self.hamming,
            "n_zones": len(self.zones),
            "zones": [
                {
                    "zone": z.id,
                    "x": z.x,
                    "y": z.y,
                    "rotations": list(z.rotations),
                    "members": [[m.x, m.y, m.rotation] for m in z.members],
                }
                for z in self.zones
            ],
        }


def expected_zone_count(n: int, h: int) -> int:
    """Zone count of a square N x N board at hamming h (docs/design.md section 3).

    docs/design.md gives (h+1)^2 + h + 2 when M = ceil(N/2) > h+1, else M^2.  The M^2 case holds
    for even N only: on an odd board the quarter turn of the whole board maps the middle
    column's cell (M-1, y) onto the middle row's cell (y, M-1), so M-1 of the M^2
    north-west-quadrant cells share a zone with another one, leaving M^2 - (M-1).
    """
    m = (n + 1) // 2
    if m > h + 1:
        return (h + 1) ** 2 + h + 2
    return m * m - (m - 1 if n % 2 else 0)


def zone_map(width: int, height: int | None, hamming: int) -> ZoneMap:
    """Compute the zones of a W x H board (H defaults to W) at hamming h."""
    height = width if height is None else height
    if width < 1 or height < 1:
        raise ZoneError(f"board size {width}x{height} is not positive (expected W, H >= 1)")
    if hamming < 0:
        raise ZoneError(f"hamming {hamming} is negative (expected h >= 0)")
    h = hamming
    shapes: dict[tuple[int, int], np.ndarray] = {}
    groups: dict[bytes, list[tuple[int, int]]] = {}
    for y in range(height):
        for x in range(width):
            k = corolle_kinds(width, height, x, y, h)
            shapes[(x, y)] = k
            key = min(rotate_kinds(k, h, q).tobytes() for q in range(4))
            groups.setdefault(key, []).append((x, y))

    mx, my = (width + 1) // 2, (height + 1) // 2

    def canonical(cells: list[tuple[int, int]]) -> tuple[int, int]:
        nw = [c for c in cells if c[0] < mx and c[1] < my]
        return min(nw or cells, key=lambda c: (c[1], c[0]))

    firsts = sorted((canonical(cells), cells) for cells in groups.values())
    firsts.sort(key=lambda t: (t[0][1], t[0][0]))
    zone_of = np.full((height, width), -1, dtype=np.int32)
    rotation_of = np.zeros((height, width), dtype=np.int8)
    zones = []
    for zid, ((cx, cy), cells) in enumerate(firsts):
        base = shapes[(cx, cy)]
        rots = [rotate_kinds(base, h, q) for q in range(4)]
        members = []
        for x, y in sorted(cells, key=lambda c: (c[1], c[0])):
            q = next(q for q in range(4) if np.array_equal(rots[q], shapes[(x, y)]))
            members.append(Member(x, y, q))
            zone_of[y, x] = zid
            rotation_of[y, x] = q
        zones.append(Zone(zid, cx, cy, tuple(members), base))
    return ZoneMap(width, height, h, tuple(zones), zone_of, rotation_of)
