"""Store steps for workflows: `e2store stage plan`, `shard`, `gather`, `rotate`, `encode`.

Each writes one step of a zone's partitions (e2store.store.stages) and, with `-o FILE`,
a receipt: the record of what was written as JSON (a Snakemake job's output); `--json`
prints that record on stdout instead of the one-line report.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import click

from e2store.cli.command import command
from e2store.cli.options import (
    COUNT,
    INDEX,
    MAX_SHARDS,
    RAW_FORMS,
    BoundedInt,
    ShardType,
    Size,
    hamming_option,
    instance_argument,
    instance_options,
    json_option,
    load_instance,
    output_option,
    store_option,
    threads_option,
)
from e2store.progress import progress_interval
from e2store.store.defaults import DEFAULT_MAX_SHARDS, DEFAULT_SHARD_COROLLES

# the old spellings of the store steps
LEGACY = {"--out": "--store"}


def _store_options(f: Callable) -> Callable:
    f = json_option("Print the record as JSON on stdout.")(f)
    f = output_option("Also write the record (the receipt) as JSON to this file.")(f)
    f = click.option("--zone", "zone_id", type=INDEX, required=True,
                     help="Zone id (see `e2store zones` or `e2store stage plan`).")(f)
    f = store_option(f)
    return hamming_option(f)


def _zone(inst, hamming: int, zone_id: int):
    from e2store.zones.cells import board_zone

    return board_zone(inst.width, inst.height, hamming, zone_id)


def _report(record, receipt: Path | None, as_json: bool, line: str) -> None:
    from e2store.files import atomic_write_text

    if receipt is not None:
        atomic_write_text(receipt, json.dumps(record, indent=1) + "\n")
    click.echo(json.dumps(record) if as_json else line)


def _partition_line(p, what: str) -> str:
    state = "already complete" if p.skipped else f"written in {p.seconds:.2f} s"
    return (f"{what} zone={p.zone} rotation={p.rotation} form={p.form}: {p.rows:,} rows, "
            f"{p.corolles:,} corolles, {p.bytes:,} bytes, {state}")


@command("plan", legacy_json_file=True, examples=[
    "e2store stage plan demo7.e2s --hamming 2 --shard-corolles 50000000 -o plan.json",
])
@instance_argument
@instance_options
@hamming_option
@click.option("--shard-corolles", type=COUNT, default=DEFAULT_SHARD_COROLLES,
              show_default=True, help="Corolles per shard at most (hamming >= 2 zones).")
@click.option("--max-shards", type=BoundedInt(1, MAX_SHARDS), default=DEFAULT_MAX_SHARDS,
              show_default=True, help="Shards per zone at most.")
@threads_option
@output_option("Also write the plan as JSON to this file.")
@json_option("Print the plan as JSON on stdout.")
def plan(instance: Path, fmt: str, sides: str | None, size: Size | None, hamming: int,
         shard_corolles: int, max_shards: int, threads: int, output: Path | None,
         as_json: bool) -> None:
    """Count every zone exactly (factorised) and decide how many shards its walk needs."""
    from e2store.store.stages import plan_zones

    inst = load_instance(instance, fmt, sides, size)
    zones = plan_zones(inst, hamming, shard_corolles=shard_corolles, max_shards=max_shards,
                       threads=threads)
    doc = {"instance": inst.id, "width": inst.width, "height": inst.height,
           "hamming": hamming, "shard_corolles": shard_corolles, "max_shards": max_shards,
           "zones": [z.to_dict() for z in zones]}
    lines = [f"{'zone':>5} {'x':>3} {'y':>3} {'rotations':>9} {'corolles':>15} {'shards':>6}"]
    lines += [f"{z.zone:>5} {z.x:>3} {z.y:>3} {','.join(map(str, z.rotations)):>9} "
              f"{z.corolles:>15,} {z.shards:>6}" for z in zones]
    _report(doc, output, as_json, "\n".join(lines))


@command("shard", legacy=LEGACY, legacy_json_file=True, examples=[
    "e2store stage shard demo7.e2s --store store/ --hamming 2 --zone 5 --shard 0/4 "
    "-o receipt.json",
])
@instance_argument
@instance_options
@_store_options
@click.option("--shard", "shard", required=True, type=ShardType(MAX_SHARDS),
              help="Which shard of how many (0-based), e.g. 0/4.")
@threads_option
def shard_cmd(instance: Path, fmt: str, sides: str | None, size: Size | None, hamming: int,
              store: Path, zone_id: int, output: Path | None, as_json: bool,
              shard: tuple[int, int], threads: int) -> None:
    """Walk shard K of S of a zone into the store's shard area (rotation 0, flat rows)."""
    from tqdm import tqdm

    from e2store.store.stages import enumerate_shard

    inst = load_instance(instance, fmt, sides, size)
    zone = _zone(inst, hamming, zone_id)
    k, s = shard
    with tqdm(desc=f"shard {k}/{s} zone {zone_id} h={hamming}", unit=" corolles",
              unit_scale=True, delay=1.0, mininterval=progress_interval()) as bar:
        rec = enumerate_shard(store, inst, zone, hamming, k, s, threads=threads,
                              progress=bar.update)
    state = "already there" if rec["skipped"] else f"written in {rec['seconds']:.2f} s"
    what = ("zone already gathered" if "shard" not in rec
            else f"{rec.get('rows', 0):,} rows, {state}")
    _report(rec, output, as_json,
            f"{store}: shard {k}/{s} zone={zone_id} hamming={hamming}: {what}")


@command("gather", legacy=LEGACY, legacy_json_file=True, examples=[
    "e2store stage gather demo7.e2s --store store/ --hamming 2 --zone 5 --shards 4 "
    "-o receipt.json",
])
@instance_argument
@instance_options
@_store_options
@click.option("--shards", type=BoundedInt(1, MAX_SHARDS), required=True,
              help="How many shards the zone was cut into.")
def gather(instance: Path, fmt: str, sides: str | None, size: Size | None, hamming: int,
           store: Path, zone_id: int, output: Path | None, as_json: bool,
           shards: int) -> None:
    """Publish a zone's rotation-0 flat partition from its shards (in order)."""
    from e2store.store.stages import gather_shards

    inst = load_instance(instance, fmt, sides, size)
    p = gather_shards(store, inst, _zone(inst, hamming, zone_id), hamming, shards)
    _records([p], output, as_json, f"{store}: gathered")


def _records(results: list, receipt: Path | None, as_json: bool, what: str) -> None:
    doc = [dataclasses.asdict(p) for p in results]
    _report(doc, receipt, as_json,
            "\n".join(_partition_line(p, what) for p in results) or f"{what}: nothing to do")


@command("rotate", legacy=LEGACY, legacy_json_file=True, examples=[
    "e2store stage rotate demo7.e2s --store store/ --hamming 2 --zone 5 --rotation 1 "
    "--form flat -o receipt.json",
])
@instance_argument
@instance_options
@_store_options
@click.option("--rotation", "rotations", type=BoundedInt(1, 3), multiple=True,
              help="Rotation(s) to derive from rotation 0 (repeatable; default: every "
              "rotation the zone's members need).")
@click.option("--form", type=click.Choice(RAW_FORMS), required=True, help="Form to rotate.")
@click.option("--force", is_flag=True, help="Rewrite partitions that are complete.")
def rotate(instance: Path, fmt: str, sides: str | None, size: Size | None, hamming: int,
           store: Path, zone_id: int, output: Path | None, as_json: bool,
           rotations: tuple[int, ...], form: str, force: bool) -> None:
    """The rotator: derive a zone's rotation-r partitions of a form from its rotation 0."""
    from e2store.store.stages import rotate_partition
    from e2store.zones.cells import zone_rotations

    inst = load_instance(instance, fmt, sides, size)
    zone = _zone(inst, hamming, zone_id)
    todo = zone_rotations(zone, rotations, turned_only=True)
    _records([rotate_partition(store, inst, zone, hamming, r, form, force=force)
              for r in todo], output, as_json, f"{store}: rotated")


@command("encode", legacy=LEGACY, legacy_json_file=True, examples=[
    "e2store stage encode demo7.e2s --store store/ --hamming 2 --zone 5 --form cartesian "
    "-o receipt.json",
])
@instance_argument
@instance_options
@_store_options
@click.option("--rotation", "rotations", type=BoundedInt(0, 3), multiple=True,
              help="Rotation(s) to encode (repeatable; default: every rotation the zone's "
              "members need).")
@click.option("--form", type=click.Choice(("prefix", "cartesian")), required=True,
              help="prefix: from the rotation's flat rows; cartesian: from the stems.")
@threads_option
@click.option("--force", is_flag=True, help="Rewrite partitions that are complete.")
def encode(instance: Path, fmt: str, sides: str | None, size: Size | None, hamming: int,
           store: Path, zone_id: int, output: Path | None, as_json: bool,
           rotations: tuple[int, ...], form: str, threads: int, force: bool) -> None:
    """Encode a zone's partitions of every rotation into a compact form.

    prefix: from each rotation's flat rows; cartesian: the stems are built once and turned
    for the other rotations.
    """
    from e2store.store.stages import encode_partitions
    from e2store.zones.cells import zone_rotations

    inst = load_instance(instance, fmt, sides, size)
    zone = _zone(inst, hamming, zone_id)
    todo = zone_rotations(zone, rotations)
    _records(encode_partitions(store, inst, zone, hamming, todo, form, force=force,
                               threads=threads), output, as_json, f"{store}: encoded")

