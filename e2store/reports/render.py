"""Pictures: an instance's pieces, a board, a zone map, a corolle (SVG text; PNG via matplotlib).

Each piece is a square cut along its diagonals into four triangles W, N, E, S (docs/design.md
section 1), each filled with the colour of its colour id (`colour_hex`: grey for 0, then a
fixed categorical palette).  The drawing functions (`svg_pieces`, `svg_board`,
`svg_zone_map`, `svg_corolle`) only build and return SVG text; `write_picture` writes it,
atomically, as SVG or PNG by the file suffix.  PNG pictures are drawn with matplotlib's Agg
renderer from the same SVG text (`svg_to_figure` understands the small subset of SVG these
functions write: `g`, `rect`, `polygon`, `text`), so both files show the same picture.

Every drawn piece is an SVG group `<g class="piece">` carrying `data-piece`,
`data-rotation` and, on a board, `data-x`/`data-y`; its triangles carry `data-side`
(W, N, E, S) and `data-colour`, so tests and scripts can read a picture back.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from e2store.errors import RenderError
from e2store.files import atomic_write
from e2store.instance.model import SIDES, Instance
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

PICTURE_SUFFIXES = (".svg", ".png")


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


# --------------------------------------------------------------------------- SVG building


def text_width(s: str, size: float, bold: bool = False) -> float:
    """A generous estimate of the width of `s` in a sans-serif font of `size` units."""
    return len(s) * size * (0.68 if bold else 0.62)


def _num(v: float) -> str:
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


def _empty_cell(svg: _Svg, x0: float, y0: float, s: float, **attrs: Any) -> None:
    svg.rect(x0, y0, s, s, fill=EMPTY_HEX, stroke=EMPTY_EDGE_HEX, **{"stroke-width": 0.8},
             **{"class": "empty", **attrs})


def _coords(svg: _Svg, ox: float, oy: float, s: float, xs: range, ys: range,
            col0: int = 0, row0: int = 0) -> None:
    """Column numbers above and row numbers left of the cells; cell (col0, row0) at (ox, oy)."""
    svg.open(**{"class": "coords", "fill": "#555555", "font-size": 10})
    for x in xs:
        svg.text(ox + (x - col0 + 0.5) * s, oy - COORD / 2, str(x), size=10)
    for y in ys:
        svg.text(ox - COORD / 2, oy + (y - row0 + 0.5) * s, str(y), size=10)
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
        _piece(svg, x0, y0, s, inst.pieces[p], p, 0, f"piece {p}", id=f"piece-{p}")
        svg.text(x0 + s / 2, y0 + s + LABEL / 2 + 1, str(p), size=10, fill="#333333",
                 **{"class": "label"})
    return svg.text_doc()


def svg_board(inst: Instance, placements: np.ndarray | None = None, *,
              title: str | None = None, mismatched=()) -> str:
    """A board: `placements` (H x W packed piece*4+r, -1 empty; default the solution).

    The piece on cell (x, y) is the group with id `cell-x-y`; empty cells are light squares.
    `mismatched` joins ((x, y), "E" or "S": the join on that side of the cell) are drawn as
    thick red lines (class `mismatch`).  Raises RenderError when `placements` is None and
    the instance has no solution.
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
    table = inst.rotated_table()
    s = CELL
    ox, oy = MARGIN + COORD, MARGIN + TITLE + COORD
    width = ox + inst.width * s + MARGIN
    height = oy + inst.height * s + MARGIN
    if title is None:
        n = int((grid >= 0).sum())
        title = f"{inst.name}: {inst.width}x{inst.height} board, {n} pieces placed"
    svg = _Svg(width, height, title)
    _coords(svg, ox, oy, s, range(inst.width), range(inst.height))
    for y in range(inst.height):
        for x in range(inst.width):
            v = int(grid[y, x])
            x0, y0 = ox + x * s, oy + y * s
            if v < 0:
                _empty_cell(svg, x0, y0, s, **{"data-x": x, "data-y": y})
                continue
            p, r = divmod(v, 4)
            _piece(svg, x0, y0, s, table[v], p, r, f"({x}, {y}): piece {p} r{r}",
                   id=f"cell-{x}-{y}", **{"data-x": x, "data-y": y})
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
            svg.tooltip(f"({x}, {y}): zone {z}, rotation {r}")
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
        title = f"{inst.name}: hamming-{h} corolle at ({x}, {y})"
    svg = _Svg(width, height, title)
    bx, by = ox - x_lo * s, oy - y_lo * s  # where board cell (0, 0) is drawn
    _coords(svg, ox, oy, s, range(inst.width), range(inst.height), x_lo, y_lo)
    svg.open(**{"class": "board"})
    for cy in range(inst.height):
        for cx in range(inst.width):
            _empty_cell(svg, bx + cx * s, by + cy * s, s, **{"data-x": cx, "data-y": cy})
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
            _piece(svg, x0, y0, s, table[v], p, r, f"slot {i} ({cx}, {cy}): piece {p} r{r}",
                   id=f"slot-{i}", **{"data-slot": i, "data-x": cx, "data-y": cy})
    svg.rect(bx, by, inst.width * s, inst.height * s, fill="none", stroke=EDGE_HEX,
             **{"stroke-width": 2, "class": "outline"})
    svg.rect(bx + x * s, by + y * s, s, s, fill="none", stroke="#000000",
             **{"stroke-width": 3.5, "class": "centre"})
    return svg.text_doc()


# --------------------------------------------------------------------------- PNG and files

_SVG_NS = "{http://www.w3.org/2000/svg}"
_INHERITED = ("fill", "stroke", "stroke-width", "stroke-dasharray", "font-size", "font-weight",
              "text-anchor", "dominant-baseline")
_PX_TO_PT = 72 / 100  # at scale 1 a figure has 100 pixels per inch


def _floats(text: str) -> list[float]:
    return [float(t) for t in re.split(r"[\s,]+", text.strip()) if t]


MAX_PNG_PIXELS = 1 << 27  # 134 M pixels, 512 MiB of RGBA: Eternity II's board at scale 14


def svg_to_figure(svg: str, scale: float = 1.0):
    """A matplotlib Figure showing `svg` (the SVG subset this module writes), `scale` pixels
    per SVG unit: saved as PNG it is round(width * scale) x round(height * scale) pixels.
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Polygon, Rectangle

    if not scale > 0:
        raise RenderError(f"scale {scale} is not positive (expected pixels per SVG unit > 0)")
    try:
        root = ET.fromstring(svg)
    except ET.ParseError as exc:
        raise RenderError(f"the picture is not well-formed SVG: {exc}") from None
    if root.tag != _SVG_NS + "svg":
        raise RenderError(f"the picture's root element is {root.tag!r} (expected an SVG <svg>)")
    w, h = float(root.get("width", "0")), float(root.get("height", "0"))
    if not (w > 0 and h > 0):
        raise RenderError("the SVG has no positive width and height")
    dpi = 100.0 * scale
    wpx, hpx = max(1, round(w * scale)), max(1, round(h * scale))
    if wpx * hpx > MAX_PNG_PIXELS:  # Agg would take 4 bytes a pixel, then run out of memory
        raise RenderError(f"a PNG of {wpx:,} x {hpx:,} pixels is larger than "
                          f"{MAX_PNG_PIXELS:,} pixels (lower --scale, or write an .svg)")
    # a quarter pixel more than wanted: Agg truncates the canvas size to whole pixels
    fig = Figure(figsize=((wpx + 0.25) / dpi, (hpx + 0.25) / dpi), dpi=dpi)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_axis_off()
    ax.set_xlim(0, w)
    ax.set_ylim(h, 0)
    order = [0]

    def paint(style: dict[str, str]) -> dict[str, Any]:
        fill = style.get("fill", "#000000")
        stroke = style.get("stroke", "none")
        lw = float(style.get("stroke-width", "1")) * _PX_TO_PT
        order[0] += 1
        return {"facecolor": "none" if fill == "none" else fill,
                "edgecolor": "none" if stroke == "none" else stroke,
                "linewidth": lw if stroke != "none" else 0.0,
                "linestyle": "--" if style.get("stroke-dasharray") else "-",
                "joinstyle": "round", "zorder": order[0], "antialiased": True}

    def walk(el: ET.Element, inherited: dict[str, str]) -> None:
        style = dict(inherited)
        style.update({k: el.get(k) for k in _INHERITED if el.get(k) is not None})
        tag = el.tag.removeprefix(_SVG_NS)
        if tag in ("svg", "g"):
            for child in el:
                walk(child, style)
        elif tag == "rect":
            x, y = float(el.get("x", "0")), float(el.get("y", "0"))
            rw, rh = float(el.get("width", "0")), float(el.get("height", "0"))
            ax.add_patch(Rectangle((x, y), rw, rh, **paint(style)))
        elif tag == "polygon":
            v = _floats(el.get("points", ""))
            pts = list(zip(v[0::2], v[1::2], strict=False))
            if pts:
                ax.add_patch(Polygon(pts, closed=True, **paint(style)))
        elif tag == "text":
            order[0] += 1
            anchor = {"start": "left", "middle": "center", "end": "right"}
            central = style.get("dominant-baseline") in ("central", "middle")
            ax.text(float(el.get("x", "0")), float(el.get("y", "0")), "".join(el.itertext()),
                    ha=anchor.get(style.get("text-anchor", "start"), "left"),
                    va="center" if central else "baseline",
                    fontsize=float(style.get("font-size", "16")) * _PX_TO_PT,
                    fontweight="bold" if style.get("font-weight") == "bold" else "normal",
                    color=style.get("fill", "#000000"), zorder=order[0], clip_on=False)
        elif tag in ("title", "desc", "metadata"):
            return
        else:
            raise RenderError(f"cannot draw SVG element <{tag}> as PNG "
                              "(expected the g, rect, polygon and text this module writes)")

    walk(root, {})
    return fig


def picture_format(path: str | Path) -> str:
    """'svg' or 'png' from the file suffix; RenderError for any other."""
    suffix = Path(path).suffix.lower()
    if suffix not in PICTURE_SUFFIXES:
        raise RenderError(f"{path}: cannot tell the picture type from the suffix {suffix!r} "
                          "(expected .svg or .png)")
    return suffix[1:]


def write_picture(picture, path: str | Path, *, scale: float = 1.0) -> Path:
    """Write `picture` (SVG text from this module, or a matplotlib Figure) to `path`, as SVG
    or PNG by its suffix, atomically (temp file in the same directory, then rename).

    A PNG of SVG text is round(width * scale) x round(height * scale) pixels.
    """
    path = Path(path)
    fmt = picture_format(path)
    if isinstance(picture, str):
        if fmt == "svg":
            data = picture.encode("utf-8")
            atomic_write(path, lambda fh: fh.write(data))
            return path
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        canvas = FigureCanvasAgg(svg_to_figure(picture, scale))
        atomic_write(path, lambda fh: canvas.print_png(fh))
        return path
    if not hasattr(picture, "savefig"):
        raise RenderError(f"cannot write a {type(picture).__name__} as a picture "
                          "(expected SVG text or a matplotlib Figure)")
    dpi = picture.dpi * scale
    atomic_write(path, lambda fh: picture.savefig(fh, format=fmt, dpi=dpi))
    return path
