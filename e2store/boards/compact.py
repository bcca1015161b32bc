"""Compaction of a boards dataset (`e2store.boards.dataset`, `e2store
compact-boards`): the parts of each (arm, seed) merged into compacted files of many
restarts, every part checked first, holding the locks the seed's writers take; then the
parts removed."""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from pathlib import Path
from typing import Any

import numpy as np

from e2store.boards.parts import (
    COMPACTED,
    SCRATCH,
    DatasetFile,
    arm_files,
    compact_name,
    dataset_files,
    held_shards,
)
from e2store.boards.read import assemble, read_files
from e2store.boards.schema import ARM_KEY, BOARD_STATS, BOARDS_VERSION, DIGEST_KEY, boards_schema
from e2store.boards.table import Boards, read_boards, rows_digest
from e2store.errors import DamagedDataError, SolverError
from e2store.instance.model import Instance
from e2store.instance.parsing import shown_path as _n

COMPACT_MIN_PARTS = 100  # a seed's parts left as they are when fewer
COMPACT_RESTARTS = 20_000  # restarts a compacted file holds at most (Eternity II: ~40 MB)
REMOVERS = 8  # threads removing the parts merged


def compact_boards_dataset(root: str | Path, instance: Instance | None = None, *,
                           arm: str | None = None, min_parts: int = COMPACT_MIN_PARTS,
                           max_restarts: int = COMPACT_RESTARTS) -> dict[str, Any]:
    """Merge the parts of each (arm, seed) of the dataset at `root` (of `arm` alone when
    given) into compacted files of at most `max_restarts` restarts (module docstring),
    then remove the parts merged; a seed with fewer than `min_parts` parts is left as it
    is.  A seed is compacted holding the locks its writers take (that of the seed and
    those of its shards running: `boards_sink`): a seed a run writes is skipped, and said
    so in the report.  Every part is checked before it is merged (digest; with
    `instance`, a recount of every board): a damaged one is a DamagedDataError naming it,
    and nothing of its batch is written or removed (batches written before stay: each a
    complete, checked file).  Each compacted file is read back and its digest checked
    before a part is removed.  The parts a killed compaction left beside its compacted
    file are removed, once checked to hold the same rows.  Returns a report: the files
    written (`compacted`), the seeds skipped and why, the leftover parts removed."""
    from e2store.files import BusyError

    root = Path(root)
    if not root.is_dir():
        raise SolverError(f"{_n(root)}: no boards dataset there (expected the directory "
                          f"`e2store best -o DIR` writes)")
    for name, value in (("min_parts", min_parts), ("max_restarts", max_restarts)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise SolverError(f"{name} {value!r:.40}: expected a whole number, 1 or more"
                              ).about(name)
    t0 = time.perf_counter()
    report: dict[str, Any] = {"dataset": str(root), "recounted": instance is not None,
                              "compacted": [], "skipped": [], "leftovers_removed": 0}
    for a, s in sorted({(f.arm, f.seed) for f in dataset_files(root, arm)
                        if not f.compacted}):
        try:
            _compact_seed(root, instance, a, s, min_parts, max_restarts, report)
        except BusyError as e:
            report["skipped"].append({"arm": a, "seed": s, "why": f"a run writes it: {e}"})
    report["parts_removed"] = sum(c["parts"] for c in report["compacted"])
    report["seconds"] = time.perf_counter() - t0
    return report


def _compact_seed(root: Path, instance: Instance | None, arm: str, seed: int,
                  min_parts: int, max_restarts: int, report: dict[str, Any]) -> None:
    """Compact the parts of (`arm`, `seed`) holding its writers' locks (BusyError: one
    runs), into `report`."""
    from e2store.files import exclusive_writer

    arm_dir = root / f"arm={arm}"
    with contextlib.ExitStack() as locks:
        locks.enter_context(exclusive_writer(arm_dir / f"seed={seed}",
                                             "seed of a boards dataset"))
        files, names = arm_files(arm_dir, arm)  # listed again, holding the seed's lock
        for _k, _n, name in held_shards(sorted(names), seed):  # runs, or dead ones' files
            locks.enter_context(exclusive_writer(arm_dir / name,
                                                 "shard of a seed of a boards dataset"))
        mine = sorted((f for f in files if f.seed == seed),
                      key=lambda f: (f.entries[0].restart, not f.compacted))
        held = {p.restart for f in mine if f.compacted for p in f.entries}
        parts = [f for f in mine if not f.compacted]
        left = [f for f in parts if f.entries[0].restart in held]
        if left:  # a killed compaction's: removed once they hold their compacted rows
            gone = {f.entries[0].restart for f in left}
            holders = [f for f in mine if f.compacted and any(p.restart in gone
                                                              for p in f.entries)]
            assemble([read_files(root, holders + left, instance)])
            _remove([f.path for f in left])
            report["leftovers_removed"] += len(left)
        parts = [f for f in parts if f.entries[0].restart not in held]
        if len(parts) < min_parts:
            if parts:
                report["skipped"].append({"arm": arm, "seed": seed, "parts": len(parts),
                                          "why": f"{len(parts)} parts, fewer than "
                                                 f"min_parts {min_parts}"})
            return
        batches = -(-len(parts) // max_restarts)
        for cut in np.array_split(np.arange(len(parts)), batches):
            done = _compact(root, arm_dir, instance, seed, [parts[i] for i in cut.tolist()])
            if done is not None:
                report["compacted"].append(done)


def _compact(root: Path, arm_dir: Path, instance: Instance | None, seed: int,
             batch: list[DatasetFile]) -> dict[str, Any] | None:
    """Write the compacted file of the parts `batch` (each checked first), read it back,
    then remove the parts it holds (a part without rows stays: None when all are so)."""
    from e2store.files import write_table

    d = assemble([read_files(root, batch, instance)])  # every part checked: else raises
    merged = [p for p, c in zip(d.parts, d.counts.tolist(), strict=True) if c]
    if not merged:
        return None
    restarts = [p.restart for p in merged]
    path = arm_dir / compact_name(seed, restarts[0], restarts[-1], len(restarts))
    if path.exists():
        raise SolverError(f"{_n(path)}: exists (a compacted file is written once): move it "
                          f"aside")
    write_table(path, _compacted_table(d.boards, d.parts[0].arm), scratch=arm_dir / SCRATCH)
    if len(read_boards(path)) != len(d.boards):  # its digest checked: the rows written
        raise DamagedDataError(f"{_n(path)}: read back, it holds other rows than written: "
                               f"the parts are kept")
    _bump(arm_dir)  # before any part is removed: listings taken meanwhile are taken again
    _remove([p.path for p in merged])
    return {"arm": d.parts[0].arm, "seed": seed, "file": path.name, "parts": len(merged),
            "rows": len(d.boards), "first": restarts[0], "last": restarts[-1]}


def _compacted_table(boards: Boards, arm: str):
    """The Arrow table of a compacted file: `boards` as read (every column as stored, the
    URLs too), the boards files' metadata, its arm and its rows' digest."""
    import pyarrow as pa

    meta = {k: boards.meta[k] for k in ("format", "instance", "width", "height")}
    meta["version"] = str(BOARDS_VERSION)  # parts of version 3 too: their keys now stored
    meta[ARM_KEY] = arm
    meta[DIGEST_KEY] = rows_digest(meta, boards)
    n = boards.cells.shape[1]
    schema = boards_schema(n, meta)
    cols = [pa.array(boards.cells[:, i], pa.int16()) for i in range(n)]
    cols += [pa.array(list(boards.stats[k]) if kind == "string" else boards.stats[k],
                      schema.field(k).type) for k, kind in BOARD_STATS]
    return pa.Table.from_arrays(cols, schema=schema)


def _remove(paths: list[Path]) -> None:
    """Remove files, `REMOVERS` at a time: an unlink waits on the file system's journal
    (3.7 ms each on the development VM's ext4, one at a time; 0.1 ms with 8 at once)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(REMOVERS) as pool:
        list(pool.map(lambda p: p.unlink(missing_ok=True), paths))


def _bump(arm_dir: Path) -> None:
    """Rewrite the arm's compaction marker (a new content every time)."""
    from e2store.files import atomic_write

    token = f"{time.time_ns()} {os.getpid()} {secrets.token_hex(8)}\n".encode()
    atomic_write(arm_dir / COMPACTED, lambda fh: fh.write(token), scratch=arm_dir / SCRATCH)
