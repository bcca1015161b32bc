"""Pictures: an instance's pieces, a board, a zone map, a corolle (SVG text; PNG via matplotlib).

Each piece is a square cut along its diagonals into four triangles W, N, E, S (docs/design.md
section 1), each filled with the colour of its colour id (`colour_hex`: grey for 0, then a
fixed categorical palette).  The drawing functions (`svg_pieces`, `svg_board`,
`svg_zone_map`, `svg_corolle`) only build and return SVG text; `write_picture` writes it,
atomically, as SVG or PNG by the file suffix.  PNG pictures are drawn with matplotlib's Agg
renderer from the same SVG text (`svg_to_figure` understands the small subset of SVG these
functions write: `g`, `rect`, `polygon`, `text`; module
`e2store.reports.picture_files`), so both files show the same picture.

Every drawn piece is an SVG group `<g class="piece">` carrying `data-piece`,
`data-rotation` and, on a board, `data-x`/`data-y`/`data-cell`; its triangles carry
`data-side` (W, N, E, S) and `data-colour`, so tests and scripts can read a picture back
(`data-piece` is e2store's 0-based piece id).

Boards are labelled as the field labels them (../shared/notes/campaigns-in-the-field.md,
*Orientation*): rows by letters from the north, A..P on Eternity II, columns by numbers
1..W from the west, so cell (x, y) is `cell_name(x, y)`: (7, 8) is I8, row I (the 9th from
the north), column 8.  Past 26 rows the letters go on as a spreadsheet's columns do: Z,
AA, AB, ..., AZ, BA, ...  Tooltips name a cell that way and by (x, y), and number pieces
from 1 as board URLs and the official piece lists do.  Fixed cells (`fixed`: on
Eternity II's boards `e2store render board` and the explorer pass its official clues,
`e2store.web.pictures.field_clues`) are framed in black and white with a dot at the
centre, said in their tooltip and listed in a legend line under the board.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from e2store.errors import RenderError
from e2store.instance.model import SIDES, Instance
from e2store.reports.picture_files import (  # noqa: F401 - this module's public names too
    MAX_PNG_PIXELS,
    PICTURE_SUFFIXES,
    picture_format,
    svg_to_figure,
    write_picture,
)
from e2store.zones.geometry import n_slots, ring_offsets
from e2store.zones.zonemap import ZoneMap

CELL = 48  # side of one board cell, in SVG user units (pixels at PNG scale 1)
MARGIN = 12
TITLE = 24  # height of the title band
COORD = 16  # width of the coordinate bands above and left of a board
GAP = 10  # space between pieces in the pieces grid
LABEL = 14  # height of a piece's id label under it in the pieces grid

GREY_HEX = "#808080"
EDGE_HEX = "#202020"
FIXED_HEX = "#000000"  # the outer line of a fixed cell's frame (the inner one is white)
LEGEND = 18  # height of a legend line under a board
MISMATCH_HEX = "#e00000"  # a mismatched join of a partial board
EMPTY_HEX = "#f2f2f2"
EMPTY_EDGE_HEX = "#c8c8c8"
FONT = "DejaVu Sans, Arial, Helvetica, sans-serif"

# Colour ids 1..40: matplotlib's tab20 and tab20b without tab20's two greys (grey is the
# frame's colour) plus two from Paired, ordered so that the first ids, the ones small
# instances use, are the most distinct: tab20's strong colours, the darkest and the middle
# shades of tab20b, tab20's light colours, then the remaining tab20b shades.  Ids beyond 40
# cycle.
PALETTE: tuple[str, ...] = (
    # tab20, strong
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#bcbd22", "#17becf",
    # tab20b, darkest shade of each hue
    "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173",
    # tab20b, third shade
    "#6b6ecf", "#b5cf6b", "#e7ba52", "#d6616b", "#ce6dbd",
    # tab20, light
    "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5",
    "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5",
    # tab20b, second shade
    "#5254a3", "#8ca252", "#bd9e39", "#ad494a", "#a55194",
    # tab20b, lightest shade
    "#9c9ede", "#cedb9c", "#e7cb94", "#e7969c", "#de9ed6",
    # Paired
    "#6a3d9a", "#ffff99",
)

def colour_hex(colour: int) -> str:
    """Fill colour of a colour id: grey #808080 for 0, PALETTE[(id - 1) % 40] for id >= 1."""
    c = int(colour)
    if c < 0:
        raise RenderError(f"colour id {c} is negative (expected 0 for grey or a positive id)")
    return GREY_HEX if c == 0 else PALETTE[(c - 1) % len(PALETTE)]


def text_colour(fill: str) -> str:
    """Black or white, whichever reads better on `fill` (#rrggbb)."""
    r, g, b = (int(fill[i:i + 2], 16) for i in (1, 3, 5))
    return "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "#ffffff"


# --------------------------------------------------------------------------- cell names


def row_name(y: int) -> str:
    """The field's letters of row `y` (0 the north row): A..Z, then AA, AB, ..., AZ, BA, ...
    (bijective base 26, as a spreadsheet names its columns)."""
    n = int(y)
    if n < 0:
        raise RenderError(f"row {n} is negative (expected y >= 0, 0 the north row)")
    out = ""
    n += 1
    while n:
        n, k = divmod(n - 1, 26)
        out = chr(ord("A") + k) + out
    return out


def cell_name(x: int, y: int) -> str:
    """The field's name of cell (x, y): the row's letters, then the column counted from 1
    from the west; (7, 8) is I8 (row I, the 9th from the north; column 8)."""
    if int(x) < 0:
        raise RenderError(f"column {int(x)} is negative (expected x >= 0, 0 the west column)")
    return f"{row_name(y)}{int(x) + 1}"


def fixed_cells(fixed: Iterable | Mapping | None, width: int,
                height: int) -> dict[tuple[int, int], int | None]:
    """`fixed` (cell indices y*W+x, (x, y) pairs, or a mapping of either to the packed
    placement the cell is fixed to) as {(x, y): placement or None}; RenderError for a cell
    off the board."""
    if fixed is None:
        return {}
    items = fixed.items() if isinstance(fixed, Mapping) else ((c, None) for c in fixed)
    out: dict[tuple[int, int], int | None] = {}
    for cell, value in items:
        if isinstance(cell, int | np.integer):
            x, y = int(cell) % width if width else 0, int(cell) // width if width else 0
            ok = 0 <= int(cell) < width * height
        else:
            x, y = (int(v) for v in cell)
            ok = 0 <= x < width and 0 <= y < height
        if not ok:
            raise RenderError(f"fixed cell {cell!r} is off the {width}x{height} board "
                              f"(expected an index 0..{width * height - 1} or (x, y))")
        out[(x, y)] = None if value is None or int(value) < 0 else int(value)
    return out


def piece_text(placement: int | np.integer) -> str:
    """A packed placement as tooltips say it: the piece counted from 1 and its rotation."""
    p, r = divmod(int(placement), 4)
    return f"piece {p + 1}, rotation {r}"


# --------------------------------------------------------------------------- SVG building


def text_width(s: str, size: float, bold: bool = False) -> float:
    """A generous estimate of the width of `s` in a sans-serif font of `size` units."""
    return len(s) * size * (0.68 if bold else 0.62)


def _num(v: float | np.integer | np.floating) -> str:
    """Short text of a coordinate: integers without a point, others to 2 decimals."""
    f = round(float(v), 2)
    return str(int(f)) if f == int(f) else f"{f:g}"


def _attrs(attrs: dict[str, Any]) -> str:
    parts = []
    for k, v in attrs.items():
        if v is None:
            continue
        if isinstance(v, float | int | np.integer | np.floating) and not isinstance(v, bool):
            v = _num(v)
        parts.append(f" {k}={quoteattr(str(v))}")
    return "".join(parts)


class _Svg:
    """A list of SVG lines; `text()` gives the finished document."""

    def __init__(self, width: float, height: float, title: str | None = None):
        if title:  # widen the picture rather than cut the title
            width = max(width, 2 * MARGIN + text_width(title, 15, bold=True))
        self.width = width
        self.height = height
        self.lines: list[str] = []
        self.rect(0, 0, width, height, fill="#ffffff", stroke="none", **{"class": "background"})
        if title:
            self.text(MARGIN, MARGIN + TITLE / 2 - 2, title, size=15, anchor="start",
                      weight="bold", **{"class": "title"})

    def open(self, **attrs: Any) -> None:
        self.lines.append(f"<g{_attrs(attrs)}>")

    def close(self) -> None:
        self.lines.append("</g>")

    def tooltip(self, text: str) -> None:
        self.lines.append(f"<title>{escape(text)}</title>")

    def rect(self, x: float, y: float, w: float, h: float, **attrs: Any) -> None:
        self.lines.append(f"<rect{_attrs({'x': x, 'y': y, 'width': w, 'height': h, **attrs})}/>")

    def polygon(self, points: Sequence[tuple[float, float]], **attrs: Any) -> None:
        pts = " ".join(f"{_num(px)},{_num(py)}" for px, py in points)
        self.lines.append(f"<polygon{_attrs({'points': pts, **attrs})}/>")

    def text(self, x: float, y: float, s: str, *, size: float = 11, anchor: str = "middle",
             weight: str | None = None, fill: str | None = None, **attrs: Any) -> None:
        a = {"x": x, "y": y, "font-size": size, "text-anchor": anchor,
             "dominant-baseline": "central", "font-weight": weight, "fill": fill, **attrs}
        self.lines.append(f"<text{_attrs(a)}>{escape(s)}</text>")

    def text_doc(self) -> str:
        w, h = _num(self.width), _num(self.height)
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{w}" '
                f'height="{h}" viewBox="0 0 {w} {h}" font-family={quoteattr(FONT)}>')
        return "\n".join([head, *self.lines, "</svg>"]) + "\n"


def _triangles(x0: float, y0: float, s: float) -> list[list[tuple[float, float]]]:
    """The W, N, E, S triangles of the square with north-west corner (x0, y0) and side s."""
    c = (x0 + s / 2, y0 + s / 2)
    nw, ne, se, sw = (x0, y0), (x0 + s, y0), (x0 + s, y0 + s), (x0, y0 + s)
    return [[nw, c, sw], [nw, ne, c], [ne, se, c], [sw, c, se]]


def _piece(svg: _Svg, x0: float, y0: float, s: float, colours: Sequence[int], piece: int,
           rotation: int, tooltip: str, **attrs: Any) -> None:
    """Draw one piece showing `colours` on W, N, E, S as four triangles in a group."""
    svg.open(**{"class": "piece", "data-piece": piece, "data-rotation": rotation, **attrs,
                "stroke": EDGE_HEX, "stroke-width": 0.8, "stroke-linejoin": "round"})
    svg.tooltip(tooltip + ": " + " ".join(f"{SIDES[k]} {int(c)}" for k, c in enumerate(colours)))
    for k, pts in enumerate(_triangles(x0, y0, s)):
        svg.polygon(pts, fill=colour_hex(colours[k]),
                    **{"class": "tri", "data-side": SIDES[k], "data-colour": int(colours[k])})
    svg.close()


def _empty_cell(svg: _Svg, x0: float, y0: float, s: float, tooltip: str | None = None,
                **attrs: Any) -> None:
    svg.rect(x0, y0, s, s, fill=EMPTY_HEX, stroke=EMPTY_EDGE_HEX, **{"stroke-width": 0.8},
             **{"class": "empty", **attrs})
    if tooltip:  # the rect's own <title>, so hovering the empty square names it
        svg.lines[-1] = svg.lines[-1][:-2] + f"><title>{escape(tooltip)}</title></rect>"


def _coords(svg: _Svg, ox: float, oy: float, s: float, xs: range, ys: range,
            col0: int = 0, row0: int = 0) -> None:
    """The field's labels: column numbers from 1 above the cells, row letters from A left
    of them (`cell_name`); cell (col0, row0) is drawn at (ox, oy)."""
    svg.open(**{"class": "coords", "fill": "#555555", "font-size": 10})
    for x in xs:
        svg.text(ox + (x - col0 + 0.5) * s, oy - COORD / 2, str(x + 1), size=10,
                 **{"class": "col", "data-x": str(x)})
    for y in ys:
        svg.text(ox - COORD / 2, oy + (y - row0 + 0.5) * s, row_name(y), size=10,
                 **{"class": "row", "data-y": str(y)})
    svg.close()


def _fixed_mark(svg: _Svg, x0: float, y0: float, s: float, tooltip: str,
                **attrs: Any) -> None:
    """A fixed cell's mark over its piece: a black and white frame just inside the cell and
    a white dot ringed in black at its centre (class `fixed`)."""
    svg.open(**{"class": "fixed", **attrs})
    svg.tooltip(tooltip)
    svg.rect(x0 + 2.5, y0 + 2.5, s - 5, s - 5, fill="none", stroke=FIXED_HEX,
             **{"stroke-width": 3.5})
    svg.rect(x0 + 2.5, y0 + 2.5, s - 5, s - 5, fill="none", stroke="#ffffff",
             **{"stroke-width": 1.2})
    c, k = s / 2, s * 0.11
    svg.polygon([(x0 + c - k, y0 + c), (x0 + c, y0 + c - k), (x0 + c + k, y0 + c),
                 (x0 + c, y0 + c + k)], fill="#ffffff", stroke=FIXED_HEX,
                **{"stroke-width": 1.5})
    svg.close()


def _check_placements(inst: Instance, values: np.ndarray, what: str) -> None:
    bad = (values < -1) | (values >= 4 * inst.n_pieces)
    if bad.any():
        v = int(values[bad].flat[0])
        raise RenderError(f"{what}: placement {v} is not -1 (empty) or a packed piece*4+r "
                          f"(expected -1 <= value < {4 * inst.n_pieces})")


# --------------------------------------------------------------------------- pictures


def svg_pieces(inst: Instance, *, columns: int | None = None, title: str | None = None) -> str:
    """All pieces of `inst`, unrotated, in id order on a grid (as wide as the board), ids below.

    Piece p is the group with id `piece-p`.
    """
    n = inst.n_pieces
    cols = columns or (inst.width if inst.width * inst.height == n else
                       max(1, int(np.ceil(np.sqrt(n)))))
    cols = max(1, min(cols, max(n, 1)))
    rows = max(1, -(-n // cols))
    s = CELL
    width = 2 * MARGIN + cols * s + (cols - 1) * GAP
    height = 2 * MARGIN + TITLE + rows * (s + LABEL) + (rows - 1) * GAP
    if title is None:
        title = f"{inst.name}: {n} pieces ({inst.width}x{inst.height} board)"
    svg = _Svg(width, height, title)
    for p in range(n):
        r, c = divmod(p, cols)
        x0 = MARGIN + c * (s + GAP)
        y0 = MARGIN + TITLE + r * (s + LABEL + GAP)
        _piece(svg, x0, y0, s, inst.pieces[p], p, 0, f"piece {p + 1} (id {p})",
               id=f"piece-{p}")
        svg.text(x0 + s / 2, y0 + s + LABEL / 2 + 1, str(p), size=10, fill="#333333",
                 **{"class": "label"})
    return svg.text_doc()


def svg_board(inst: Instance, placements: np.ndarray | None = None, *,
              title: str | None = None, mismatched=(),
              fixed: Iterable | Mapping | None = None, fixed_label: str = "fixed") -> str:
    """A board: `placements` (H x W packed piece*4+r, -1 empty; default the solution).

    The piece on cell (x, y) is the group with id `cell-x-y` (`data-cell` its field name,
    `cell_name`); empty cells are light squares.  Axes and tooltips follow the field: rows
    A.. from the north, columns 1.. from the west, pieces counted from 1 (module
    docstring).  `mismatched` joins ((x, y), "E" or "S": the join on that side of the cell)
    are drawn as thick red lines (class `mismatch`).  `fixed` cells (indices y*W+x, (x, y)
    pairs, or a mapping of either to the placement the cell is fixed to: `field_clues`)
    are framed (class `fixed`), said so in their tooltip as `fixed_label` ("clue" for
    Eternity II's) and listed in a legend line.  Raises RenderError when `placements` is
    None and the instance has no solution.
    """
    if placements is None:
        if inst.solution is None:
            raise RenderError(f"instance {inst.name!r} has no solution to draw "
                              "(expected a piece file with a solution)")
        placements = inst.solution
    grid = np.asarray(placements, dtype=np.int64)
    if grid.shape != (inst.height, inst.width):
        raise RenderError(f"placements of shape {grid.shape} do not fit the "
                          f"{inst.width}x{inst.height} board (expected ({inst.height}, "
                          f"{inst.width}): rows north to south)")
    _check_placements(inst, grid, "board")
    marks = fixed_cells(fixed, inst.width, inst.height)
    table = inst.rotated_table()
    s = CELL
    ox, oy = MARGIN + COORD, MARGIN + TITLE + COORD
    legend = ""
    if marks:
        names = ", ".join(cell_name(x, y) for x, y in sorted(marks, key=lambda c: c[::-1]))
        legend = f"framed, dot at the centre: {fixed_label} cells {names}"
    width = max(ox + inst.width * s + MARGIN,
                2 * MARGIN + text_width(legend, 10) if legend else 0)
    height = oy + inst.height * s + (LEGEND if legend else 0) + MARGIN
    if title is None:
        n = int((grid >= 0).sum())
        title = f"{inst.name}: {inst.width}x{inst.height} board, {n} pieces placed"
    svg = _Svg(width, height, title)
    _coords(svg, ox, oy, s, range(inst.width), range(inst.height))
    tips: dict[tuple[int, int], str] = {}
    for y in range(inst.height):
        for x in range(inst.width):
            v = int(grid[y, x])
            x0, y0 = ox + x * s, oy + y * s
            name = cell_name(x, y)
            tip = f"{name} ({x}, {y}): " + ("empty" if v < 0 else piece_text(v))
            if (x, y) in marks:
                want = marks[(x, y)]
                tip += f"; {fixed_label} cell"
                if want is not None and want != v:
                    tip += f" of {piece_text(want)} (not placed here)"
                tips[(x, y)] = tip
            if v < 0:
                _empty_cell(svg, x0, y0, s, tip, **{"data-x": x, "data-y": y,
                                                    "data-cell": name})
                continue
            p, r = divmod(v, 4)
            _piece(svg, x0, y0, s, table[v], p, r, tip, id=f"cell-{x}-{y}",
                   **{"data-x": x, "data-y": y, "data-cell": name})
    for (x, y), tip in sorted(tips.items(), key=lambda t: t[0][::-1]):
        _fixed_mark(svg, ox + x * s, oy + y * s, s, tip,
                    **{"data-x": x, "data-y": y, "data-cell": cell_name(x, y)})
    svg.rect(ox, oy, inst.width * s, inst.height * s, fill="none", stroke=EDGE_HEX,
             **{"stroke-width": 2, "class": "outline"})
    for (x, y), side in mismatched:  # a thin red bar along the join
        x0, y0 = ox + (x + 1) * s, oy + (y + 1) * s
        if side == "E":
            svg.rect(x0 - 2, y0 - s + 3, 4, s - 6, fill=MISMATCH_HEX, stroke="none",
                     **{"class": "mismatch"})
        else:
            svg.rect(x0 - s + 3, y0 - 2, s - 6, 4, fill=MISMATCH_HEX, stroke="none",
                     **{"class": "mismatch"})
    if legend:
        svg.text(MARGIN, oy + inst.height * s + LEGEND / 2 + 4, legend, size=10,
                 anchor="start", fill="#333333", **{"class": "legend"})
    return svg.text_doc()


def _notch(cx: float, cy: float, s: float, side: int) -> list[tuple[float, float]]:
    """A small triangle just inside `side` of the cell centred on (cx, cy), pointing inwards."""
    k, e = s * 0.09, s / 2 - 5
    pts = [(-k, -e), (k, -e), (0.0, -e + k)]  # on the north side
    for _ in range((side - 1) % 4):  # a clockwise quarter turn: (dx, dy) -> (-dy, dx)
        pts = [(-dy, dx) for dx, dy in pts]
    return [(cx + dx, cy + dy) for dx, dy in pts]


def svg_zone_map(zm: ZoneMap, *, title: str | None = None) -> str:
    """The zones of a board: each cell coloured by its zone, labelled with the zone id and,
    as in `e2store zones`, a letter b, c, d for 1, 2, 3 clockwise quarter turns of the zone's
    canonical cell (drawn with a thick border).  A small wedge marks the side the canonical
    cell's north side turns to.  Cell (x, y) is the group with id `zone-x-y`.
    """
    s = CELL
    ox, oy = MARGIN + COORD, MARGIN + TITLE + COORD
    legend = 18
    legend_text = "thick border: canonical cell; b, c, d: 1, 2, 3 clockwise quarter turns"
    width = max(ox + zm.width * s + MARGIN, 2 * MARGIN + text_width(legend_text, 10))
    height = oy + zm.height * s + legend + MARGIN
    if title is None:
        title = (f"zones of the {zm.width}x{zm.height} board, hamming {zm.hamming}: "
                 f"{len(zm.zones)} zones")
    svg = _Svg(width, height, title)
    _coords(svg, ox, oy, s, range(zm.width), range(zm.height))
    canon = {(z.x, z.y) for z in zm.zones}
    for y in range(zm.height):
        for x in range(zm.width):
            z, r = int(zm.zone_of[y, x]), int(zm.rotation_of[y, x])
            fill = colour_hex(z + 1)
            ink = text_colour(fill)
            x0, y0 = ox + x * s, oy + y * s
            label = f"{z}{'abcd'[r] if r else ''}"
            svg.open(**{"class": "zone-cell", "id": f"zone-{x}-{y}", "data-x": x, "data-y": y,
                        "data-zone": z, "data-rotation": r})
            svg.tooltip(f"{cell_name(x, y)} ({x}, {y}): zone {z}, rotation {r}")
            svg.rect(x0, y0, s, s, fill=fill, stroke=EDGE_HEX, **{"stroke-width": 0.8})
            svg.polygon(_notch(x0 + s / 2, y0 + s / 2, s, (1 + r) % 4), fill=ink,
                        stroke="none", **{"class": "notch"})
            svg.text(x0 + s / 2, y0 + s / 2, label, size=12, fill=ink, weight="bold",
                     **{"class": "label"})
            svg.close()
    for cx, cy in sorted(canon):
        svg.rect(ox + cx * s + 1.5, oy + cy * s + 1.5, s - 3, s - 3, fill="none",
                 stroke="#000000", **{"stroke-width": 3, "class": "canonical"})
    svg.rect(ox, oy, zm.width * s, zm.height * s, fill="none", stroke=EDGE_HEX,
             **{"stroke-width": 2, "class": "outline"})
    svg.text(MARGIN, oy + zm.height * s + legend / 2 + 4, legend_text, size=10,
             anchor="start", fill="#333333", **{"class": "legend"})
    return svg.text_doc()


def svg_corolle(inst: Instance, hamming: int, row: Sequence[int] | np.ndarray, x: int, y: int,
                *, title: str | None = None) -> str:
    """One corolle (packed placements per slot in ring order, -1 off the board) centred on
    (x, y), drawn in place on the board's outline: empty board cells are light, the centre
    has a thick border and the diamond's off-board cells are dashed.  Slot i is the group
    with id `slot-i`.
    """
    h = int(hamming)
    if h < 0:
        raise RenderError(f"hamming {h} is negative (expected h >= 0)")
    if not (0 <= x < inst.width and 0 <= y < inst.height):
        raise RenderError(f"cell ({x}, {y}) is off the {inst.width}x{inst.height} board "
                          f"(expected 0 <= x < {inst.width} and 0 <= y < {inst.height})")
    vals = np.asarray(row, dtype=np.int64).reshape(-1)
    if len(vals) != n_slots(h):
        raise RenderError(f"a hamming-{h} corolle has {n_slots(h)} slots, got {len(vals)} "
                          "values (expected one packed placement or -1 per slot, ring order)")
    _check_placements(inst, vals, "corolle")
    off = ring_offsets(h)
    xs, ys = x + off[:, 0], y + off[:, 1]
    on = (xs >= 0) & (xs < inst.width) & (ys >= 0) & (ys < inst.height)
    if (vals[~on] >= 0).any():
        i = int(np.nonzero(~on & (vals >= 0))[0][0])
        raise RenderError(f"corolle slot {i} at ({int(xs[i])}, {int(ys[i])}) is off the board "
                          "but holds a piece (expected -1)")
    x_lo, x_hi = min(0, int(xs.min())), max(inst.width - 1, int(xs.max()))
    y_lo, y_hi = min(0, int(ys.min())), max(inst.height - 1, int(ys.max()))
    s = CELL
    ox, oy = MARGIN + COORD, MARGIN + TITLE + COORD
    width = ox + (x_hi - x_lo + 1) * s + MARGIN
    height = oy + (y_hi - y_lo + 1) * s + MARGIN
    if title is None:
        title = f"{inst.name}: hamming-{h} corolle at {cell_name(x, y)} ({x}, {y})"
    svg = _Svg(width, height, title)
    bx, by = ox - x_lo * s, oy - y_lo * s  # where board cell (0, 0) is drawn
    _coords(svg, ox, oy, s, range(inst.width), range(inst.height), x_lo, y_lo)
    svg.open(**{"class": "board"})
    for cy in range(inst.height):
        for cx in range(inst.width):
            _empty_cell(svg, bx + cx * s, by + cy * s, s, None, **{"data-x": cx, "data-y": cy})
    svg.close()
    table = inst.rotated_table()
    for i, v in enumerate(vals):
        cx, cy = int(xs[i]), int(ys[i])
        x0, y0 = bx + cx * s, by + cy * s
        if not on[i]:
            svg.rect(x0 + 1, y0 + 1, s - 2, s - 2, fill="none", stroke="#999999",
                     **{"stroke-width": 1, "stroke-dasharray": "4 3", "class": "off-board",
                        "data-slot": i})
        elif v >= 0:
            p, r = divmod(int(v), 4)
            _piece(svg, x0, y0, s, table[v], p, r,
                   f"slot {i}, {cell_name(cx, cy)} ({cx}, {cy}): {piece_text(v)}",
                   id=f"slot-{i}", **{"data-slot": i, "data-x": cx, "data-y": cy,
                                      "data-cell": cell_name(cx, cy)})
    svg.rect(bx, by, inst.width * s, inst.height * s, fill="none", stroke=EDGE_HEX,
             **{"stroke-width": 2, "class": "outline"})
    svg.rect(bx + x * s, by + y * s, s, s, fill="none", stroke="#000000",
             **{"stroke-width": 3.5, "class": "centre"})
    return svg.text_doc()
