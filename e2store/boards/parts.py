"""The layout of a boards dataset (`e2store.boards.dataset`, whose docstring
describes the format): the names of its parts and compacted files, the listing of an arm
(taken again while a compaction removes parts), the restarts each file holds, and the
write of a part."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from e2store.boards.table import Boards, boards_table
from e2store.errors import DamagedDataError, SolverError
from e2store.instance.model import Instance
from e2store.instance.parsing import shown_path as _n

DEFAULT_ARM = "default"  # the arm of a run outside a campaign
RESTART_DIGITS = 9  # part names sort by restart up to 10^9 restarts
SCRATCH = ".temp"  # where a part is made before its rename, in its arm's directory
COMPACT_PREFIX = "compact-"
COMPACTED = ".compacted"  # an arm's marker, rewritten by each compaction (boards_dataset)
LIST_TRIES = 40  # listings of an arm taken while compactions go on, before giving up
SHARD_LOCK = re.compile(r"\.seed=([0-9]+)\.shard=([0-9]+)of([0-9]+)\.lock")  # a shard's run
_OLD_LOCK = re.compile(r"\.seed=([0-9]+)\.lock")  # an unsharded run's, before issue 57
_ARM = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_PART = re.compile(r"part-s([0-9]+)-r([0-9]+)\.parquet")
_COMPACT = re.compile(r"compact-s([0-9]+)-r([0-9]+)-r([0-9]+)-n([0-9]+)\.parquet")


class Part(NamedTuple):
    """A restart of a boards dataset and the file that holds its rows: its part, or a
    compacted file (`compacted`)."""

    arm: str
    seed: int
    restart: int
    path: Path

    @property
    def compacted(self) -> bool:
        return self.path.name.startswith(COMPACT_PREFIX)


class DatasetFile(NamedTuple):
    """A file of a dataset, a part or a compacted file, and the restarts it holds."""

    path: Path
    arm: str
    seed: int
    entries: list[Part]
    compacted: bool


def is_dataset_target(output: str | Path) -> bool:
    """Whether `e2store best -o OUTPUT` writes a boards dataset rather than a boards file:
    OUTPUT is a directory, or ends with `/`, or (not there yet) has no suffix.  An
    existing file, and a new name ending in `.parquet`, `.arrow` (any suffix), is a
    file, as before datasets."""
    text = os.fspath(output)
    p = Path(text)
    if p.is_dir():
        return True
    if p.exists() or p.is_symlink():
        return False
    return text.endswith(("/", os.sep)) or p.suffix == ""


def check_arm(arm: str) -> str:
    """`arm` if it can name a dataset's directory `arm=<arm>`, else SolverError."""
    if not isinstance(arm, str) or not _ARM.fullmatch(arm):
        raise SolverError(f"arm {arm!r:.80}: expected 1 to 64 letters, digits, '_', '.' or "
                          f"'-', the first a letter or digit (it names the directory "
                          f"arm=<arm> of a boards dataset)").about("arm")
    return arm


def lock_name(seed: int, shard: tuple[int, int] | None = None) -> str:
    """The name of the lock a run of `seed` holds in its arm's directory (`exclusive_writer`
    adds the dot and `.lock`): shard K of N, an unsharded run shard 0 of 1."""
    k, n = (0, 1) if shard is None else shard
    return f"seed={seed}.shard={k}of{n}"


def held_shards(names: list[str], seed: int) -> list[tuple[int, int, str]]:
    """(K, N, name without dot and `.lock`) of the shard locks of `seed` among `names` (an
    arm directory's listing): the runs of the seed, or what dead ones left."""
    out = []
    for name in names:
        m = SHARD_LOCK.fullmatch(name)
        if m is not None and int(m[1]) == seed:
            out.append((int(m[2]), int(m[3]), name[1:-len(".lock")]))
    return out


def run_locks(names: list[str]) -> list[tuple[int, int | None, int | None, str]]:
    """(seed, K, N, file name) of the run locks among `names` (an arm directory's
    listing): K, N None for an unsharded run (shard 0 of 1, or a lock of e2store before
    shards shared one count)."""
    out = []
    for name in names:
        if (m := SHARD_LOCK.fullmatch(name)) is not None:
            k, n = int(m[2]), int(m[3])
            out.append((int(m[1]), None if n == 1 else k, None if n == 1 else n, name))
        elif (m := _OLD_LOCK.fullmatch(name)) is not None:
            out.append((int(m[1]), None, None, name))
    return out


def part_name(seed: int, restart: int) -> str:
    """The file name of the part of (`seed`, `restart`)."""
    return f"part-s{int(seed)}-r{int(restart):0{RESTART_DIGITS}d}.parquet"


def part_path(root: str | Path, arm: str, seed: int, restart: int) -> Path:
    return Path(root) / f"arm={check_arm(arm)}" / part_name(seed, restart)


def compact_name(seed: int, first: int, last: int, restarts: int) -> str:
    """The file name of a compacted file of `seed` holding `restarts` restarts, the first
    `first` and the last `last` (one seed's compacted files hold disjoint restarts: no two
    have one name)."""
    return (f"{COMPACT_PREFIX}s{int(seed)}-r{int(first):0{RESTART_DIGITS}d}-"
            f"r{int(last):0{RESTART_DIGITS}d}-n{int(restarts)}.parquet")


def dataset_parts(root: str | Path, arm: str | None = None) -> list[Part]:
    """The restarts of the dataset at `root` (of `arm` alone when given), each once, in
    (arm, seed, restart) order, with the file holding it: its part, or the compacted file
    holding it (preferred when both are there).  From the part names, and each compacted
    file's `seed` and `restart` columns (read once per file and process).  SolverError for
    an `arm=` entry that does not name an arm, or a `.parquet` file there whose name is
    not a part's or a compacted file's; DamagedDataError for a compacted file whose
    columns disagree with its name; other names (a run's temp and lock files, dot files)
    are not parts."""
    return _unique(dataset_files(root, arm))


def _unique(files: list[DatasetFile]) -> list[Part]:
    """Each restart of `files` once, the compacted files' first, in (arm, seed, restart)
    order."""
    held: dict[tuple, Part] = {}
    for f in files:
        if f.compacted:
            for p in f.entries:
                held.setdefault(p[:3], p)
    if not held:
        return [f.entries[0] for f in files]  # in order: the files are
    out = list(held.values()) + [f.entries[0] for f in files
                                 if not f.compacted and f.entries[0][:3] not in held]
    out.sort(key=lambda p: (p.arm, p.seed, p.restart))
    return out


def dataset_files(root: str | Path, arm: str | None = None) -> list[DatasetFile]:
    """Every part and compacted file of the dataset at `root` (of `arm` alone when given),
    a restart held twice listed twice, in (arm, seed, first restart) order."""
    root = Path(root)
    if arm is not None:
        dirs = [f"arm={check_arm(arm)}"]
    else:
        dirs = sorted(e for e in os.listdir(root) if e.startswith("arm="))
        if not dirs and root.name.startswith("arm=") and any(
                e.endswith(".parquet") for e in os.listdir(root)):
            raise SolverError(f"{_n(root)}: one arm's directory of a boards dataset, not a "
                              f"dataset: give the directory holding it, {_n(root.parent)}")
    out: list[DatasetFile] = []
    for d in dirs:
        out += arm_files(root / d, d[4:])[0]
    out.sort(key=lambda f: (f.arm, f.seed, f.entries[0].restart, not f.compacted))
    return out


def arm_files(where: Path, arm: str) -> tuple[list[DatasetFile], list[str]]:
    """The files of the arm directory `where` (unsorted) and every name there."""
    if not _ARM.fullmatch(arm):
        raise SolverError(f"{_n(where)}: not an arm of a boards dataset (expected "
                          f"arm=<letters, digits, '_', '.', '-'>)")
    try:
        names = _listing(where)
    except FileNotFoundError:
        return [], []  # an arm not written yet
    except NotADirectoryError:
        raise SolverError(f"{_n(where)}: not a directory (the parts of a boards "
                          f"dataset's arm {arm!r} go in it)") from None
    out: list[DatasetFile] = []
    for name in names:
        if not name.endswith(".parquet"):
            continue
        path = where / name
        m = _PART.fullmatch(name)
        if m is not None and name == part_name(int(m[1]), int(m[2])):
            seed = int(m[1])
            out.append(DatasetFile(path, arm, seed, [Part(arm, seed, int(m[2]), path)], False))
            continue
        m = _COMPACT.fullmatch(name)
        if m is not None and name == compact_name(*map(int, m.groups())) and int(m[4]) > 0:
            seed = int(m[1])
            held = _held(path, arm, seed, *map(int, m.groups()[1:]))
            out.append(DatasetFile(path, arm, seed, held, True))
            continue
        raise SolverError(f"{_n(path)}: not a part of a boards dataset (expected "
                          f"part-s<seed>-r<restart, {RESTART_DIGITS} digits>.parquet, as "
                          f"`e2store best -o DIR` writes, or compact-s<seed>-r<first>-"
                          f"r<last>-n<restarts>.parquet, as `compact-boards` writes)")
    return out, names


def _listing(where: Path) -> list[str]:
    """The names in an arm's directory, listed while no compaction removed parts there:
    listed again while its marker changes (module docstring)."""
    for attempt in range(LIST_TRIES):
        before = _marker(where)
        names = os.listdir(where)
        if _marker(where) == before:
            return names
        time.sleep(min(0.2, 0.001 * 2 ** attempt))
    raise SolverError(f"{_n(where)}: compactions went on through {LIST_TRIES} listings of it: "
                      f"read it again when they end")


def _marker(where: Path) -> bytes:
    try:
        return (where / COMPACTED).read_bytes()
    except OSError:  # none yet (no compaction ever), or no arm directory: the listing says
        return b""


_HELD: dict[Path, tuple[tuple[int, int, int], np.ndarray]] = {}  # compacted file -> restarts


def _held(path: Path, arm: str, seed: int, first: int, last: int, count: int) -> list[Part]:
    """The restarts the compacted file `path` holds as `Part`s (`held_restarts`)."""
    return [Part(arm, seed, int(r), path) for r in held_restarts(path, seed, first, last,
                                                                 count).tolist()]


def held_restarts(path: Path, seed: int, first: int, last: int, count: int) -> np.ndarray:
    """The restarts the compacted file `path` holds, from its `seed` and `restart` columns
    (pages checked against their checksums), checked against its name; kept per file
    (a compacted file is never rewritten)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    st = path.stat()
    key = (st.st_ino, st.st_size, st.st_mtime_ns)
    hit = _HELD.get(path)
    if hit is not None and hit[0] == key:
        return hit[1]
    try:
        t = pq.read_table(path, columns=["seed", "restart"], page_checksum_verification=True)
    except FileNotFoundError:
        raise
    except Exception as e:  # pyarrow's errors for a file that is no table, or damaged
        raise SolverError(f"{_n(path)}: not a boards file, or a damaged one ({first_line(e)})"
                          ) from None
    if any(t.column(k).type != pa.int64() or t.column(k).null_count for k in ("seed",
                                                                             "restart")):
        raise DamagedDataError(f"{_n(path)}: damaged boards file (its seed and restart "
                               f"columns are not int64 without nulls)")
    held = check_held(path, t.column("seed").to_numpy(), t.column("restart").to_numpy(),
                      seed, first, last, count)
    if len(_HELD) >= 4096:
        _HELD.clear()
    _HELD[path] = (key, held)
    return held


def check_held(path: Path, seeds: np.ndarray, restarts: np.ndarray, seed: int, first: int,
               last: int, count: int) -> np.ndarray:
    """The distinct restarts of a compacted file's rows, checked against its name
    (DamagedDataError: a renamed or damaged file)."""
    held = np.unique(restarts)
    if not (np.all(seeds == seed) and np.all(np.diff(restarts) >= 0) and len(held) == count
            and held[0] == first and held[-1] == last):
        raise DamagedDataError(f"{_n(path)}: damaged compacted boards file (its rows are not "
                               f"those of seed {seed}, {count} restarts from {first} to "
                               f"{last} in order, as its name says); it is left as it is: "
                               f"restore it from a copy, or move it aside")
    return held


class Holder(NamedTuple):
    """A file holding restarts of a dataset, as its name says: seed, first and last
    restart and how many (a part: one)."""

    path: Path
    arm: str
    seed: int
    first: int
    last: int
    restarts: int
    compacted: bool


def holder_files(root: str | Path) -> list[Holder]:
    """The files holding a dataset's restarts, each restart in one (a compacted file
    before a part left beside it), in (arm, seed, first restart) order, from the names:
    no per-restart object (a campaign of 10^7 restarts lists in seconds).  A compacted
    file's restarts are read (`held_restarts`) only where a part's restart falls in its
    range with gaps in it (a shard's compacted restarts)."""
    root = Path(root)
    dirs = sorted(e for e in os.listdir(root) if e.startswith("arm="))
    out: list[Holder] = []
    for d in dirs:
        arm = d[4:]
        if not _ARM.fullmatch(arm):
            raise SolverError(f"{_n(root / d)}: not an arm of a boards dataset")
        try:
            names = _listing(root / d)
        except FileNotFoundError:
            continue
        files, parts = [], []
        for name in names:
            m = _COMPACT.fullmatch(name)
            if m is not None and name == compact_name(*map(int, m.groups())) and int(m[4]) > 0:
                seed, first, last, count = map(int, m.groups())
                files.append(Holder(root / d / name, arm, seed, first, last, count, True))
            elif (m := _PART.fullmatch(name)) is not None and name == part_name(
                    int(m[1]), int(m[2])):
                parts.append(Holder(root / d / name, arm, int(m[1]), int(m[2]), int(m[2]), 1,
                                    False))
            elif name.endswith(".parquet"):
                arm_files(root / d, arm)  # its error names the file
        for p in parts:
            covering = [f for f in files if f.seed == p.seed and f.first <= p.first <= f.last]
            if not any(f.restarts == f.last - f.first + 1 or p.first in held_restarts(
                    f.path, f.seed, f.first, f.last, f.restarts) for f in covering):
                files.append(p)
        out += files
    out.sort(key=lambda f: (f.arm, f.seed, f.first, not f.compacted))
    return out


def write_part(root: str | Path, instance: Instance, boards: Boards, *, arm: str,
               seed: int, restart: int) -> Path:
    """Write one restart's rows as its part (atomically, made in the arm's scratch
    directory: constant work however many parts there are); SolverError when the rows are
    of another seed or restart, or the part exists (a part is never rewritten).  The
    caller holds the (arm, seed) writer lock (`boards_sink`), and writes no restart the
    dataset holds (`BoardsSink.done`: compacted ones too)."""
    from e2store.files import write_table

    path = part_path(root, arm, seed, restart)
    st = boards.stats
    if len(boards) and not (np.all(st["seed"] == seed) and np.all(st["restart"] == restart)):
        raise SolverError(f"{_n(path)}: rows of another seed or restart than the part's")
    if path.exists():
        raise SolverError(f"{_n(path)}: this part exists (a part is written once)")
    write_table(path, boards_table(instance, boards, arm=arm), few_rows=True,
                scratch=path.parent / SCRATCH)
    return path


def remove_killed_temps(arm_dir: Path) -> int:
    """Remove what killed writers left in an arm's scratch directory (`remove_stale_temps`
    for each part name there; a live writer's files stay); returns how many writes."""
    from e2store.files import remove_stale_temps

    scratch = arm_dir / SCRATCH
    try:
        names = os.listdir(scratch)
    except FileNotFoundError:
        return 0
    targets = {m[1] for n in names if (m := re.fullmatch(r"\.(.+)\.\d+\.[0-9a-f]{8}\..+", n))}
    return sum(remove_stale_temps(scratch / t) for t in sorted(targets))


def moved_arm(path: Path | str, meta: dict[str, str], arm: str) -> SolverError | None:
    """The error of a file whose metadata names another arm than its directory (a file
    moved), else None (files written before e2store wrote the key say none)."""
    from e2store.boards.schema import ARM_KEY

    if meta.get(ARM_KEY, arm) == arm:
        return None
    return SolverError(f"{_n(path)}: holds boards of arm {meta[ARM_KEY]!r:.80}, in the "
                       f"directory of arm {arm!r:.80} (a file moved?): move it back to "
                       f"arm={meta[ARM_KEY]:.80}/")


def first_line(e: Exception) -> str:
    return ((str(e).splitlines() or [type(e).__name__])[0][:160]
            .encode("ascii", "backslashreplace").decode())
