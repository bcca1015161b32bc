"""The boards dataset: a directory a best-score run adds one boards file to per restart
(`e2store solve --best -o DIR`), so that saving a restart costs the same at restart 10 as
at restart 100,000, and the dataset can be read while a run writes it (docs/store-format.md,
*Boards files and datasets*).

**Layout**: `DIR/arm=<arm>/part-s<seed>-r<restart>.parquet` (Hive-partitioned by arm; the
restart zero-padded to `RESTART_DIGITS`).  A part is a complete boards file
(`e2store.solver.boards`: its columns, metadata and `rows_sha256` digest) holding one
restart's rows: its best board and, with fill, its filled board.  A part is made in
`arm=<arm>/.temp/` under a name not ending in `.parquet`, then renamed into place (a
reader never sees half a part; the next write removes what a killed one left), and never
rewritten.  A run holds `arm=<arm>/.seed=<seed>.lock` (`exclusive_writer`): one writer per
(arm, seed); runs of other seeds or arms write beside it.  A shard K/N of a run (restarts k
with k % N == K) holds `.seed=<seed>.shard=<K>of<N>.lock` instead: the shards of one N run
at once (their restarts are disjoint; shards of another N, or an unsharded run, beside them
are the caller's to avoid).  The restarts a dataset holds are
read from its part names alone.

**Reading** (`read_boards_dataset`): every part at once with DuckDB, each checked as
`read_boards` checks a file (metadata, digest, and with the instance a recount of every
board), and its rows' seed and restart against its name; a part that fails is read again
by `read_boards`, whose error names it.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from e2store.errors import DamagedDataError, SolverError
from e2store.instance.model import Instance
from e2store.instance.parsing import shown_path as _n
from e2store.solver.boards import (
    BOARD_STATS,
    BOARDS_FORMAT,
    BOARDS_VERSION,
    DIGEST_KEY,
    Boards,
    boards_table,
    check_rows,
    new_boards,
    read_boards,
    rows_digest,
)

DEFAULT_ARM = "default"  # the arm of a run outside a campaign
RESTART_DIGITS = 9  # part names sort by restart up to 10^9 restarts
SCRATCH = ".temp"  # where a part is made before its rename, in its arm's directory
CHECK_ROWS = 8192  # boards recounted at a time (the recount holds ~W*H*64 bytes a board)
_ARM = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_PART = re.compile(r"part-s([0-9]+)-r([0-9]+)\.parquet")
_NAMED = re.compile(r'file "([^"]+)"')  # the file a DuckDB error names


class Part(NamedTuple):
    """A part of a boards dataset, from its path alone."""

    arm: str
    seed: int
    restart: int
    path: Path


@dataclass
class DatasetBoards:
    """A boards dataset read and checked: every row (`boards`, parts in (arm, seed,
    restart) order), the arm of each row, the parts and their rows' counts, and `table`,
    the rows as one Arrow table (the parts' columns then `arm`: the view `boards` of
    `e2store sql --boards`)."""

    boards: Boards
    arms: np.ndarray
    parts: list[Part]
    counts: np.ndarray
    arrow: Any = None  # `table` as read, or None: made when first asked for

    @property
    def table(self) -> Any:
        if self.arrow is None:
            self.arrow = _table(self.boards, self.arms)
        return self.arrow


def is_dataset_target(output: str | Path) -> bool:
    """Whether `solve --best -o OUTPUT` writes a boards dataset rather than a boards file:
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


def part_name(seed: int, restart: int) -> str:
    """The file name of the part of (`seed`, `restart`)."""
    return f"part-s{int(seed)}-r{int(restart):0{RESTART_DIGITS}d}.parquet"


def part_path(root: str | Path, arm: str, seed: int, restart: int) -> Path:
    return Path(root) / f"arm={check_arm(arm)}" / part_name(seed, restart)


def dataset_parts(root: str | Path, arm: str | None = None) -> list[Part]:
    """The parts of the dataset at `root` (of `arm` alone when given), in (arm, seed,
    restart) order, from their names alone.  SolverError for an `arm=` entry that does not
    name an arm, or a `.parquet` file there whose name is not a part's; other names (a
    run's temp and lock files, dot files) are not parts."""
    root = Path(root)
    if arm is not None:
        dirs = [f"arm={check_arm(arm)}"]
    else:
        dirs = sorted(e for e in os.listdir(root) if e.startswith("arm="))
    out: list[Part] = []
    for d in dirs:
        where = root / d
        if not _ARM.fullmatch(d[4:]):
            raise SolverError(f"{_n(where)}: not an arm of a boards dataset (expected "
                              f"arm=<letters, digits, '_', '.', '-'>)")
        try:
            names = os.listdir(where)
        except FileNotFoundError:
            continue  # an arm not written yet
        except NotADirectoryError:
            raise SolverError(f"{_n(where)}: not a directory (the parts of a boards "
                              f"dataset's arm {d[4:]!r} go in it)") from None
        for name in names:
            if not name.endswith(".parquet"):
                continue
            m = _PART.fullmatch(name)
            if m is None or name != part_name(int(m[1]), int(m[2])):
                raise SolverError(f"{_n(where / name)}: not a part of a boards dataset "
                                  f"(expected part-s<seed>-r<restart, {RESTART_DIGITS} "
                                  f"digits>.parquet, as `solve --best -o DIR` writes)")
            out.append(Part(d[4:], int(m[1]), int(m[2]), where / name))
    out.sort(key=lambda p: (p.arm, p.seed, p.restart))
    return out


def write_part(root: str | Path, instance: Instance, boards: Boards, *, arm: str,
               seed: int, restart: int) -> Path:
    """Write one restart's rows as its part (atomically, made in the arm's scratch
    directory: constant work however many parts there are); SolverError when the rows are
    of another seed or restart, or the part exists (a part is never rewritten).  The
    caller holds the (arm, seed) writer lock (`boards_sink`)."""
    from e2store.files import write_table

    path = part_path(root, arm, seed, restart)
    st = boards.stats
    if len(boards) and not (np.all(st["seed"] == seed) and np.all(st["restart"] == restart)):
        raise SolverError(f"{_n(path)}: rows of another seed or restart than the part's")
    if path.exists():
        raise SolverError(f"{_n(path)}: this part exists (a part is written once)")
    write_table(path, boards_table(instance, boards), few_rows=True,
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


class BoardsSink:
    """Where a run's boards go: a boards file (every restart appended, `append_boards`) or
    a dataset's arm (a part per restart); `done`: the restarts of the run's seed there."""

    def __init__(self, path: Path, instance: Instance, seed: int, arm: str | None):
        self.path, self.instance, self.seed, self.arm = path, instance, seed, arm
        self.done: set[int] = set()

    def write(self, restart: int, boards: Boards) -> None:
        from e2store.solver.boards import append_boards

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
    seed), killed writers' temp files removed, `done` from the part names; a part of
    another instance refused, read from one part's metadata) else a boards file (its lock;
    `done` from its rows, the file checked).  A second writer gets BusyError.  `shard` (K,
    N): the lock of (arm, seed, shard) in a dataset, `done` this shard's restarts alone."""
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
    lock = f"seed={seed}" + ("" if shard is None else f".shard={shard[0]}of{shard[1]}")
    with exclusive_writer(arm_dir / lock, "seed of a boards dataset" if shard is None else
                          "shard of a seed of a boards dataset"):
        remove_killed_temps(arm_dir)
        sink = BoardsSink(out, instance, seed, arm)
        parts = dataset_parts(out)  # every arm's names, to check each is a part's
        sink.done = {p.restart for p in parts
                     if (p.arm, p.seed) == (arm, seed) and _in_shard(p.restart, shard)}
        if parts:  # one part's metadata (not its rows): the dataset's instance
            try:
                meta = table_schema(parts[0].path).metadata or {}
            except Exception as e:  # pyarrow's errors for a file that is no table
                raise SolverError(f"{_n(parts[0].path)}: not a boards file, or a damaged "
                                  f"one ({_first(e)}): move it aside") from None
            if meta.get(b"instance") != instance.id.encode():
                raise SolverError(f"{_n(parts[0].path)}: holds boards of instance "
                                  f"{meta.get(b'instance', b'?').decode(errors='replace')!r:.80}"
                                  f", not of {instance.id} ({instance.name}): write them to "
                                  f"another directory")
        yield sink


def _in_shard(restart: int, shard: tuple[int, int] | None) -> bool:
    return shard is None or restart % shard[1] == shard[0]


# reading ---------------------------------------------------------------------------------

def read_boards_dataset(root: str | Path, instance: Instance | None = None, *,
                        since: DatasetBoards | None = None) -> DatasetBoards:
    """Every row of the dataset at `root`, checked (module docstring): the error of a
    damaged part names it (DamagedDataError), as does that of a part of another instance
    or size (SolverError).  Parts renamed into place while it reads are seen or not.
    `since`: an earlier read of it, whose parts are not read again (a part is never
    rewritten; a part of it gone, all are read)."""
    parts = dataset_parts(root)
    if since is not None and {p.path for p in since.parts} <= {p.path for p in parts}:
        seen = {p.path for p in since.parts}
        new = [p for p in parts if p.path not in seen]
        return _merged(since, _read_parts(root, new, instance)) if new else since
    return _read_parts(root, parts, instance)


def _read_parts(root: str | Path, parts: list[Part], instance: Instance | None,
                ) -> DatasetBoards:
    """`read_boards_dataset` of the parts `parts` of `root`."""
    import duckdb

    if not parts:
        n_cells = 0 if instance is None else instance.width * instance.height
        return DatasetBoards(new_boards(n_cells), np.zeros(0, dtype=object), [],
                             np.zeros(0, dtype=np.int64))

    files = [str(p.path) for p in parts]
    try:
        t, metas = _read_all(files)
    except duckdb.Error as e:  # a part DuckDB cannot read, or not like the first
        _culprit(parts, instance, e)
        raise  # not reached
    want = _want_meta(metas[0], instance, parts[0])
    n = int(want["width"]) * int(want["height"])
    names = [f"c{i}" for i in range(n)] + [name for name, _ in BOARD_STATS]
    if t.column_names[:len(names)] != names or t.num_columns != len(names) + 2 or any(
            t.column(k).type != _arrow_type(kind) for k, kind in _kinds(n)) or any(
            t.column(k).null_count for k in names):
        for i, p in enumerate(parts):  # a part unlike the first, or with nulls: whose?
            read_boards(p.path, instance)
            _size_of(metas[i], want, p)
        raise DamagedDataError(f"{_n(root)}: damaged boards dataset (its parts read together "
                               f"do not have the columns of a boards file)")
    t, counts = _in_order(t, files)
    cells = np.column_stack([t.column(f"c{i}").to_numpy() for i in range(n)]).astype(np.int16)
    stats = {k: (np.array(t.column(k).to_pylist(), dtype=object) if kind == "string"
                 else t.column(k).to_numpy().astype(kind)) for k, kind in BOARD_STATS}
    bounds = np.concatenate([[0], np.cumsum(counts)])
    for i, p in enumerate(parts):
        a, b = int(bounds[i]), int(bounds[i + 1])
        rows = Boards(cells[a:b], {k: v[a:b] for k, v in stats.items()})
        why = _part_problem(metas[i], want, rows, p)
        if why is not None:
            read_boards(p.path, instance)  # its own error names it, else ours does
            raise why
    boards = Boards(cells, stats, {k: want[k] for k in ("format", "version", "instance",
                                                        "width", "height")})
    if instance is not None:
        _recount(instance, boards, parts, bounds)
    arms = np.repeat(np.array([p.arm for p in parts], dtype=object), counts)
    return DatasetBoards(boards, arms, parts, counts, _table(boards, arms, t))


def _merged(a: DatasetBoards, b: DatasetBoards) -> DatasetBoards:
    """The rows of `a` and `b`, parts in (arm, seed, restart) order."""
    if len(a.boards) and len(b.boards) and a.boards.cells.shape[1] != b.boards.cells.shape[1]:
        raise SolverError(f"{_n(b.parts[0].path)}: holds boards of another size than "
                          f"{_n(a.parts[0].path)}: one dataset holds one instance's boards")
    parts = a.parts + b.parts
    counts = np.concatenate([a.counts, b.counts]).astype(np.int64)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    order = sorted(range(len(parts)), key=lambda i: parts[i][:3])
    rows = np.concatenate([np.arange(first[i], first[i] + counts[i]) for i in order] + [
        np.zeros(0, np.int64)]).astype(np.int64)
    cells = np.concatenate([a.boards.cells, b.boards.cells])[rows]
    stats = {k: np.concatenate([a.boards.stats[k], b.boards.stats[k]])[rows]
             for k in a.boards.stats}
    arms = np.concatenate([a.arms, b.arms])[rows]
    return DatasetBoards(Boards(cells, stats, a.boards.meta or b.boards.meta), arms,
                         [parts[i] for i in order], counts[order])


def _read_all(files: list[str]):
    """(rows of every file with `filename` and `file_row_number`, each file's key-value
    metadata but Arrow's schema) read by DuckDB: one query over all the parts."""
    import duckdb

    con = duckdb.connect()
    try:
        t = con.sql("SELECT * FROM read_parquet(?, filename = true, file_row_number = true, "
                    "hive_partitioning = false)", params=[files]).to_arrow_table()
        kv = con.sql("SELECT file_name, key, value FROM parquet_kv_metadata(?) WHERE key <> "
                     "'ARROW:schema'::BLOB", params=[files]).to_arrow_table()
    finally:
        con.close()
    index = {f: i for i, f in enumerate(files)}
    metas: list[dict[str, str]] = [{} for _ in files]
    for f, k, v in zip(*(kv.column(c).to_pylist() for c in ("file_name", "key", "value")),
                       strict=True):
        metas[index[f]][k.decode(errors="replace")] = v.decode(errors="replace")
    return t, metas


def _in_order(t, files: list[str]):
    """The rows in part order, then file row order, without the two read columns; and the
    rows of each part."""
    import pyarrow as pa
    import pyarrow.compute as pc

    part = pc.index_in(t.column("filename"), value_set=pa.array(files)).to_numpy(
        zero_copy_only=False).astype(np.int64)
    row = t.column("file_row_number").to_numpy()
    t = t.drop_columns(["filename", "file_row_number"])
    if np.any(np.diff(part) < 0) or np.any((np.diff(part) == 0) & (np.diff(row) <= 0)):
        order = np.lexsort((row, part))  # DuckDB keeps the files' order: rarely needed
        t, part = t.take(pa.array(order)), part[order]
    return t, np.bincount(part, minlength=len(files))


def _want_meta(meta: dict[str, str], instance: Instance | None, first: Part) -> dict[str, str]:
    """What every part's metadata must say: the first part's, checked by `read_boards`
    when it is not a boards file of this version and instance."""
    ok = (meta.get("format") == BOARDS_FORMAT and meta.get("version") == str(BOARDS_VERSION)
          and all(meta.get(k, "").isascii() and meta.get(k, "").isdigit()
                  and 0 < int(meta[k]) <= 64 for k in ("width", "height"))
          and (instance is None or (meta.get("instance"), int(meta["width"]),
                                    int(meta["height"])) == (instance.id, instance.width,
                                                             instance.height)))
    if not ok:
        read_boards(first.path, instance)  # its error names the part
        raise SolverError(f"{_n(first.path)}: a boards file of version {meta.get('version')!r:.20}"
                          f" (a dataset's parts are version {BOARDS_VERSION})")
    return meta


def _size_of(meta: dict[str, str], want: dict[str, str], p: Part) -> None:
    """SolverError when the part `p` (read sound alone) holds other boards than the first
    part: another instance or board size."""
    keys = ("instance", "width", "height")
    if tuple(meta.get(k) for k in keys) != tuple(want[k] for k in keys):
        raise SolverError(f"{_n(p.path)}: holds boards of instance {meta.get('instance')!r:.80}"
                          f" ({meta.get('width')}x{meta.get('height')}), the dataset's first "
                          f"part those of {want['instance']!r:.80} ({want['width']}x"
                          f"{want['height']}): one dataset holds one instance's boards")


def _part_problem(meta: dict[str, str], want: dict[str, str], rows: Boards,
                  p: Part) -> Exception | None:
    """What is wrong with part `p` (its metadata, the digest of its rows, their seed and
    restart against its name), or None."""
    keys = ("format", "version", "instance", "width", "height")
    if tuple(meta.get(k) for k in keys) != tuple(want[k] for k in keys):
        return SolverError(f"{_n(p.path)}: holds boards of instance {meta.get('instance')!r:.80}"
                           f" ({meta.get('width')}x{meta.get('height')}, version "
                           f"{meta.get('version')!r:.20}), the dataset's first part those of "
                           f"{want['instance']!r:.80} ({want['width']}x{want['height']}, "
                           f"version {want['version']}): one dataset holds one instance's "
                           f"boards")
    if meta.get(DIGEST_KEY) != rows_digest(meta, rows):
        return DamagedDataError(f"{_n(p.path)}: damaged boards file (its rows do not match "
                                f"their digest: a changed byte); it is left as it is: restore "
                                f"it from a copy, or move it aside")
    st = rows.stats
    if not (np.all(st["seed"] == p.seed) and np.all(st["restart"] == p.restart)):
        return DamagedDataError(f"{_n(p.path)}: holds rows of seed {st['seed'][0]} restart "
                                f"{st['restart'][0]}, not of the seed {p.seed} and restart "
                                f"{p.restart} its name says (a part renamed?): move it aside")
    return None


def _recount(instance: Instance, boards: Boards, parts: list[Part], bounds) -> None:
    """`check_rows` over the rows, `CHECK_ROWS` at a time; a failure is told naming its
    part and its row there."""
    k = len(boards)
    for a in range(0, k, CHECK_ROWS):
        b = min(k, a + CHECK_ROWS)
        try:
            check_rows(instance, _rows(boards, a, b), parts[0].path)
        except DamagedDataError:
            first = int(np.searchsorted(bounds, a, side="right")) - 1
            for i in range(first, len(parts)):
                check_rows(instance, _rows(boards, int(bounds[i]), int(bounds[i + 1])),
                           parts[i].path)
            raise


def _rows(boards: Boards, a: int, b: int) -> Boards:
    return Boards(boards.cells[a:b], {k: v[a:b] for k, v in boards.stats.items()})


def _culprit(parts: list[Part], instance: Instance | None, e: Exception) -> None:
    """Raise the error of the part DuckDB could not read with the others: the first part
    (those DuckDB's error names first) it cannot read alone, with `read_boards`'s error
    when that one has one; else the first `read_boards` refuses or that holds other
    boards than the first part; else a DamagedDataError with DuckDB's error."""
    import duckdb

    named = set(_NAMED.findall(str(e)))
    for p in sorted(parts, key=lambda p: str(p.path) not in named):
        try:
            _read_all([str(p.path)])
        except duckdb.Error as alone:
            read_boards(p.path, instance)  # its own error names it, else ours does
            raise DamagedDataError(f"{_n(p.path)}: damaged boards file (DuckDB cannot read "
                                   f"it: {_first(alone)}); it is left as it is: restore it "
                                   f"from a copy, or move it aside") from None
    want = _read_all([str(parts[0].path)])[1][0]
    for p in sorted(parts, key=lambda p: str(p.path) not in named):
        read_boards(p.path, instance)
        _size_of(_read_all([str(p.path)])[1][0], want, p)
    raise DamagedDataError(f"{_n(parts[0].path.parent.parent)}: a boards dataset whose parts "
                           f"cannot be read together ({_first(e)})") from None


def _first(e: Exception) -> str:
    return ((str(e).splitlines() or [type(e).__name__])[0][:160]
            .encode("ascii", "backslashreplace").decode())


def _kinds(n: int):
    return [(f"c{i}", "int16") for i in range(n)] + list(BOARD_STATS)


def _arrow_type(kind: str):
    import pyarrow as pa

    return pa.string() if kind == "string" else getattr(pa, kind)()


def _table(boards: Boards, arms: np.ndarray, t=None):
    """The rows as one Arrow table: `t` (the parts' columns, read) or built from `boards`,
    then `arm`; one chunk a column (DuckDB scans a chunk a part six times slower)."""
    import pyarrow as pa

    if t is None:
        n = boards.cells.shape[1]
        cols = {f"c{i}": pa.array(boards.cells[:, i], pa.int16()) for i in range(n)}
        cols.update({k: pa.array(list(boards.stats[k]) if kind == "string"
                                 else boards.stats[k], _arrow_type(kind))
                     for k, kind in BOARD_STATS})
        t = pa.table(cols)
    return t.append_column("arm", pa.array(list(arms), pa.string())).combine_chunks()
