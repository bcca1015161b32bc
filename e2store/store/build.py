"""Writing a zone's partitions: one walk of every corolle for the flat and prefix forms,
the stems alone for the cartesian form, derived rotations by the ring-shift rule.

The walk is split into TASKS_PER_ZONE prefix tasks run by worker threads (the kernels release
the GIL); small tasks are buffered and merged serially, big ones write their own files, so
depth-first order is kept and the files do not depend on the number of threads.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections import deque
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from e2store.corolles.enumerate import (
    candidate_table,
    choose_prefix_depth,
    corolle_layout,
    walk_cells,
)
from e2store.corolles.factorised import layout_cartesian_rows
from e2store.corolles.forms import canonical_chunk, rotate_cells
from e2store.corolles.placements import (
    cartesian_placements,
    mark_placements,
    placements_hex,
    placements_seen,
    rotate_placements,
)
from e2store.errors import StoreError
from e2store.instance.classes import DistinctPieces
from e2store.instance.model import Instance
from e2store.store.defaults import DEFAULT_FORMS
from e2store.store.layout import (
    FORM_FILE,
    FORMS,
    ROWS_PER_FILE,
    STORE_CHUNK_ROWS,
    cartesian_schema,
    distinct_schema,
    flat_schema,
    layout_metadata,
    meta_name,
    partition_dir,
    prefix_schema,
)
from e2store.store.records import dump_doc, load_record
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
from e2store.zones.zonemap import Zone, zone_map

TASKS_PER_ZONE = 64  # fixed, so that output files do not depend on --threads
SPILL_ROWS = 1 << 18  # a task with more rows writes its own files instead of merging


@dataclass
class _TaskResult:
    """A prefix task's output: small ones buffered in memory, big ones already in files."""

    rows: int
    nodes: int
    buffers: dict[int, list[tuple]] | None  # per rotation: (cells, mult or None)
    files: dict[tuple[int, str], Future] | None  # each its files, once encoded
    seen: dict[int, np.ndarray]  # placements per slot (placements_seen), per rotation marked
    raw: int  # raw corolles (the rows, but for a distinct walk)


class _Stopped(Exception):
    pass


def enumerate_zone(root: Path, instance: Instance, zone: Zone, hamming: int, *,
                   forms: Iterable[str] = DEFAULT_FORMS, force: bool = False, threads: int = 1,
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
    def record(r: int, f: str) -> Path:
        return partition_dir(root, instance.id, hamming, zone.id, r, f) / meta_name(f)

    todo = [(r, f) for r in rotations for f in forms if force or not record(r, f).exists()]
    results: list[PartitionResult] = []
    for r in rotations:
        for f in forms:
            if (r, f) not in todo:
                results.append(result_of(load_record(record(r, f), root), skipped=True))
    if not todo:
        return results
    layout = corolle_layout(instance.width, instance.height, zone.x, zone.y, hamming)
    with staging_run(root) as staging_root:
        dirs = {r: staging_root / f"zone={zone.id}-rotation={r}" for r in rotations}
        for r in {r for r, _ in todo}:
            dirs[r].mkdir(parents=True)
        walked = [(r, f) for r, f in todo if f in ("flat", "prefix")]
        written: dict[tuple[int, str], tuple] = {}  # (files, rows, corolles, seconds, seen)
        nodes = 0  # search nodes of the full walk; 0 when only stems were walked
        walk_nodes: dict[str, int] = {}
        if walked:
            done, nodes, seen = write_walked_partitions(
                instance, zone, hamming, layout, walked, dirs, threads, chunk_rows,
                rows_per_file, progress)
            written.update({(r, f): (*v, rotate_placements(seen, hamming, r))
                            for (r, f), v in done.items()})
        if any(f == "cartesian" for _, f in todo):
            done = write_cartesian_partitions(instance, zone, hamming, layout, todo, dirs,
                                              threads, rows_per_file)
            written.update({(r, f): (*v[:4], rotate_placements(v[4], hamming, r))
                            for (r, f), v in done.items()})
        if any(f == "distinct" for _, f in todo):
            done, walk_nodes["distinct"], seen_r = write_walked_partitions(
                instance, zone, hamming, layout, [k for k in todo if k[1] == "distinct"],
                dirs, threads, chunk_rows, rows_per_file, progress,
                dist=DistinctPieces.of(instance))
            written.update({(r, f): (*v, seen_r[r]) for (r, f), v in done.items()})
        for (r, f), (files, rows, corolles, seconds, seen) in written.items():
            meta = partition_record(instance, zone, hamming, r, f, rows=rows,
                                    corolles=corolles, nodes=walk_nodes.get(f, nodes),
                                    seconds=seconds, files=files,
                                    placements=placements_hex(seen))
            (dirs[r] / meta_name(f)).write_text(dump_doc(meta))
            results.append(result_of(meta, skipped=False))
        with store_lock(root):
            for r in {r for r, _ in todo}:
                publish_partition(dirs[r], root, (instance.id, hamming, zone.id, r),
                                  staging_root / f"old-{r}", [f for rr, f in todo if rr == r],
                                  listed=True)
    return sorted(results, key=lambda p: (p.rotation, FORMS.index(p.form)))


def write_cartesian_partitions(instance, zone, hamming, layout, todo, dirs, threads, rows_per_file,
                     rows=None):
    """The cartesian partitions of the zone: stems of rotation 0 (built unless given as
    `rows`), rotated for the others."""
    t0 = time.perf_counter()
    rows = layout_cartesian_rows(instance, layout, threads) if rows is None else rows
    corolles = int(rows.counts.sum())
    seen = cartesian_placements(rows, instance.n_pieces)
    out = {}
    for r, f in todo:
        if f != "cartesian":
            continue
        rot = rows.rotated(r)
        schema = cartesian_schema(hamming, layout_metadata("cartesian", instance.id, hamming,
                                                           zone.id, r))
        seq = FileSeq(dirs[r], FORM_FILE["cartesian"], schema, rows_per_file, form="table")
        for a in range(0, rot.n_rows, 1 << 20):
            seq.write_table(rot.table(schema, a, min(rot.n_rows, a + (1 << 20))))
        out[(r, f)] = (seq.close(empty_file=True), rot.n_rows, corolles,
                       time.perf_counter() - t0, seen)
    return out


def write_walked_partitions(instance, zone, hamming, layout, todo, dirs, threads, chunk_rows,
                  rows_per_file, progress, prefixes=None, nodes=0, dist=None):
    """flat and prefix partitions from one walk of every corolle (see enumerate_zone).

    `prefixes` (with the `nodes` spent building them) restricts the walk to those prefix
    subtrees, in order: a shard of the zone (stages.py); default every corolle.  With
    `dist` (DistinctPieces), the distinct partitions from a walk of the distinct corolles:
    rotated rows are made canonical again, each row carries its multiplicity, the
    `corolles` returned are the raw ones and the placements seen come per rotation."""
    t0 = time.perf_counter()
    table = candidate_table(instance, layout, dist is not None)
    if prefixes is None:
        prefixes, nodes = choose_prefix_depth(layout, table, TASKS_PER_ZONE, dist)
    batches = np.array_split(prefixes, min(len(prefixes), TASKS_PER_ZONE)) if len(
        prefixes) else []
    rots = sorted({r for r, _ in todo})
    marked = rots if dist is not None else [0]  # placements seen: per rotation, or at 0
    schemas = {}
    for r, f in todo:
        meta = layout_metadata(f, instance.id, hamming, zone.id, r)
        schemas[(r, f)] = {"flat": flat_schema, "prefix": prefix_schema,
                           "distinct": distinct_schema}[f](hamming, meta)
    stop = threading.Event()
    tick_lock = threading.Lock()

    def seq(key, stem):
        r, f = key
        return FileSeq(dirs[r], f"{f}-{stem}", schemas[key], rows_per_file, form=f,
                       background=True)

    def turned(cells, r, mult):
        """A chunk at rotation r: (cells, multiplicities or None); a distinct chunk's
        rotated rows are written canonically again (the walk's rows already are: its order
        is the slot order)."""
        if r == 0:
            return cells, mult
        c = rotate_cells(cells, hamming, r)
        return (c if dist is None else canonical_chunk(c, dist)[0]), mult

    def task(idx: int, batch: np.ndarray) -> _TaskResult:
        buffers: dict | None = {r: [] for r in rots}
        seen = {r: placements_seen(hamming, instance.n_pieces) for r in marked}
        seqs: dict = {}
        rows = task_nodes = raw = 0
        try:
            for prefix in batch:
                box: list[int] = []
                # a plain walk marks the placements it emits itself; a distinct one's
                # rotations are canonical again, so they are marked per rotation here
                for cells in walk_cells(layout, table, chunk_rows, prefix, nodes_out=box,
                                        dist=dist, seen=seen[0] if dist is None else None):
                    if stop.is_set():
                        raise _Stopped
                    mult = None if dist is None else canonical_chunk(cells, dist)[1]
                    out = {r: turned(cells, r, mult) for r in rots}
                    rows += cells.shape[1]
                    raw += cells.shape[1] if mult is None else int(mult.sum())
                    for r in marked if dist is not None else ():
                        mark_placements(seen[r], out[r][0])
                    if buffers is not None and rows > SPILL_ROWS:
                        seqs = {key: seq(key, f"task-{idx:05d}") for key in todo}
                        for (r, _f), q in seqs.items():
                            for buf in buffers[r]:
                                q.write(*buf)
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
            files = ({key: q.close_later() for key, q in seqs.items()} if buffers is None
                     else None)
        except BaseException:
            for q in seqs.values():
                q.abort()
            raise
        return _TaskResult(rows, task_nodes, buffers, files, seen, raw)

    merge: dict = {}
    pieces: dict = {key: [] for key in todo}
    total = raw = 0
    seen = {r: placements_seen(hamming, instance.n_pieces) for r in marked}

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
                    raw += res.raw
                    for r in marked:
                        seen[r] |= res.seen[r]
                    if res.files is not None:
                        flush_merge()
                        for key in todo:
                            pieces[key] += res.files[key].result()
                    else:
                        assert res.buffers is not None
                        for key in todo:
                            if key not in merge:
                                merge[key] = seq(key, f"merge-{idx:05d}")
                            for buf in res.buffers[key[0]]:
                                merge[key].write(*buf)
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
        out[key] = (pieces[key], total, raw, seconds)
    return out, nodes, (seen if dist is not None else seen[0])


def enumerate_forms(forms: Iterable[str] = (), distinct: bool = False) -> tuple[str, ...]:
    """The forms an enumeration writes: `forms` and, with `distinct`, the distinct form;
    `DEFAULT_FORMS` (flat) when neither asks for one.  What `e2store enumerate --form
    ... [--distinct]` writes, decided here rather than by the command line."""
    asked = tuple(forms)
    return (*asked, "distinct") if distinct else asked or DEFAULT_FORMS


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


