"""Corolle commands: `e2store zones`, `count`, `enumerate`, `expand`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from e2store.cli.command import command
from e2store.cli.options import (
    CELLS_OR_ALL,
    COUNT_METHODS,
    INDEX,
    SIDE,
    SIZE,
    STORE_FORMS,
    BoundedInt,
    Cell,
    Size,
    board_size,
    flatten_cells,
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
from e2store.progress import progress_interval


def board_cells(width: int, height: int, hamming: int,
                at: tuple = ()) -> list[Cell]:
    """The cells of --at values (every cell for 'all'), each checked to be on the board;
    without --at, every zone's canonical cell."""
    from e2store.zones.zonemap import zone_map

    zm = zone_map(width, height, hamming)
    if not at:
        return [(z.x, z.y) for z in zm.zones]
    wanted = flatten_cells(at)
    cells = ([(x, y) for y in range(height) for x in range(width)]
             if wanted is None else wanted)
    for x, y in cells:
        zm.check_cell(x, y)
    return cells


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


# the work each method reports: search nodes, stems (hamming h-1 corolles) or cores
WORK = {"enumerate": "nodes", "factorised": "stems", "arms": "cores"}


def best_method(hamming: int) -> str:
    """The exact method the count tables use at this hamming: arms at hamming 3, else
    factorised (e2store.counts.shards.method_of)."""
    from e2store.counts.shards import ARM_METHOD, method_of

    return "arms" if method_of(hamming) == ARM_METHOD else "factorised"


def count_cell(inst, x: int, y: int, hamming: int, method: str, threads: int = 1,
               progress: bool = False) -> tuple[int, int, float]:
    """(corolles, work, seconds) at one cell by `method` (enumerate, factorised, arms)."""
    if method == "arms":
        from e2store.corolles.arms import count_by_arms

        a = count_by_arms(inst, x, y, threads=threads, progress=progress)
        return a.corolles, a.stems, a.seconds
    if method == "factorised":
        from e2store.corolles.factorised import count_factorised

        f = count_factorised(inst, x, y, hamming, threads=threads, progress=progress)
        return f.corolles, f.stems, f.seconds
    from e2store.corolles.enumerate import count_corolles

    r = count_corolles(inst, x, y, hamming, threads=threads, progress=progress)
    return r.corolles, r.nodes, r.seconds


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
@click.option("--method", type=click.Choice(COUNT_METHODS), default="auto", show_default=True,
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
    from e2store.zones.zonemap import zone_map

    if method == "arms" and any(h != 3 for h in hammings):
        raise click.BadParameter("the arms method counts hamming 3 only",
                                 param_hint="'--method'")
    if distinct and method not in ("auto", "enumerate"):
        raise click.BadParameter(f"--distinct walks the distinct corolles (enumerate), not "
                                 f"{method}", param_hint="'--method'")
    hammings = tuple(dict.fromkeys(hammings))  # each once, in order
    inst = load_instance(instance, fmt, sides, size)
    jobs = [(h, board_cells(inst.width, inst.height, h, at)) for h in hammings]
    if not as_json:
        click.echo(f"{'h':>2} {'x':>3} {'y':>3} {'zone':>5} {'corolles':>15} {'method':>10} "
                   f"{'work':>15} {'seconds':>9} {'corolles/s':>12}"
                   + (f" {'raw':>17}" if distinct else ""))
    for h, cells in jobs:
        used = "enumerate" if distinct else best_method(h) if method == "auto" else method
        zm = zone_map(inst.width, inst.height, h)
        for x, y in cells:
            raw = None
            if distinct:
                from e2store.corolles.enumerate import count_corolles

                r = count_corolles(inst, x, y, h, threads=threads, progress=True,
                                   distinct=True)
                corolles, effort, seconds, raw = r.corolles, r.nodes, r.seconds, r.raw
            else:
                corolles, effort, seconds = count_cell(inst, x, y, h, used, threads, True)
            zone = int(zm.zone_of[y, x])
            rate = corolles / seconds if seconds > 0 else 0.0
            if as_json:
                click.echo(json.dumps({"instance": inst.id, "x": x, "y": y, "zone": zone,
                                       "hamming": h, "method": used, "corolles": corolles,
                                       WORK[used]: effort, "seconds": round(seconds, 6),
                                       **({"distinct": True, "raw_corolles": raw}
                                          if distinct else {})}))
            else:
                click.echo(f"{h:>2} {x:>3} {y:>3} {zone:>5} {corolles:>15,} {used:>10} "
                           f"{effort:>15,} {seconds:>9.3f} {rate:>12,.0f}"
                           + (f" {raw:>17,}" if distinct else ""))


def zone_ids(at: tuple, zm) -> list[int] | None:
    """--at X,Y ... -> the ids of those cells' zones; no --at (or 'all') -> None (every
    zone)."""
    from e2store.errors import ZoneError

    cells = flatten_cells(at) if at else None
    if cells is None:
        return None
    out = []
    for x, y in cells:
        try:
            out.append(int(zm.zone_at(x, y).id))
        except ZoneError as exc:
            raise click.BadParameter(str(exc), param_hint="'--at'") from None
    return sorted(set(out))


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
@click.option("--form", "forms", multiple=True, type=click.Choice(STORE_FORMS),
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
    forms = (*forms, "distinct") if distinct else forms or ("flat",)
    from tqdm import tqdm

    from e2store.store.build import enumerate_store
    from e2store.zones.zonemap import zone_map

    hammings = tuple(dict.fromkeys(hammings))  # each once, in order
    inst = load_instance(instance, fmt, sides, size)
    todo = [(h, zone_ids(at, zone_map(inst.width, inst.height, h))) for h in hammings]
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


def instance_id(value: str) -> str:
    """An instance id, or the id of the instance in the piece file `value` when it exists."""
    from e2store.instance.formats import read_instance

    path = Path(value)
    return read_instance(path).id if path.is_file() else value


def store_instance(store: Path, instance: str | None) -> str:
    """The id `--instance` names (an id or a piece file), or the store's only instance."""
    from e2store.store.read import read_manifest

    if instance is not None:
        return instance_id(instance)
    ids = sorted({p["instance"] for p in read_manifest(store)["partitions"]})
    if len(ids) != 1:
        raise click.UsageError(f"the store holds {len(ids)} instances; give --instance "
                               f"({', '.join(ids)})")
    return ids[0]


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
@click.option("--form", type=click.Choice(STORE_FORMS), required=True, help="Form to read.")
@output_option("Write the flat rows to this file (atomically): Parquet, or Arrow IPC if FILE "
               "ends in .arrow.")
def expand(store: Path, instance: str | None, hamming: int, zone: int, rotation: int,
           form: str, output: Path | None) -> None:
    """Expand one partition of any form to flat rows; print rows and a content digest.

    The digest is a sha256 over the rows sorted, so every form of one partition prints the
    same digest: the distinct form's rows are expanded to the raw corolles they stand for.
    """
    import hashlib

    import numpy as np

    from e2store.store.read import read_partition
    from e2store.store.write import write_flat_file

    instance = store_instance(store, instance)
    distinct = ""
    if form == "distinct":
        cells, front, mult = _expand_distinct(store, instance, hamming, zone, rotation)
        distinct = f" from {len(mult):,} distinct rows"
    else:
        cells, front = read_partition(store, instance, hamming, zone, rotation, form)
    rows = np.hstack([cells.astype(np.int16), front.astype(np.int16)])
    digest = hashlib.sha256(rows[np.lexsort(rows.T[::-1])].tobytes()).hexdigest()
    if output is not None:
        write_flat_file(output, cells, front, hamming)
    click.echo(f"{instance} hamming={hamming} zone={zone} rotation={rotation} form={form}: "
               f"{len(cells):,} corolles{distinct}, sha256 {digest}")


def _expand_distinct(store: Path, instance: str, hamming: int, zone: int, rotation: int):
    """(cells, frontier, multiplicities) of a distinct partition, its rows expanded to the
    raw corolles (checked against the multiplicities stored)."""
    import numpy as np

    from e2store.corolles.forms import frontier_of
    from e2store.errors import StoreError
    from e2store.instance.classes import DistinctPieces
    from e2store.store.read import read_distinct, read_store_instance

    inst = read_store_instance(store, instance)
    rows, _, mult = read_distinct(store, instance, hamming, zone, rotation)
    cells = DistinctPieces.of(inst).expand(rows)
    if len(cells) != int(mult.sum()):
        raise StoreError(f"{store}: distinct partition zone={zone} rotation={rotation}: its rows "
                         f"expand to {len(cells):,} corolles, its multiplicities say "
                         f"{int(mult.sum()):,}; run `e2store verify --store {store}`")
    return cells.astype(np.int16), frontier_of(cells, inst, hamming), mult
