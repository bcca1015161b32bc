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
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from e2store.corolles import _kernels
from e2store.corolles.enumerate import (
    _choose_prefix_depth,
    _iter_levels,
    candidate_table,
    corolle_layout,
)
from e2store.corolles.forms import (
    FORMS,
    CartesianRows,
    _cartesian_rows,
    cartesian_schema,
    frontier_of,
    prefix_from_table,
    prefix_schema,
    prefix_table,
)
from e2store.errors import StoreError
from e2store.files import atomic_write_text
from e2store.instance.model import Instance
from e2store.zones.geometry import (
    frontier_layout,
    n_frontier,
    n_slots,
    ring_offsets,
    rotation_permutation,
)
from e2store.zones.zonemap import Zone, zone_map

FORMAT_VERSION = 1
FORM_FILE = {"flat": "part", "prefix": "prefix", "cartesian": "cartesian"}
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


def meta_name(form: str) -> str:
    """The completion record of one form of a partition."""
    return PARTITION_META if form == "flat" else f"_partition.{form}.json"


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


@contextlib.contextmanager
def staging_run(root: Path) -> Iterator[Path]:
    """A fresh staging directory under STORE/.staging, held by a run lock (so a concurrent
    `clean_staging` leaves it alone) and removed afterwards, published or not."""
    run = uuid.uuid4().hex[:12]
    staging_root = Path(root) / STAGING / run
    (Path(root) / STAGING).mkdir(parents=True, exist_ok=True)
    with _flock(Path(root) / STAGING / f"{run}.lock"):
        try:
            staging_root.mkdir()
            yield staging_root
        finally:
            shutil.rmtree(staging_root, ignore_errors=True)
            (Path(root) / STAGING / f"{run}.lock").unlink(missing_ok=True)


class _FileSeq:
    """One partition's Parquet files written in order, each of at most `rows_per_file` rows.

    Called with slot-major chunks (cells (S, n), frontier (F, n)); each chunk is a row group.
    """

    def __init__(self, directory: Path, stem: str, schema: pa.Schema, rows_per_file: int,
                 group_rows: int = STORE_CHUNK_ROWS, form: str = "flat"):
        self.dir, self.stem, self.schema, self.form = directory, stem, schema, form
        self._last: np.ndarray | None = None  # prefix form: the file's previous row
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
            if self.form == "prefix":
                rows = np.ascontiguousarray(cells[:, off:off + take].T)
                table = prefix_table(rows, self._last, self.schema)
                self._last = rows[-1].copy() if take else self._last
            else:
                cols = [pa.array(c[off:off + take]) for c in cells]
                cols += [pa.array(f[off:off + take]) for f in front]
                table = pa.Table.from_arrays(cols, schema=self.schema)
            self._writer.write_table(table)
            self._file_rows += take
            self.files[-1]["rows"] += take
            off += take
            if self._file_rows == self.rows_per_file:
                self._finish()

    def write_table(self, table: pa.Table) -> None:
        """Write a ready table as row groups (no gathering), splitting files as needed."""
        off = 0
        while off < len(table):
            if self._writer is None:
                self._open()
            assert self._writer is not None
            take = min(len(table) - off, self.rows_per_file - self._file_rows)
            self._writer.write_table(table.slice(off, take))
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
                                        write_statistics=False,
                                        # v2 pages are ~15% faster to write for flat rows;
                                        # v1 keeps the null runs of the prefix form smaller
                                        data_page_version="1.0" if self.form == "prefix"
                                        else "2.0")
        self.files.append({"file": name, "rows": 0})
        self._file_rows = 0
        self._last = None

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
    seen: np.ndarray  # placements per slot at rotation 0 (placements_seen)


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
    form: str = "flat"


def placements_seen(hamming: int, n_pieces: int) -> np.ndarray:
    """An empty (S, 4n + 1) bool matrix for `mark_placements` (last column unused: kept so
    a bitmap has room for every placement id)."""
    return np.zeros((n_slots(hamming), 4 * n_pieces + 1), dtype=np.bool_)


def mark_placements(seen: np.ndarray, cells: np.ndarray) -> None:
    """Mark the placements each slot takes in slot-major `cells` (off-board -1 ignored)."""
    if cells.ndim != 2 or cells.shape[0] > seen.shape[0]:
        raise ValueError(f"cells {cells.shape} do not fit the placement matrix {seen.shape}")
    _kernels.mark_placements(seen, np.ascontiguousarray(cells))


def rotate_placements(seen: np.ndarray, hamming: int, q: int) -> np.ndarray:
    """The placement sets of the same corolles turned q quarter turns (ring-shift rule)."""
    if q % 4 == 0:
        return seen
    perm = rotation_permutation(hamming, q)
    v = np.arange(seen.shape[1] - 1)
    turned = (v & ~3) | ((v + q) & 3)
    out = np.zeros_like(seen)
    out[perm[:, None], turned[None, :]] = seen[:, :-1]
    return out


def placements_hex(seen: np.ndarray) -> list[str]:
    """Per slot, the set of placements as a hex bitmap (bit v = placement v occurs)."""
    return [np.packbits(row[:-1], bitorder="little").tobytes().hex() for row in seen]


def placements_from_hex(slots: list[str], n_pieces: int) -> np.ndarray:
    """The placements_seen matrix a `placements_hex` list describes."""
    seen = np.zeros((len(slots), 4 * n_pieces + 1), dtype=np.bool_)
    for i, h in enumerate(slots):
        bits = np.unpackbits(np.frombuffer(bytes.fromhex(h), dtype=np.uint8),
                             bitorder="little")[:4 * n_pieces]
        seen[i, :len(bits)] = bits.astype(np.bool_)
    return seen


def partition_record(instance: Instance, zone: Zone, hamming: int, rotation: int, form: str,
                     *, rows: int, corolles: int, nodes: int, seconds: float,
                     files: list[dict], **extra) -> dict:
    """The completion record (`_partition[.form].json`) of one partition."""
    members = [[m.x, m.y] for m in zone.members if m.rotation == rotation]
    return {
        "format_version": FORMAT_VERSION, "form": form, "instance": instance.id,
        "hamming": hamming, "zone": zone.id, "rotation": rotation,
        "x": members[0][0], "y": members[0][1], "cells": members,
        "canonical": [zone.x, zone.y], "derived": rotation != 0,
        "rows": rows, "corolles": corolles, "nodes": nodes,
        "seconds": round(seconds, 6), "files": files, **extra,
    }


def result_of(meta: dict, *, skipped: bool) -> PartitionResult:
    """The PartitionResult a completion record describes."""
    return PartitionResult(meta["zone"], meta["rotation"], meta["x"], meta["y"], meta["rows"],
                           meta["corolles"], meta["nodes"], meta["seconds"],
                           sum(f["bytes"] for f in meta["files"]), skipped, meta["form"])


def write_instance_file(root: Path, instance: Instance) -> Path:
    """Keep the instance inside the store, so the store is self-describing."""
    from e2store.instance.formats import write_e2store

    path = Path(root) / f"instance={instance.id}" / "instance.e2s"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_e2store(instance, path)
    return path


def enumerate_zone(root: Path, instance: Instance, zone: Zone, hamming: int, *,
                   forms: Iterable[str] = ("flat",), force: bool = False, threads: int = 1,
                   chunk_rows: int = STORE_CHUNK_ROWS, rows_per_file: int = ROWS_PER_FILE,
                   progress=None, rotations: Iterable[int] | None = None,
                   ) -> list[PartitionResult]:
    """Enumerate a zone at its canonical cell and write the partitions of its rotations.

    Rotation 0 is enumerated; the other rotations its members need are derived with the
    ring-shift rule.  flat and prefix come from one walk of every corolle, split into
    TASKS_PER_ZONE prefix tasks run by `threads` workers (small tasks are buffered and
    merged serially, big ones write their own files; depth-first order is kept and files
    do not depend on `threads`).  cartesian comes from the stems alone.  `rotations`
    restricts the partitions written (default: every rotation the zone's members need).
    """
    root = Path(root)
    forms = tuple(dict.fromkeys(forms))
    for form in forms:
        if form not in FORMS:
            raise StoreError(f"unknown form {form!r} (expected one of {', '.join(FORMS)})")
    rotations = zone.rotations if rotations is None else check_rotations(zone, rotations)
    finals = {r: partition_dir(root, instance.id, hamming, zone.id, r) for r in rotations}
    todo = [(r, f) for r in rotations for f in forms
            if force or not (finals[r] / meta_name(f)).exists()]
    results: list[PartitionResult] = []
    for r in rotations:
        for f in forms:
            if (r, f) not in todo:
                results.append(result_of(json.loads((finals[r] / meta_name(f)).read_text()),
                                         skipped=True))
    if not todo:
        return results
    layout = corolle_layout(instance.width, instance.height, zone.x, zone.y, hamming)
    with staging_run(root) as staging_root:
        dirs = {r: staging_root / f"zone={zone.id}-rotation={r}" for r in rotations}
        for r in {r for r, _ in todo}:
            dirs[r].mkdir(parents=True)
        walked = [(r, f) for r, f in todo if f != "cartesian"]
        written: dict[tuple[int, str], tuple] = {}
        nodes = 0  # search nodes of the full walk; 0 when only stems were walked
        if walked:
            done, nodes, seen = _write_walked(instance, zone, hamming, layout, walked, dirs,
                                              threads, chunk_rows, rows_per_file, progress)
            written.update({key: (*v, seen) for key, v in done.items()})
        if any(f == "cartesian" for _, f in todo):
            written.update(_write_cartesian(instance, zone, hamming, layout, todo, dirs,
                                            threads, rows_per_file))
        for (r, f), (files, rows, corolles, seconds, seen) in written.items():
            meta = partition_record(instance, zone, hamming, r, f, rows=rows,
                                    corolles=corolles, nodes=nodes, seconds=seconds,
                                    files=files, placements=placements_hex(
                                        rotate_placements(seen, hamming, r)))
            (dirs[r] / meta_name(f)).write_text(json.dumps(meta, indent=1))
            results.append(result_of(meta, skipped=False))
        with _store_lock(root):
            for r in {r for r, _ in todo}:
                _publish(dirs[r], finals[r], staging_root / f"old-{r}",
                         [f for rr, f in todo if rr == r])
    return sorted(results, key=lambda p: (p.rotation, FORMS.index(p.form)))


def check_rotations(zone: Zone, rotations: Iterable[int]) -> list[int]:
    """The requested rotations, refusing one no member of the zone needs."""
    out = sorted(set(rotations))
    for r in out:
        if r not in zone.rotations:
            raise StoreError(f"zone {zone.id} has no rotation-{r} partition (its members need "
                             f"rotations {', '.join(map(str, zone.rotations))})")
    return out


def _publish(staged: Path, final: Path, trash: Path, forms: list[str]) -> None:
    """Move a staged partition into place: the whole directory when it is new, else the
    files of the written forms (data first, completion records last)."""
    if not final.exists():
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staged, final)
        return
    trash.mkdir(parents=True, exist_ok=True)
    for f in forms:  # records of rewritten forms go first, so nothing stale looks complete
        if (final / meta_name(f)).exists():
            os.replace(final / meta_name(f), trash / meta_name(f))
        for old in final.glob(f"{FORM_FILE[f]}-*.parquet"):
            os.replace(old, trash / old.name)
    for data in sorted(staged.glob("*.parquet")):
        os.replace(data, final / data.name)
    for f in forms:
        os.replace(staged / meta_name(f), final / meta_name(f))


def _write_cartesian(instance, zone, hamming, layout, todo, dirs, threads, rows_per_file,
                     rows=None):
    """The cartesian partitions of the zone: stems of rotation 0 (built unless given as
    `rows`), rotated for the others."""
    t0 = time.perf_counter()
    rows = _cartesian_rows(instance, layout, threads) if rows is None else rows
    corolles = int(rows.counts.sum())
    seen = cartesian_placements(rows, instance.n_pieces)
    out = {}
    for r, f in todo:
        if f != "cartesian":
            continue
        rot = rows.rotated(r)
        schema = cartesian_schema(hamming, layout_metadata("cartesian", instance.id, hamming,
                                                           zone.id, r))
        seq = _FileSeq(dirs[r], FORM_FILE["cartesian"], schema, rows_per_file, form="table")
        for a in range(0, rot.n_rows, 1 << 20):
            seq.write_table(rot.table(schema, a, min(rot.n_rows, a + (1 << 20))))
        out[(r, f)] = (seq.close(empty_file=True), rot.n_rows, corolles,
                       time.perf_counter() - t0, seen)
    return out


def cartesian_placements(rows: CartesianRows, n_pieces: int) -> np.ndarray:
    """Placements per slot (placements_seen) of the corolles of cartesian rows: stem
    placements of rows with a completion, and the candidates that have one."""
    seen = placements_seen(rows.hamming, n_pieces)
    if not rows.n_rows:
        return seen
    s_in = rows.stems.shape[1]
    mark_placements(seen[:s_in], np.ascontiguousarray(rows.stems.T))
    stems, offs, vals, top = rows.padded()
    ok = _kernels.feasible_candidates(stems, offs, vals, max(top, n_pieces))
    for k, v in enumerate(rows.values):
        mark_placements(seen[s_in + k:s_in + k + 1], vals[k:k + 1, :len(v)][:, ok[k, :len(v)]])
    return seen


def _write_walked(instance, zone, hamming, layout, todo, dirs, threads, chunk_rows,
                  rows_per_file, progress, prefixes=None, nodes=0):
    """flat and prefix partitions from one walk of every corolle (see enumerate_zone).

    `prefixes` (with the `nodes` spent building them) restricts the walk to those prefix
    subtrees, in order: a shard of the zone (stages.py); default every corolle."""
    t0 = time.perf_counter()
    table = candidate_table(instance, layout)
    if prefixes is None:
        prefixes, nodes = _choose_prefix_depth(layout, table, TASKS_PER_ZONE)
    batches = np.array_split(prefixes, min(len(prefixes), TASKS_PER_ZONE)) if len(
        prefixes) else []
    rots = sorted({r for r, _ in todo})
    schemas = {}
    for r, f in todo:
        meta = layout_metadata(f, instance.id, hamming, zone.id, r)
        schemas[(r, f)] = (flat_schema(hamming, meta) if f == "flat"
                          else prefix_schema(hamming, meta))
    shift = 2 * hamming + 1
    perms = {r: rotation_permutation(hamming, r) for r in rots}
    stop = threading.Event()
    tick_lock = threading.Lock()

    def seq(key, stem):
        r, f = key
        return _FileSeq(dirs[r], f"{f}-{stem}", schemas[key], rows_per_file, form=f)

    def task(idx: int, batch: np.ndarray) -> _TaskResult:
        buffers: dict | None = {r: [] for r in rots}
        seen = placements_seen(hamming, instance.n_pieces)
        seqs: dict = {}
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
                           for r in rots}
                    rows += cells.shape[1]
                    mark_placements(seen, cells)
                    if buffers is not None and rows > SPILL_ROWS:
                        seqs = {key: seq(key, f"task-{idx:05d}") for key in todo}
                        for (r, _f), q in seqs.items():
                            for c, fr in buffers[r]:
                                q.write(c, fr)
                        buffers = None
                    if buffers is None:
                        for (r, _f), q in seqs.items():
                            q.write(*out[r])
                    else:
                        for r in rots:
                            buffers[r].append(out[r])
                    if progress is not None:
                        with tick_lock:
                            progress(cells.shape[1])
                task_nodes += box[0] if box else 0
            files = {key: q.close() for key, q in seqs.items()} if buffers is None else None
        except BaseException:
            for q in seqs.values():
                q.abort()
            raise
        return _TaskResult(rows, task_nodes, buffers, files, seen)

    merge: dict = {}
    pieces: dict = {key: [] for key in todo}
    total = 0
    seen = placements_seen(hamming, instance.n_pieces)

    def flush_merge() -> None:
        for key, q in merge.items():
            pieces[key] += q.close()
        merge.clear()

    try:
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
                    seen |= res.seen
                    if res.files is not None:
                        flush_merge()
                        for key in todo:
                            pieces[key] += res.files[key]
                    else:
                        assert res.buffers is not None
                        for key in todo:
                            if key not in merge:
                                merge[key] = seq(key, f"merge-{idx:05d}")
                            for c, fr in res.buffers[key[0]]:
                                merge[key].write(c, fr)
            except BaseException:
                stop.set()
                for _, fut in pending:
                    fut.cancel()
                raise
        flush_merge()
    finally:
        for q in merge.values():
            q.abort()
    seconds = time.perf_counter() - t0
    out = {}
    for key in todo:
        r, f = key
        if not pieces[key]:  # an empty partition still gets one file with the schema
            pieces[key] = seq(key, "empty").close(empty_file=True)
        for i, x in enumerate(pieces[key]):
            name = f"{FORM_FILE[f]}-{i:05d}.parquet"
            os.replace(dirs[r] / x["file"], dirs[r] / name)
            x["file"] = name
        out[key] = (pieces[key], total, total, seconds)
    return out, nodes, seen


def enumerate_store(root: Path, instance: Instance, hamming: int, zones: Iterable[int] | None,
                    *, force: bool = False, threads: int = 1, progress=None,
                    **kw) -> list[PartitionResult]:
    """Write the partitions (forms: `forms=`, default flat) of the chosen zones (all when
    None), then the manifest.

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
    for meta in sorted(root.glob("instance=*/hamming=*/zone=*/rotation=*/_partition*.json")):
        m = json.loads(meta.read_text())
        m.pop("placements", None)  # per-slot bitmaps stay in the records (query.cardinality)
        m["path"] = str(meta.parent.relative_to(root))
        parts.append(m)
    parts.sort(key=lambda m: (m["instance"], m["hamming"], m["zone"], m["rotation"],
                              FORMS.index(m["form"])))
    digest = hashlib.sha256()
    for m in parts:
        for f in m["files"]:
            digest.update(f"{m['path']}/{f['file']} {f['sha256']}\n".encode())
    manifest = {"format_version": FORMAT_VERSION,
                "forms": [f for f in FORMS if any(m["form"] == f for m in parts)],
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


def check_file_metadata(path: Path, kv: dict[str, str], expected: dict[str, str]) -> None:
    """Refuse a Parquet file written by a newer e2store or for another partition or form."""
    version = int(kv.get("e2store.format_version", "0") or 0)
    if version > FORMAT_VERSION:
        raise StoreError(f"{path}: format version {version} is newer than this e2store reads "
                         f"({FORMAT_VERSION}); upgrade e2store")
    if version < 1:
        raise StoreError(f"{path}: no e2store metadata (expected a file written by "
                         f"`e2store enumerate`)")
    for key, want in expected.items():
        got = kv.get(f"e2store.{key}")
        if got != want:
            raise StoreError(f"{path}: metadata {key} is {got!r}, expected {want!r} "
                             f"(the file does not belong to this partition; rewrite it with "
                             f"`e2store enumerate --force`)")


def read_record(root: Path, instance_id: str, hamming: int, zone: int, rotation: int,
                form: str) -> dict:
    """The completion record of a partition; StoreError saying what to run if absent."""
    if form not in FORMS:
        raise StoreError(f"unknown form {form!r} (expected one of {', '.join(FORMS)})")
    d = partition_dir(root, instance_id, hamming, zone, rotation)
    record = d / meta_name(form)
    if not record.exists():
        raise StoreError(f"{d}: no complete {form} partition (run `e2store enumerate "
                         f"--form {form}` for it, or the stage commands `e2store gather`, "
                         f"`rotate`, `encode`)")
    return json.loads(record.read_text())


def checked_files(root: Path, instance_id: str, hamming: int, zone: int, rotation: int,
                  form: str) -> Iterator[pq.ParquetFile]:
    """The Parquet files of a complete partition in order, each checked to belong to it."""
    d = partition_dir(root, instance_id, hamming, zone, rotation)
    expected = {"form": form, "instance": instance_id, "hamming": str(hamming),
                "zone": str(zone), "rotation": str(rotation)}
    for f in read_record(root, instance_id, hamming, zone, rotation, form)["files"]:
        pf = pq.ParquetFile(d / f["file"])
        kv = {k.decode(): v.decode() for k, v in (pf.schema_arrow.metadata or {}).items()}
        check_file_metadata(d / f["file"], kv, expected)
        yield pf


def _read_tables(root: Path, instance_id: str, hamming: int, zone: int, rotation: int,
                 form: str) -> Iterator[pa.Table]:
    for pf in checked_files(root, instance_id, hamming, zone, rotation, form):
        yield pf.read()


def iter_partition(root: Path, instance_id: str, hamming: int, zone: int, rotation: int,
                   form: str = "flat", instance: Instance | None = None,
                   ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Stream a partition of any form as flat row-major (cells (n, S), frontier (n, F))
    chunks, one per file; compact forms are expanded (frontier from the instance)."""
    S, F = n_slots(hamming), n_frontier(hamming)
    if form != "flat" and instance is None:
        from e2store.instance.formats import read_instance

        instance = read_instance(Path(root) / f"instance={instance_id}" / "instance.e2s",
                                 format="e2store")
    for t in _read_tables(root, instance_id, hamming, zone, rotation, form):
        if form == "flat":
            arr = (np.column_stack([t.column(i).to_numpy() for i in range(S + F)]) if len(t)
                   else np.zeros((0, S + F)))
            yield arr[:, :S].astype(np.int16), arr[:, S:].astype(np.int8)
            continue
        assert instance is not None
        if form == "prefix":
            cells = prefix_from_table(t, hamming)
        else:
            cells = CartesianRows.from_table(t, hamming).expand()
        yield cells, frontier_of(cells, instance, hamming)


def read_partition(root: Path, instance_id: str, hamming: int, zone: int, rotation: int,
                   form: str = "flat") -> tuple[np.ndarray, np.ndarray]:
    """Read a partition of any form back as flat row-major (cells, frontier) arrays."""
    S, F = n_slots(hamming), n_frontier(hamming)
    cells, front = [np.zeros((0, S), np.int16)], [np.zeros((0, F), np.int8)]
    for c, f in iter_partition(root, instance_id, hamming, zone, rotation, form):
        cells.append(c)
        front.append(f)
    return np.concatenate(cells), np.concatenate(front)


def write_flat_file(path: Path, cells: np.ndarray, front: np.ndarray, hamming: int) -> None:
    """Write row-major flat rows to one Parquet file, atomically (temp file + rename)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        cols = [pa.array(np.ascontiguousarray(cells[:, i])) for i in range(cells.shape[1])]
        cols += [pa.array(np.ascontiguousarray(front[:, i])) for i in range(front.shape[1])]
        pq.write_table(pa.Table.from_arrays(cols, schema=flat_schema(hamming)), tmp,
                       compression="zstd", compression_level=ZSTD_LEVEL)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
