"""Store writing split into pipeline stages, one Snakemake job each.

`e2store enumerate` writes a zone's partitions in one process; these stages write the same
partitions in smaller steps that a workflow can spread over jobs and machines:

* **plan**: the exact corolles of every zone (factorised count, fast) and how many shards
  its walk is split into (`shard_corolles` corolles per shard at most).
* **shard**: one contiguous range of the zone's depth-first walk (the subtrees below a range
  of prefixes: centre piece first, then ring 1), written as rotation-0 flat files under
  `STORE/.shards/`; ranges are balanced by their corolle counts.
* **gather**: the shards of a zone published, in order, as its rotation-0 flat partition
  (the rows are exactly those of an unsharded walk, in the same order).
* **rotate** (the rotator): rotation r of a form derived from its rotation 0 by the
  ring-shift rule, file by file.
* **encode**: the prefix form of a rotation from its flat rows; the cartesian form of a
  rotation from the instance's stems.

Every stage stages its files under `STORE/.staging/`, publishes them with a rename, skips
work that is already complete, and refreshes the manifest.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from e2store.corolles.enumerate import corolle_layout, level_prefixes
from e2store.corolles.factorised import (
    balanced_bounds,
    count_factorised,
    layout_cartesian_rows,
    prefix_corolles,
    stem_work,
)
from e2store.corolles.forms import CartesianRows, prefix_decode, rotate_cells
from e2store.corolles.placements import (
    placements_from_hex,
    placements_hex,
    placements_seen,
    rotate_placements,
)
from e2store.errors import StoreError
from e2store.instance.model import Instance
from e2store.store.build import write_cartesian_partitions, write_walked_partitions
from e2store.store.defaults import DEFAULT_MAX_SHARDS, DEFAULT_SHARD_COROLLES
from e2store.store.defaults import MAX_SHARDS as MAX_SHARDS  # declared there, used here
from e2store.store.layout import (
    FORM_FILE,
    FORMS,
    ROWS_PER_FILE,
    STORE_CHUNK_ROWS,
    cartesian_schema,
    flat_schema,
    layout_metadata,
    meta_name,
    partition_dir,
    prefix_schema,
)
from e2store.store.read import checked_paths, damaged, read_record
from e2store.store.records import dump_doc, load_doc, load_record
from e2store.store.write import (
    FileSeq,
    PartitionResult,
    check_rotations,
    clean_staging,
    partition_record,
    publish_partition,
    result_of,
    staging_run,
    store_lock,
    write_instance_file,
    write_manifest,
)
from e2store.zones.geometry import n_slots
from e2store.zones.zonemap import Zone, zone_map

SHARDS = ".shards"
SHARD_META = "_shard.json"
PREFIXES_PER_SHARD = 16  # prefixes per shard at least, so ranges can be balanced


# plan -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class ZonePlan:
    """How one zone is written: its corolles (exact) and the shards of its walk."""

    zone: int
    x: int
    y: int
    rotations: tuple[int, ...]
    corolles: int
    shards: int
    seconds: float

    def to_dict(self) -> dict:
        return {"zone": self.zone, "x": self.x, "y": self.y, "rotations": list(self.rotations),
                "corolles": self.corolles, "shards": self.shards,
                "seconds": round(self.seconds, 6)}


def plan_zones(instance: Instance, hamming: int, *,
               shard_corolles: int = DEFAULT_SHARD_COROLLES,
               max_shards: int = DEFAULT_MAX_SHARDS, threads: int = 1) -> list[ZonePlan]:
    """Per zone: exact corolles (factorised count) and ceil(corolles / shard_corolles)
    shards, at most `max_shards` (hamming 0 and 1 zones are never sharded: they are small)."""
    if shard_corolles < 1:
        raise StoreError(f"shard_corolles must be >= 1, got {shard_corolles}")
    if not 1 <= max_shards <= MAX_SHARDS:
        raise StoreError(f"max_shards must be in 1..{MAX_SHARDS}, got {max_shards}")
    out = []
    for z in zone_map(instance.width, instance.height, hamming).zones:
        c = count_factorised(instance, z.x, z.y, hamming, threads=threads)
        want = -(-c.corolles // shard_corolles) if hamming >= 2 else 1
        out.append(ZonePlan(z.id, z.x, z.y, tuple(z.rotations), c.corolles,
                            int(min(max(want, 1), max_shards)), c.seconds))
    return out


# shards ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class ShardSplit:
    """The zone's walk cut into `shards` contiguous ranges of depth-`depth` prefixes."""

    prefixes: np.ndarray  # (n, depth) placements, depth-first order
    nodes: int  # placements made to build the prefixes (partial fillings, dead ends too)
    bounds: np.ndarray  # (shards + 1,) prefix index ranges
    weights: np.ndarray  # (n,) corolles below each prefix

    def range(self, shard: int) -> np.ndarray:
        return self.prefixes[self.bounds[shard]:self.bounds[shard + 1]]


def shard_split(instance: Instance, zone: Zone, hamming: int, shards: int) -> ShardSplit:
    """Cut the zone's walk at the shallowest stem depth giving PREFIXES_PER_SHARD prefixes
    per shard (the centre piece first), weigh each prefix by its corolles (factorised count)
    and split the prefixes into `shards` contiguous ranges of about equal weight.

    Deterministic: every shard job computes the same split.
    """
    if shards < 1:
        raise StoreError(f"shards must be >= 1, got {shards}")
    layout = corolle_layout(instance.width, instance.height, zone.x, zone.y, hamming)
    work = stem_work(instance, layout, 1, 1)
    depth_max = max(1, min(work.n_stem, layout.n_levels - 1)) if layout.n_levels > 1 else 0
    depth, pref, nodes = 0, level_prefixes(layout, work.table, 0), 0
    while depth < depth_max and len(pref) < PREFIXES_PER_SHARD * shards:
        depth += 1
        pref = level_prefixes(layout, work.table, depth)
        nodes += len(pref)
    weights = np.zeros(len(pref), dtype=np.int64)
    if len(pref):  # depth <= n_stem: the factorised kernel counts below each prefix
        weights = prefix_corolles(work, pref)
    return ShardSplit(pref, nodes, balanced_bounds(weights, shards), weights)


def shard_dir(root: Path, instance_id: str, hamming: int, zone: int, shard: int,
              shards: int) -> Path:
    return (Path(root) / SHARDS / f"instance={instance_id}" / f"hamming={hamming}"
            / f"zone={zone}" / f"shard={shard}-of-{shards}")


def _check_shard(shard: int, shards: int) -> None:
    if not 1 <= shards <= MAX_SHARDS or not 0 <= shard < shards:
        raise StoreError(f"shard {shard} of {shards}: expected 0 <= shard < shards <= "
                         f"{MAX_SHARDS} (written K/S, e.g. 0/4)")


def enumerate_shard(root: Path, instance: Instance, zone: Zone, hamming: int, shard: int,
                    shards: int, *, threads: int = 1, progress=None,
                    rows_per_file: int = ROWS_PER_FILE,
                    chunk_rows: int = STORE_CHUNK_ROWS) -> dict:
    """Walk shard `shard` of `shards` of the zone and publish its rotation-0 flat files
    under STORE/.shards/; returns the shard record (skipped when the shard or the whole
    partition is already there)."""
    _check_shard(shard, shards)
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    clean_staging(root)
    write_instance_file(root, instance)
    final = partition_dir(root, instance.id, hamming, zone.id, 0, "flat")
    if (final / meta_name("flat")).exists():
        return {**load_record(final / meta_name("flat"), root), "skipped": True}
    target = shard_dir(root, instance.id, hamming, zone.id, shard, shards)
    if (target / SHARD_META).exists():
        record = load_doc(target / SHARD_META, root, "shard record")
        if shards == 1:  # a run killed between publishing the shard and the partition
            gather_shards(root, instance, zone, hamming, 1)
        return {**record, "skipped": True}
    t0 = time.perf_counter()
    split = shard_split(instance, zone, hamming, shards)
    layout = corolle_layout(instance.width, instance.height, zone.x, zone.y, hamming)
    with staging_run(root) as staging:
        stage = staging / "shard"
        stage.mkdir()
        # the prefix walk's nodes are counted once, by shard 0: the shards' nodes add up to
        # the unsharded walk's
        done, nodes, seen = write_walked_partitions(instance, zone, hamming, layout, [(0, "flat")],
                                    {0: stage}, threads, chunk_rows, rows_per_file, progress,
                                    prefixes=split.range(shard),
                                    nodes=split.nodes if shard == 0 else 0)
        files, rows, _, _ = done[(0, "flat")]
        record = {"instance": instance.id, "hamming": hamming, "zone": zone.id,
                  "shard": shard, "shards": shards,
                  "prefixes": [int(split.bounds[shard]), int(split.bounds[shard + 1])],
                  "prefix_depth": int(split.prefixes.shape[1]), "rows": rows,
                  "nodes": nodes, "seconds": round(time.perf_counter() - t0, 6),
                  "files": files, "placements": placements_hex(seen)}
        (stage / SHARD_META).write_text(dump_doc(record))
        with store_lock(root):
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists():  # files of a killed attempt without a record
                shutil.rmtree(target)
            os.replace(stage, target)
    if shards == 1:  # a zone in one shard is published at once (nothing to gather)
        gather_shards(root, instance, zone, hamming, 1)
    return {**record, "skipped": False}


def gather_shards(root: Path, instance: Instance, zone: Zone, hamming: int,
                  shards: int) -> PartitionResult:
    """Publish the zone's rotation-0 flat partition from its `shards` shards, in order."""
    _check_shard(0, shards)
    root = Path(root)
    final = partition_dir(root, instance.id, hamming, zone.id, 0, "flat")
    if (final / meta_name("flat")).exists():
        return result_of(load_record(final / meta_name("flat"), root), skipped=True)
    dirs = [shard_dir(root, instance.id, hamming, zone.id, k, shards) for k in range(shards)]
    records = []
    for k, d in enumerate(dirs):
        if not (d / SHARD_META).exists():
            raise StoreError(f"{d}: shard {k} of {shards} of zone {zone.id} (hamming "
                             f"{hamming}) is missing; run `e2store stage shard INSTANCE --store "
                             f"{root} --hamming {hamming} --zone {zone.id} --shard "
                             f"{k}/{shards}`")
        records.append(load_doc(d / SHARD_META, root, "shard record"))
    rows = sum(r["rows"] for r in records)
    with staging_run(root) as staging:
        stage = staging / "partition"
        stage.mkdir()
        files: list[dict] = []
        for d, rec in zip(dirs, records, strict=True):
            for f in rec["files"]:
                if f["rows"] == 0 and (rows or files):
                    continue  # empty shards add no file (an empty zone keeps one)
                name = f"{FORM_FILE['flat']}-{len(files):05d}.parquet"
                os.link(d / f["file"], stage / name)  # shards stay intact until published
                files.append({**f, "file": name})
        seen = placements_seen(hamming, instance.n_pieces)
        for rec in records:
            seen |= placements_from_hex(rec["placements"], instance.n_pieces)
        meta = partition_record(instance, zone, hamming, 0, "flat", rows=rows, corolles=rows,
                                nodes=sum(r["nodes"] for r in records),
                                seconds=sum(r["seconds"] for r in records), files=files,
                                shards=shards, placements=placements_hex(seen))
        (stage / meta_name("flat")).write_text(dump_doc(meta))
        with store_lock(root):
            publish_partition(stage, root, (instance.id, hamming, zone.id, 0), staging / "old",
                              ["flat"], listed=True)
    shutil.rmtree(dirs[0].parent, ignore_errors=True)
    write_manifest(root)
    return result_of(meta, skipped=False)


# rotator and encoders -------------------------------------------------------------------

def _row_groups(root: Path, instance_id: str, hamming: int, zone: int, rotation: int,
                form: str) -> Iterator[tuple[int, pa.Table]]:
    """(file index, table) per row group of a complete partition, files checked first."""
    files = checked_paths(root, instance_id, hamming, zone, rotation, form)
    for i, (path, pf) in enumerate(files):
        if pf.num_row_groups == 0:
            yield i, pf.schema_arrow.empty_table()
        for g in range(pf.num_row_groups):
            try:
                t = pf.read_row_group(g)
            except (OSError, ValueError, pa.ArrowException) as e:
                raise damaged(path, root, e) from None
            yield i, t


def _flat_cells(t: pa.Table, hamming: int) -> np.ndarray:
    """Slot-major cells (S, n) of a flat table."""
    S = n_slots(hamming)
    cells = np.empty((S, len(t)), dtype=np.int16)
    for i in range(S):
        cells[i] = t.column(i).to_numpy()
    return cells


def _prefix_cells(t: pa.Table, hamming: int, last: np.ndarray | None) -> np.ndarray:
    """Row-major cells of a prefix-form row group; `last` is the file's previous row."""
    S = n_slots(hamming)
    suffix = np.zeros((len(t) + 1, S), dtype=np.int16)
    shared = np.zeros(len(t) + 1, dtype=np.int64)
    if last is not None:
        suffix[0] = last
    for i in range(S):
        suffix[1:, i] = t.column(f"s{i}").fill_null(0).to_numpy()
    shared[1:] = t.column("shared").to_numpy()
    if last is None and len(t) and shared[1] != 0:
        raise StoreError("a prefix-form file must start with a row that shares nothing")
    return prefix_decode(shared, suffix)[1:]


def _stage_partition(root: Path, instance: Instance, zone: Zone, hamming: int, rotation: int,
                     form: str, write, force: bool, **extra) -> PartitionResult:
    """Skip a complete partition, else stage it with `write(stage) -> (files, rows, corolles,
    nodes, placements)`, record it, publish it and refresh the manifest."""
    root = Path(root)
    final = partition_dir(root, instance.id, hamming, zone.id, rotation, form)
    if not force and (final / meta_name(form)).exists():
        return result_of(load_record(final / meta_name(form), root), skipped=True)
    clean_staging(root)
    t0 = time.perf_counter()
    with staging_run(root) as staging:
        stage = staging / "partition"
        stage.mkdir()
        files, rows, corolles, nodes, placements = write(stage)
        meta = partition_record(instance, zone, hamming, rotation, form, rows=rows,
                                corolles=corolles, nodes=nodes,
                                seconds=time.perf_counter() - t0, files=files,
                                placements=placements, **extra)
        (stage / meta_name(form)).write_text(dump_doc(meta))
        with store_lock(root):
            publish_partition(stage, root, (instance.id, hamming, zone.id, rotation),
                              staging / "old", [form], listed=True)
    write_manifest(root)
    return result_of(meta, skipped=False)


def _name_files(stage: Path, form: str, files: list[dict]) -> list[dict]:
    """Rename staged files to the form's sequence `part-00000.parquet`, ... in order."""
    for i, f in enumerate(files):
        name = f"{FORM_FILE[form]}-{i:05d}.parquet"
        os.replace(stage / f["file"], stage / name)
        f["file"] = name
    return files


def rotate_partition(root: Path, instance: Instance, zone: Zone, hamming: int, rotation: int,
                     form: str, *, force: bool = False) -> PartitionResult:
    """The rotator: write rotation `rotation` of `form` from the zone's rotation-0 partition
    of the same form, one output file per input file (flat and prefix rows keep their
    order; cartesian stems are turned with their candidate lists)."""
    if form not in FORMS:
        raise StoreError(f"unknown form {form!r} (expected one of {', '.join(FORMS)})")
    if rotation == 0 or rotation not in zone.rotations:
        raise StoreError(f"zone {zone.id}: rotation {rotation} is not derived (the zone's "
                         f"derived rotations: {', '.join(map(str, zone.rotations[1:])) or 'none'})")
    src = read_record(root, instance.id, hamming, zone.id, 0, form)
    meta = layout_metadata(form, instance.id, hamming, zone.id, rotation)
    schema = {"flat": flat_schema, "prefix": prefix_schema,
              "cartesian": cartesian_schema}[form](hamming, meta)

    def write(stage: Path):
        files: list[dict] = []
        seq, last_file, last_row = None, -1, None
        for i, t in _row_groups(root, instance.id, hamming, zone.id, 0, form):
            if i != last_file:
                if seq is not None:
                    files += seq.close(empty_file=True)
                seq = FileSeq(stage, f"src{i:05d}", schema, ROWS_PER_FILE, form=form,
                              background=True)
                last_file, last_row = i, None
            assert seq is not None
            if form == "cartesian":
                seq.write_table(CartesianRows.from_table(t, hamming).rotated(rotation)
                                .table(schema))
                continue
            if form == "flat":
                cells = _flat_cells(t, hamming)
            else:
                rows = _prefix_cells(t, hamming, last_row)
                last_row = rows[-1].copy() if len(rows) else last_row
                cells = np.ascontiguousarray(rows.T)
            seq.write(rotate_cells(cells, hamming, rotation))
        if seq is not None:
            files += seq.close(empty_file=True)
        turned = None  # a record of an older store may have no placement sets
        if src.get("placements"):
            turned = placements_hex(rotate_placements(
                placements_from_hex(src["placements"], instance.n_pieces), hamming, rotation))
        return (_name_files(stage, form, files), src["rows"], src["corolles"], src["nodes"],
                turned)

    return _stage_partition(root, instance, zone, hamming, rotation, form, write, force,
                            source="rotation 0")


def encode_partitions(root: Path, instance: Instance, zone: Zone, hamming: int,
                      rotations: list[int], form: str, *, force: bool = False,
                      threads: int = 1) -> list[PartitionResult]:
    """The encoders: write `form` of the given rotations — prefix from each rotation's flat
    rows (one prefix file per flat file), cartesian from the instance's stems (built once,
    turned for each rotation)."""
    if form not in ("prefix", "cartesian"):
        raise StoreError(f"encode writes the compact forms prefix and cartesian, not {form!r}")
    rotations = check_rotations(zone, rotations)
    root = Path(root)
    write_instance_file(root, instance)
    layout = corolle_layout(instance.width, instance.height, zone.x, zone.y, hamming)
    stems: list[CartesianRows] = []  # built on first use, shared by the rotations

    def write_prefix(rotation: int, stage: Path):
        src = read_record(root, instance.id, hamming, zone.id, rotation, "flat")
        schema = prefix_schema(hamming, layout_metadata("prefix", instance.id, hamming,
                                                        zone.id, rotation))
        files: list[dict] = []
        seq, last_file = None, -1
        for i, t in _row_groups(root, instance.id, hamming, zone.id, rotation, "flat"):
            if i != last_file:
                if seq is not None:
                    files += seq.close(empty_file=True)
                seq = FileSeq(stage, f"src{i:05d}", schema, ROWS_PER_FILE, form="prefix",
                              background=True)
                last_file = i
            assert seq is not None
            seq.write(_flat_cells(t, hamming))
        if seq is not None:
            files += seq.close(empty_file=True)
        return (_name_files(stage, "prefix", files), src["rows"], src["corolles"],
                src["nodes"], src.get("placements"))

    def write_cartesian(rotation: int, stage: Path):
        if not stems:
            stems.append(layout_cartesian_rows(instance, layout, threads))
        out = write_cartesian_partitions(instance, zone, hamming, layout, [(rotation, "cartesian")],
                               {rotation: stage}, threads, ROWS_PER_FILE, rows=stems[0])
        files, rows, corolles, _, seen = out[(rotation, "cartesian")]
        return files, rows, corolles, 0, placements_hex(rotate_placements(seen, hamming,
                                                                          rotation))

    write = write_prefix if form == "prefix" else write_cartesian
    return [_stage_partition(root, instance, zone, hamming, r, form,
                             lambda stage, r=r: write(r, stage), force,
                             source="flat" if form == "prefix" else "stems")
            for r in rotations]
