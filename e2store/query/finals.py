"""Finals (closures): per-region corolle sets the solver keeps up to date
(docs/design.md section 5).

A *region* is the clipped diamond of hamming `h` around one board cell (by default the four
corners).  Its corolles come from the store (the zone and rotation whose member is that
cell), so slot i of a row sits on the board cell `centre + ring_offsets(h)[i]`.  During
the search the solver keeps, per region, the set of corolles still *alive*: compatible with

* the cells already placed inside the region (same placement at the same cell),
* every piece used elsewhere on the board (a corolle may not use it),
* the colours placed neighbours just outside the region show towards it.

When a region's set becomes empty the branch is cut: no completion of the board can fill
that region.  Solutions are never lost: every solution, restricted to a region, is one of
its corolles.

The index is a table of masks over each region's corolles (bit k of word k >> 6 is
corolle k): for every (board cell, placement) the one mask whose AND applies the
placement's three conditions, or -1 when the placement cannot change the region (skip) or
-2 when it kills it.  The alive set of a region is kept as a list of its non-zero words
(word index, bits); placing ANDs the list of the current depth with the mask into a new
list stacked after it, so undo is free (the previous depth's list is still there) and the
work per node is the number of alive words, which shrinks fast as the board fills.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from e2store.errors import MissingZoneError, SolverError
from e2store.instance.model import GREY, Instance
from e2store.query.defaults import DEFAULT_FINALS_HAMMING as DEFAULT_FINALS_HAMMING
from e2store.store.layout import RAW_FORMS
from e2store.store.read import read_manifest, read_partition
from e2store.zones.geometry import SIDE_STEP, ring_offsets
from e2store.zones.zonemap import zone_map

SKIP, KILL = -1, -2  # mask ids: the placement leaves the region unchanged / empties it


@dataclass(frozen=True)
class Region:
    """One closure region: its centre, the board cells its corolles cover (cell index y*W+x,
    by on-board slot in ring order) and its corolles as packed placements on those cells."""

    x: int
    y: int
    cells: np.ndarray  # (L,) board cell of each on-board slot
    corolles: np.ndarray  # (n, L) packed piece*4+r

    @property
    def n(self) -> int:
        return int(self.corolles.shape[0])

    @property
    def n_words(self) -> int:
        return max(1, (self.n + 63) // 64)


@dataclass(frozen=True)
class FinalsIndex:
    """The finals of one instance: regions and the masks the kernel applies.

    `mid[g, cell * 4n + v]` is the offset into `masks` of region g's mask for placement v
    on `cell`, or SKIP / KILL (placements that cannot go on the cell, grey on the wrong
    sides, are SKIP); a region's masks have `n_words[g]` words each.  Size: one mask per
    distinct (cell, placement) effect, so memory grows with corolles x placements (corner
    regions of benchmark 7x7: 0.5 M words at hamming 2, 142 M words, 1.1 GB, at 3).
    """

    width: int
    height: int
    n_pieces: int
    hamming: int
    regions: tuple[Region, ...]
    mid: np.ndarray  # (G, n_cells * 4n) int64
    masks: np.ndarray  # uint64
    n_words: np.ndarray  # (G,) int64

    @property
    def centres(self) -> list[tuple[int, int]]:
        return [(r.x, r.y) for r in self.regions]

    def full(self, g: int) -> np.ndarray:
        """The all-alive bitset of region g."""
        reg = self.regions[g]
        return _pack(np.ones(reg.n, dtype=bool), reg.n_words)

    def apply(self, g: int, alive: np.ndarray, cell: int, v: int) -> np.ndarray:
        """Region g's bitset after placing v on `cell` (the kernel's step, in numpy)."""
        m = int(self.mid[g, cell * 4 * self.n_pieces + v])
        if m == SKIP:
            return alive.copy()
        if m == KILL:
            return np.zeros_like(alive)
        return alive & self.masks[m:m + int(self.n_words[g])]

    def alive_after(self, g: int, board: dict[int, int]) -> np.ndarray:
        """Region g's bitset after placing every {cell: placement} of `board` (any order)."""
        alive = self.full(g)
        for cell, v in board.items():
            alive = self.apply(g, alive, cell, v)
        return alive


def _pack(bits: np.ndarray, n_words: int) -> np.ndarray:
    """Bool vector -> uint64 words, bit k of word k >> 6."""
    padded = np.zeros(n_words * 64, dtype=bool)
    padded[:len(bits)] = bits
    return np.packbits(padded.reshape(-1, 8), axis=1, bitorder="little").reshape(-1).view(
        "<u8").astype(np.uint64)


def unpack(words: np.ndarray, n: int) -> np.ndarray:
    """uint64 words -> bool vector of length n (the inverse of the packing above)."""
    b = np.unpackbits(np.asarray(words, dtype="<u8").view(np.uint8), bitorder="little")
    return b[:n].astype(bool)


def corner_cells(width: int, height: int) -> list[tuple[int, int]]:
    """The four corners (fewer on a board one cell wide or high), NW, NE, SE, SW."""
    cells = [(0, 0), (width - 1, 0), (width - 1, height - 1), (0, height - 1)]
    return list(dict.fromkeys(cells))


def parse_regions(spec: str | list | tuple | None, width: int,
                  height: int) -> list[tuple[int, int]]:
    """Region centres from `corners`, a list of (x, y) or `X,Y` strings (`corners` allowed
    among them); SolverError for a cell off the board."""
    if spec is None:
        spec = ["corners"]
    if isinstance(spec, str):
        spec = [spec]
    out: list[tuple[int, int]] = []
    for item in spec:
        if isinstance(item, str):
            text = item.strip().lower()
            if text == "corners":
                out += corner_cells(width, height)
                continue
            parts = text.replace(" ", "").split(",")
            if len(parts) != 2 or not all(p.lstrip("-").isdigit() for p in parts):
                raise SolverError(f"finals region {item!r}: expected `corners` or `X,Y`")
            x, y = int(parts[0]), int(parts[1])
        else:
            x, y = (int(c) for c in item)
        if not (0 <= x < width and 0 <= y < height):
            raise SolverError(f"finals region ({x}, {y}) is off the {width}x{height} board")
        out.append((x, y))
    return list(dict.fromkeys(out))


def _store_instance_id(manifest: dict, inst: Instance) -> str | None:
    """The store's id for `inst`: its own id, or one with the same pieces under another name."""
    ids = {p["instance"] for p in manifest["partitions"]}
    if inst.id in ids:
        return inst.id
    same = sorted(i for i in ids if i.rsplit("-", 1)[-1] == inst.content_hash)
    return same[0] if same else None


def region_corolles(root: str | Path, inst: Instance, x: int, y: int,
                    hamming: int) -> np.ndarray:
    """The (n, S) corolles centred on (x, y), read from the store partition (any form) of
    the zone and rotation whose member is that cell; MissingZoneError says what to run."""
    root = Path(root)
    manifest = read_manifest(root)
    zm = zone_map(inst.width, inst.height, hamming)
    zone, rot = zm.zone_at(x, y), zm.rotation_at(x, y)
    iid = _store_instance_id(manifest, inst)
    forms = {p["form"] for p in manifest["partitions"] if iid is not None and
             (p["instance"], p["hamming"], p["zone"], p["rotation"]) == (iid, hamming, zone.id,
                                                                        rot)}
    if not forms:
        raise MissingZoneError(
            f"{root}: no corolles of instance {inst.id} at hamming {hamming} for the finals "
            f"region ({x}, {y}) (zone {zone.id}, rotation {rot}); run `e2store enumerate "
            f"INSTANCE --hamming {hamming} --at {x},{y} --store {root}`")
    form = next((f for f in RAW_FORMS if f in forms), None)
    if form is None:
        raise MissingZoneError(
            f"{root}: only distinct corolles of instance {inst.id} at hamming {hamming} for the "
            f"finals region ({x}, {y}); finals need every corolle: run `e2store enumerate "
            f"INSTANCE --hamming {hamming} --at {x},{y} --store {root}`")
    assert iid is not None
    cells, _ = read_partition(root, iid, hamming, zone.id, rot, form)
    return cells


def build_region(inst: Instance, x: int, y: int, hamming: int, rows: np.ndarray) -> Region:
    """A Region from the (n, S) ring-order rows of the corolles centred on (x, y)."""
    off = ring_offsets(hamming)
    xs, ys = x + off[:, 0], y + off[:, 1]
    on = np.flatnonzero((xs >= 0) & (xs < inst.width) & (ys >= 0) & (ys < inst.height))
    cells = (ys[on] * inst.width + xs[on]).astype(np.int64)
    corolles = np.asarray(rows, dtype=np.int64).reshape(-1, len(off))[:, on]
    if len(corolles) and (corolles < 0).any():
        raise SolverError(f"finals region ({x}, {y}): a stored corolle leaves an on-board "
                          f"cell empty (the store does not match this board)")
    return Region(x, y, cells, np.ascontiguousarray(corolles))


def build_index(inst: Instance, regions: list[Region], hamming: int) -> FinalsIndex:
    """The mask table of `regions` (see the module docstring)."""
    w, h, n_p = inst.width, inst.height, inst.n_pieces
    n_cells, n_v = w * h, 4 * n_p
    col = inst.rotated_table().astype(np.int64)  # (4n, 4)
    grey = ((col == GREY) * (1 << np.arange(4))).sum(axis=1)
    frame = np.zeros(n_cells, dtype=np.int64)
    for c in range(n_cells):
        cx, cy = c % w, c // w
        frame[c] = sum(1 << s for s, (dx, dy) in enumerate(SIDE_STEP)
                       if not (0 <= cx + dx < w and 0 <= cy + dy < h))
    mid = np.full((len(regions), n_cells * n_v), SKIP, dtype=np.int64)
    chunks: list[np.ndarray] = []
    size = 0
    n_words = np.array([r.n_words for r in regions], dtype=np.int64)
    for g, reg in enumerate(regions):
        nw = reg.n_words
        seen: dict[bytes, int] = {}
        all_ones = _pack(np.ones(reg.n, dtype=bool), nw)

        def mask_id(bits: np.ndarray, nw=nw, seen=seen, all_ones=all_ones) -> int:
            nonlocal size
            if not bits.any():
                return KILL
            words = _pack(bits, nw)
            if np.array_equal(words, all_ones):
                return SKIP
            key = words.tobytes()
            if key not in seen:
                seen[key] = size
                chunks.append(words)
                size += nw
            return seen[key]

        C = reg.corolles
        P = C >> 2
        uses = np.zeros((n_p, reg.n), dtype=bool)  # uses[p, k]: corolle k holds piece p
        if reg.n:
            uses[P, np.arange(reg.n)[:, None]] = True
        free_of = ~uses
        in_region = {int(c): lv for lv, c in enumerate(reg.cells.tolist())}
        # cells outside touching the region: (region level, side of the region cell)
        touching: dict[int, list[tuple[int, int]]] = {}
        for lv, c in enumerate(reg.cells.tolist()):
            cx, cy = c % w, c // w
            for s, (dx, dy) in enumerate(SIDE_STEP):
                nx, ny = cx + dx, cy + dy
                nb = ny * w + nx
                if 0 <= nx < w and 0 <= ny < h and nb not in in_region:
                    touching.setdefault(nb, []).append((lv, s))
        piece_mask = [mask_id(free_of[p]) for p in range(n_p)]
        for cell in range(n_cells):
            legal = np.flatnonzero(grey == frame[cell])  # placements the solver can put here
            base = cell * n_v
            if cell in in_region:
                lv = in_region[cell]
                for v in legal.tolist():
                    mid[g, base + v] = mask_id(C[:, lv] == v)
            elif cell in touching:
                for v in legal.tolist():
                    bits = free_of[v >> 2].copy()
                    for lv, s in touching[cell]:
                        bits &= col[C[:, lv], s] == col[v, (s + 2) % 4]
                    mid[g, base + v] = mask_id(bits)
            else:
                mid[g, base + legal] = [piece_mask[v >> 2] for v in legal.tolist()]
    masks = np.concatenate(chunks) if chunks else np.zeros(1, dtype=np.uint64)
    return FinalsIndex(w, h, n_p, hamming, tuple(regions), mid, masks.astype(np.uint64),
                       n_words)


def load_finals(root: str | Path, inst: Instance, regions: str | list | tuple | None = "corners",
                hamming: int = DEFAULT_FINALS_HAMMING) -> FinalsIndex:
    """Load the corolles of each region (centre cells: `corners`, or a list of cells) at
    `hamming` from the store at `root` and build the solver's finals index."""
    centres = parse_regions(regions, inst.width, inst.height)
    regs = [build_region(inst, x, y, hamming, region_corolles(root, inst, x, y, hamming))
            for x, y in centres]
    return build_index(inst, regs, hamming)


def finals_from_corolles(inst: Instance, rows: dict[tuple[int, int], np.ndarray],
                         hamming: int) -> FinalsIndex:
    """The index from corolles given directly: {(x, y): (n, S) ring-order rows}."""
    regs = [build_region(inst, x, y, hamming, r) for (x, y), r in rows.items()]
    return build_index(inst, regs, hamming)
