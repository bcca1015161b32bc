"""Where a search probes a block closure table (`e2store.query.closures`): the depth after
which every interior cell outside the block and the row above it are placed, so the free
interior pieces and the row's south colours are the block's key.

And where it keeps a *row memo*: when the row's cells are the depths just before the probe
and the border cell west of the row is placed before them, whether any probe below a
placement at that depth passes is a function of the free interior pieces, that border
cell's east colour and the south colours of the row above (the row's whole interior
problem).  A key whose subtree saw no probe pass is remembered, and a later placement with
the same key is cut at once: the same row would be tried again, with the same result."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from e2store.query.closures import ClosureError, ClosureTable
from e2store.solver.plan import Plan


@dataclass(frozen=True)
class ClosureSpec:
    """The probe of one plan: after the placement of depth `depth`, key = (free pieces in
    `interior_mask`, south colours of the `row` cells west to east)."""

    depth: int
    row: tuple[int, ...]
    interior_mask: int
    memo_depth: int = -1  # the row memo's depth, -1 without one (module docstring)
    memo_cells: tuple[int, ...] = ()  # its key's colours: (west cell, side), then the row above


def closure_spec(plan: Plan, table: ClosureTable) -> tuple[ClosureSpec | None, str | None]:
    """(the probe of `plan`, None) or (None, why the table cannot serve this plan)."""
    if (table.width, table.height) != (plan.width, plan.height) or table.k_col != plan.k_col:
        raise ClosureError(f"closure table of a {table.width}x{table.height} board with "
                           f"{table.k_col} colour ranks, the search is "
                           f"{plan.width}x{plan.height} with {plan.k_col}")
    w, h = plan.width, plan.height
    block, row = table.cells()
    depth_of = {int(c): d for d, c in enumerate(plan.cells.tolist())}
    if any(c not in depth_of for c in block):
        return None, "a cell of the block is fixed"
    inside = set(block)
    above = [y * w + x for y in range(1, h - 1) for x in range(1, w - 1)
             if y * w + x not in inside] + row
    d = max(depth_of.get(c, -1) for c in above)
    if d < 0:
        return None, "every cell above the block is fixed"
    if min(depth_of[c] for c in block) <= d:
        return None, "the scan order places a block cell before the row above it is complete"
    m = d - len(row)
    west, east = row[0] - 1, row[-1] + 1
    memo = (m >= 0 and sorted(int(c) for c in plan.cells[m + 1:d + 1]) == sorted(row)
            and depth_of.get(west, -1) == m and depth_of.get(east, d + 1) > d)
    if not memo:
        return ClosureSpec(d, tuple(row), table.interior_mask), None
    return ClosureSpec(d, tuple(row), table.interior_mask, m,
                       (west * 4 + 2,) + tuple((c - w) * 4 + 3 for c in row)), None


CLOSURE_COUNTS = ("probes", "cuts", "memo_cuts", "memo_records")


def closure_counts_dict(counts: np.ndarray) -> dict:
    """`UnrolledSearch.counts` (or a sum of them) by name, for a report."""
    return {name: int(v) for name, v in zip(CLOSURE_COUNTS, counts.tolist(), strict=True)}


def closure_report(closure: ClosureTable, subs: list) -> dict:
    """The `closure` entry of a report: the table, and probes, cuts and row memo counts
    summed over `subs`."""
    total = sum((s.counts for s in subs), np.zeros(len(CLOSURE_COUNTS), np.int64))
    return {**closure.summary(), "used": True, **closure_counts_dict(total)}

