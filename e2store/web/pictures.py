"""Pictures of the web explorer that the reports do not draw, and the clue cells its
pictures (and `e2store render board`'s) frame on Eternity II's boards."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import numpy as np

from e2store.instance.model import Instance
from e2store.zones.geometry import ring_offsets

CELL = 44


def field_clues(inst: Instance, cells: np.ndarray | None = None) -> dict[tuple[int, int], int]:
    """Eternity II's five official clues, {(x, y): piece*4+r} (`e2store.solver.best.CLUES`),
    when `inst` is Eternity II's 256 pieces; {} for any other instance: the cells a picture
    of an Eternity II board frames (`svg_board(..., fixed=...)`).  With `cells` (a board,
    packed piece*4+r, row by row), only the clues that board holds in their cell: a
    centre-clue run's board frames I8 alone, not four cells it never fixed."""
    if (inst.width, inst.height, inst.n_pieces) != (16, 16, 256):
        return {}  # the solver's tables (and numba) are not imported for other boards
    from e2store.solver.best import CLUES, eternity_ii

    if not eternity_ii(inst):
        return {}
    out = {(int(x), int(y)): int(p) * 4 + int(r) for (x, y), (p, r) in CLUES["all"].items()}
    if cells is not None:
        flat = np.asarray(cells).reshape(-1)
        out = {(x, y): v for (x, y), v in out.items() if int(flat[y * inst.width + x]) == v}
    return out


def svg_slot_heat(inst: Instance, hamming: int, values: Sequence[int], x: int, y: int) -> str:
    """A corolle's diamond of slots at (x, y), each coloured by its value (darker: more;
    e.g. the distinct pieces a slot takes) and labelled with it; off-board slots dashed.
    Slot i is the rect with id `heat-i`."""
    off = ring_offsets(hamming)
    lo_x, lo_y = int(off[:, 0].min()), int(off[:, 1].min())
    span = int(off[:, 0].max()) - lo_x + 1
    top = max(1, max(values, default=1))
    size = span * CELL + 2
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size + 20}" '
           f'viewBox="0 0 {size} {size + 20}" font-family="sans-serif">',
           f'<title>{escape(inst.name)}: distinct pieces per slot, hamming {hamming} at '
           f'({x}, {y})</title>']
    for i, ((dx, dy), v) in enumerate(zip(off.tolist(), values, strict=True)):
        cx, cy = x + dx, y + dy
        gx, gy = 1 + (dx - lo_x) * CELL, 1 + (dy - lo_y) * CELL
        on = 0 <= cx < inst.width and 0 <= cy < inst.height
        if not on:
            out.append(f'<rect id="heat-{i}" x="{gx}" y="{gy}" width="{CELL}" '
                       f'height="{CELL}" fill="none" stroke="#999" stroke-dasharray="4 3"/>')
            continue
        shade = int(245 - 190 * v / top)
        fill = f"rgb({shade},{shade},255)"
        ink = "#fff" if shade < 140 else "#000"
        out.append(f'<rect id="heat-{i}" x="{gx}" y="{gy}" width="{CELL}" height="{CELL}" '
                   f'fill="{fill}" stroke="#333"><title>slot {i} ({cx}, {cy}): {v}</title>'
                   f'</rect><text x="{gx + CELL / 2}" y="{gy + CELL / 2 + 5}" '
                   f'text-anchor="middle" font-size="14" fill="{ink}">{v}</text>')
    out.append(f'<text x="2" y="{size + 15}" font-size="12">darker: more distinct pieces '
               f'(at most {top})</text></svg>')
    return "".join(out)
