"""What the picture commands draw, chosen: the corolle of an index, the grid of a board
(its solution or empty), and the limits and defaults of a picture's scale."""

from __future__ import annotations

from typing import Any

from e2store.errors import RenderError
from e2store.instance.model import Instance

DEFAULT_SCALE = 1.0  # PNG pixels per picture unit (a board cell is 48 units)
MAX_SCALE = 100.0  # PNG pixels per picture unit at most: a board cell of 4,800 pixels


def nth_corolle(inst: Instance, x: int, y: int, hamming: int, index: int) -> Any:
    """The `index`-th corolle (0-based, enumeration order) at (x, y): packed placements per
    slot, -1 off the board (a numpy array).  RenderError when the cell has `index` corolles
    or fewer.
    """
    import numpy as np

    from e2store.corolles.enumerate import iter_corolles

    seen = 0
    for cells, _ in iter_corolles(inst, x, y, hamming):
        n = cells.shape[1]
        if index < seen + n:
            return cells[:, index - seen].astype(np.int64)
        seen += n
    have = "no corolles" if seen == 0 else f"{seen} corolle{'s' if seen != 1 else ''}"
    raise RenderError(f"corolle index {index} is out of range: cell ({x}, {y}) has {have} at "
                      f"hamming {hamming}"
                      + (f" (expected 0 <= index < {seen})" if seen else ""))


def corolle_picture(inst: Instance, hamming: int, x: int, y: int, index: int = 0,
                    title: str | None = None) -> str:
    """The SVG of the `index`-th corolle at (x, y) drawn in place on the board's outline;
    the title says which unless one is given."""
    from e2store.reports.render import svg_corolle

    row = nth_corolle(inst, x, y, hamming, index)
    if title is None:
        title = f"{inst.name}: hamming-{hamming} corolle {index} at ({x}, {y})"
    return svg_corolle(inst, hamming, row, x, y, title=title)


def board_grid(inst: Instance, solution: bool = True, name: object = None) -> Any:
    """The H x W placements to draw of a board: the instance's solution (RenderError when
    the file `name` holds none), or the empty board (-1 everywhere)."""
    import numpy as np

    if not solution:
        return np.full((inst.height, inst.width), -1, dtype=np.int64)
    if inst.solution is None:
        raise RenderError(f"{inst.name if name is None else name}: the instance has no "
                          "solution to draw (expected a piece file with a solution, or use "
                          "--empty)")
    return inst.solution
