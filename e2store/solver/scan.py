"""Scan orders (the order a search fills the cells) and the text files a search reads:
scan-order files and seed files (fixed placements), with errors naming file and line."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from e2store.errors import SolverError
from e2store.instance.cells_files import content_lines, file_error, int_tokens
from e2store.instance.cells_files import read_seed_file as read_seed_file  # declared there
from e2store.instance.model import Instance
from e2store.solver.defaults import SCAN_ORDERS as SCAN_ORDERS  # declared there


def rowscan(width: int, height: int) -> np.ndarray:
    """Row by row from the north, each row west to east: (0,0), (1,0), ..., (W-1,H-1)."""
    return np.array([(x, y) for y in range(height) for x in range(width)], dtype=np.int64)


def columnscan(width: int, height: int) -> np.ndarray:
    """Column by column from the west, each column north to south."""
    return np.array([(x, y) for x in range(width) for y in range(height)], dtype=np.int64)


def diagonal(width: int, height: int) -> np.ndarray:
    """Anti-diagonals x+y = 0, 1, ... from the north-west corner, each from its western end
    (x ascending).  Every cell's west and north neighbours come before it, as in rowscan."""
    return np.array([(x, s - x) for s in range(width + height - 1)
                     for x in range(max(0, s - height + 1), min(s, width - 1) + 1)],
                    dtype=np.int64)


def _spiral(width: int, height: int) -> list[tuple[int, int]]:
    """Clockwise inward spiral of a W x H rectangle from (0,0), first leg eastwards."""
    out: list[tuple[int, int]] = []
    top, bottom, left, right = 0, height - 1, 0, width - 1
    while top <= bottom and left <= right:
        out += [(x, top) for x in range(left, right + 1)]
        out += [(right, y) for y in range(top + 1, bottom + 1)]
        if top < bottom:
            out += [(x, bottom) for x in range(right - 1, left - 1, -1)]
        if left < right:
            out += [(left, y) for y in range(bottom - 1, top, -1)]
        top, bottom, left, right = top + 1, bottom - 1, left + 1, right - 1
    return out


def spiral_in(width: int, height: int) -> np.ndarray:
    """Clockwise spiral from the north-west corner inwards: the north row west to east, the
    east column down, the south row back west, the west column up, then the next ring."""
    return np.array(_spiral(width, height), dtype=np.int64).reshape(-1, 2)


def spiral_out(width: int, height: int) -> np.ndarray:
    """`spiral_in` reversed: from the centre outwards (anticlockwise), ending on (0,0)."""
    return np.ascontiguousarray(spiral_in(width, height)[::-1])


def quad_spiral(width: int, height: int) -> np.ndarray:
    """Four quadrant spirals, interleaved.

    The board is cut into four quadrants turning like a pinwheel: NW = columns
    [0, ceil(W/2)) x rows [0, floor(H/2)), NE = [ceil(W/2), W) x [0, ceil(H/2)),
    SE = [floor(W/2), W) x [ceil(H/2), H), SW = [0, floor(W/2)) x [floor(H/2), H); when W
    and H are both odd the centre cell is left over and comes last.  Each quadrant is walked
    by a clockwise inward spiral that starts on its outer corner (the board corner) and runs
    first along the board's frame: NW from (0,0) eastwards, NE from (W-1,0) southwards, SE
    from (W-1,H-1) westwards, SW from (0,H-1) northwards.  The order takes one cell of each
    quadrant in turn, NW, NE, SE, SW, skipping a quadrant once it is used up.  So the four
    corners come first, then the frame grows from all four corners at once; on a square
    board the order is invariant under a quarter turn (cell k+1 is cell k turned).
    """
    a, c = (width + 1) // 2, width // 2  # ceil, floor
    b, e = (height + 1) // 2, height // 2
    x1, y1 = width - 1, height - 1
    quads = [
        [(u, v) for u, v in _spiral(a, e)],  # NW, a x e: local axes = board axes
        [(x1 - v, u) for u, v in _spiral(b, width - a)],  # NE: local x south, y west
        [(x1 - u, y1 - v) for u, v in _spiral(width - c, height - b)],  # SE: x west, y north
        [(v, y1 - u) for u, v in _spiral(height - e, c)],  # SW: local x north, y east
    ]
    out = []
    for i in range(max(len(q) for q in quads)):
        out += [q[i] for q in quads if i < len(q)]
    if width % 2 and height % 2:
        out.append((c, e))
    return np.array(out, dtype=np.int64).reshape(-1, 2)


def blackwood(width: int, height: int) -> np.ndarray:
    """The order of Blackwood's best-score solver (jblackwood345/EternityII_Solver, 2021)
    on the official orientation of Eternity II.  His solver fills the board turned a half
    turn (libblackwood's `upside_down` clues: piece 139 on cell 120), from its north row;
    on the official board (139 on I8, cell 135) that is, from the south: the southern H-5
    rows row by row, each from west to east; then the northern 5 rows in three blocks: the
    5 western columns row by row (south to north, west to east), then each further column
    from south to north, going east, leaving the 4 eastern columns, filled last row by row.
    The late blocks end the search in short columns, where its mismatches are allowed.
    Boards under 6 rows or 10 columns: rows from the south, each west to east."""
    return np.array([(width - 1 - x, height - 1 - y) for x, y in _blackwood_turned(width, height)],
                    dtype=np.int64).reshape(-1, 2)


def _blackwood_turned(width: int, height: int) -> list[tuple[int, int]]:
    """Blackwood's order on his own board (the official one turned a half turn)."""
    if height < 6 or width < 10:
        return [(x, y) for y in range(height) for x in range(width - 1, -1, -1)]
    top = height - 5
    out = [(x, y) for y in range(top) for x in range(width - 1, -1, -1)]
    out += [(x, y) for y in range(top, height) for x in range(width - 1, width - 6, -1)]
    out += [(x, y) for x in range(width - 6, 3, -1) for y in range(top, height)]
    out += [(x, y) for y in range(top, height) for x in range(3, -1, -1)]
    return out


_BUILTIN = {
    "rowscan": rowscan,
    "columnscan": columnscan,
    "diagonal": diagonal,
    "spiral-in": spiral_in,
    "spiral-out": spiral_out,
    "quad-spiral": quad_spiral,
    "blackwood": blackwood,
}


def scan_name_of(text: str) -> str | None:
    name = str(text).strip().lower().replace("_", "-")
    return name if name in _BUILTIN else None


def scan_order(name_or_path: str | Path, width: int, height: int) -> np.ndarray:
    """The (W*H, 2) cells `(x, y)` of a W x H board in the given scan order.

    `name_or_path` is one of `SCAN_ORDERS` (`spiral_in` spelling accepted) or a file of
    `x y` lines (see `read_scan_file`).
    """
    if width < 1 or height < 1:
        raise SolverError(f"board {width}x{height}: width and height must be >= 1")
    name = scan_name_of(str(name_or_path)) if isinstance(name_or_path, str) else None
    if name is not None:
        order = _BUILTIN[name](width, height)
        assert len(order) == width * height
        return order
    path = Path(name_or_path)
    if not path.is_file():
        raise SolverError(f"unknown scan order {str(name_or_path)!r}: expected one of "
                          f"{', '.join(SCAN_ORDERS)} or a file of `x y` lines")
    return read_scan_file(path, width, height)


def read_scan_file(path: str | Path, width: int, height: int) -> np.ndarray:
    """A scan order from a text file: one cell `x y` per line (a comma may separate them),
    every cell of the W x H board exactly once; blank lines and `#` comments are ignored.
    A bad line raises `SolverError` naming the file and the line."""
    p = Path(path)
    rows = content_lines(p, "scan file", "a text file of `x y` lines")
    seen: dict[tuple[int, int], int] = {}
    for lineno, toks in rows:
        x, y = int_tokens(p, lineno, toks, 2, "`x y`: two integers")
        if not (0 <= x < width and 0 <= y < height):
            raise file_error(p, lineno, f"cell ({x}, {y}) is off the {width}x{height} board",
                              f"0 <= x < {width} and 0 <= y < {height}")
        if (x, y) in seen:
            raise file_error(p, lineno, f"cell ({x}, {y}) repeated (first on line "
                              f"{seen[(x, y)]})", "every cell exactly once")
        seen[(x, y)] = lineno
    n = width * height
    if len(seen) < n:
        missing = next((x, y) for y in range(height) for x in range(width) if (x, y) not in seen)
        last = rows[-1][0] if rows else 1
        raise file_error(p, last, f"{len(seen)} of {n} cells listed, cell {missing} missing",
                          "every cell exactly once")
    return np.array(list(seen), dtype=np.int64).reshape(-1, 2)


def fixed_cells(instance: Instance, value: str | Path | None
                ) -> dict[tuple[int, int], int] | None:
    """The fixed cells `value` names: an e2.bucas.name board URL (its filled cells) or a
    seed file (`read_seed_file`); None for None.  The one reader of every command that
    takes fixed cells, so they all read the same thing the same way."""
    if value is None:
        return None
    from e2store.instance.url import fixed_from_url, is_url

    if is_url(str(value)):
        return fixed_from_url(instance, str(value))
    return read_seed_file(Path(value))
