"""Instance commands: `validate`, `generate-instance`, `stats`, `export-pieces`, `url`.

Every command reads instances the same way: `instance_argument`, `instance_options` (the
--format/--sides/--size options) and `load_instance` (read and validate), in
e2store/cli/options.py.
"""

from __future__ import annotations

from pathlib import Path

import click

from e2store.cli.command import command
from e2store.cli.options import (
    INDEX,
    SEED,
    SIDE,
    SIZE,
    BoundedInt,
    Size,
    board_size,
    instance_argument,
    instance_options,
    json_option,
    load_instance,
    note,
    output_option,
    parse_size,
)
from e2store.instance.parsing import MAX_COLOUR, shown_path
from e2store.instance.url import WRITE_ORDER

__all__ = ["load_instance", "parse_size", "validate", "generate_instance", "stats",
           "export_pieces", "url"]


@command("validate", examples=[
    "e2store validate pieces_7x7.txt",
    "e2store validate clue.txt --format jwortmann --size 6x12",
])
@instance_argument
@instance_options
def validate(instance: Path, fmt: str, sides: str | None, size: Size | None) -> None:
    """Check a piece file: exit 0 if clean (info allowed), 1 on warnings, 2 on errors.

    Prints the format, size, piece kinds and instance id, then every finding; warnings
    (exit 1) mean the puzzle cannot be solved, errors (exit 2) that the file is not a
    valid instance.
    """
    from e2store.instance.formats import read_instance
    from e2store.instance.parsing import shown_path, source_info
    from e2store.instance.validate import expected_kinds, piece_kinds, validate_or_raise

    inst = read_instance(instance, format=fmt, sides=sides, size=size)
    findings = validate_or_raise(inst)  # raises on the first error -> exit 2
    info = source_info(inst)
    kinds = piece_kinds(inst.pieces)
    want = expected_kinds(inst.width, inst.height)
    click.echo(f"file:    {shown_path(instance)}")
    if info is not None:
        click.echo(f"format:  {info.format} (sides {' '.join(info.sides)})")
    click.echo(f"size:    {inst.width}x{inst.height}, {inst.n_pieces} pieces")
    click.echo("pieces:  " + ", ".join(
        f"{int((kinds == k).sum())} {k}" for k in want))
    click.echo(f"id:      {inst.id}")
    if inst.solution is not None:
        click.echo("solution: valid")
    for f in findings:
        click.echo(f"  {f}")
    n_warn = sum(f.level == "warning" for f in findings)
    if n_warn:
        click.echo(f"result:  {n_warn} warning(s): the puzzle cannot be solved")
        click.get_current_context().exit(1)
    click.echo("result:  ok")


@command("generate-instance", examples=[
    "e2store generate-instance --size 7 --frame-colours 3 --inner-colours 5 --seed 1 "
    "-o demo7.e2s",
    "e2store generate-instance --size 12x6 --frame-colours 4 --inner-colours 6 --seed 2 "
    "-o clue.e2s",
])
@click.option("--size", "size", required=True, type=SIZE,
              help="Board size: N (N x N) or WxH; --height overrides the height.")
@click.option("--height", type=SIDE, default=None,
              help="Board height (rows).")
@click.option("--frame-colours", type=BoundedInt(1, MAX_COLOUR), required=True,
              help="Number of colours on the joins along the frame.")
@click.option("--inner-colours", type=BoundedInt(0, MAX_COLOUR), required=True,
              help="Number of colours on all other joins.")
@click.option("--seed", type=SEED, required=True, help="Random seed.")
@output_option("Output file (canonical e2store format, written atomically).", required=True)
@click.option("--name", default=None, help="Instance name (default: the output file stem).")
def generate_instance(size: Size, height: int | None, frame_colours: int, inner_colours: int,
                      seed: int, output: Path, name: str | None) -> None:
    """Generate a random solvable instance with its solution (canonical e2store file)."""
    from e2store.errors import E2StoreError
    from e2store.instance.generate import write_generated_instance

    width, height = board_size(size[0], size[1] if height is None else height)
    try:
        inst, st, notes = write_generated_instance(output, width, height, frame_colours,
                                                   inner_colours, seed, name)
    except ValueError as exc:
        if isinstance(exc, E2StoreError):  # an invalid instance: not a bad parameter
            raise
        raise click.BadParameter(str(exc)) from None
    click.echo(f"wrote {shown_path(output)}: {inst.id}, {inst.width}x{inst.height}, "
               f"{st['colours']} colours, {st['duplicates']} duplicate and "
               f"{st['self_similar']} self-similar pieces")
    for n in notes:
        click.echo(f"note: {n}", err=True)


@command("stats", examples=[
    "e2store stats pieces_7x7.txt",
    "e2store stats clue.txt --size 6x12 --json",
])
@instance_argument
@instance_options
@json_option("Print the statistics as JSON on stdout.")
def stats(instance: Path, fmt: str, sides: str | None, size: Size | None,
          as_json: bool) -> None:
    """Print instance statistics (pieces, colours, similar pieces, edges, links)."""
    from e2store.instance.stats import format_stats, instance_stats, stats_json

    inst = load_instance(instance, fmt, sides, size)
    st = instance_stats(inst)
    click.echo(stats_json(st) if as_json else format_stats(st))


@command("export-pieces", examples=[
    "e2store export-pieces pieces_7x7.txt --to jwortmann -o pieces_7x7_jw.txt",
    "e2store export-pieces e2pieces_jwortmann.txt --to puz -o e2.puz",
])
@instance_argument
@instance_options
@click.option("--to", "to_format", required=True,
              type=click.Choice(["benchmark", "brendan", "jwortmann", "puz", "e2store"]),
              help="The format to write (--format names the format read).")
@output_option("The piece file to write (atomically).", required=True)
def export_pieces(instance: Path, fmt: str, sides: str | None, size: Size | None,
                  to_format: str, output: Path) -> None:
    """Write an instance as a piece file of another format.

    Pieces keep their order (a piece's id is its line) and their colour ids, in the side
    order of the format written (docs/store-format.md): reading the file back gives the
    same instance id.
    """
    from e2store.instance.export import write_pieces

    inst = load_instance(instance, fmt, sides, size)
    write_pieces(inst, output, to_format)
    click.echo(f"wrote {shown_path(output)}: {inst.id} as {to_format}")


@command("url", examples=[
    "e2store url demo7.e2s",
    "e2store url demo7.e2s --solutions solutions.parquet --index 2",
    "e2store url e2_gallicchio.puz --solutions best-boards.parquet",
    "e2store url e2_gallicchio.puz --motifs-order jef",
])
@instance_argument
@instance_options
@click.option("--solutions", type=click.Path(exists=True, path_type=Path), default=None,
              metavar="FILE|DIR", help="A solutions file written by `solve -o` (Parquet or "
              "CSV), or a boards file or dataset (`e2store best -o FILE|DIR`) or a "
              "saved-board file.")
@click.option("--index", type=INDEX, default=None, metavar="K",
              help="With --solutions: the K-th solution or board (0-based; default 0, of a "
              "boards file or dataset its best).")
@click.option("--motifs-order", "order", default=WRITE_ORDER, show_default=True,
              type=click.Choice(("jblackwood", "marie", "jef", "default")),
              help="The viewer's lettering of the colours to write, named in the URL's "
              "`motifs_order` (`default`: the viewer's lettering without one).")
def url(instance: Path, fmt: str, sides: str | None, size: Size | None,
        solutions: Path | None, index: int | None, order: str) -> None:
    """Print the e2.bucas.name URL of a board of the instance.

    The K-th saved solution with --solutions, else the instance's own solution when its
    file holds one, else the empty board.  A boards file or dataset given to --solutions
    gives its best board, the one `render board --best` draws (which row is said on
    stderr), or its K-th with --index.  `solve --fixed URL` and `score` read such a URL
    back, in any of the viewer's letterings.
    """
    from e2store.boards.sources import shown_board
    from e2store.instance.url import board_url

    inst = load_instance(instance, fmt, sides, size)
    if index is not None and solutions is None:
        raise click.UsageError("--index K needs --solutions FILE")
    board, which = shown_board(inst, solutions, index)
    if which:  # which row the best is
        note(which)
    click.echo(board_url(inst, board, order=order))
