"""Counting distinct layouts: what `solve(..., distinct=True)` reports besides the search.

A distinct search (`build_plan(..., distinct=True)`) meets every distinct layout of each
subtree once: the copies of a class are placed lowest first and the rotations of a
symmetric piece that look alike are one (`e2store.instance.classes`).  Two more things turn
what it finds into the numbers people compare:

* **raw count**: each layout found stands for `layout_factor` layouts that keep every
  distinction (the free copies permuted, the equivalent rotations of the free pieces), the
  number a search over every distinction finds with the same symmetry break;
* **board rotations**: the symmetry break fixes a corner piece.  When that piece has no
  identical copy (`lowest_corner(..., distinct=True)` prefers one), every class of rotated
  layouts is met once.  When every corner piece has a copy, a layout with copies on two
  corners is met once per corner: `first_of_orbit` keeps the first of them (the subtree
  and the layout compared as colours, lowest first), which needs every solution, so such a
  search runs on the generic kernel.
"""

from __future__ import annotations

import numpy as np

from e2store.instance.classes import class_summary, layout_factor, piece_classes
from e2store.instance.model import Instance


def needs_orbit_check(inst: Instance, roots: list[dict[int, int]], symmetry_break: bool) -> bool:
    """Whether a distinct search with these roots meets some layouts once per rotation:
    with the symmetry break, when the fixed corner piece has an identical copy."""
    if not symmetry_break or not roots:
        return False
    cls = piece_classes(inst.pieces)
    counts = np.bincount(cls, minlength=inst.n_pieces)
    corner_cells = {0, inst.width - 1}
    pieces = {v >> 2 for root in roots for c, v in root.items() if c in corner_cells}
    return any(counts[cls[p]] > 1 for p in pieces)


def _turn(looks: np.ndarray, width: int, height: int, quarter: int) -> np.ndarray:
    """The layout `looks` ((H, W, 4) shown colours) turned `quarter` quarter turns
    clockwise (1 and 3 only on a square board)."""
    out = looks
    for _ in range(quarter % 4):
        out = np.rot90(out, k=-1, axes=(0, 1))  # (x, y) -> (W-1-y, x)
        out = np.roll(out, 1, axis=2)  # the side that faced west now faces north
    return out


def first_of_orbit(inst: Instance, roots: list[dict[int, int]]):
    """A test `keep(board, root)`: whether `board`, found in subtree `root`, is the one of
    its class of rotated layouts that the count keeps: among every (subtree j, turned
    layout L') with L' agreeing with subtree j's fixed cells, (root, board) must come first.
    The colour table and the roots' looks are made once, not per solution."""
    w, h = inst.width, inst.height
    rot = inst.rotated_table()
    fixed = [(np.array(list(r), dtype=np.int64), rot[np.array(list(r.values()), dtype=np.int64)])
             for r in roots]
    turns = (0, 1, 2, 3) if w == h else (0, 2)

    def keep(board: np.ndarray, root: int) -> bool:
        looks = rot[np.asarray(board, dtype=np.int64)].reshape(h, w, 4)
        mine = (root, looks.tobytes())
        for q in turns:
            turned = _turn(looks, w, h, q)
            flat = turned.reshape(-1, 4)
            key = turned.tobytes()
            for j, (cells, shown) in enumerate(fixed):
                if (flat[cells] == shown).all() and (j, key) < mine:
                    return False
        return True

    return keep


def distinct_summary(inst: Instance, found: int, kept: int, raw: int,
                     orbit_check: bool, kernel_note: str | None) -> dict:
    """The `distinct` part of a search report: classes, what the search found and stood
    for, whether rotated layouts had to be merged by `first_of_orbit`."""
    cls = class_summary(inst.pieces)
    out = {"classes": cls["classes"], "duplicates": inst.n_pieces - cls["classes"],
           "half_turn_pieces": len(cls["half_turn_pieces"]),
           "quarter_turn_pieces": len(cls["quarter_turn_pieces"]),
           "layouts_found": found, "distinct_solutions": kept, "raw_solutions": raw,
           "orbit_check": orbit_check}
    if kernel_note:
        out["kernel"] = kernel_note
    return out


def raw_per_layout(inst: Instance, root: dict[int, int]) -> int:
    """Raw solutions each distinct layout found under `root`'s fixed cells stands for."""
    return layout_factor(inst.pieces, [v >> 2 for v in root.values()])


def finish(result, inst: Instance, roots: list[dict[int, int]], orbit: bool,
           kernel_note: str | None):
    """Turn a distinct search's `SolveResult` (its `solutions` the layouts found) into the
    report: `solutions` the raw count, `distinct_solutions` the distinct layouts (after
    `first_of_orbit` when `orbit`), `distinct` the details."""
    found = int(result.solutions)
    raw = found * (raw_per_layout(inst, roots[0]) if roots else 1)
    kept = int(result.distinct_solutions or 0) if orbit else found
    result.solutions, result.distinct_solutions = raw, kept
    result.distinct = distinct_summary(inst, found, kept, raw, orbit, kernel_note)
    return result
