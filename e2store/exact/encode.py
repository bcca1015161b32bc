"""CNF of a board or a region: the edge-matching rules as clauses, for SAT solvers and
model counters (docs/exact.md).

Variables (1-based, DIMACS):

* `x[c, v]`: cell c holds placement v (`piece*4 + r`); only the placements whose grey
  sides are exactly the cell's frame sides exist (corner, border and interior pieces go
  where they belong, grey facing out);
* `e[j, k]`: the join j between two cells of the region shows colour k (one per join);
* auxiliary `s` variables of the at-most-one ladders (each is the OR of a prefix of its
  group, so it is determined by the `x`: the number of models equals the number of
  fillings, with or without projection on the `x`).

Clauses: each cell exactly one placement; each piece at most once (exactly once on a full
board); each end of a join shows the join's colour (so the two ends match), with Heule's
support clauses (a join colour needs a placement showing it at each end), which SAT solvers
need on boards of 7x7 and more.  In `soft` mode (MaxSAT: best score) joins may mismatch:
each cell side gets its own colour variables and `m[j]` (join j matched) implies the two
ends agree; the `m` are the soft clauses.

This module and its siblings share no code with e2store's kernels: the cell kinds, the
placements and the region are worked out here from the instance's colours alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO

from e2store.errors import ExactInputError, OutOfReachError
from e2store.instance.model import GREY, Instance

STEP = ((-1, 0), (0, -1), (1, 0), (0, 1))  # towards W, N, E, S (DESIGN.md: side order)
PAIRWISE_MAX = 6  # at-most-one groups up to this size as pairs, larger ones as a ladder
# The largest model built, in placement variables (measured: about 4.5 KB of memory each
# in a solver's child, 2 KB in export-cnf): Eternity II's board has 157,000 (1.9 M clauses,
# 0.6 GB in CaDiCaL's child), a 20x20 board 420,000 (5.2 M clauses, 1.9 GB); a 24x24 board's
# 945,000 would need over 4 GB
MAX_PLACEMENT_VARS = 500_000


def shown(instance: Instance, packed: int, side: int) -> int:
    """Colour that placement `packed` (piece*4 + r, r clockwise quarter turns) shows on `side`."""
    p, r = divmod(packed, 4)
    return int(instance.pieces[p][(side - r) % 4])


def frame_sides(width: int, height: int, x: int, y: int) -> frozenset[int]:
    """The sides of cell (x, y) that face the board's frame."""
    out = set()
    for s, (dx, dy) in enumerate(STEP):
        if not (0 <= x + dx < width and 0 <= y + dy < height):
            out.add(s)
    return frozenset(out)


def fits_frame(instance: Instance, packed: int, frame: frozenset[int]) -> bool:
    """Placement `packed` shows grey on exactly the sides `frame` (a cell's frame sides)."""
    return {s for s in range(4) if shown(instance, packed, s) == GREY} == frame


def cell_placements(instance: Instance, x: int, y: int) -> list[int]:
    """Placements allowed on (x, y): grey on exactly the cell's frame sides."""
    frame = frame_sides(instance.width, instance.height, x, y)
    return [v for v in range(instance.n_pieces * 4) if fits_frame(instance, v, frame)]


def placements_by_frame(instance: Instance) -> dict[frozenset[int], list[int]]:
    """The allowed placements of each kind of cell (its frame sides), each worked out once:
    a board has at most nine kinds, so this is what `cell_placements` gives, without a
    pass over every placement for every cell."""
    out: dict[frozenset[int], list[int]] = {}
    for v in range(instance.n_pieces * 4):
        grey = frozenset(s for s in range(4) if shown(instance, v, s) == GREY)
        out.setdefault(grey, []).append(v)
    return out


def model_size(instance: Instance, cells: Sequence[tuple[int, int]],
               kinds: Mapping[frozenset[int], list[int]] | None = None) -> int:
    """The number of placement variables (`x`) of the model of `cells`: the clauses and
    the memory of the model grow with it (about 12 clauses and 4.5 KB each); `kinds`:
    `placements_by_frame(instance)`, when the caller has it."""
    kinds = placements_by_frame(instance) if kinds is None else kinds
    w, h = instance.width, instance.height
    return sum(len(kinds.get(frame_sides(w, h, x, y), ())) for x, y in cells)


def check_size(instance: Instance, cells: Sequence[tuple[int, int]],
               kinds: Mapping[frozenset[int], list[int]] | None = None) -> None:
    """Refuse a model over `MAX_PLACEMENT_VARS` before it is built (OutOfReachError): a
    24x24 board's would take over 4 GB of memory and 11 M clauses, more than any solver
    here finishes."""
    n = model_size(instance, cells, kinds)
    if n > MAX_PLACEMENT_VARS:
        raise OutOfReachError(
            f"the exact model of {len(cells):,} cells of {instance.name!r} would have "
            f"{n:,} placement variables (about {n * 12:,} clauses, {n * 4.5e3 / 2**30:.1f} "
            f"GB of memory): over the limit of {MAX_PLACEMENT_VARS:,} (Eternity II's "
            f"board has 157,000); use a smaller board or region")


def check_fixed(instance: Instance, fixed: Mapping[tuple[int, int], int],
                cells: Sequence[tuple[int, int]] | None = None) -> None:
    """Refuse fixed cells the model cannot take (ExactInputError naming the first): a cell
    off the board or outside `cells`, a piece the instance does not have, a piece whose
    grey sides do not face the frame, a piece fixed twice."""
    w, h = instance.width, instance.height
    region = None if cells is None else set(cells)
    seen: dict[int, tuple[int, int]] = {}
    for (x, y), v in fixed.items():
        if not (0 <= x < w and 0 <= y < h):
            raise ExactInputError(f"fixed cell ({x}, {y}) is off the {w}x{h} board")
        if region is not None and (x, y) not in region:
            raise ExactInputError(f"fixed cell ({x}, {y}) is not in the region")
        p, r = divmod(int(v), 4)
        if not 0 <= p < instance.n_pieces:
            raise ExactInputError(f"fixed cell ({x}, {y}): piece {p} is not one of the "
                                  f"instance's pieces (0 to {instance.n_pieces - 1})")
        if not fits_frame(instance, int(v), frame_sides(w, h, x, y)):
            raise ExactInputError(f"piece {p} rotation {r} cannot go on ({x}, {y}): its grey "
                                  f"sides do not face the frame")
        if p in seen:
            raise ExactInputError(f"piece {p} is fixed on two cells: {seen[p]} and ({x}, {y})")
        seen[p] = (x, y)


def diamond(width: int, height: int, x: int, y: int, hamming: int) -> list[tuple[int, int]]:
    """The board cells within Manhattan distance `hamming` of (x, y), row by row."""
    if not (0 <= x < width and 0 <= y < height):
        raise ExactInputError(f"cell ({x}, {y}) is off the {width}x{height} board")
    if hamming < 0:
        raise ExactInputError(f"hamming must be 0 or more, got {hamming}")
    return [(cx, cy) for cy in range(height) for cx in range(width)
            if abs(cx - x) + abs(cy - y) <= hamming]


@dataclass
class Cnf:
    """A formula in DIMACS terms and the meaning of its variables."""

    n_vars: int = 0
    clauses: list[list[int]] = field(default_factory=list)
    soft: list[int] = field(default_factory=list)  # literals to satisfy, weight 1 each
    cells: list[tuple[int, int]] = field(default_factory=list)
    place: list[dict[int, int]] = field(default_factory=list)  # per cell: placement -> var
    joins: list[tuple[int, int, int]] = field(default_factory=list)  # (cell a, cell b, side of a)
    notes: list[str] = field(default_factory=list)

    def new(self, n: int = 1) -> list[int]:
        """Allocate `n` fresh variables."""
        out = list(range(self.n_vars + 1, self.n_vars + n + 1))
        self.n_vars += n
        return out

    @property
    def place_vars(self) -> list[int]:
        """Every `x` variable: the projection on which models are counted."""
        return [v for m in self.place for v in m.values()]

    def decode(self, model: Iterable[int]) -> dict[tuple[int, int], int]:
        """The filling a model stands for: {(x, y): packed placement}."""
        true = {lit for lit in model if lit > 0}
        out = {}
        for cell, m in zip(self.cells, self.place, strict=True):
            hit = [v for v, var in m.items() if var in true]
            if len(hit) != 1:
                raise ValueError(f"model places {len(hit)} pieces on {cell}: not a model "
                                 f"of this formula")
            out[cell] = hit[0]
        return out

    def blocking(self, model: Iterable[int]) -> list[int]:
        """The clause that forbids this model's filling (its `x` part)."""
        true = {lit for lit in model if lit > 0}
        return [-var for m in self.place for var in m.values() if var in true]

    def dimacs_lines(self) -> Iterator[str]:
        """The formula as DIMACS lines (no line ends), the variable meanings in `c` lines,
        and a `c p show` line (the projection on the placements, for projected counters)."""
        yield from (f"c {n}" for n in self.notes)
        for cell, m in zip(self.cells, self.place, strict=True):
            pairs = " ".join(f"{var}={v // 4}r{v % 4}" for v, var in m.items())
            yield f"c cell {cell[0]},{cell[1]}: {pairs}"
        yield "c p show " + " ".join(map(str, self.place_vars)) + " 0"
        yield f"p cnf {self.n_vars} {len(self.clauses)}"
        yield from (" ".join(map(str, c)) + " 0" for c in self.clauses)

    def wcnf_lines(self) -> Iterator[str]:
        """The formula as weighted MaxSAT (classic WCNF) lines: hard clauses of weight
        `top`, each soft literal a clause of weight 1."""
        top = len(self.soft) + 1
        yield from (f"c {n}" for n in self.notes)
        yield f"c soft: one per join, true when the join matches; top = {top}"
        yield f"p wcnf {self.n_vars} {len(self.clauses) + len(self.soft)} {top}"
        yield from (f"{top} " + " ".join(map(str, c)) + " 0" for c in self.clauses)
        yield from (f"1 {lit} 0" for lit in self.soft)

    def dimacs(self) -> str:
        """The formula as DIMACS text (`dimacs_lines`)."""
        return "\n".join(self.dimacs_lines()) + "\n"

    def wcnf(self) -> str:
        """The formula as WCNF text (`wcnf_lines`)."""
        return "\n".join(self.wcnf_lines()) + "\n"

    def write(self, fh: BinaryIO, *, soft: bool = False) -> None:
        """Write the DIMACS (or, `soft`, WCNF) text to a binary file a block at a time:
        the text of a big board (43 MB for Eternity II) is never held whole."""
        block: list[str] = []
        for line in (self.wcnf_lines() if soft else self.dimacs_lines()):
            block.append(line)
            if len(block) >= 4096:
                fh.write(("\n".join(block) + "\n").encode())
                block.clear()
        if block:
            fh.write(("\n".join(block) + "\n").encode())


def at_most_one(cnf: Cnf, lits: Sequence[int]) -> None:
    """At most one of `lits`: pairwise when small, else a ladder whose every auxiliary
    variable is the OR of a prefix (so it adds no models)."""
    n = len(lits)
    if n <= 1:
        return
    if n <= PAIRWISE_MAX:
        for i in range(n):
            for j in range(i + 1, n):
                cnf.clauses.append([-lits[i], -lits[j]])
        return
    s = cnf.new(n - 1)  # s[i] = lits[0] or ... or lits[i]
    cnf.clauses.append([-lits[0], s[0]])
    cnf.clauses.append([-s[0], lits[0]])
    for i in range(1, n - 1):
        cnf.clauses += [[-lits[i], s[i]], [-s[i - 1], s[i]], [-s[i], s[i - 1], lits[i]],
                        [-lits[i], -s[i - 1]]]
    cnf.clauses.append([-lits[n - 1], -s[n - 2]])


def encode(instance: Instance, cells: Sequence[tuple[int, int]] | None = None, *,
           fixed: Mapping[tuple[int, int], int] | None = None, soft: bool = False,
           support: bool = True) -> Cnf:
    """CNF whose models are the valid fillings of `cells` (default: the whole board, every
    piece used once); `fixed` pins placements; `soft` lets joins mismatch (MaxSAT)."""
    w, h = instance.width, instance.height
    board = cells is None
    cells = ([(x, y) for y in range(h) for x in range(w)] if cells is None
             else list(dict.fromkeys(cells)))
    for x, y in cells:
        if not (0 <= x < w and 0 <= y < h):
            raise ExactInputError(f"cell ({x}, {y}) is off the {w}x{h} board")
    if board and w * h != instance.n_pieces:
        raise ExactInputError(f"{instance.n_pieces} pieces for a {w}x{h} board")
    cnf = Cnf(cells=cells)
    cnf.notes.append(f"e2store exact model: {instance.name} {w}x{h}, {len(cells)} cells"
                     + (", whole board" if board else "") + (", soft joins" if soft else ""))
    cnf.notes.append("variables: cell x,y: var=piece r rotation (piece*4+r; r clockwise "
                     "quarter turns; pieces numbered from 0)")
    index = {c: i for i, c in enumerate(cells)}
    fixed = dict(fixed or {})
    check_fixed(instance, fixed, None if board else cells)
    kinds = placements_by_frame(instance)
    check_size(instance, cells, kinds)
    by_piece: dict[int, list[int]] = {}
    for c in cells:
        allowed = [fixed[c]] if c in fixed else kinds.get(frame_sides(w, h, *c), [])
        xs = cnf.new(len(allowed))
        cnf.place.append(dict(zip(allowed, xs, strict=True)))
        cnf.clauses.append(list(xs))  # at least one
        at_most_one(cnf, xs)
        for v, var in zip(allowed, xs, strict=True):
            by_piece.setdefault(v // 4, []).append(var)
    for p in range(instance.n_pieces):
        lits = by_piece.get(p, [])
        at_most_one(cnf, lits)
        if board:
            cnf.clauses.append(lits)  # every piece used (redundant, helps SAT)
    colours = range(instance.n_colours)
    for i, (x, y) in enumerate(cells):
        for side in (2, 3):  # each join once: east and south of its first cell
            dx, dy = STEP[side]
            j = index.get((x + dx, y + dy))
            if j is None:
                continue
            cnf.joins.append((i, j, side))
            ends = ((i, side), (j, (side + 2) % 4))
            if soft:
                _soft_join(cnf, instance, ends, colours)
                continue
            e = cnf.new(len(colours))
            at_most_one(cnf, e)
            for cell_i, s in ends:
                need: dict[int, list[int]] = {}
                for v, var in cnf.place[cell_i].items():
                    k = shown(instance, v, s)
                    cnf.clauses.append([-var, e[k]])
                    need.setdefault(k, []).append(var)
                if support:
                    for k in colours:
                        cnf.clauses.append([-e[k]] + need.get(k, []))
    return cnf


def _soft_join(cnf: Cnf, instance: Instance, ends, colours) -> None:
    """A join that may mismatch: one colour variable set per end, `m` true only when the
    two ends show the same colour; `m` is a soft literal."""
    ks = []
    for cell_i, s in ends:
        k = cnf.new(len(colours))
        at_most_one(cnf, k)
        for v, var in cnf.place[cell_i].items():
            cnf.clauses.append([-var, k[shown(instance, v, s)]])
        ks.append(k)
    (m,) = cnf.new(1)
    for c in colours:
        cnf.clauses.append([-m, -ks[0][c], ks[1][c]])
    cnf.soft.append(m)
