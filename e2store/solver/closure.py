"""Where a search probes a block closure table (`e2store.query.closures`): the depth after
which every interior cell outside the block and the row above it are placed, so the free
interior pieces and the row's south colours are the block's key."""

from __future__ import annotations

from dataclasses import dataclass

from e2store.query.closures import ClosureError, ClosureTable
from e2store.solver.plan import Plan


@dataclass(frozen=True)
class ClosureSpec:
    """The probe of one plan: after the placement of depth `depth`, key = (free pieces in
    `interior_mask`, south colours of the `row` cells west to east)."""

    depth: int
    row: tuple[int, ...]
    interior_mask: int


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
    return ClosureSpec(d, tuple(row), table.interior_mask), None
