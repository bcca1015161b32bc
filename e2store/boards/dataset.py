"""The boards dataset: a directory a best-score run adds one boards file to per restart
(`e2store best -o DIR`), so that saving a restart costs the same at restart 10 as
at restart 100,000, and the dataset can be read while a run writes it; compacted, many
restarts to a file, so that a campaign's 10^6 boards read fast (docs/store-format.md,
*Boards files and datasets*).

**Layout**: `DIR/arm=<arm>/part-s<seed>-r<restart>.parquet` (Hive-partitioned by arm; the
restart zero-padded to `RESTART_DIGITS`).  A part is a complete boards file
(`e2store.boards.table`: its columns, metadata and `rows_sha256` digest) holding one
restart's rows: its best board and, with fill, its filled board.  A part is made in
`arm=<arm>/.temp/` under a name not ending in `.parquet`, then renamed into place (a
reader never sees half a part; the next write removes what a killed one left), and never
rewritten.  A shard K/N of a run (restarts k with k % N == K) holds
`arm=<arm>/.seed=<seed>.shard=<K>of<N>.lock` (`exclusive_writer`), an unsharded run that of
shard 0 of 1: the shards of one N run at once (their restarts are disjoint), a run of the
seed sharded otherwise is refused while one holds its lock; runs of other seeds or arms
write beside it.

**Compacted files** (`compact_boards_dataset`, `e2store compact-boards`):
`arm=<arm>/compact-s<seed>-r<first>-r<last>-n<restarts>.parquet`, a complete boards file
(zstd) holding the rows of many restarts of one seed, in (restart, the part's row) order,
made from parts each checked first, written atomically like a part, never rewritten nor
removed; then the parts it holds are removed.  The restarts a dataset holds are read from
the part names and each compacted file's `seed` and `restart` columns (read once, cached).
A restart held twice (a compaction killed between writing its file and removing the parts)
is counted once, from the compacted file; the part must hold the same rows (checked when
read; the next compaction removes it).  A compaction bumps `arm=<arm>/.compacted` after
renaming its file in and before removing parts: a listing of the arm is taken again when
that file changed while it listed (a listing never misses a restart moving from its part
to a compacted file), and a read that finds a listed part gone lists again.

**Reading** (`read_boards_dataset`): every file at once with DuckDB, each checked as
`read_boards` checks a file (metadata, digest, and with the instance a recount of every
board), and its rows' seed and restart against its name (a compacted file: against the
restarts it holds); a file that fails is read again by `read_boards`, whose error names
it.  Rows come in (arm, seed, restart) order, one entry of `parts` per restart.

This module is the dataset's face (its names are imported from here) and its writer's
sink; the layout and listing are `e2store.boards.parts`, the reading
`e2store.boards.read`, the compaction `e2store.boards.compact`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from e2store.boards.compact import COMPACT_MIN_PARTS as COMPACT_MIN_PARTS
from e2store.boards.compact import COMPACT_RESTARTS as COMPACT_RESTARTS
from e2store.boards.compact import compact_boards_dataset as compact_boards_dataset
from e2store.boards.parts import COMPACT_PREFIX as COMPACT_PREFIX
from e2store.boards.parts import COMPACTED as COMPACTED
from e2store.boards.parts import DEFAULT_ARM as DEFAULT_ARM
from e2store.boards.parts import RESTART_DIGITS as RESTART_DIGITS
from e2store.boards.parts import SCRATCH as SCRATCH
from e2store.boards.parts import Part as Part
from e2store.boards.parts import check_arm as check_arm
from e2store.boards.parts import compact_name as compact_name
from e2store.boards.parts import dataset_parts as dataset_parts
from e2store.boards.parts import first_line, held_shards, lock_name
from e2store.boards.parts import is_dataset_target as is_dataset_target
from e2store.boards.parts import part_name as part_name
from e2store.boards.parts import part_path as part_path
from e2store.boards.parts import remove_killed_temps as remove_killed_temps
from e2store.boards.parts import write_part as write_part
from e2store.boards.read import CHECK_ROWS as CHECK_ROWS
from e2store.boards.read import DatasetBoards as DatasetBoards
from e2store.boards.read import check_part_names
from e2store.boards.read import read_boards_dataset as read_boards_dataset
from e2store.boards.table import Boards, read_boards
from e2store.errors import SolverError
from e2store.instance.model import Instance
from e2store.instance.parsing import shown_path as _n


class BoardsSink:
    """Where a run's boards go: a boards file (every restart appended, `append_boards`) or
    a dataset's arm (a part per restart); `done`: the restarts of the run's seed there."""

    def __init__(self, path: Path, instance: Instance, seed: int, arm: str | None):
        self.path, self.instance, self.seed, self.arm = path, instance, seed, arm
        self.done: set[int] = set()

    def write(self, restart: int, boards: Boards) -> None:
        from e2store.boards.table import append_boards

        if self.arm is None:
            append_boards(self.path, self.instance, boards)
        else:
            write_part(self.path, self.instance, boards, arm=self.arm, seed=self.seed,
                       restart=restart)


@contextlib.contextmanager
def boards_sink(output: str | Path, instance: Instance, seed: int,
                arm: str | None = None,
                shard: tuple[int, int] | None = None) -> Iterator[BoardsSink]:
    """Hold where a run of `seed` writes its boards for the whole run: a dataset when
    `is_dataset_target(output)` (its arm `arm`, default `DEFAULT_ARM`; the lock of (arm,
    seed), killed writers' temp files removed, `done` from `dataset_parts`: the part names
    and the restarts compacted files hold; a dataset of another instance refused, read
    from one file's metadata) else a boards file (its lock; `done` from its rows, the file
    checked).  A second writer gets BusyError.  `shard` (K, N): the lock of (arm, seed,
    shard) in a dataset, `done` this shard's restarts alone."""
    from e2store.files import exclusive_writer, table_schema

    out = Path(output)
    if not is_dataset_target(output):
        if arm is not None:
            raise SolverError(f"arm {arm!r:.80} names an arm of a boards dataset, and "
                              f"{_n(out)} is a boards file (give a directory)").about("arm")
        with exclusive_writer(out, "boards file"):  # a second run is refused: no row lost
            sink = BoardsSink(out, instance, seed, None)
            if out.exists():  # a rerun adds to the file: its restarts not yet done are run
                old = read_boards(out, instance)  # checked: a damaged file is refused
                sink.done = {int(k) for k, s in zip(old.stats["restart"], old.stats["seed"],
                                                    strict=True)
                             if int(s) == seed and _in_shard(int(k), shard)}
            yield sink
        return
    arm = check_arm(DEFAULT_ARM if arm is None else arm)
    arm_dir = out / f"arm={arm}"
    with _run_lock(arm_dir, seed, shard):
        remove_killed_temps(arm_dir)
        sink = BoardsSink(out, instance, seed, arm)
        parts = dataset_parts(out)  # every arm's names, to check each is a part's
        mine = [p for p in parts if (p.arm, p.seed) == (arm, seed)]
        check_part_names([p for p in mine if not p.compacted])  # the names are trusted next
        sink.done = {p.restart for p in mine if _in_shard(p.restart, shard)}
        if parts:  # one file's metadata (not its rows): the dataset's instance
            try:
                meta = table_schema(parts[0].path).metadata or {}
            except Exception as e:  # pyarrow's errors for a file that is no table
                raise SolverError(f"{_n(parts[0].path)}: not a boards file, or a damaged "
                                  f"one ({first_line(e)}): move it aside") from None
            if meta.get(b"instance") != instance.id.encode():
                raise SolverError(f"{_n(parts[0].path)}: holds boards of instance "
                                  f"{meta.get(b'instance', b'?').decode(errors='replace')!r:.80}"
                                  f", not of {instance.id} ({instance.name}): write them to "
                                  f"another directory")
        yield sink


@contextlib.contextmanager
def _run_lock(arm_dir: Path, seed: int, shard: tuple[int, int] | None) -> Iterator[None]:
    """Hold the lock of a run of (arm, seed, shard) (`lock_name`: an unsharded run is shard
    0 of 1), then refuse (BusyError) when a run of the seed sharded otherwise holds its
    own: the runs of one seed at once are the shards of one N, whose restarts are
    disjoint.  Two runs of different N starting at the same moment may both be refused,
    never both run."""
    from e2store.files import BusyError, exclusive_writer, run_lock

    what = "seed of a boards dataset" if shard is None else "shard of a seed of a boards dataset"
    n = 1 if shard is None else shard[1]
    with exclusive_writer(arm_dir / lock_name(seed, shard), what):
        for k2, n2, name in held_shards(os.listdir(arm_dir), seed):
            if n2 == n:
                continue
            with run_lock(arm_dir / f".{name}.lock", blocking=False) as fd:
                if fd is None:
                    mine = "an unsharded run" if shard is None else f"shard {shard[0]} of {n}"
                    theirs = "an unsharded run" if n2 == 1 else f"shard {k2} of {n2}"
                    raise BusyError(f"{_n(arm_dir)}: {theirs} of seed {seed} is running; "
                                    f"{mine} would repeat its restarts (the runs of a seed "
                                    f"at once are the shards of one count): wait for it to "
                                    f"end, or run another seed")
        yield


def _in_shard(restart: int, shard: tuple[int, int] | None) -> bool:
    return shard is None or restart % shard[1] == shard[0]
