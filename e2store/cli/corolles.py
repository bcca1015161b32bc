"""Corolle commands: `e2store zones`, `count`, `enumerate`, `expand`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from e2store.cli.command import command
from e2store.cli.options import (
    CELLS_OR_ALL,
    FORMS,
    INDEX,
    SIDE,
    SIZE,
    BoundedInt,
    Size,
    board_size,
    hamming_option,
    instance_argument,
    instance_options,
    json_option,
    load_instance,
    output_option,
    store_instance_option,
    store_option,
    threads_option,
)
from e2store.counts.cell import AUTO, COUNT_METHODS
from e2store.progress import progress_interval


@command("zones", examples=[
    "e2store zones --size 7 --hamming 2",
    "e2store zones --size 12x6 --hamming 1 --json",
])
@click.option("--size", "size", required=True, type=SIZE,
              help="Board size: N (N x N) or WxH; --height overrides the height.")
@click.option("--height", type=SIDE, default=None, help="Board height (rows).")
@hamming_option
@json_option("Print the zones as JSON on stdout.")
def zones(size: Size, height: int | None, hamming: int, as_json: bool) -> None:
    """Print the zones of a board: a grid of zone ids, then each zone's cells and rotations.

    In the grid a suffix letter b, c, d marks a member reached by 1, 2, 3 clockwise quarter
    turns of its zone's canonical cell.
    """
    from e2store.zones.zonemap import zone_map

    width, h_rows = board_size(size[0], size[1] if height is None else height)
    zm = zone_map(width, h_rows, hamming)
    if as_json:
        click.echo(json.dumps(zm.to_dict()))
        return
    click.echo(_describe_zones(zm))


def _describe_zones(zm) -> str:
    from e2store.zones.zonemap import expected_zone_count

    lines = [f"{zm.width}x{zm.height} board, hamming {zm.hamming}: {len(zm.zones)} zones"]
    if zm.width == zm.height:
        lines[0] += f" (docs/design.md formula: {expected_zone_count(zm.width, zm.hamming)})"
    lines += [zm.grid(), ""]
    for z in zm.zones:
        members = " ".join(f"({m.x},{m.y}){'/' + str(m.rotation) if m.rotation else ''}"
                           for m in z.members)
        lines.append(f"zone {z.id:>3}  canonical ({z.x},{z.y})  rotations "
                     f"{','.join(map(str, z.rotations))}  members {members}")
    return "\n".join(lines)


@command("count", legacy={"--zones": None}, examples=[
    "e2store count pieces_7x7.txt --hamming 2",
    "e2store count pieces_7x7.txt --hamming 1 --hamming 2 --at 0,0 --at 3,3 --json",
    "e2store count pieces_7x7.txt --hamming 3 --at all --threads 2",
])
@instance_argument
@instance_options
@hamming_option(multiple=True)
@click.option("--at", "at", multiple=True, type=CELLS_OR_ALL,
              help="Cell(s) to count at (repeatable), or 'all' for every cell; default: "
              "every zone's canonical cell.")
@click.option("--method", type=click.Choice(COUNT_METHODS), default=AUTO, show_default=True,
              help="auto: the count tables' method (arms at hamming 3, else factorised); "
              "enumerate: walk every corolle (work: search nodes); factorised: stems times "
              "injective choices of the last ring (work: stems); arms: hamming 3 only, cores "
              "and four independent arms (work: cores).")
@click.option("--distinct", is_flag=True,
              help="Count distinct corolles (identical pieces interchangeable, symmetric "
              "rotations merged) by walking them (--method enumerate), with the raw count "
              "they stand for.")
@threads_option
@json_option("One JSON object per cell on stdout.")
def count(instance: Path, fmt: str, sides: str | None, size: Size | None,
          hammings: tuple[int, ...], at: tuple, method: str, threads: int,
          as_json: bool, distinct: bool = False) -> None:
    """Count the corolles exactly at the given cells (nothing is written).

    Every method gives the same counts; they differ in speed and in the work they report.
    """
    from e2store.counts.cell import check_count_request, count_cells

    try:
        check_count_request(hammings, method, distinct)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--method'") from None
    inst = load_instance(instance, fmt, sides, size)
    counts = count_cells(inst, hammings, at, method, threads, distinct, progress=True)
    if not as_json:
        click.echo(f"{'h':>2} {'x':>3} {'y':>3} {'zone':>5} {'corolles':>15} {'method':>10} "
                   f"{'work':>15} {'seconds':>9} {'corolles/s':>12}"
                   + (f" {'raw':>17}" if distinct else ""))
    for c in counts:
        if as_json:
            click.echo(json.dumps(c.to_dict()))
        else:
            click.echo(f"{c.hamming:>2} {c.x:>3} {c.y:>3} {c.zone:>5} {c.corolles:>15,} "
                       f"{c.method:>10} {c.work:>15,} {c.seconds:>9.3f} {c.rate:>12,.0f}"
                       + (f" {c.raw:>17,}" if distinct else ""))


@command("enumerate", legacy={"--out": "--store", "--zones": "--at"}, examples=[
    "e2store enumerate pieces_7x7.txt --hamming 1 --hamming 2 --store store/",
    "e2store enumerate pieces_7x7.txt --hamming 2 --at 0,0 --form flat --form cartesian "
    "--store store/",
    "e2store enumerate clue1_jwortmann.txt --hamming 2 --distinct --store store/",
])
@instance_argument
@instance_options
@hamming_option(multiple=True)
@click.option("--at", "at", multiple=True, type=CELLS_OR_ALL,
              help="Enumerate the zones of these cells (repeatable); default: every zone.")
@store_option(help="Store directory (created if missing).")
@click.option("--form", "forms", multiple=True, type=click.Choice(FORMS),
              help="Storage form(s) to write (repeatable): flat rows, prefix-compressed rows, "
              "cartesian stems with last-ring candidate lists, or distinct rows (one per "
              "distinct corolle, with its multiplicity).  [default: flat; distinct with "
              "--distinct]")
@click.option("--distinct", is_flag=True,
              help="Write the distinct form (identical pieces interchangeable, symmetric "
              "rotations merged; each row with the raw corolles it stands for): the same as "
              "--form distinct.")
@threads_option
@click.option("--force", is_flag=True, help="Rewrite partitions that are already complete.")
def enumerate_cmd(instance: Path, fmt: str, sides: str | None, size: Size | None,
                  hammings: tuple[int, ...], at: tuple, store: Path, forms: tuple[str, ...],
                  threads: int, force: bool, distinct: bool = False) -> None:
    """Enumerate corolles and write them to the store (atomic, resumable).

    Every zone of the board (or those of the --at cells) at every --hamming, in every
    --form; partitions already complete are skipped (unless --force).
    """
    from tqdm import tqdm

    from e2store.errors import ZoneError
    from e2store.store.build import enumerate_forms, enumerate_store
    from e2store.zones.cells import zone_ids
    from e2store.zones.zonemap import zone_map

    forms = enumerate_forms(forms, distinct)  # flat unless asked (the library decides)
    hammings = tuple(dict.fromkeys(hammings))  # each once, in order
    inst = load_instance(instance, fmt, sides, size)
    try:
        todo = [(h, zone_ids(zone_map(inst.width, inst.height, h), at)) for h in hammings]
    except ZoneError as exc:
        raise click.BadParameter(str(exc), param_hint="'--at'") from None
    for h, ids in todo:
        with tqdm(desc=f"enumerate h={h}", unit=" corolles", unit_scale=True,
                  delay=1.0, mininterval=progress_interval()) as bar:
            results = enumerate_store(store, inst, h, ids, force=force, threads=threads,
                                      progress=bar.update, forms=forms)
        rows = sum(p.rows for p in results if not p.skipped)
        size_b = sum(p.bytes for p in results if not p.skipped)
        skipped = sum(p.skipped for p in results)
        click.echo(f"{store}: instance={inst.id} hamming={h}: "
                   f"{len(results) - skipped} partitions written ({rows:,} rows, "
                   f"{size_b:,} bytes), {skipped} already complete")


@command("expand", legacy_store_positional=True, examples=[
    "e2store expand --store store/ --hamming 2 --zone 3 --form cartesian",
    "e2store expand --store store/ --hamming 2 --zone 3 --rotation 1 --form prefix "
    "-o zone3.parquet",
])
@store_option
@store_instance_option
@hamming_option
@click.option("--zone", type=INDEX, required=True, help="Zone id.")
@click.option("--rotation", type=BoundedInt(0, 3), default=0, show_default=True,
              help="Rotation of the partition (clockwise quarter turns).")
@click.option("--form", type=click.Choice(FORMS), required=True, help="Form to read.")
@output_option("Write the flat rows to this file (atomically): Parquet, or Arrow IPC if FILE "
               "ends in .arrow.")
def expand(store: Path, instance: str | None, hamming: int, zone: int, rotation: int,
           form: str, output: Path | None) -> None:
    """Expand one partition of any form to flat rows; print rows and a content digest.

    The digest is a sha256 over the rows sorted, so every form of one partition prints the
    same digest: the distinct form's rows are expanded to the raw corolles they stand for.
    """
    from e2store.errors import MissingInstanceError
    from e2store.store.read import expand_partition, store_instance
    from e2store.store.write import write_flat_file

    try:
        instance = store_instance(store, instance)
    except MissingInstanceError as exc:
        raise click.UsageError(str(exc)) from None
    part = expand_partition(store, instance, hamming, zone, rotation, form)
    if output is not None:
        write_flat_file(output, part.cells, part.front, hamming)
    distinct = ("" if part.multiplicity is None
                else f" from {len(part.multiplicity):,} distinct rows")
    click.echo(f"{instance} hamming={hamming} zone={zone} rotation={rotation} form={form}: "
               f"{len(part.cells):,} corolles{distinct}, sha256 {part.digest}")
