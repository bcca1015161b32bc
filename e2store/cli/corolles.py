"""Corolle commands: `e2store zones`, `e2store count`, `e2store enumerate`."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

import click
import numpy as np
from tqdm import tqdm

from e2store.cli.instance import Size, _instance_arg, _size_cb, instance_options, load_instance
from e2store.corolles.enumerate import count_corolles
from e2store.corolles.factorised import count_factorised
from e2store.errors import ZoneError
from e2store.store.build import enumerate_store
from e2store.store.layout import FORMS
from e2store.store.read import read_manifest, read_partition
from e2store.store.write import write_flat_file
from e2store.zones.zonemap import ZoneMap, expected_zone_count, zone_map


def progress_interval() -> float:
    """Seconds between progress updates: live on a terminal, a periodic line in a log."""
    return 0.5 if sys.stderr.isatty() else 30.0

_CELL = re.compile(r"\s*(\d+)\s*,\s*(\d+)\s*")


def parse_cells(values: tuple[str, ...]) -> list[tuple[int, int]] | None:
    """('1,2', '0,0') -> [(1, 2), (0, 0)]; ('all',) -> None (every cell)."""
    if any(v.strip().lower() == "all" for v in values):
        return None
    cells = []
    for v in values:
        for part in re.split(r"\s+|;", v.strip()):
            if not part:
                continue
            m = _CELL.fullmatch(part)
            if not m:
                raise click.BadParameter(f"bad cell {part!r}: expected X,Y such as 2,1, or 'all'")
            cells.append((int(m.group(1)), int(m.group(2))))
    return cells


def _hamming_option(f: Callable) -> Callable:
    return click.option("--hamming", "hamming", type=click.IntRange(min=0), required=True,
                        help="Corolle radius h (Manhattan distance from the centre).")(f)


def _threads_option(f: Callable) -> Callable:
    return click.option("--threads", type=click.IntRange(min=1), default=1, show_default=True,
                        help="Worker threads (the numba kernels release the GIL).")(f)


@click.command("zones")
@click.option("--size", "size", required=True, callback=_size_cb, metavar="N|WxH",
              help="Board size: N (N x N) or WxH; --height overrides the height.")
@click.option("--height", type=click.IntRange(min=1), default=None, help="Board height (rows).")
@_hamming_option
@click.option("--json", "as_json", is_flag=True, help="Print the zones as JSON.")
def zones(size: Size, height: int | None, hamming: int, as_json: bool) -> None:
    """Print the zones of a board: a grid of zone ids, then each zone's cells and rotations.

    In the grid a suffix letter b, c, d marks a member reached by 1, 2, 3 clockwise quarter
    turns of its zone's canonical cell.
    """
    width, h_rows = size[0], size[1] if height is None else height
    if width < 1 or h_rows < 1:
        raise click.BadParameter(f"board {width}x{h_rows}: both sides must be >= 1")
    zm = zone_map(width, h_rows, hamming)
    if as_json:
        click.echo(json.dumps(zm.to_dict()))
        return
    click.echo(_describe_zones(zm))


def _describe_zones(zm: ZoneMap) -> str:
    lines = [f"{zm.width}x{zm.height} board, hamming {zm.hamming}: {len(zm.zones)} zones"]
    if zm.width == zm.height:
        lines[0] += f" (DESIGN.md formula: {expected_zone_count(zm.width, zm.hamming)})"
    lines += [zm.grid(), ""]
    for z in zm.zones:
        members = " ".join(f"({m.x},{m.y}){'/' + str(m.rotation) if m.rotation else ''}"
                           for m in z.members)
        lines.append(f"zone {z.id:>3}  canonical ({z.x},{z.y})  rotations "
                     f"{','.join(map(str, z.rotations))}  members {members}")
    return "\n".join(lines)


@click.command("count")
@_instance_arg
@instance_options
@_hamming_option
@click.option("--at", "at", multiple=True, metavar="X,Y|all",
              help="Cell(s) to count at (repeatable), or 'all' for every cell.")
@click.option("--zones", "by_zone", is_flag=True,
              help="Count once per zone, at its canonical cell.")
@click.option("--method", type=click.Choice(("enumerate", "factorised")), default="enumerate",
              show_default=True,
              help="enumerate: walk every corolle (reports search nodes); factorised: stems "
              "times injective choices of the last ring (reports stems), much faster.")
@_threads_option
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def count(instance: Path, fmt: str, sides: str | None, size: Size | None, hamming: int,
          at: tuple[str, ...], by_zone: bool, method: str, threads: int,
          as_json: bool) -> None:
    """Count the corolles exactly at the given cells (nothing is written)."""
    if bool(at) == by_zone:
        raise click.UsageError("give either --at X,Y (repeatable, or 'all') or --zones")
    inst = load_instance(instance, fmt, sides, size)
    zm = zone_map(inst.width, inst.height, hamming)
    if by_zone:
        cells = [(z.x, z.y) for z in zm.zones]
    else:
        wanted = parse_cells(at)
        cells = ([(x, y) for y in range(inst.height) for x in range(inst.width)]
                 if wanted is None else wanted)
    for x, y in cells:
        zm.check_cell(x, y)
    work = "stems" if method == "factorised" else "nodes"
    if not as_json:
        click.echo(f"{'x':>3} {'y':>3} {'zone':>5} {'corolles':>15} {work:>15} "
                   f"{'seconds':>9} {'corolles/s':>12}")
    for x, y in cells:
        if method == "factorised":
            f = count_factorised(inst, x, y, hamming, threads=threads, progress=True)
            corolles, effort, seconds = f.corolles, f.stems, f.seconds
        else:
            r = count_corolles(inst, x, y, hamming, threads=threads, progress=True)
            corolles, effort, seconds = r.corolles, r.nodes, r.seconds
        zone = int(zm.zone_of[y, x])
        rate = corolles / seconds if seconds > 0 else 0.0
        if as_json:
            click.echo(json.dumps({"instance": inst.id, "x": x, "y": y, "zone": zone,
                                   "hamming": hamming, "method": method, "corolles": corolles,
                                   work: effort, "seconds": round(seconds, 6)}))
        else:
            click.echo(f"{x:>3} {y:>3} {zone:>5} {corolles:>15,} {effort:>15,} "
                       f"{seconds:>9.3f} {rate:>12,.0f}")


def _parse_zones(values: tuple[str, ...], zm: ZoneMap) -> list[int] | None:
    """--zones all (default) -> None; --zones X,Y ... -> the zones of those cells."""
    if not values:
        return None
    cells = parse_cells(values)
    if cells is None:
        return None
    out = []
    for x, y in cells:
        try:
            out.append(int(zm.zone_at(x, y).id))
        except ZoneError as exc:
            raise click.BadParameter(str(exc)) from None
    return sorted(set(out))


@click.command("enumerate")
@_instance_arg
@instance_options
@_hamming_option
@click.option("--zones", "zone_cells", multiple=True, metavar="all|X,Y",
              help="Cells whose zones to enumerate (repeatable); default all zones.")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Store directory (created if missing).")
@click.option("--form", "forms", multiple=True, type=click.Choice(FORMS), default=("flat",),
              show_default=True,
              help="Storage form(s) to write (repeatable): flat rows, prefix-compressed rows, "
              "or cartesian stems with last-ring candidate lists.")
@_threads_option
@click.option("--force", is_flag=True, help="Rewrite partitions that are already complete.")
def enumerate_cmd(instance: Path, fmt: str, sides: str | None, size: Size | None, hamming: int,
                  zone_cells: tuple[str, ...], out: Path, forms: tuple[str, ...], threads: int,
                  force: bool) -> None:
    """Enumerate corolles and write them to the store (atomic, resumable)."""
    inst = load_instance(instance, fmt, sides, size)
    zm = zone_map(inst.width, inst.height, hamming)
    ids = _parse_zones(zone_cells, zm)
    with tqdm(desc=f"enumerate h={hamming}", unit=" corolles", unit_scale=True,
              delay=1.0, mininterval=progress_interval()) as bar:
        results = enumerate_store(out, inst, hamming, ids, force=force, threads=threads,
                                  progress=bar.update, forms=forms)
    rows = sum(p.rows for p in results if not p.skipped)
    size_b = sum(p.bytes for p in results if not p.skipped)
    skipped = sum(p.skipped for p in results)
    click.echo(f"{out}: instance={inst.id} hamming={hamming}: "
               f"{len(results) - skipped} partitions written ({rows:,} rows, {size_b:,} bytes), "
               f"{skipped} already complete")


@click.command("expand")
@click.argument("store_root", metavar="STORE", type=click.Path(file_okay=False, path_type=Path))
@click.option("--instance", "instance_id", default=None,
              help="Instance id (default: the store's only instance).")
@_hamming_option
@click.option("--zone", type=click.IntRange(min=0), required=True, help="Zone id.")
@click.option("--rotation", type=click.IntRange(0, 3), default=0, show_default=True)
@click.option("--form", type=click.Choice(FORMS), required=True, help="Form to read.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the flat rows to this Parquet file (atomically).")
def expand(store_root: Path, instance_id: str | None, hamming: int, zone: int, rotation: int,
           form: str, output: Path | None) -> None:
    """Expand one partition of any form to flat rows; print rows and a content digest.

    The digest is a sha256 over the rows sorted, so the three forms of one partition print
    the same digest.
    """
    man = read_manifest(store_root)
    ids = sorted({p["instance"] for p in man["partitions"]})
    if instance_id is None:
        if len(ids) != 1:
            raise click.UsageError(f"the store holds {len(ids)} instances; give --instance "
                                   f"({', '.join(ids)})")
        instance_id = ids[0]
    cells, front = read_partition(store_root, instance_id, hamming, zone, rotation, form)
    rows = np.hstack([cells.astype(np.int16), front.astype(np.int16)])
    digest = hashlib.sha256(rows[np.lexsort(rows.T[::-1])].tobytes()).hexdigest()
    if output is not None:
        write_flat_file(output, cells, front, hamming)
    click.echo(f"{instance_id} hamming={hamming} zone={zone} rotation={rotation} form={form}: "
               f"{len(cells):,} corolles, sha256 {digest}")


COMMANDS = [zones, count, enumerate_cmd, expand]
