"""Pictures to files: SVG text (`e2store.reports.render`) written as SVG or PNG.

PNG pictures are drawn with matplotlib's Agg renderer from the SVG text itself
(`svg_to_figure` understands the small subset of SVG the drawing functions write: `g`,
`rect`, `polygon`, `text`), so both files show the same picture; `write_picture` writes
either atomically, by the file's suffix.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from e2store.errors import RenderError
from e2store.files import atomic_write

PICTURE_SUFFIXES = (".svg", ".png")

_SVG_NS = "{http://www.w3.org/2000/svg}"
_INHERITED = ("fill", "stroke", "stroke-width", "stroke-dasharray", "font-size", "font-weight",
              "text-anchor", "dominant-baseline")
_PX_TO_PT = 72 / 100  # at scale 1 a figure has 100 pixels per inch


def _floats(text: str) -> list[float]:
    return [float(t) for t in re.split(r"[\s,]+", text.strip()) if t]


MAX_PNG_PIXELS = 1 << 27  # 134 M pixels, 512 MiB of RGBA: Eternity II's board at scale 14


def svg_to_figure(svg: str, scale: float = 1.0):
    """A matplotlib Figure showing `svg` (the SVG subset `e2store.reports.render` writes),
    `scale` pixels per SVG unit: saved as PNG it is round(width * scale) x round(height *
    scale) pixels.
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
                          f"{MAX_PNG_PIXELS:,} pixels (lower the scale, or write an .svg)"
                          ).about("scale")
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
        style.update({k: a for k in _INHERITED if (a := el.get(k)) is not None})
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
