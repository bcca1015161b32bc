"""Closures for any solver: each region's corolles and a lookup index by boundary colours,
as Arrow IPC files a C or Rust program memory-maps (`e2store export-closures`).

A region is the corolle of one cell (x, y) at hamming h: every cell within Manhattan
distance h.  For each region `export_closures` writes, into the output directory:

* `region-X-Y.arrow`: one row per corolle, the flat columns (`s0..` int16 placements
  `piece*4 + r` in ring order, -1 off the board; `f0..` int8 frontier colours, -1 off the
  board), sorted by the frontier (`f0`, `f1`, ... then the slots);
* `region-X-Y.index.arrow`: one row per distinct frontier, sorted: `f0..` then `start` and
  `count` (int64): the region's rows with that frontier are `[start, start + count)`.
  A solver that knows the colours around a region asks whether it can still be completed
  with one binary search; knowing only the first k frontier colours, a range of the
  index answers;
* `regions.json`: what was written (cell, hamming, rows, keys, files with their SHA-256).

Each file is one uncompressed record batch, so its columns are contiguous arrays in place
(docs/store-format.md, *Closures for other solvers*).  The schema metadata names the
instance, hamming, cell, the slots' offsets and the frontier's layout.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from e2store.errors import MissingZoneError, ZoneError
from e2store.files import atomic_write_text, write_table
from e2store.instance.model import Instance
from e2store.store.layout import RAW_FORMS, flat_schema, layout_metadata
from e2store.store.read import read_manifest, read_partition
from e2store.zones.geometry import ring_offsets
from e2store.zones.zonemap import zone_map

REGION_FORMAT = "e2store-region"
REGION_VERSION = 1


def region_rows(root: Path, instance: Instance, hamming: int, x: int, y: int,
                manifest: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(cells, frontier) of every corolle at (x, y), read from the first raw form the
    store holds for the cell's zone and rotation (MissingZoneError naming what to run)."""
    if not (0 <= x < instance.width and 0 <= y < instance.height):
        raise ZoneError(f"cell ({x}, {y}) is off the {instance.width}x{instance.height} board")
    zm = zone_map(instance.width, instance.height, hamming)
    zone, rot = zm.zone_at(x, y), zm.rotation_at(x, y)
    have = {p["form"] for p in (manifest or read_manifest(root))["partitions"]
            if (p["instance"], p["hamming"], p["zone"], p["rotation"])
            == (instance.id, hamming, zone.id, rot)}
    form = next((f for f in RAW_FORMS if f in have), None)
    if form is None:
        raise MissingZoneError(f"store {root} has no partition of hamming {hamming} zone "
                               f"{zone.id} rotation {rot} (cell ({x}, {y})): run `e2store "
                               f"enumerate INSTANCE --store {root} --hamming {hamming} --at "
                               f"{x},{y}`")
    return read_partition(root, instance.id, hamming, zone.id, rot, form)


def _sorted(cells: np.ndarray, front: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    keys = np.hstack([front.astype(np.int16), cells.astype(np.int16)])
    order = np.lexsort(keys.T[::-1]) if len(keys) else np.zeros(0, np.int64)
    return cells[order], front[order]


def region_tables(instance: Instance, hamming: int, x: int, y: int, cells: np.ndarray,
                  front: np.ndarray) -> tuple[pa.Table, pa.Table]:
    """The region's rows sorted by frontier, and its index (frontier, start, count)."""
    cells, front = _sorted(cells, front)
    meta = {**layout_metadata("flat", instance.id, hamming, -1, -1),
            "format": REGION_FORMAT, "version": str(REGION_VERSION), "x": str(x),
            "y": str(y), "cells": json.dumps([[x + int(dx), y + int(dy)]
                                              for dx, dy in ring_offsets(hamming)])}
    for k in ("e2store.form", "e2store.zone", "e2store.rotation"):
        meta.pop(k)
    schema = flat_schema(hamming, meta, frontier=True)
    data = np.hstack([cells, front]) if len(cells) else np.zeros((0, len(schema)), np.int16)
    rows = pa.Table.from_arrays([pa.array(np.ascontiguousarray(data[:, i]), type=f.type)
                                 for i, f in enumerate(schema)], schema=schema)
    if len(front):
        new = np.ones(len(front), dtype=bool)
        new[1:] = (front[1:] != front[:-1]).any(axis=1)
        start = np.flatnonzero(new)
    else:
        start = np.zeros(0, np.int64)
    count = np.diff(np.append(start, len(front)))
    fields = [schema.field(f"f{i}") for i in range(front.shape[1])]
    index = pa.Table.from_arrays(
        [pa.array(np.ascontiguousarray(front[start, i]), type=pa.int8())
         for i in range(front.shape[1])]
        + [pa.array(start.astype(np.int64)), pa.array(count.astype(np.int64))],
        schema=pa.schema(fields + [pa.field("start", pa.int64()),
                                   pa.field("count", pa.int64())], metadata=meta))
    return rows, index


def export_closures(root: str | Path, instance: Instance, hamming: int,
                    cells: Sequence[tuple[int, int]], out: str | Path, progress=None,
                    ) -> list[dict]:
    """Write each cell's region and index into `out` (module docstring); returns the
    entries of `regions.json`."""
    from e2store.files import sha256_file

    root, out = Path(root), Path(out)
    manifest = read_manifest(root)
    entries = []
    for x, y in dict.fromkeys(cells):
        c, f = region_rows(root, instance, hamming, x, y, manifest)
        rows, index = region_tables(instance, hamming, x, y, c, f)
        files = []
        for name, table in ((f"region-{x}-{y}.arrow", rows),
                            (f"region-{x}-{y}.index.arrow", index)):
            write_table(out / name, table)
            files.append({"file": name, "rows": table.num_rows,
                          "bytes": (out / name).stat().st_size,
                          "sha256": sha256_file(out / name)})
        entries.append({"x": x, "y": y, "hamming": hamming, "corolles": rows.num_rows,
                        "keys": index.num_rows, "files": files})
        if progress:
            progress(f"region ({x}, {y}): {rows.num_rows:,} corolles, {index.num_rows:,} keys")
    atomic_write_text(out / "regions.json", json.dumps(
        {"format": REGION_FORMAT, "version": REGION_VERSION, "instance": instance.id,
         "regions": entries}, indent=1) + "\n")
    return entries


def export_store_closures(root: str | Path, instance_id: str, hamming: int,
                          cells: Sequence[tuple[int, int]], out: str | Path,
                          progress=None) -> list[dict]:
    """`export_closures` of the store's instance `instance_id` (read from the copy the
    store keeps; MissingInstanceError when it keeps none): what `e2store export-closures`
    writes."""
    from e2store.errors import MissingInstanceError
    from e2store.store.layout import instance_path
    from e2store.store.read import read_store_instance

    root = Path(root)
    path = instance_path(root, instance_id)
    if not path.exists():
        raise MissingInstanceError(f"{root}: no instance {path.stem!r} in the store")
    inst = read_store_instance(root, path.stem)
    return export_closures(root, inst, hamming, cells, out, progress=progress)
