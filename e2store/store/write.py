"""Writing the store safely: staging runs, locks, atomic publication, records, manifest.

A partition is built under `STORE/.staging/<run>/` (held by a run lock) and moved into
place when complete, its record last; the store-wide lock is held only to publish and
rewrite the manifest, so several processes may write one store at once and a killed run
leaves nothing partial.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import time
import uuid
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from e2store.corolles.forms import prefix_table
from e2store.errors import StoreError
from e2store.files import atomic_write_text, file_lock, sha256_file, write_table
from e2store.instance.model import Instance
from e2store.store.layout import (
    FORM_FILE,
    FORMAT_VERSION,
    FORMS,
    LOCK,
    MANIFEST,
    STAGING,
    STORE_CHUNK_ROWS,
    ZSTD_LEVEL,
    check_layout,
    flat_schema,
    instance_path,
    meta_name,
    partition_dir,
    record_paths,
    writer_options,
)
from e2store.store.records import check_manifest, dump_doc, load_doc, load_record
from e2store.zones.zonemap import Zone

IN_FLIGHT = 2  # row groups a background FileSeq holds queued or encoding (~13 MB each)


def store_lock(root: Path):
    """The store-wide lock, held briefly to publish partitions and rewrite the manifest."""
    return file_lock(Path(root) / LOCK)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return float("inf")


def clean_staging(root: Path) -> int:
    """Remove staging runs left by killed processes (their run lock is free); returns count.

    Live runs, in this or other processes, hold their run lock and are left alone, so
    several `enumerate` processes may write into one store at once.  A run's lock appears
    under its name only once held (`staging_run`), so a free lock means a dead run at once:
    a rerun right after a kill removes what the killed run staged.
    """
    staging = Path(root) / STAGING
    if not staging.is_dir():
        return 0
    removed = 0
    for lock in staging.glob("*.lock"):
        with file_lock(lock, blocking=False) as mine:
            if mine:
                shutil.rmtree(staging / lock.stem, ignore_errors=True)
                lock.unlink(missing_ok=True)
                removed += 1
    for d in staging.iterdir():  # a run dir whose lock is gone was abandoned mid-cleanup
        if d.is_dir() and not (staging / f"{d.name}.lock").exists():
            shutil.rmtree(d, ignore_errors=True)
            removed += 1
    stale = time.time() - 60.0  # a lock made but not yet held is seconds old at most
    for new in staging.glob(f"*{NEW_LOCK}"):
        if _mtime(new) < stale:
            with file_lock(new, blocking=False) as mine:
                if mine:
                    new.unlink(missing_ok=True)
    return removed


NEW_LOCK = ".lock-new"  # a run lock being made, not yet held (not matched by `*.lock`)


@contextlib.contextmanager
def staging_run(root: Path, *, migrating: bool = False) -> Iterator[Path]:
    """A fresh staging directory under STORE/.staging, held by a run lock (so a concurrent
    `clean_staging` leaves it alone) and removed afterwards, published or not.  The lock is
    made and held under a temporary name, then renamed into place: a lock under its real
    name is always held by a live run or free because its run died.  A store of an older
    format version is refused (StoreVersionError), but by its migration (`migrating`)."""
    check_layout(Path(root), manifest=not migrating)
    run = uuid.uuid4().hex[:12]
    staging = Path(root) / STAGING
    staging.mkdir(parents=True, exist_ok=True)
    lock = staging / f"{run}.lock"
    fd = os.open(staging / f"{run}{NEW_LOCK}", os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.rename(staging / f"{run}{NEW_LOCK}", lock)
        try:
            (staging / run).mkdir()
            yield staging / run
        finally:
            shutil.rmtree(staging / run, ignore_errors=True)
            lock.unlink(missing_ok=True)
    finally:
        os.close(fd)  # closing releases the lock


class FileSeq:
    """One partition's Parquet files written in order, each of at most `rows_per_file` rows.

    Called with slot-major chunks (cells (S, n), and for the distinct form the rows'
    multiplicities); chunks are gathered into row groups of about `group_rows` rows.  With
    `background`, each row group is encoded on a thread of its own while the caller goes
    on (the walk and the encoding overlap on two cores; at most one group waits), in order,
    so the files are the same bytes either way.
    """

    def __init__(self, directory: Path, stem: str, schema: pa.Schema, rows_per_file: int,
                 group_rows: int = STORE_CHUNK_ROWS, form: str = "flat",
                 background: bool = False):
        self.dir, self.stem, self.schema, self.form = directory, stem, schema, form
        self._last: np.ndarray | None = None  # prefix form: the file's previous row
        self.rows_per_file = rows_per_file
        self.group_rows = group_rows
        self.files: list[dict] = []
        self._writer: pq.ParquetWriter | None = None
        self._file_rows = 0
        self._pending: list[tuple[np.ndarray, np.ndarray | None]] = []
        self._pending_rows = 0
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="encode") if background else None
        self._jobs: deque[Future] = deque()

    def write(self, cells: np.ndarray, mult: np.ndarray | None = None) -> None:
        """Queue a chunk (with `mult`, its rows' multiplicities: the distinct form); small
        chunks are gathered into row groups of ~group_rows rows, a big one (half a group or
        more) is a group of its own: gathering it would copy it."""
        if cells.shape[1] >= self.group_rows // 2:
            self._flush()
        self._pending.append((cells, mult))
        self._pending_rows += cells.shape[1]
        if self._pending_rows >= self.group_rows:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        if len(self._pending) == 1:
            cells, mult = self._pending[0]
        else:
            cells = np.concatenate([c for c, _ in self._pending], axis=1)
            mult = (None if self._pending[0][1] is None
                    else np.concatenate([m for _, m in self._pending]))
        self._pending, self._pending_rows = [], 0
        if self._pool is None:
            self._encode(cells, mult)
            return
        self._wait(IN_FLIGHT - 1)  # memory stays bounded, errors surface early
        self._jobs.append(self._pool.submit(self._encode, cells, mult))

    def _wait(self, left: int = 0) -> None:
        """Wait until at most `left` groups are being encoded (raising their errors)."""
        while len(self._jobs) > left:
            self._jobs.popleft().result()

    def _encode(self, cells: np.ndarray, mult: np.ndarray | None) -> None:
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
                if mult is not None:
                    cols.append(pa.array(mult[off:off + take]))
                table = pa.Table.from_arrays(cols, schema=self.schema)
            self._writer.write_table(table)
            self._file_rows += take
            self.files[-1]["rows"] += take
            off += take
            if self._file_rows == self.rows_per_file:
                self._finish()

    def write_table(self, table: pa.Table) -> None:
        """Write a ready table as row groups (no gathering), splitting files as needed."""
        self._wait()
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
        return self.close_later(empty_file=empty_file).result()

    def close_later(self, *, empty_file: bool = False) -> Future:
        """`close`, done on the encoding thread: a Future of the files, so the caller walks
        on while the last row group is encoded (done at once without `background`)."""
        self._flush()
        if self._pool is None:
            done: Future = Future()
            done.set_result(self._close(empty_file))
            return done
        job = self._pool.submit(self._close, empty_file, list(self._jobs))  # after them
        self._jobs.clear()
        self._pool.shutdown(wait=False)
        return job

    def _close(self, empty_file: bool, before: Iterable[Future] = ()) -> list[dict]:
        for job in before:
            job.result()  # a group that failed fails the close (they ran before, in order)
        if empty_file and not self.files:
            self._open()
        if self._writer is not None:
            self._finish()
        return self.files

    def abort(self) -> None:
        if self._pool is not None:
            with contextlib.suppress(Exception):
                self._wait()
            self._pool.shutdown()
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()
            self._writer = None

    def _open(self) -> None:
        name = f"{self.stem}-{len(self.files):05d}.parquet"
        self._writer = pq.ParquetWriter(self.dir / name, self.schema,
                                        **writer_options(self.form))
        self.files.append({"file": name, "rows": 0})
        self._file_rows = 0
        self._last = None

    def _finish(self) -> None:
        assert self._writer is not None
        self._writer.close()
        self._writer = None
        path = self.dir / self.files[-1]["file"]
        self.files[-1].update(bytes=path.stat().st_size, sha256=sha256_file(path))


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
    from e2store.instance.e2sfile import write_e2store

    check_layout(Path(root), manifest=True)
    path = instance_path(root, instance.id)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_e2store(instance, path)
    return path


def check_rotations(zone: Zone, rotations: Iterable[int]) -> list[int]:
    """The requested rotations, refusing one no member of the zone needs."""
    out = sorted(set(rotations))
    for r in out:
        if r not in zone.rotations:
            raise StoreError(f"zone {zone.id} has no rotation-{r} partition (its members need "
                             f"rotations {', '.join(map(str, zone.rotations))})")
    return out


def publish_partition(staged: Path, root: Path, key: tuple[str, int, int, int], trash: Path,
                      forms: list[str], *, listed: bool = False) -> None:
    """Move the staged files of `forms` of partition `key` (instance, hamming, zone,
    rotation) into each form's directory: the data files first, the completion record last,
    so a form is complete (and seen by readers) only once all its files are in place.

    Replacing (`--force`), the caller holding the store lock, with `listed` (refresh the
    manifest): the manifest stops listing a replaced form before its files move, and lists
    the new one once it is in place, so a process killed at any step leaves a manifest
    whose every file exists (the form is then incomplete until a rerun, as if never made)."""
    root = Path(root)
    listed = listed and (root / MANIFEST).exists()
    for f in forms:
        final = partition_dir(root, *key, f)
        final.mkdir(parents=True, exist_ok=True)
        replacing = any(final.iterdir())
        if replacing:
            trash.mkdir(parents=True, exist_ok=True)
            if listed:  # first unlisted, then unrecorded, then replaced
                _update_manifest(root, final, without=[f])
            if (final / meta_name(f)).exists():  # nothing stale may look complete
                os.replace(final / meta_name(f), trash / f"{f}{meta_name(f)}")
            for old in final.glob(f"{FORM_FILE[f]}-*.parquet"):
                os.replace(old, trash / f"{f}-{old.name}")
        for d in sorted(staged.glob(f"{FORM_FILE[f]}-*.parquet")):
            os.replace(d, final / d.name)
        os.replace(staged / meta_name(f), final / meta_name(f))
        if replacing and listed:
            _update_manifest(root, final)


def _manifest_entry(root: Path, meta_path: Path) -> dict:
    """A partition record as the manifest lists it: no per-slot bitmaps, its path added;
    its `digest` is the record's (what `verify --repair` rebuilds a lost record against)."""
    m = load_record(meta_path, root)
    m.pop("placements", None)  # per-slot bitmaps stay in the records (query.cardinality)
    m["path"] = str(meta_path.parent.relative_to(root))
    return m


def _manifest_of(root: Path, parts: list[dict], known: dict[str, str]) -> dict:
    """The manifest of these entries: sorted, with the forms present, the checksum and the
    digest of each instance copy (`instances`: kept from `known`, the last manifest's, so
    a copy damaged since is never recorded as sound)."""
    parts = sorted(parts, key=lambda m: (m["instance"], m["hamming"], m["zone"], m["rotation"],
                                         FORMS.index(m["form"])))
    digest = hashlib.sha256()
    for m in parts:
        for f in m["files"]:
            digest.update(f"{m['path']}/{f['file']} {f['sha256']}\n".encode())
    # a half-migrated store says the oldest version of its rows (e2store.store.migrate)
    version = min([FORMAT_VERSION] + [m.get("format_version", 1) for m in parts])
    return {"format_version": version,
            "forms": [f for f in FORMS if any(m["form"] == f for m in parts)],
            "checksum": digest.hexdigest(),
            "instances": _instance_digests(root, {m["instance"] for m in parts}, known),
            "partitions": parts}


def _instance_digests(root: Path, ids: set[str], known: dict[str, str]) -> dict[str, str]:
    """The SHA-256 of each instance copy `instances/<id>.e2s`: the known one, else that of
    the file once it reads back to its id (a copy that does not is left out: `verify`
    reports it)."""
    from e2store.store.read import read_store_instance

    out = {}
    for iid in sorted(ids):
        if iid in known:
            out[iid] = known[iid]
            continue
        try:
            read_store_instance(root, iid)
        except (OSError, ValueError):
            continue
        out[iid] = sha256_file(instance_path(root, iid))
    return out


def _known_instances(root: Path) -> dict[str, str]:
    """The instance digests of the manifest on disk ({} when it has none or is damaged)."""
    try:
        doc = check_manifest(load_doc(root / MANIFEST, root, "manifest"), root / MANIFEST, root)
    except (OSError, ValueError):
        return {}
    return dict(doc.get("instances", {}))


def _update_manifest(root: Path, part: Path, without: Iterable[str] = ()) -> None:
    """Rewrite the manifest with partition directory `part`'s entries as its records now
    stand, less the forms `without` (the rest as listed), without reading every other
    record."""
    try:
        doc = check_manifest(load_doc(root / MANIFEST, root, "manifest"), root / MANIFEST, root)
    except (OSError, ValueError):  # absent, damaged or older: rebuilt from the records
        doc = _write_manifest(root)
    listed, known = doc["partitions"], dict(doc.get("instances", {}))
    rel, without = str(part.relative_to(root)), set(without)
    parts = [m for m in listed if m.get("path") != rel]
    parts += [m for m in (_manifest_entry(root, meta)
                          for meta in sorted(part.glob("_partition*.json")))
              if m["form"] not in without]
    atomic_write_text(root / MANIFEST, dump_doc(_manifest_of(root, parts, known)))


def write_manifest(root: Path) -> dict:
    """Aggregate every complete partition's `_partition.json` into STORE/manifest.json.

    `checksum` is a sha256 over every data file's path and sha256: two stores with the same
    corolles have the same checksum, whatever the timings recorded beside them.
    """
    root = Path(root)
    with store_lock(root):
        return _write_manifest(root)


def _write_manifest(root: Path) -> dict:
    manifest = _manifest_of(root, [_manifest_entry(root, meta) for meta in record_paths(root)],
                            _known_instances(root))
    text = dump_doc(manifest)
    atomic_write_text(root / MANIFEST, text)
    return json.loads(text)


def write_flat_file(path: Path, cells: np.ndarray, front: np.ndarray, hamming: int) -> None:
    """Write row-major flat rows with their frontier (`s*` then `f*`) to one file,
    atomically: Parquet, or Arrow IPC when the name ends in `.arrow`, `.feather` or `.ipc`
    (`e2store.files.write_table`)."""
    cols = [pa.array(np.ascontiguousarray(cells[:, i])) for i in range(cells.shape[1])]
    cols += [pa.array(np.ascontiguousarray(front[:, i])) for i in range(front.shape[1])]
    table = pa.Table.from_arrays(cols, schema=flat_schema(hamming, frontier=True))
    write_table(path, table, compression_level=ZSTD_LEVEL)
