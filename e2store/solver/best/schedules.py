"""The parameters of the best-score search and their defaults, declared once and light to
import (the command line's options read them without loading a kernel): break schedules,
the colour quota's curve, Eternity II's clues, restart sizes, the boards file."""

from __future__ import annotations

from collections.abc import Sequence

from e2store.errors import SolverError

# Break schedules by name, as scan positions on a 256-cell board (Eternity II); scaled to
# other boards by their number of cells (`break_schedule`)
SCHEDULES = {
    "blackwood": (201, 206, 211, 216, 221, 225, 229, 233, 237, 239),  # 10: >= 470 when full
    "verhaard": (193, 202, 209, 214, 218, 222, 226, 229, 232, 235, 238, 240),
    # for the five clues: one mismatch allowed where the exact search stalls beside the
    # clues (rows 1-3 beside the clues of row 2, north of the centre clue), then at 150
    # and 190, then Blackwood's (docs/benchmarks.md, *All five clues*)
    "clues": (18, 33, 50, 100, 150, 190, 201, 206, 211, 216, 221, 225, 229, 233, 237, 239),
    # the five clues' campaign's best (docs/benchmarks.md, *All five clues: a campaign*):
    # `clues` without the mismatch at 150 (not needed to pass), and six more in the last
    # 16 cells (241-251), where the top rows beside the two northern clues stall: full
    # boards of 480 - 21 = 459 and more, filled boards 2.7 points above `clues` on average
    "clues-late": (18, 33, 50, 100, 190, 201, 206, 211, 216, 221, 225, 229, 233, 237, 239,
                   241, 243, 245, 247, 249, 251),
    # for the five clues, after the geometry of Riotte's 464s (2026): 16 mismatches, every
    # one in rows A-F, the last 96 cells of the scan, rows G-P clean; here one allowed every
    # 6 positions from 160 on (issue 56, item 4)
    "riotte": tuple(range(160, 256, 6)),
    "none": (),
}
DEFAULT_SCHEDULE = "blackwood"
CLUES_SCHEDULE = "clues-late"  # the default with all five clues (`auto`)
# Eternity II's clues, {(x, y): (piece, r)} on the official board (the orientation of every
# record board and of e2.bucas.name: ../shared/notes/campaigns-in-the-field.md,
# *Orientation*), y from the north and pieces numbered from 0 as in the official list
# (e2_gallicchio.puz, e2pieces_jwortmann.txt): the centre clue (the only one the contest
# required: piece 139 on I8, cell 135) and the four more of the clue puzzles (181 on N3,
# 208 on C3, 249 on N14, 255 on C14).  libblackwood (data/tomy_EternityII.py) lists them
# on the board turned a half turn (its `upside_down` list: 139 on cell 120, each piece
# turned two quarter turns), the board Blackwood's solver fills.
CLUES = {
    "centre": {(7, 8): (138, 2)},
    "all": {(7, 8): (138, 2), (2, 13): (180, 3), (2, 2): (207, 3), (13, 13): (248, 0),
            (13, 2): (254, 3)},
}
AUTO = "auto"  # an option resolved per instance (`e2store.solver.best.best_plan`)
DEFAULT_SCAN = "blackwood"  # the scan order of Blackwood's solver (`e2store.solver.scan`)
DEFAULT_BREAKS = AUTO  # CLUES_SCHEDULE with all five clues, else DEFAULT_SCHEDULE
DEFAULT_QUOTA = AUTO  # "blackwood" on Eternity II's pieces, else none
ORDERS = ("random", "store")  # the candidates' order within a list part
DEFAULT_ORDER = "random"
DEFAULT_SEED = 0
DEFAULT_BOARDS = "best-boards.parquet"  # where a run writes its boards when not told
DEFAULT_RESTART_NODES = 1_000_000_000
SLICE_NODES = 20_000_000  # nodes per kernel call: progress and Ctrl-C between calls
# the finish of a restart's boards (`e2store.solver.best.grow_tail`): its tail sizes K
# over the scan's last cells and, per K, its node and time caps
FINISH_KS = (16, 24, 32)
FINISH_NODES = 2_000_000
FINISH_SECONDS = 1.0
OTHER_BOARDS = 2  # a restart's boards besides its best that the finish tries (issue 56)


def break_schedule(spec: str | Sequence[int], n_cells: int, joins: int) -> tuple[int, ...]:
    """The break schedule `spec` names (a key of SCHEDULES, scaled from 256 cells to
    `n_cells`) or lists (scan positions, comma-separated or a sequence): strictly
    increasing positions in 0..n_cells-1, at most `joins` of them.  SolverError otherwise."""
    if isinstance(spec, str) and spec.strip().lower() in SCHEDULES:
        base = SCHEDULES[spec.strip().lower()]
        if n_cells == 256:
            return tuple(base)
        out: list[int] = []
        for b in base:  # scaled, kept increasing and on the board
            v = min(n_cells - 1, max(0, round(b * n_cells / 256)))
            v = max(v, out[-1] + 1) if out else v
            if v < n_cells:
                out.append(v)
        return tuple(out[:joins])
    if isinstance(spec, str):
        try:
            vals = [int(t) for t in spec.replace(" ", "").split(",") if t != ""]
        except ValueError:
            raise SolverError(f"break schedule {spec!r}: expected a name ({', '.join(SCHEDULES)}) "
                              f"or comma-separated depths").about("breaks") from None
    else:
        vals = [int(v) for v in spec]
    if any(b < 0 or b >= n_cells for b in vals):
        raise SolverError(f"break schedule {spec!r}: depths must be in 0..{n_cells - 1} (the scan "
                          f"positions of this {n_cells}-cell board)").about("breaks")
    if any(b >= a for b, a in zip(vals, vals[1:], strict=False)) and len(vals) > 1:
        raise SolverError(f"break schedule {spec!r}: depths must be strictly increasing (the k-th "
                          f"mismatch is allowed from the k-th depth on)").about("breaks")
    if len(vals) > joins:
        raise SolverError(f"break schedule {spec!r}: {len(vals)} breaks for a board of {joins} "
                          f"joins").about("breaks")
    return tuple(vals)


def quota_curve(position: int, n_cells: int, total: int) -> int:
    """The least quota-colour sides placed by scan position `position` (Blackwood's curve
    on Eternity II: 119 of its three colours' 122 sides by position 160, none asked after),
    scaled to a board of `n_cells` cells whose quota colours show `total` sides."""
    i = position * 256 / n_cells
    if i <= 16 or i > 160:
        v = 0.0
    elif i <= 26:
        v = (i - 16) * 2.8
    elif i <= 56:
        v = (i - 26) * 1.43333 + 28
    elif i <= 76:
        v = (i - 56) * 0.9 + 71
    elif i <= 102:
        v = (i - 76) * 0.6538 + 89
    else:
        v = (i - 102) / 4.4615 + 106
    return int(int(v) * total / 122) if total != 122 else int(v)
