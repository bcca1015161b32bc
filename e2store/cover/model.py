"""The board as an exact cover with colours (docs/solver.md, *Corolles as the pieces of
the search*): the cells partitioned into corolle regions, each region's corolles its
options.

**The partition** (`regions`): the diamonds of hamming h (5 cells at h = 1, 13 at h = 2)
tile the plane: their centres are the lattice r*x + (r+1)*y = c (mod 2r^2 + 2r + 1), one
class c of it.  A centre on the board is a region: its corolle, clipped by the board's
edge (the enumerator's and the store's corolle there).  A cell of a diamond whose centre
is off the board is a region of its own: its hamming-0 corolles (the placements that suit
it).  Of the classes c, the one with the fewest regions (ties: the first) is taken: the
fewest levels of the search, the most cells per option.

**The items.**  Primary: each region (covered once: its cells filled by one corolle), and
each piece (used once).  Secondary: each join between two regions (the two cells' shared
side), coloured by the colour the option shows there, 1 + the instance's colour (0 is
"no colour" in Algorithm C): two options agree on a join when both show one colour, the
edge matching of the two regions.  Joins inside a region are matched by the corolle
itself, and grey faces the frame as the enumerator ensures.

**The options**: one per corolle of each region, from a store (`query.regions.region_rows`
at the region's centre and hamming) or enumerated as `e2store enumerate` does
(`corolles.enumerate_corolles`); a region's options keep only the corolles that agree with
the fixed cells in it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from e2store.errors import SolverError
from e2store.instance.model import Instance
from e2store.zones.geometry import ring_offsets

BYTES_PER_NODE = 36  # top, up, down, colour, option of a node (int32), item, colour (int64)
HAMMINGS = (0, 1, 2)  # the partitions measured (docs/benchmarks.md, *Corolles as pieces*)


@dataclass(frozen=True)
class Region:
    """A region of the partition: its corolle's centre and hamming, and its cells (board
    indices y*W+x) in the corolle's slot order (`ring_offsets`), with those slots."""

    x: int
    y: int
    hamming: int
    cells: tuple[int, ...]
    slots: tuple[int, ...]


def regions(width: int, height: int, hamming: int) -> list[Region]:
    """The partition of a W x H board into hamming-`hamming` diamonds (module docstring):
    regions in (y, x) order of their centres."""
    if hamming < 0:
        raise SolverError(f"hamming {hamming}: expected 0 or more")
    r = hamming
    period = 2 * r * r + 2 * r + 1
    best: list[Region] | None = None
    for c in range(period):
        out = _partition(width, height, r, period, c)
        if best is None or len(out) < len(best):
            best = out
    assert best is not None
    return best


def _partition(width: int, height: int, r: int, period: int, c: int) -> list[Region]:
    offsets = ring_offsets(r)
    owner = np.full(width * height, -1, dtype=np.int64)
    out: list[Region] = []
    for y in range(height):
        for x in range(width):
            if (r * x + (r + 1) * y - c) % period:
                continue
            cells, slots = [], []
            for s, (dx, dy) in enumerate(offsets.tolist()):
                cx, cy = x + dx, y + dy
                if 0 <= cx < width and 0 <= cy < height:
                    cells.append(cy * width + cx)
                    slots.append(s)
            out.append(Region(x, y, r, tuple(cells), tuple(slots)))
            owner[cells] = len(out) - 1
    for i in np.flatnonzero(owner < 0).tolist():  # a diamond's centre off the board
        out.append(Region(i % width, i // width, 0, (i,), (0,)))
    out.sort(key=lambda g: (g.y, g.x))
    return out


@dataclass
class Model:
    """The exact cover of a board: its regions, and per region its options (k, cells)
    placements `piece*4+r` in the region's cell order."""

    instance: Instance
    hamming: int
    regions: list[Region]
    options: list[np.ndarray]
    source: str  # "store" or "enumerated"

    @property
    def n_options(self) -> int:
        return sum(len(o) for o in self.options)

    def joins(self) -> list[tuple[int, int, int]]:
        """(cell a, side of a, cell b) of every join between two regions, a before b."""
        w, h = self.instance.width, self.instance.height
        region_of = np.empty(w * h, dtype=np.int64)
        for k, g in enumerate(self.regions):
            region_of[list(g.cells)] = k
        out = []
        for i in range(w * h):
            x, y = i % w, i // w
            if x + 1 < w and region_of[i] != region_of[i + 1]:
                out.append((i, 2, i + 1))  # east side of i, west of i+1
            if y + 1 < h and region_of[i] != region_of[i + w]:
                out.append((i, 3, i + w))  # south side of i, north of i+W
        return out


def planned_bytes(instance: Instance, hamming: int) -> tuple[int, int]:
    """(options, bytes) of the model and table of `instance` at `hamming`, counted before
    any corolle is enumerated (`corolles.count_corolles` per region: exact counts), so a
    search too large is refused before it takes the memory."""
    from e2store.corolles import count_corolles

    parts = regions(instance.width, instance.height, hamming)
    probe = Model(instance, hamming, parts, [np.zeros((0, len(g.cells)), np.int16)
                                             for g in parts], "counted")
    joins = probe.joins()
    region_of = {c: k for k, g in enumerate(parts) for c in g.cells}
    per = np.zeros(len(parts), dtype=np.int64)
    for a, _, b in joins:
        per[region_of[a]] += 1
        per[region_of[b]] += 1
    options = nodes = held = 0
    for k, g in enumerate(parts):
        n = count_corolles(instance, g.x, g.y, g.hamming).corolles
        options += n
        nodes += n * (2 + len(g.cells) + int(per[k]))  # region, pieces, joins, a spacer
        held += n * len(g.cells) * 2  # the corolles themselves (int16 placements)
    items = len(parts) + instance.n_pieces + len(joins)
    return options, nodes * BYTES_PER_NODE + 8 * items + held


def region_corolles(instance: Instance, region: Region,
                    store: str | Path | None = None) -> np.ndarray:
    """The corolles of `region` (k, its cells) as placements: its centre's corolles at its
    hamming, read from `store` or enumerated, the on-board slots kept."""
    if store is not None and region.hamming > 0:  # a cell alone: its placements
        from e2store.query.regions import region_rows

        cells, _ = region_rows(Path(store), instance, region.hamming, region.x, region.y)
    else:
        from e2store.corolles import enumerate_corolles

        cells, _ = enumerate_corolles(instance, region.x, region.y, region.hamming)
    return np.ascontiguousarray(np.asarray(cells)[:, list(region.slots)], dtype=np.int16)


def build_model(instance: Instance, hamming: int, *, store: str | Path | None = None,
                fixed: Mapping[int, int] | None = None) -> Model:
    """The exact cover of `instance` at `hamming` (module docstring), each region's
    corolles from `store` (its instance's, at that hamming) or enumerated; `fixed` (cell
    index -> placement) keeps, in each region, the corolles that agree with it."""
    if hamming not in HAMMINGS:
        raise SolverError(f"--hamming {hamming}: the exact cover's regions are hamming "
                          f"{' or '.join(map(str, HAMMINGS))}").about("hamming")
    if store is not None:
        if hamming == 0:
            raise SolverError("--store with --hamming 0: regions of one cell take their "
                              "placements, no corolles (give --hamming 1 or 2)")
        _check_store(store, instance, hamming)
    parts = regions(instance.width, instance.height, hamming)
    fixed = dict(fixed or {})
    options = []
    for g in parts:
        o = region_corolles(instance, g, store)
        for k, cell in enumerate(g.cells):
            if cell in fixed:
                o = o[o[:, k] == fixed[cell]]
        options.append(o)
    return Model(instance, hamming, parts, options, "store" if store else "enumerated")


def _check_store(store: str | Path, instance: Instance, hamming: int) -> None:
    """SolverError in one line unless the store holds `instance` at `hamming`."""
    from e2store.errors import StoreError
    from e2store.store.read import read_manifest

    try:
        parts = read_manifest(Path(store))["partitions"]
    except (StoreError, OSError) as e:
        raise SolverError(f"--store {store}: {str(e).splitlines()[0][:160]}") from None
    have = {(p["instance"], p["hamming"]) for p in parts}
    if (instance.id, hamming) not in have:
        held = sorted({f"{i[:12]} hamming {h}" for i, h in have})
        raise SolverError(f"--store {store}: holds no corolles of this instance at hamming "
                          f"{hamming} (it holds {', '.join(held) or 'none'}): run `e2store "
                          f"enumerate INSTANCE --hamming {hamming} --store {store}`")
