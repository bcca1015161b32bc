"""Stage commands for workflows: `e2store plan`, `shard`, `gather`, `rotate`, `encode`.

Each writes one step of a zone's partitions (see stages.py) and, with `--json FILE`,
a receipt: the record of what was written (a Snakemake job's output).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from pathlib import Path

import click
from tqdm import tqdm

from e2store.cli.corolles import _hamming_option, _threads_option, progress_interval
from e2store.cli.instance import Size, _instance_arg, instance_options, load_instance
from e2store.errors import ZoneError
from e2store.files import atomic_write_text
from e2store.instance.model import Instance
from e2store.store.layout import FORMS
from e2store.store.stages import (
    MAX_SHARDS,
    encode_partitions,
    enumerate_shard,
    gather_shards,
    plan_zones,
    rotate_partition,
)
from e2store.store.write import PartitionResult
from e2store.zones.zonemap import Zone, zone_map


def _store_options(f: Callable) -> Callable:
    f = click.option("--json", "receipt", type=click.Path(dir_okay=False, path_type=Path),
                     default=None, help="Also write the record as JSON to this file.")(f)
    f = click.option("--zone", "zone_id", type=click.IntRange(min=0), required=True,
                     help="Zone id (see `e2store zones` or `e2store plan`).")(f)
    f = click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path),
                     required=True, help="Store directory.")(f)
    return _hamming_option(f)


def _zone(inst: Instance, hamming: int, zone_id: int) -> Zone:
    zm = zone_map(inst.width, inst.height, hamming)
    if zone_id >= len(zm.zones):
        raise ZoneError(f"zone {zone_id} does not exist: the {inst.width}x{inst.height} board "
                        f"has zones 0..{len(zm.zones) - 1} at hamming {hamming}")
    return zm.zones[zone_id]


def _report(record: dict, receipt: Path | None, line: str) -> None:
    if receipt is not None:
        atomic_write_text(receipt, json.dumps(record, indent=1) + "\n")
    click.echo(line)


def _partition_line(p: PartitionResult, what: str) -> str:
    state = "already complete" if p.skipped else f"written in {p.seconds:.2f} s"
    return (f"{what} zone={p.zone} rotation={p.rotation} form={p.form}: {p.rows:,} rows, "
            f"{p.corolles:,} corolles, {p.bytes:,} bytes, {state}")


@click.command("plan")
@_instance_arg
@instance_options
@_hamming_option
@click.option("--shard-corolles", type=click.IntRange(min=1), default=50_000_000,
              show_default=True, help="Corolles per shard at most (hamming >= 2 zones).")
@click.option("--max-shards", type=click.IntRange(1, MAX_SHARDS), default=64, show_default=True,
              help="Shards per zone at most.")
@_threads_option
@click.option("--json", "receipt", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Also write the plan as JSON to this file.")
def plan(instance: Path, fmt: str, sides: str | None, size: Size | None, hamming: int,
         shard_corolles: int, max_shards: int, threads: int, receipt: Path | None) -> None:
    """Count every zone exactly (factorised) and decide how many shards its walk needs."""
    inst = load_instance(instance, fmt, sides, size)
    zones = plan_zones(inst, hamming, shard_corolles=shard_corolles, max_shards=max_shards,
                       threads=threads)
    doc = {"instance": inst.id, "width": inst.width, "height": inst.height,
           "hamming": hamming, "shard_corolles": shard_corolles, "max_shards": max_shards,
           "zones": [z.to_dict() for z in zones]}
    lines = [f"{'zone':>5} {'x':>3} {'y':>3} {'rotations':>9} {'corolles':>15} {'shards':>6}"]
    lines += [f"{z.zone:>5} {z.x:>3} {z.y:>3} {','.join(map(str, z.rotations)):>9} "
              f"{z.corolles:>15,} {z.shards:>6}" for z in zones]
    _report(doc, receipt, "\n".join(lines))


_SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


def _shard_cb(ctx, param, value: str) -> tuple[int, int]:
    m = _SHARD.fullmatch(value)
    if not m:
        raise click.BadParameter(f"{value!r}: expected K/S, shard K of S (0 <= K < S)")
    k, s = int(m.group(1)), int(m.group(2))
    if not 0 <= k < s <= MAX_SHARDS:
        raise click.BadParameter(f"{value!r}: expected 0 <= K < S <= {MAX_SHARDS}")
    return k, s


@click.command("shard")
@_instance_arg
@instance_options
@_store_options
@click.option("--shard", "shard", required=True, callback=_shard_cb, metavar="K/S",
              help="Which shard of how many (0-based), e.g. 0/4.")
@_threads_option
def shard_cmd(instance: Path, fmt: str, sides: str | None, size: Size | None, hamming: int,
              out: Path, zone_id: int, receipt: Path | None, shard: tuple[int, int],
              threads: int) -> None:
    """Walk shard K of S of a zone into the store's shard area (rotation 0, flat rows)."""
    inst = load_instance(instance, fmt, sides, size)
    zone = _zone(inst, hamming, zone_id)
    k, s = shard
    with tqdm(desc=f"shard {k}/{s} zone {zone_id} h={hamming}", unit=" corolles",
              unit_scale=True, delay=1.0, mininterval=progress_interval()) as bar:
        rec = enumerate_shard(out, inst, zone, hamming, k, s, threads=threads,
                              progress=bar.update)
    state = "already there" if rec["skipped"] else f"written in {rec['seconds']:.2f} s"
    what = ("zone already gathered" if "shard" not in rec
            else f"{rec.get('rows', 0):,} rows, {state}")
    _report(rec, receipt, f"{out}: shard {k}/{s} zone={zone_id} hamming={hamming}: {what}")


@click.command("gather")
@_instance_arg
@instance_options
@_store_options
@click.option("--shards", type=click.IntRange(1, MAX_SHARDS), required=True,
              help="How many shards the zone was cut into.")
def gather(instance: Path, fmt: str, sides: str | None, size: Size | None, hamming: int,
           out: Path, zone_id: int, receipt: Path | None, shards: int) -> None:
    """Publish a zone's rotation-0 flat partition from its shards (in order)."""
    inst = load_instance(instance, fmt, sides, size)
    p = gather_shards(out, inst, _zone(inst, hamming, zone_id), hamming, shards)
    _records([p], receipt, f"{out}: gathered")


def _records(results: list[PartitionResult], receipt: Path | None, what: str) -> None:
    doc = [dataclasses.asdict(p) for p in results]
    if receipt is not None:
        atomic_write_text(receipt, json.dumps(doc, indent=1) + "\n")
    click.echo("\n".join(_partition_line(p, what) for p in results) or f"{what}: nothing to do")


@click.command("rotate")
@_instance_arg
@instance_options
@_store_options
@click.option("--rotation", "rotations", type=click.IntRange(1, 3), multiple=True,
              help="Rotation(s) to derive from rotation 0 (repeatable; default: every "
              "rotation the zone's members need).")
@click.option("--form", type=click.Choice(FORMS), required=True, help="Form to rotate.")
@click.option("--force", is_flag=True, help="Rewrite partitions that are complete.")
def rotate(instance: Path, fmt: str, sides: str | None, size: Size | None, hamming: int,
           out: Path, zone_id: int, receipt: Path | None, rotations: tuple[int, ...],
           form: str, force: bool) -> None:
    """The rotator: derive a zone's rotation-r partitions of a form from its rotation 0."""
    inst = load_instance(instance, fmt, sides, size)
    zone = _zone(inst, hamming, zone_id)
    todo = sorted(set(rotations)) if rotations else zone.rotations[1:]
    _records([rotate_partition(out, inst, zone, hamming, r, form, force=force) for r in todo],
             receipt, f"{out}: rotated")


@click.command("encode")
@_instance_arg
@instance_options
@_store_options
@click.option("--rotation", "rotations", type=click.IntRange(0, 3), multiple=True,
              help="Rotation(s) to encode (repeatable; default: every rotation the zone's "
              "members need).")
@click.option("--form", type=click.Choice(("prefix", "cartesian")), required=True,
              help="prefix: from the rotation's flat rows; cartesian: from the stems.")
@_threads_option
@click.option("--force", is_flag=True, help="Rewrite partitions that are complete.")
def encode(instance: Path, fmt: str, sides: str | None, size: Size | None, hamming: int,
           out: Path, zone_id: int, receipt: Path | None, rotations: tuple[int, ...],
           form: str, threads: int, force: bool) -> None:
    """Encode a zone's partitions into a compact form (cartesian: the stems are built once
    and turned for the other rotations)."""
    inst = load_instance(instance, fmt, sides, size)
    zone = _zone(inst, hamming, zone_id)
    todo = sorted(set(rotations)) if rotations else zone.rotations
    _records(encode_partitions(out, inst, zone, hamming, todo, form, force=force,
                               threads=threads), receipt, f"{out}: encoded")


COMMANDS = [plan, shard_cmd, gather, rotate, encode]
