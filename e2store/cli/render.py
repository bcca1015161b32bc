"""Picture commands: `e2store render pieces|board|zones|corolle ... -o FILE.svg|FILE.png`."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import click
import numpy as np

from e2store.cli.instance import Size, _instance_arg, _size_cb, instance_options, load_instance
from e2store.corolles.enumerate import iter_corolles
from e2store.errors import RenderError
from e2store.instance.model import Instance
from e2store.reports.render import (
    picture_format,
    svg_board,
    svg_corolle,
    svg_pieces,
    svg_zone_map,
    write_picture,
)
from e2store.zones.zonemap import zone_map


def nth_corolle(inst: Instance, x: int, y: int, hamming: int, index: int) -> np.ndarray:
    """The `index`-th corolle (0-based, enumeration order) at (x, y): packed placements per
    slot, -1 off the board.  RenderError when the cell has `index` corolles or fewer.
    """
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


def _output_cb(ctx, param, value: Path) -> Path:
    try:
        picture_format(value)
    except RenderError as exc:
        raise click.BadParameter(str(exc)) from None
    return value


def _cell_cb(ctx, param, value: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*,\s*(\d+)\s*", value)
    if not m:
        raise click.BadParameter(f"bad cell {value!r}: expected X,Y such as 2,1")
    return int(m.group(1)), int(m.group(2))


def _picture_options(f: Callable) -> Callable:
    """-o/--output (suffix .svg or .png), --scale and --title, passed as output, scale, title."""
    f = click.option("--title", default=None,
                     help="Caption above the picture (default: a description; '' for none).")(f)
    f = click.option("--scale", type=click.FloatRange(min=0, min_open=True), default=1.0,
                     show_default=True,
                     help="PNG pixels per picture unit (a board cell is 48 units).")(f)
    f = click.option("-o", "--output", required=True, callback=_output_cb,
                     type=click.Path(dir_okay=False, path_type=Path),
                     help="Picture file, .svg or .png (written atomically).")(f)
    return f


def _write(svg: str, output: Path, scale: float) -> None:
    write_picture(svg, output, scale=scale)
    click.echo(f"wrote {output}")


@click.group("render", context_settings={"help_option_names": ["-h", "--help"]})
def render() -> None:
    """Draw pictures (SVG or PNG, chosen by the output file's suffix).

    Each piece is a square cut into four triangles W, N, E, S, each in the colour of its
    colour id (grey for 0).
    """


@render.command("pieces")
@_instance_arg
@instance_options
@_picture_options
@click.option("--columns", type=click.IntRange(min=1), default=None,
              help="Pieces per row (default: the board width).")
def render_pieces(instance: Path, fmt: str, sides: str | None, size: Size | None,
                  output: Path, scale: float, title: str | None, columns: int | None) -> None:
    """All pieces of INSTANCE, unrotated, in id order, each labelled with its id."""
    inst = load_instance(instance, fmt, sides, size)
    _write(svg_pieces(inst, columns=columns, title=title), output, scale)


@render.command("board")
@_instance_arg
@instance_options
@_picture_options
@click.option("--solution/--empty", "solution", default=True, show_default=True,
              help="Draw the instance's solution, or the empty board.")
def render_board(instance: Path, fmt: str, sides: str | None, size: Size | None,
                 output: Path, scale: float, title: str | None, solution: bool) -> None:
    """The board of INSTANCE with its solution (an error if the file has none)."""
    inst = load_instance(instance, fmt, sides, size)
    if solution:
        if inst.solution is None:
            raise RenderError(f"{instance}: the instance has no solution to draw "
                              "(expected a piece file with a solution, or use --empty)")
        grid = inst.solution
    else:
        grid = np.full((inst.height, inst.width), -1, dtype=np.int64)
    _write(svg_board(inst, grid, title=title), output, scale)


@render.command("zones")
@click.option("--size", "size", required=True, callback=_size_cb, metavar="N|WxH",
              help="Board size: N (N x N) or WxH.")
@click.option("--hamming", "hamming", type=click.IntRange(min=0), required=True,
              help="Corolle radius h (Manhattan distance from the centre).")
@_picture_options
def render_zones(size: Size, hamming: int, output: Path, scale: float,
                 title: str | None) -> None:
    """The zone map of a board: zone id and rotation letter (b, c, d) in every cell."""
    zm = zone_map(size[0], size[1], hamming)
    _write(svg_zone_map(zm, title=title), output, scale)


@render.command("corolle")
@_instance_arg
@instance_options
@click.option("--hamming", "hamming", type=click.IntRange(min=0), required=True,
              help="Corolle radius h (Manhattan distance from the centre).")
@click.option("--at", "at", required=True, callback=_cell_cb, metavar="X,Y",
              help="Centre cell of the corolle.")
@click.option("--index", "index", type=click.IntRange(min=0), default=0, show_default=True,
              help="Which corolle: 0-based, in enumeration (depth-first) order.")
@_picture_options
def render_corolle(instance: Path, fmt: str, sides: str | None, size: Size | None,
                   hamming: int, at: tuple[int, int], index: int, output: Path, scale: float,
                   title: str | None) -> None:
    """The INDEX-th corolle at X,Y, drawn in place on the board's outline."""
    inst = load_instance(instance, fmt, sides, size)
    x, y = at
    row = nth_corolle(inst, x, y, hamming, index)
    if title is None:
        title = f"{inst.name}: hamming-{hamming} corolle {index} at ({x}, {y})"
    _write(svg_corolle(inst, hamming, row, x, y, title=title), output, scale)


COMMANDS = [render]
