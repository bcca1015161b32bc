"""Instance commands: `e2store validate`, `e2store generate-instance`, `e2store stats`.

Every command reads instances the same way: `instance_argument`, `instance_options` (the
--format/--sides/--size options) and `load_instance` (read and validate), in
e2store/cli/options.py.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import click

from e2store.cli.command import command
from e2store.cli.options import (
    SIZE,
    Size,
    instance_argument,
    instance_options,
    json_option,
    load_instance,
    output_option,
    parse_size,
)

__all__ = ["load_instance", "parse_size", "validate", "generate_instance", "stats"]


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
    from e2store.instance.parsing import source_info
    from e2store.instance.validate import expected_kinds, piece_kinds, validate_or_raise

    inst = read_instance(instance, format=fmt, sides=sides, size=size)
    findings = validate_or_raise(inst)  # raises on the first error -> exit 2
    info = source_info(inst)
    kinds = piece_kinds(inst.pieces)
    want = expected_kinds(inst.width, inst.height)
    click.echo(f"file:    {instance}")
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
@click.option("--height", type=click.IntRange(min=1), default=None,
              help="Board height (rows).")
@click.option("--frame-colours", type=click.IntRange(min=1), required=True,
              help="Number of colours on the joins along the frame.")
@click.option("--inner-colours", type=click.IntRange(min=0), required=True,
              help="Number of colours on all other joins.")
@click.option("--seed", type=click.IntRange(min=0), required=True, help="Random seed.")
@output_option("Output file (canonical e2store format, written atomically).", required=True)
@click.option("--name", default=None, help="Instance name (default: the output file stem).")
def generate_instance(size: Size, height: int | None, frame_colours: int, inner_colours: int,
                      seed: int, output: Path, name: str | None) -> None:
    """Generate a random solvable instance with its solution (canonical e2store file)."""
    from e2store.instance.e2sfile import write_e2store
    from e2store.instance.generate import GenerationWarning
    from e2store.instance.generate import generate_instance as generate
    from e2store.instance.stats import instance_stats
    from e2store.instance.validate import validate_or_raise

    width, height = size[0], size[1] if height is None else height
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", GenerationWarning)
        try:
            inst = generate(width, height, frame_colours, inner_colours, seed,
                             name=name or output.stem)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None
    validate_or_raise(inst)
    write_e2store(inst, output)
    st = instance_stats(inst)
    click.echo(f"wrote {output}: {inst.id}, {inst.width}x{inst.height}, "
               f"{st['colours']} colours, {st['duplicates']} duplicate and "
               f"{st['self_similar']} self-similar pieces")
    for w in caught:
        if issubclass(w.category, GenerationWarning):
            click.echo(f"note: {w.message}", err=True)


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
