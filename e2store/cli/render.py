"""Picture commands: `e2store render pieces|board|zones|corolle ... -o FILE.svg|FILE.png`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from e2store.cli.command import Group
from e2store.cli.options import (
    CELL,
    INDEX,
    SIDE,
    SIZE,
    FiniteFloat,
    Size,
    board_size,
    hamming_option,
    instance_argument,
    instance_options,
    load_instance,
    output_option,
)
from e2store.instance.parsing import shown_path
from e2store.reports.drawings import DEFAULT_SCALE, MAX_SCALE


def _output_cb(ctx, param, value: Path) -> Path:
    from e2store.errors import RenderError
    from e2store.reports.render import picture_format

    if value is None:
        return value
    try:
        picture_format(value)
    except RenderError as exc:
        raise click.BadParameter(str(exc)) from None
    return value


def _picture_options(f: Callable) -> Callable:
    """-o/--output (suffix .svg or .png), --scale and --title, passed as output, scale, title."""
    f = click.option("--title", default=None,
                     help="Caption above the picture (default: a description; '' for none).")(f)
    f = click.option("--scale", type=FiniteFloat(0, MAX_SCALE, min_open=True),
                     default=DEFAULT_SCALE,
                     show_default=True,
                     help="PNG pixels per picture unit (a board cell is 48 units).")(f)
    f = output_option("Picture file, .svg or .png (written atomically).", required=True,
                      callback=_output_cb)(f)
    return f


def _write(svg: str, output: Path, scale: float) -> None:
    from e2store.reports.render import write_picture

    write_picture(svg, output, scale=scale)
    click.echo(f"wrote {shown_path(output)}")


@click.group("render", cls=Group, examples=[
    "e2store render pieces demo7.e2s -o pieces.svg",
    "e2store render board demo7.e2s -o solution.png --scale 2",
    "e2store render zones --size 7 --hamming 2 -o zones.svg",
    "e2store render corolle demo7.e2s --hamming 2 --at 1,1 --index 10 -o corolle.svg",
])
def render() -> None:
    """Draw pictures: the pieces, a board, the zones, a corolle (SVG or PNG).

    The output file's suffix chooses the format.

    Each piece is a square cut into four triangles W, N, E, S, each in the colour of its
    colour id (grey for 0).
    """


@render.command("pieces", examples=["e2store render pieces demo7.e2s -o pieces.svg"])
@instance_argument
@instance_options
@_picture_options
@click.option("--columns", type=SIDE, default=None,
              help="Pieces per row (default: the board width).")
def render_pieces(instance: Path, fmt: str, sides: str | None, size: Size | None,
                  output: Path, scale: float, title: str | None, columns: int | None) -> None:
    """All pieces of INSTANCE, unrotated, in id order, each labelled with its id."""
    from e2store.reports.render import svg_pieces

    inst = load_instance(instance, fmt, sides, size)
    _write(svg_pieces(inst, columns=columns, title=title), output, scale)


@render.command("board", examples=[
    "e2store render board demo7.e2s -o solution.png",
    "e2store render board demo7.e2s --empty -o board.svg",
    "e2store render board e2_gallicchio.puz --best best-boards.parquet -o best.svg",
    "e2store render board 'https://e2.bucas.name/#puzzle=...&board_edges=...' -o b.svg",
    "e2store render board e2_gallicchio.puz --board best-boards.parquet --index 3 -o b.svg",
    "e2store render board e2_gallicchio.puz 'https://e2.bucas.name/#puzzle=...' -o b.svg",
])
@instance_argument
@click.argument("board_arg", required=False, default=None, metavar="[BOARD]")
@instance_options
@_picture_options
@click.option("--solution/--empty", "solution", default=True, show_default=True,
              help="Draw the instance's solution, or the empty board.")
@click.option("--board", "board", default=None, metavar="FILE|URL",
              help="Draw this full or partial board instead: a board URL, a file of "
              "`x y piece r` lines, a boards file or dataset (`e2store best -o FILE|DIR`) "
              "or a solutions file; its mismatched joins are marked in red and the title "
              "gives its score.")
@click.option("--best", "best", is_flag=False, flag_value="", default=None,
              metavar="[FILE]", help="Draw the best board of a boards file or dataset "
              "(`--best FILE`, or `--board FILE --best`): the highest-scoring filled board, "
              "else the deepest, then the highest-scoring (of another file: the highest "
              "score); says which row it drew.")
@click.option("--index", type=INDEX, default=None,
              help="With --board: which board of a file of several (0 the first, the "
                   "default).")
def render_board(instance: Path, fmt: str, sides: str | None, size: Size | None,
                 output: Path, scale: float, title: str | None, solution: bool,
                 board: str | None = None, best: str | None = None,
                 index: int | None = None, board_arg: str | None = None) -> None:
    """The board of INSTANCE with its solution (an error if the file has none), or any
    full or partial board (BOARD, --board, --best) with its mismatched joins marked.  A
    board URL in place of INSTANCE is drawn from its colours alone (no piece file needed).

    BOARD is what `score INSTANCE BOARD` takes (the same as --board BOARD): a board URL,
    a file of `x y piece r` lines, a saved-board file, a boards file or dataset or a
    solutions file.

    Axes as the field labels them: rows A.. from the north, columns 1.. from the west
    (I8: row I, column 8); tooltips count pieces from 1.  On Eternity II's pieces the
    official clue cells are framed: all five on the solution or the empty board, those
    holding their clue piece on a drawn board."""
    from e2store.boards.sources import chosen_any_board
    from e2store.boards.table import score
    from e2store.instance.url import colours_board, is_url
    from e2store.reports.drawings import board_grid
    from e2store.reports.render import svg_board
    from e2store.web.pictures import field_clues

    if board_arg is not None:
        if board is not None and board != board_arg:
            raise click.UsageError("BOARD and --board BOARD name two boards (expected one)")
        board = board_arg
    if best is not None:
        if best and board is not None and best != board:
            raise click.UsageError("--best FILE and --board FILE name two files (expected "
                                   "one: --best FILE, or --board FILE --best)")
        if not best and board is None:
            raise click.UsageError("--best needs a file: --best FILE, or --board FILE --best")
        if index is not None:
            raise click.UsageError("--best and --index both choose a board (expected one)")
        board = best or board
    if is_url(str(instance)):  # a board URL alone: drawn from its colours
        if board is not None or best is not None:
            raise click.UsageError("a board URL in place of INSTANCE is drawn alone (expected "
                                   "INSTANCE URL to draw it with the instance's pieces)")
        board, (inst, cells) = str(instance), colours_board(str(instance))
        sc = score(inst, cells)
        title = title or (f"{inst.name}: score {sc.matched} / {sc.joins}, "
                          f"{len(sc.mismatched)} mismatched, {len(sc.holes)} holes "
                          f"(from the URL's colours)")
        _write(svg_board(inst, cells.reshape(inst.height, inst.width), title=title,
                         mismatched=sc.mismatched), output, scale)
        return
    inst = load_instance(instance, fmt, sides, size)
    if board is not None:
        cells, what, note = chosen_any_board(inst, board, best is not None, index or 0)
        if note:  # which row the best is
            click.echo(note)
        sc = score(inst, cells)
        title = title or (f"{inst.name}: {what}score {sc.matched} / {sc.joins}, "
                          f"{len(sc.mismatched)} mismatched, {len(sc.holes)} holes")
        _write(svg_board(inst, cells.reshape(inst.height, inst.width), title=title,
                         mismatched=sc.mismatched, fixed=field_clues(inst, cells),
                         fixed_label="clue"), output, scale)
        return
    grid = board_grid(inst, solution, instance)
    _write(svg_board(inst, grid, title=title, fixed=field_clues(inst), fixed_label="clue"),
           output, scale)


@render.command("zones", examples=["e2store render zones --size 12x6 --hamming 2 -o zones.svg"])
@click.option("--size", "size", required=True, type=SIZE, help="Board size: N (N x N) or WxH.")
@hamming_option
@_picture_options
def render_zones(size: Size, hamming: int, output: Path, scale: float,
                 title: str | None) -> None:
    """The zone map of a board: zone id and rotation letter (b, c, d) in every cell."""
    from e2store.reports.render import svg_zone_map
    from e2store.zones.zonemap import zone_map

    zm = zone_map(*board_size(*size, "--size"), hamming)
    _write(svg_zone_map(zm, title=title), output, scale)


@render.command("corolle", examples=[
    "e2store render corolle demo7.e2s --hamming 2 --at 1,1 --index 10 -o corolle.svg",
])
@instance_argument
@instance_options
@hamming_option
@click.option("--at", "at", required=True, type=CELL, help="Centre cell of the corolle.")
@click.option("--index", "index", type=INDEX, default=0, show_default=True,
              help="Which corolle: 0-based, in enumeration (depth-first) order.")
@_picture_options
def render_corolle(instance: Path, fmt: str, sides: str | None, size: Size | None,
                   hamming: int, at: tuple[int, int], index: int, output: Path, scale: float,
                   title: str | None) -> None:
    """The INDEX-th corolle at X,Y, drawn in place on the board's outline."""
    from e2store.reports.drawings import corolle_picture

    inst = load_instance(instance, fmt, sides, size)
    x, y = at
    _write(corolle_picture(inst, hamming, x, y, index, title), output, scale)

