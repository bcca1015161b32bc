"""The on-disk corolle store: flat form, hive-partitioned Parquet + zstd, with a manifest.

Layout (declared once, here)::

    STORE/manifest.json                                       every partition, aggregated
    STORE/instance=<id>/instance.e2s                          the instance (canonical format)
    STORE/instance=<id>/hamming=<h>/zone=<z>/rotation=<r>/part-00000.parquet ...
    STORE/instance=<id>/hamming=<h>/zone=<z>/rotation=<r>/_partition.json

A flat row is one corolle: columns `s0..s{S-1}` (int16 packed `piece*4+r` in ring order,
-1 off the board) then `f0..f{F-1}` (int8 frontier colours, -1 off the board).  Partition
values live in the path only.  A partition directory is built under `STORE/.staging/` and
renamed into place when complete, so a killed run never leaves a partial partition visible;
a rerun skips complete partitions and finishes the rest.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import itertools
import json
import os
import shutil
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from . import _kernels
from .enumerate import _choose_prefix_depth, _iter_levels, candidate_table, corolle_layout
from .errors import StoreError
from .geometry import frontier_layout, n_frontier, n_slots, ring_offsets, rotation_permutation
from .instance import Instance
from .zones import Zone, zone_map

FORMAT_VERSION = 1
FORMS = ("flat",)
MANIFEST = "manifest.json"
PARTITION_META = "_partition.json"
STAGING = ".staging"
LOCK = ".lock"
ROWS_PER_FILE = 1 << 25
STORE_CHUNK_ROWS = 1 << 19  # rows per chunk = per row group
TASKS_PER_ZONE = 64  # fixed, so that output files do not depend on --threads
SPILL_ROWS = 1 << 18  # a task with more rows writes its own files instead of merging
ZSTD_LEVEL = 3


def partition_dir(root: Path, instance_id: str, hamming: int, zone: int, rotation: int) -> Path:
    return Path(root) / f"instance={instance_id}" / f"hamming={hamming}" / f"zone={zone}" / (
        f"rotation={rotation}")


def flat_schema(hamming: int, metadata: dict[str, str] | None = None) -> pa.Schema:
    """Arrow schema of a flat partition at hamming h."""
    fields = [pa.field(f"s{i}", pa.int16()) for i in range(n_slots(hamming))]
    fields += [pa.field(f"f{i}", pa.int8()) for i in range(n_frontier(hamming))]
    return pa.schema(fields, metadata=metadata)


def layout_metadata(form: str, instance_id: str, hamming: int, zone: int, rotation: int,
                    ) -> dict[str, str]:
    """Parquet key-value metadata: enough for a reader to check what it opened."""
    fslots, fsides = frontier_layout(hamming)
    return {
        "e2store.format_version": str(FORMAT_VERSION),
        "e2store.form": form,
        "e2store.instance": instance_id,
        "e2store.hamming": str(hamming),
        "e2store.zone": str(zone),
        "e2store.rotation": str(rotation),
        "e2store.slots": json.dumps(ring_offsets(hamming).tolist()),
        "e2store.frontier": json.dumps(
            [[int(a), int(b)] for a, b in zip(fslots, fsides, strict=True)]
        ),
    }


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def atomic_write_text(path: Path, text: str) -> None:
    """Write a text file atomically (temp file in the same directory, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def _flock(path: Path, blocking: bool = True):
    """Hold an exclusive advisory lock on `path` (created if missing); yields False if
    `blocking` is off and another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing releases the lock


def _store_lock(root: Path):
    """The store-wide lock, held briefly to publish partitions and rewrite the manifest."""
    return _flock(Path(root) / LOCK)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return float("inf")


def clean_staging(root: Path) -> int:
    """Remove staging runs left by killed processes (their run lock is free); returns count.

    Live runs, in this or other processes, hold their run lock and are left alone, so
    several `enumerate` processes may write into one store at once.
    """
    staging = Path(root) / STAGING
    if not staging.is_dir():
        return 0
    removed = 0
    young = time.time() - 5.0  # a run being set up may not hold its lock yet
    for lock in staging.glob("*.lock"):
        if _mtime(lock) > young:
            continue
        with _flock(lock, blocking=False) as mine:
            if mine:
                shutil.rmtree(staging / lock.stem, ignore_errors=True)
                lock.unlink(missing_ok=True)
                removed += 1
    for d in staging.iterdir():  # a run dir whose lock is gone was abandoned mid-cleanup
        if d.is_dir() and _mtime(d) <= young and not (staging / f"{d.name}.lock").exists():
            shutil.rmtree(d, ignore_errors=True)
            removed += 1
    return removed


class _FileSeq:
    """One partition's Parquet files written in order, each of at most `rows_per_file` rows.

    Called with slot-major chunks (cells (S, n), frontier (F, n)); each chunk is a row group.
    """

    def __init__(self, directory: Path, stem: str, schema: pa.Schema, rows_per_file: int,
                 group_rows: int = STORE_CHUNK_ROWS):
        self.dir, self.stem, self.schema = directory, stem, schema
        self.rows_per_file = rows_per_file
        self.group_rows = group_rows
        self.files: list[dict] = []
        self._writer: pq.ParquetWriter | None = None
        self._file_rows = 0
        self._pending: list[tuple[np.ndarray, np.ndarray]] = []
        self._pending_rows = 0

    def write(self, cells: np.ndarray, front: np.ndarray) -> None:
        """Queue a chunk; small chunks are gathered into row groups of ~group_rows rows."""
        self._pending.append((cells, front))
        self._pending_rows += cells.shape[1]
        if self._pending_rows >= self.group_rows:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        if len(self._pending) == 1:
            cells, front = self._pending[0]
        else:
            cells = np.concatenate([c for c, _ in self._pending], axis=1)
            front = np.concatenate([f for _, f in self._pending], axis=1)
        self._pending, self._pending_rows = [], 0
        n, off = cells.shape[1], 0
        while off < n:
            if self._writer is None:
                self._open()
            assert self._writer is not None
            take = min(n - off, self.rows_per_file - self._file_rows)
            cols = [pa.array(c[off:off + take]) for c in cells]
            cols += [pa.array(f[off:off + take]) for f in front]
            self._writer.write_table(pa.Table.from_arrays(cols, schema=self.schema))
            self._file_rows += take
            self.files[-1]["rows"] += take
            off += take
            if self._file_rows == self.rows_per_file:
                self._finish()

    def close(self, *, empty_file: bool = False) -> list[dict]:
        """Finish the open file; with `empty_file`, write a schema-only file if none exists."""
        self._flush()
        if empty_file and not self.files:
            self._open()
        if self._writer is not None:
            self._finish()
        return self.files

    def abort(self) -> None:
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()
            self._writer = None

    def _open(self) -> None:
        name = f"{self.stem}-{len(self.files):05d}.parquet"
        self._writer = pq.ParquetWriter(self.dir / name, self.schema, compression="zstd",
                                        compression_level=ZSTD_LEVEL, use_dictionary=True,
                                        data_page_version="2.0", write_statistics=False)
        self.files.append({"file": name, "rows": 0})
        self._file_rows = 0

    def _finish(self) -> None:
        assert self._writer is not None
        self._writer.close()
        self._writer = None
        path = self.dir / self.files[-1]["file"]
        self.files[-1].update(bytes=path.stat().st_size, sha256=_sha256(path))


@dataclass
class _TaskResult:
    """A prefix task's output: small ones buffered in memory, big ones already in files."""

    rows: int
    nodes: int
    buffers: dict[int, list[tuple[np.ndarray, np.ndarray]]] | None
    files: dict[int, list[dict]] | None


class _Stopped(Exception):
    pass


@dataclass
class PartitionResult:
    """What was written (or found complete) for one zone/rotation partition."""

    zone: int
    rotation: int
    x: int
    y: int
    rows: int
    corolles: int
    nodes: int
    seconds: float
    bytes: int
    skipped: bool


def write_instance_file(root: Path, instance: Instance) -> Path:
    """Keep the instance inside the store, so the store is self-describing."""
    from .formats import write_e2store

    path = Path(root) / f"instance={instance.id}" / "instance.e2s"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_e2store(instance, path)
    return path


def enumerate_zone(root: Path, instance: Instance, zone: Zone, hamming: int, *,
                   force: bool = False, threads: int = 1, chunk_rows: int = STORE_CHUNK_ROWS,
                   rows_per_file: int = ROWS_PER_FILE, progress=None) -> list[PartitionResult]:
    """Enumerate a zone at its canonical cell and write the flat partitions of its rotations.

    Rotation 0 is enumerated; the other rotations its members need are derived chunk by
    chunk with the ring-shift rule.  The search is split into TASKS_PER_ZONE prefix tasks
    run by `threads` workers; a task small enough is buffered and merged serially with its
    neighbours, a big one writes its own files.  Files keep depth-first order, and neither
    their content nor their boundaries depend on `threads`.
    """
    root = Path(root)
    rotations = zone.rotations
    finals = {r: partition_dir(root, instance.id, hamming, zone.id, r) for r in rotations}
    todo = [r for r in rotations if force or not (finals[r] / PARTITION_META).exists()]
    results: list[PartitionResult] = []
    for r in rotations:
        if r not in todo:
            meta = json.loads((finals[r] / PARTITION_META).read_text())
            results.append(PartitionResult(zone.id, r, meta["x"], meta["y"], meta["rows"],
                                           meta["corolles"], meta["nodes"], meta["seconds"],
                                           sum(f["bytes"] for f in meta["files"]), True))
    if not todo:
        return results
    t0 = time.perf_counter()
    layout = corolle_layout(instance.width, instance.height, zone.x, zone.y, hamming)
    table = candidate_table(instance, layout)
    prefixes, nodes = _choose_prefix_depth(layout, table, TASKS_PER_ZONE)
    batches = np.array_split(prefixes, min(len(prefixes), TASKS_PER_ZONE)) if len(
        prefixes) else []
    run = uuid.uuid4().hex[:12]
    staging_root = root / STAGING / run
    (root / STAGING).mkdir(parents=True, exist_ok=True)
    dirs = {r: staging_root / f"zone={zone.id}-rotation={r}" for r in todo}
    schemas = {r: flat_schema(hamming, layout_metadata("flat", instance.id, hamming, zone.id, r))
               for r in todo}
    shift = 2 * hamming + 1
    perms = {r: rotation_permutation(hamming, r) for r in todo}
    stop = threading.Event()
    tick_lock = threading.Lock()

    def task(idx: int, batch: np.ndarray) -> _TaskResult:
        buffers: dict | None = {r: [] for r in todo}
        seqs: dict[int, _FileSeq] = {}
        rows = task_nodes = 0
        try:
            for prefix in batch:
                box: list[int] = []
                for cells, front in _iter_levels(layout, table, chunk_rows, prefix,
                                                 nodes_out=box):
                    if stop.is_set():
                        raise _Stopped
                    out = {r: (cells, front) if r == 0 else
                           _kernels.rotate_rows(cells, front, perms[r], r, shift * r)
                           for r in todo}
                    rows += cells.shape[1]
                    if buffers is not None and rows > SPILL_ROWS:
                        seqs = {r: _FileSeq(dirs[r], f"task-{idx:05d}", schemas[r],
                                            rows_per_file) for r in todo}
                        for r in todo:
                            for c, f in buffers[r]:
                                seqs[r].write(c, f)
                        buffers = None
                    for r in todo:
                        if buffers is None:
                            seqs[r].write(*out[r])
                        else:
                            buffers[r].append(out[r])
                    if progress is not None:
                        with tick_lock:
                            progress(cells.shape[1])
                task_nodes += box[0] if box else 0
            files = {r: seqs[r].close() for r in todo} if buffers is None else None
        except BaseException:
            for q in seqs.values():
                q.abort()
            raise
        return _TaskResult(rows, task_nodes, buffers, files)

    with _flock(root / STAGING / f"{run}.lock"):
        merge: dict[int, _FileSeq] = {}
        try:
            for d in dirs.values():
                d.mkdir(parents=True)
            pieces: dict[int, list[dict]] = {r: [] for r in todo}
            total = 0

            def flush_merge() -> None:
                for r, q in merge.items():
                    pieces[r] += q.close()
                merge.clear()

            with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
                pending: deque = deque()
                queue_ = iter(enumerate(batches))
                try:
                    for idx, b in itertools.islice(queue_, 2 * max(1, threads)):
                        pending.append((idx, pool.submit(task, idx, b)))
                    while pending:
                        idx, fut = pending.popleft()
                        res = fut.result()
                        nxt = next(queue_, None)
                        if nxt is not None:
                            pending.append((nxt[0], pool.submit(task, *nxt)))
                        total += res.rows
                        nodes += res.nodes
                        if res.files is not None:
                            flush_merge()
                            for r in todo:
                                pieces[r] += res.files[r]
                        else:
                            assert res.buffers is not None
                            for r in todo:
                                if r not in merge:
                                    merge[r] = _FileSeq(dirs[r], f"merge-{idx:05d}", schemas[r],
                                                        rows_per_file)
                                for c, f in res.buffers[r]:
                                    merge[r].write(c, f)
                except BaseException:
                    stop.set()
                    for _, fut in pending:
                        fut.cancel()
                    raise
            flush_merge()
            seconds = time.perf_counter() - t0
            members = {r: [(m.x, m.y) for m in zone.members if m.rotation == r]
                       for r in rotations}
            for r in todo:
                if not pieces[r]:  # an empty partition still gets one file with the schema
                    pieces[r] = _FileSeq(dirs[r], "empty", schemas[r], 1).close(empty_file=True)
                for i, f in enumerate(pieces[r]):
                    name = f"part-{i:05d}.parquet"
                    os.replace(dirs[r] / f["file"], dirs[r] / name)
                    f["file"] = name
                x, y = members[r][0]
                meta = {
                    "format_version": FORMAT_VERSION, "form": "flat", "instance": instance.id,
                    "hamming": hamming, "zone": zone.id, "rotation": r, "x": x, "y": y,
                    "cells": [list(c) for c in members[r]],
                    "canonical": [zone.x, zone.y], "derived": r != 0,
                    "rows": total, "corolles": total, "nodes": nodes,
                    "seconds": round(seconds, 6), "files": pieces[r],
                }
                (dirs[r] / PARTITION_META).write_text(json.dumps(meta, indent=1))
                results.append(PartitionResult(zone.id, r, x, y, total, total, nodes, seconds,
                                               sum(f["bytes"] for f in pieces[r]), False))
            with _store_lock(root):
                for r in todo:
                    final = finals[r]
                    final.parent.mkdir(parents=True, exist_ok=True)
                    if final.exists():  # --force: the old partition goes to staging, then away
                        os.replace(final, staging_root / f"old-{r}")
                    os.replace(dirs[r], final)
        finally:
            for q in merge.values():
                q.abort()
            shutil.rmtree(staging_root, ignore_errors=True)
            (root / STAGING / f"{run}.lock").unlink(missing_ok=True)
    return sorted(results, key=lambda p: p.rotation)


def enumerate_store(root: Path, instance: Instance, hamming: int, zones: Iterable[int] | None,
                    *, force: bool = False, threads: int = 1, progress=None,
                    **kw) -> list[PartitionResult]:
    """Write the flat partitions of the chosen zones (all when None), then the manifest.

    `threads` workers share each zone's search (the kernels release the GIL).
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    clean_staging(root)  # leftovers of killed runs
    zm = zone_map(instance.width, instance.height, hamming)
    ids = range(len(zm.zones)) if zones is None else sorted(set(zones))
    for zid in ids:
        if not 0 <= zid < len(zm.zones):
            raise StoreError(f"zone {zid} does not exist: the {instance.width}x{instance.height} "
                             f"board has zones 0..{len(zm.zones) - 1} at hamming {hamming}")
    write_instance_file(root, instance)
    out: list[PartitionResult] = []
    try:
        for zid in ids:
            out += enumerate_zone(root, instance, zm.zones[zid], hamming, force=force,
                                  threads=threads, progress=progress, **kw)
    finally:
        write_manifest(root)  # whatever completed is recorded, even on interruption
    return out


def write_manifest(root: Path) -> dict:
    """Aggregate every complete partition's `_partition.json` into STORE/manifest.json.

    `checksum` is a sha256 over every data file's path and sha256: two stores with the same
    corolles have the same checksum, whatever the timings recorded beside them.
    """
    root = Path(root)
    with _store_lock(root):
        return _write_manifest(root)


def _write_manifest(root: Path) -> dict:
    parts = []
    for meta in sorted(root.glob(f"instance=*/hamming=*/zone=*/rotation=*/{PARTITION_META}")):
        m = json.loads(meta.read_text())
        m["path"] = str(meta.parent.relative_to(root))
        parts.append(m)
    parts.sort(key=lambda m: (m["instance"], m["hamming"], m["zone"], m["rotation"]))
    digest = hashlib.sha256()
    for m in parts:
        for f in m["files"]:
            digest.update(f"{m['path']}/{f['file']} {f['sha256']}\n".encode())
    manifest = {"format_version": FORMAT_VERSION, "forms": list(FORMS),
                "checksum": digest.hexdigest(), "partitions": parts}
    atomic_write_text(root / MANIFEST, json.dumps(manifest, indent=1) + "\n")
    return manifest


def read_manifest(root: Path) -> dict:
    path = Path(root) / MANIFEST
    if not path.exists():
        raise StoreError(f"{path}: no manifest (expected a store written by `e2store enumerate`)")
    m = json.loads(path.read_text())
    if m.get("format_version", 0) > FORMAT_VERSION:
        raise StoreError(f"{path}: format version {m['format_version']} is newer than this "
                         f"e2store reads ({FORMAT_VERSION}); upgrade e2store")
    return m


def read_partition(root: Path, instance_id: str, hamming: int, zone: int, rotation: int,
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Read a flat partition back as row-major (cells (n, S), frontier (n, F)) arrays."""
    d = partition_dir(root, instance_id, hamming, zone, rotation)
    if not (d / PARTITION_META).exists():
        raise StoreError(f"{d}: no such complete partition (run `e2store enumerate` for it)")
    meta = json.loads((d / PARTITION_META).read_text())
    S, F = n_slots(hamming), n_frontier(hamming)
    cells, front = [np.zeros((0, S), np.int16)], [np.zeros((0, F), np.int8)]
    for f in meta["files"]:
        pf = pq.ParquetFile(d / f["file"])
        kv = {k.decode(): v.decode() for k, v in (pf.schema_arrow.metadata or {}).items()}
        if int(kv.get("e2store.format_version", "0")) > FORMAT_VERSION:
            raise StoreError(f"{d / f['file']}: format version {kv['e2store.format_version']} "
                             f"is newer than this e2store reads; upgrade e2store")
        t = pf.read()
        arr = np.column_stack([t.column(i).to_numpy() for i in range(S + F)]) if len(t) else (
            np.zeros((0, S + F)))
        cells.append(arr[:, :S].astype(np.int16))
        front.append(arr[:, S:].astype(np.int8))
    return np.concatenate(cells), np.concatenate(front)
