"""Instance commands: `e2store validate`, `e2store generate-instance`, `e2store stats`.

Other command modules reuse `instance_options` (the --format/--sides/--size options) and
`load_instance` (read and validate) so every command reads instances the same way.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from pathlib import Path

import click

from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import DEFAULT_SIDES, FORMATS, read_instance
from e2store.instance.generate import GenerationWarning
from e2store.instance.generate import generate_instance as _generate
from e2store.instance.model import Instance
from e2store.instance.parsing import normalise_sides, source_info
from e2store.instance.stats import format_stats, instance_stats, stats_json
from e2store.instance.validate import expected_kinds, piece_kinds, validate_or_raise

Size = tuple[int, int]


def parse_size(text: str) -> Size:
    """'7' -> (7, 7); '12x6' -> (12, 6) (width x height); ValueError otherwise."""
    m = re.fullmatch(r"\s*(\d+)\s*(?:[xX\u00d7]\s*(\d+))?\s*", text)
    if not m:
        raise ValueError(f"bad size {text!r}: expected N or WxH, e.g. 7 or 12x6")
    w = int(m.group(1))
    h = int(m.group(2)) if m.group(2) else w
    return w, h


def _size_cb(ctx, param, value):
    if value is None:
        return None
    try:
        return parse_size(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _sides_cb(ctx, param, value):
    if value is None:
        return None
    try:
        return normalise_sides(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def instance_options(f: Callable) -> Callable:
    """Add --format, --sides and --size (passed as `fmt`, `sides`, `size`) to a command."""
    defaults = ", ".join(f"{k} {v}" for k, v in DEFAULT_SIDES.items())
    f = click.option("--size", "size", default=None, callback=_size_cb, metavar="WxH",
                     help="Board size (W columns x H rows) for headerless piece files.")(f)
    f = click.option("--sides", "sides", default=None, callback=_sides_cb, metavar="ORDER",
                     help=f"Side order of the numbers on a piece line, e.g. WNES "
                     f"(defaults: {defaults}).")(f)
    f = click.option("--format", "fmt", default="auto", show_default=True,
                     type=click.Choice(("auto", *FORMATS)),
                     help="Piece file format (auto: detect from the content).")(f)
    return f


def load_instance(path: str | Path, fmt: str = "auto", sides: str | None = None,
                  size: Size | None = None) -> Instance:
    """Read a piece file and validate it: raises InstanceFormatError / InstanceError."""
    inst = read_instance(path, format=fmt, sides=sides, size=size)
    validate_or_raise(inst)
    return inst


def _instance_arg(f: Callable) -> Callable:
    return click.argument("instance", type=click.Path(dir_okay=False, path_type=Path))(f)


@click.command("validate")
@_instance_arg
@instance_options
def validate(instance: Path, fmt: str, sides: str | None, size: Size | None) -> None:
    """Check a piece file: exit 0 if clean (info allowed), 1 on warnings, 2 on errors."""
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


@click.command("generate-instance")
@click.option("--size", "size", required=True, callback=_size_cb, metavar="N|WxH",
              help="Board size: N (N x N) or WxH; --height overrides the height.")
@click.option("--height", type=int, default=None, help="Board height (rows).")
@click.option("--frame-colours", type=click.IntRange(min=1), required=True,
              help="Number of colours on the joins along the frame.")
@click.option("--inner-colours", type=click.IntRange(min=0), required=True,
              help="Number of colours on all other joins.")
@click.option("--seed", type=click.IntRange(min=0), required=True, help="Random seed.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Output file (canonical e2store format, written atomically).")
@click.option("--name", default=None, help="Instance name (default: the output file stem).")
def generate_instance(size: Size, height: int | None, frame_colours: int, inner_colours: int,
                      seed: int, output: Path, name: str | None) -> None:
    """Generate a random solvable instance with its solution (canonical e2store file)."""
    width, height = size[0], size[1] if height is None else height
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", GenerationWarning)
        try:
            inst = _generate(width, height, frame_colours, inner_colours, seed,
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


@click.command("stats")
@_instance_arg
@instance_options
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
def stats(instance: Path, fmt: str, sides: str | None, size: Size | None,
          as_json: bool) -> None:
    """Print instance statistics (pieces, colours, similar pieces, edges, links)."""
    inst = load_instance(instance, fmt, sides, size)
    st = instance_stats(inst)
    click.echo(stats_json(st) if as_json else format_stats(st))

COMMANDS = [validate, generate_instance, stats]
