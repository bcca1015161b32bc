"""The puzzle instance: board size and pieces as (W, N, E, S) colours (docs/design.md section 1)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

GREY = 0
SIDES = "WNES"  # side index 0..3, clockwise from west
# The largest board e2store reads: 65,536 pieces (256 x 256, 256 times Eternity II).  A piece
# file declaring or holding more is refused before its piece lines are parsed, so an
# oversized file is refused in milliseconds (e2store.instance.parsing.check_line_count).
MAX_PIECES = 1 << 16


@dataclass(frozen=True, eq=False)
class Instance:
    """A W x H edge-matching board and its W*H pieces.

    `pieces[i]` holds piece i's colours clockwise from the west side (W, N, E, S), as dense
    *ranks*: a file's colour ids are replaced by their rank among the ids it uses (grey
    stays 0), so tables indexed by colour never grow with the ids a file happens to use;
    `colour_ids[r]` is the file's id of rank r (empty when the ids were ranks already) and
    `colour_id` turns a rank back into it for messages.
    `solution`, when known, is an (height, width) array of packed `piece*4 + r` values.
    """

    name: str
    width: int
    height: int
    pieces: np.ndarray
    solution: np.ndarray | None = None
    source: str | None = None
    _id: str = field(default="", repr=False)
    colour_ids: tuple[int, ...] = field(default=(), init=False, repr=False)

    def __post_init__(self) -> None:
        p = np.ascontiguousarray(np.asarray(self.pieces, dtype=np.int16).reshape(-1, 4))
        if p.size and p.min() >= 0:  # negative colours are left for validation to name
            ids = np.union1d(np.array([GREY], dtype=np.int16), p)
            if int(ids[-1]) != len(ids) - 1:
                p = np.searchsorted(ids, p).astype(np.int16)
                object.__setattr__(self, "colour_ids", tuple(int(c) for c in ids))
        object.__setattr__(self, "pieces", p)
        if self.solution is not None:
            s = np.asarray(self.solution, dtype=np.int32).reshape(self.height, self.width)
            object.__setattr__(self, "solution", s)
        digest = hashlib.sha256(
            f"{self.width}x{self.height}:".encode() + p.astype("<i2").tobytes()
        ).hexdigest()
        object.__setattr__(self, "_id", f"{_slug(self.name)}-{digest[:12]}")

    @property
    def id(self) -> str:
        """Stable instance id: a readable name plus a hash of size and pieces (not of the name)."""
        return self._id

    @property
    def content_hash(self) -> str:
        return self._id.rsplit("-", 1)[1]

    @property
    def n_pieces(self) -> int:
        return int(self.pieces.shape[0])

    @property
    def n_colours(self) -> int:
        """Number of colour ids in use, counting grey: max colour + 1."""
        return int(self.pieces.max()) + 1 if self.n_pieces else 1

    def colour_id(self, rank: int) -> int:
        """The colour id the instance's file used for colour `rank`."""
        return self.colour_ids[rank] if self.colour_ids else int(rank)

    def colour(self, packed: int, side: int) -> int:
        """Colour shown on `side` by the packed placement `piece*4 + r`."""
        p, r = divmod(int(packed), 4)
        return int(self.pieces[p, (side - r) % 4])

    def rotated_table(self) -> np.ndarray:
        """(n*4, 4) table: row `piece*4 + r` gives the colours shown on W, N, E, S."""
        n = self.n_pieces
        out = np.empty((n * 4, 4), dtype=np.int16)
        for r in range(4):
            out[r::4] = np.roll(self.pieces, r, axis=1)
        return out


def _slug(name: str) -> str:
    keep = [c if c.isalnum() or c in "._" else "_" for c in name.strip()]
    s = "".join(keep).strip("_") or "instance"
    return s[:48]


def board_dtype(n_pieces: int) -> type[np.int16] | type[np.int32]:
    """int16 for packed placements when they fit (every published board), else int32."""
    return np.int16 if 4 * n_pieces <= np.iinfo(np.int16).max else np.int32
