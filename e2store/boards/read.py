"""Reading a boards dataset (`e2store.boards.dataset`): every file at once with
DuckDB, each checked as `read_boards` checks a file, each restart once (a compacted file
before a part holding the same rows), in (arm, seed, restart) order; or, given an earlier
read, only the files it had not read."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from e2store.boards.batches import connect, file_metas, read_all, read_columns
from e2store.boards.parts import DatasetFile, Part, dataset_files, first_line, moved_arm
from e2store.boards.schema import (
    BOARD_STATS,
    BOARDS_FORMAT,
    BOARDS_VERSION,
    DIGEST_KEY,
    READS_WITH,
    arrow_type,
    board_size,
    file_version,
    shown_version,
    stats_of_version,
)
from e2store.boards.table import (
    Boards,
    board_keys,
    check_rows,
    new_boards,
    read_boards,
    rows_digest,
    with_defaults,
)
from e2store.errors import DamagedDataError, SolverError
from e2store.instance.model import Instance
from e2store.instance.parsing import shown_path as _n

CHECK_ROWS = 2048  # boards recounted at a time (the recount holds ~W*H*64 bytes a board)
READ_TRIES = 5  # reads begun again when a compaction removed a part listed
_NAMED = re.compile(r'file "([^"]+)"')  # the file a DuckDB error names


@dataclass
class DatasetBoards:
    """A boards dataset read and checked: every row (`boards`, in (arm, seed, restart)
    order), the arm of each row, `parts` (one per restart: (arm, seed, restart, the file
    holding it)) and their rows' counts, and `table`, the rows as one Arrow table (the
    files' columns then `arm`: the view `boards` of `e2store sql --boards`)."""

    boards: Boards
    arms: np.ndarray
    parts: list[Part]
    counts: np.ndarray
    arrow: Any = None  # `table` once made (when first asked for)

    @property
    def table(self) -> Any:
        if self.arrow is None:
            self.arrow = _table(self.boards, self.arms)
        return self.arrow


def read_boards_dataset(root: str | Path, instance: Instance | None = None, *,
                        since: DatasetBoards | None = None) -> DatasetBoards:
    """Every row of the dataset at `root`, checked (`read_files`): the error of a
    damaged file names it (DamagedDataError), as does that of a file of another instance
    or size (SolverError).  Parts renamed into place while it reads are seen or not; parts
    a compaction moves into a compacted file while it reads are read once, from one or
    the other.  `since`: an earlier read of it, whose files still there are not read again
    (a file is never rewritten; the rows of its files gone are left out, those of a new
    compacted file read from it)."""
    for attempt in range(READ_TRIES):
        files = dataset_files(root)
        try:
            return _read(root, files, instance, since)
        except Exception:
            if attempt + 1 < READ_TRIES and not all(f.path.exists() for f in files):
                continue  # a compaction removed a part listed: its compacted file holds it
            raise
    raise AssertionError("not reached")


def _read(root: str | Path, files: list[DatasetFile], instance: Instance | None,
          since: DatasetBoards | None) -> DatasetBoards:
    if since is None:
        return assemble([read_files(root, files, instance)])
    listed = {f.path for f in files}
    seen = {p.path for p in since.parts}
    if listed == seen:
        return since
    new = [f for f in files if f.path not in seen]
    return assemble([_since_block(since, listed)] + (
        [read_files(root, new, instance)] if new else []))


@dataclass
class Block:
    """Rows read and checked, and the restarts their files hold: `entries` (a restart
    held by two files is two entries) and each row's entry."""

    boards: Boards
    arms: np.ndarray
    entries: list[Part]
    row_entry: np.ndarray


def _since_block(since: DatasetBoards, listed: set[Path]) -> Block:
    """The rows of an earlier read whose files are still there."""
    entries, boards, arms = since.parts, since.boards, since.arms
    row_entry = np.repeat(np.arange(len(entries), dtype=np.int64), since.counts)
    keep = np.array([p.path in listed for p in entries], dtype=bool)
    if keep.all():
        return Block(boards, arms, entries, row_entry)
    rows = keep[row_entry]
    renumber = np.cumsum(keep) - 1
    return Block(_take(boards, rows), arms[rows], [p for p, k in zip(entries, keep,
                                                                      strict=True) if k],
                  renumber[row_entry[rows]])


def read_files(root: str | Path, files: list[DatasetFile], instance: Instance | None) -> Block:
    """The rows of `files`, each file checked as `read_boards` checks a file (metadata,
    digest, with `instance` a recount) and its rows' seed and restart against its name (a
    compacted file's against the restarts it holds): a file that fails is read again by
    `read_boards`, whose error names it."""
    import duckdb
    import pyarrow as pa

    if not files:
        n_cells = 0 if instance is None else instance.width * instance.height
        return Block(new_boards(n_cells), np.zeros(0, dtype=object), [],
                      np.zeros(0, dtype=np.int64))
    paths = [str(f.path) for f in files]
    con = connect()
    got = None
    try:
        metas = file_metas(con, paths)
        want = _want_meta(metas[0], instance, files[0].path)
        groups = _by_version(metas)
        version = file_version(want) or BOARDS_VERSION
        n = int(want["width"]) * int(want["height"])
        if len(groups) == 1:
            got = read_columns(con, paths, n, version)
    except (duckdb.Error, pa.ArrowException, OSError) as e:  # a file DuckDB cannot read,
        _culprit(files, instance, e)  # or not like the first (met streaming: Arrow's error)
        raise  # not reached
    finally:
        con.close()
    if len(groups) > 1:  # files of versions 3 and 4: each version read by itself
        return _joined([read_files(root, [files[i] for i in g], instance) for g in groups])
    if got is None:  # a file unlike the first, or with nulls: whose?
        for i, f in enumerate(files):
            read_boards(f.path, instance)
            _size_of(metas[i], want, f.path)
        raise DamagedDataError(f"{_n(root)}: damaged boards dataset (its files read together "
                               f"do not have the columns of a boards file)")
    cells, stats, counts = got
    stats = with_defaults(stats, len(cells))
    bounds = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    entries: list[Part] = []
    row_entry = np.empty(int(bounds[-1]), dtype=np.int64)
    for i, f in enumerate(files):
        a, b = int(bounds[i]), int(bounds[i + 1])
        rows = Boards(cells[a:b], {k: v[a:b] for k, v in stats.items()})
        why = _file_problem(metas[i], want, rows, f)
        if why is not None:
            read_boards(f.path, instance)  # its own error names it, else ours does
            raise why
        if f.compacted:
            held = np.array([p.restart for p in f.entries], dtype=np.int64)
            row_entry[a:b] = len(entries) + np.searchsorted(held, rows.stats["restart"])
        else:
            row_entry[a:b] = len(entries)
        entries += f.entries
    if version < 4:  # the keys of its complete boards, as a version 4 file stores them
        stats["key"] = board_keys(cells, stats, int(want["width"]), int(want["height"]))
    boards = Boards(cells, stats, {k: want[k] for k in ("format", "version", "instance",
                                                        "width", "height")})
    if instance is not None:
        _recount(instance, boards, files, bounds)
    arms = np.repeat(np.array([f.arm for f in files], dtype=object), counts)
    return Block(boards, arms, entries, row_entry)


def _by_version(metas: list[dict[str, str]]) -> list[list[int]]:
    """The files' indices grouped by version, when every file is of a version a dataset
    may mix (`READS_WITH`..`BOARDS_VERSION`); else one group (the read refuses the file
    that is not like the first)."""
    versions = [file_version(m) or 0 for m in metas]
    if any(not READS_WITH <= v <= BOARDS_VERSION for v in versions):
        return [list(range(len(metas)))]
    return [[i for i, v in enumerate(versions) if v == w] for w in sorted(set(versions))]


def _joined(blocks: list[Block]) -> Block:
    """Blocks of rows read apart as one (`assemble` orders them)."""
    first = blocks[0].boards
    starts = np.cumsum([0] + [len(b.entries) for b in blocks[:-1]])
    return Block(Boards(np.concatenate([b.boards.cells for b in blocks]),
                        {k: np.concatenate([b.boards.stats[k] for b in blocks])
                         for k in first.stats}, first.meta),
                 np.concatenate([b.arms for b in blocks]),
                 [p for b in blocks for p in b.entries],
                 np.concatenate([b.row_entry + s for b, s in zip(blocks, starts, strict=True)]))


def assemble(blocks: list[Block]) -> DatasetBoards:
    """The rows of `blocks` as a dataset's: each restart once, from the file that holds it
    first (a compacted file before a part; the other files holding it must hold the same
    rows), in (arm, seed, restart) order."""
    blocks = [b for b in blocks if b.entries] or blocks[:1]
    for b in blocks[1:]:
        _same_boards(blocks[0], b)
    if len(blocks) == 1:
        boards, arms, entries, row_entry = (blocks[0].boards, blocks[0].arms,
                                            blocks[0].entries, blocks[0].row_entry)
    else:
        first = blocks[0].boards
        boards = Boards(np.concatenate([b.boards.cells for b in blocks]),
                        {k: np.concatenate([b.boards.stats[k] for b in blocks])
                         for k in first.stats}, first.meta)
        arms = np.concatenate([b.arms for b in blocks])
        entries = [p for b in blocks for p in b.entries]
        starts = np.cumsum([0] + [len(b.entries) for b in blocks[:-1]])
        row_entry = np.concatenate([b.row_entry + s for b, s in zip(blocks, starts,
                                                                     strict=True)])
    m = len(entries)
    if not m:
        return DatasetBoards(boards, arms, [], np.zeros(0, dtype=np.int64))
    arm_of = {a: i for i, a in enumerate(sorted({p.arm for p in entries}))}
    ak = np.fromiter((arm_of[p.arm] for p in entries), np.int64, m)
    sk = np.fromiter((p.seed for p in entries), np.int64, m)
    rk = np.fromiter((p.restart for p in entries), np.int64, m)
    order = np.lexsort((np.fromiter((not p.compacted for p in entries), np.int64, m), rk,
                        sk, ak))  # stable: files of one kind holding a restart in their order
    sa, ss, sr = ak[order], sk[order], rk[order]
    new_key = np.ones(m, dtype=bool)
    new_key[1:] = (sa[1:] != sa[:-1]) | (ss[1:] != ss[:-1]) | (sr[1:] != sr[:-1])
    group = np.empty(m, dtype=np.int64)
    group[order] = np.cumsum(new_key) - 1
    chosen = order[new_key]
    parts = [entries[i] for i in chosen.tolist()]
    if len(parts) < m:
        _check_twice(boards, entries, row_entry, group, chosen)
    row_group = group[row_entry]
    keep = np.zeros(m, dtype=bool)
    keep[chosen] = True
    rows = None if len(parts) == m else np.flatnonzero(keep[row_entry])
    g = row_group if rows is None else row_group[rows]
    if np.any(np.diff(g) < 0):
        by = np.argsort(g, kind="stable")
        rows, g = (by if rows is None else rows[by]), g[by]
    if rows is not None:
        boards, arms = _take(boards, rows), arms[rows]
    return DatasetBoards(boards, arms, parts, np.bincount(g, minlength=len(parts)))


def _same_boards(a: Block, b: Block) -> None:
    """SolverError when two blocks of rows hold boards of two instances or sizes."""
    keys = ("instance", "width", "height")
    if a.boards.cells.shape[1] != b.boards.cells.shape[1] or (
            a.boards.meta and b.boards.meta and any(a.boards.meta.get(k) != b.boards.meta.get(k)
                                                    for k in keys)):
        raise SolverError(f"{_n(b.entries[0].path)}: holds boards of another instance or size "
                          f"than {_n(a.entries[0].path)}: one dataset holds one instance's "
                          f"boards")


def _check_twice(boards: Boards, entries: list[Part], row_entry: np.ndarray,
                 group: np.ndarray, chosen: np.ndarray) -> None:
    """DamagedDataError when a file holding a restart another file holds (a part a
    compaction did not remove) holds other rows than that one."""
    by = np.argsort(row_entry, kind="stable")
    count = np.bincount(row_entry, minlength=len(entries))
    start = np.concatenate([[0], np.cumsum(count)])
    kinds = dict(BOARD_STATS)
    is_chosen = np.zeros(len(entries), dtype=bool)
    is_chosen[chosen] = True
    for e in np.flatnonzero(~is_chosen).tolist():
        c = int(chosen[group[e]])
        a, b = by[start[e]:start[e + 1]], by[start[c]:start[c + 1]]
        same = len(a) == len(b) and np.array_equal(boards.cells[a], boards.cells[b]) and all(
            np.array_equal(v[a], v[b], equal_nan=kinds[k].startswith("float"))
            for k, v in boards.stats.items())
        if not same:
            p, q = entries[e], entries[c]
            raise DamagedDataError(f"{_n(p.path)}: holds other rows for seed {p.seed} restart "
                                   f"{p.restart} than {_n(q.path)}, which holds that restart "
                                   f"too (a part a compaction merged, changed since?); it is "
                                   f"left as it is: move the wrong one aside")


def _take(boards: Boards, rows: np.ndarray) -> Boards:
    return Boards(boards.cells[rows], {k: v[rows] for k, v in boards.stats.items()},
                  boards.meta)


def check_part_names(parts: list[Part]) -> None:
    """Refuse (DamagedDataError naming it) the first of `parts` whose rows are of another
    seed or restart than its name says, or whose metadata names another arm (a part
    renamed or moved): a resumed run reads the restarts done from the names, and would
    skip a restart a renamed part only seems to hold.  One DuckDB query over two columns
    and the metadata; a part DuckDB cannot read is left to `read_boards`'s error."""
    if not parts:
        return
    import duckdb

    files = [str(p.path) for p in parts]
    con = connect()
    try:
        rows = con.sql("SELECT filename, min(seed), max(seed), min(restart), max(restart) "
                       "FROM read_parquet(?, filename = true, hive_partitioning = false) "
                       "GROUP BY filename", params=[files]).fetchall()
        metas = file_metas(con, files)
    except duckdb.Error:
        for p in parts:
            read_boards(p.path)  # its error names the file
        raise
    finally:
        con.close()
    held = {f: tuple(r) for f, *r in rows}
    for p, meta in zip(parts, metas, strict=True):
        r = held.get(str(p.path))
        if r is not None and r != (p.seed, p.seed, p.restart, p.restart):
            raise DamagedDataError(f"{_n(p.path)}: holds rows of seed {r[0]} restart {r[2]}, "
                                   f"not of the seed {p.seed} and restart {p.restart} its name "
                                   f"says (a part renamed?): move it aside, then run again")
        moved = moved_arm(p.path, meta, p.arm)
        if moved is not None:
            raise moved


def _want_meta(meta: dict[str, str], instance: Instance | None, first: Path) -> dict[str, str]:
    """What every file's metadata must say: the first file's, checked by `read_boards`
    when it is not a boards file of this version and instance."""
    size = board_size(meta)
    ok = (meta.get("format") == BOARDS_FORMAT
          and READS_WITH <= (file_version(meta) or 0) <= BOARDS_VERSION
          and size is not None
          and (instance is None or (meta.get("instance"), *size) == (
              instance.id, instance.width, instance.height)))
    if not ok:
        read_boards(first, instance)  # its error names the file
        raise SolverError(f"{_n(first)}: a boards file of version {shown_version(meta)}"
                          f" (a dataset's files are versions {READS_WITH}..{BOARDS_VERSION})")
    return meta


def _size_of(meta: dict[str, str], want: dict[str, str], path: Path) -> None:
    """SolverError when the file `path` (read sound alone) holds other boards than the
    first file: another instance or board size."""
    keys = ("instance", "width", "height")
    if tuple(meta.get(k) for k in keys) != tuple(want[k] for k in keys):
        raise SolverError(f"{_n(path)}: holds boards of instance {meta.get('instance')!r:.80}"
                          f" ({meta.get('width')}x{meta.get('height')}), the dataset's first "
                          f"file those of {want['instance']!r:.80} ({want['width']}x"
                          f"{want['height']}): one dataset holds one instance's boards")


def _file_problem(meta: dict[str, str], want: dict[str, str], rows: Boards,
                  f: DatasetFile) -> Exception | None:
    """What is wrong with the file `f` (its metadata, the digest of its rows, their seed
    and restart against its name: a compacted file's against the restarts it holds), or
    None."""
    keys = ("format", "version", "instance", "width", "height")
    if tuple(meta.get(k) for k in keys) != tuple(want[k] for k in keys):
        return SolverError(f"{_n(f.path)}: holds boards of instance {meta.get('instance')!r:.80}"
                           f" ({meta.get('width')}x{meta.get('height')}, version "
                           f"{meta.get('version')!r:.20}), the dataset's first file those of "
                           f"{want['instance']!r:.80} ({want['width']}x{want['height']}, "
                           f"version {want['version']}): one dataset holds one instance's "
                           f"boards")
    if meta.get(DIGEST_KEY) != rows_digest(meta, rows, stats_of_version(
            file_version(meta) or BOARDS_VERSION)):
        return DamagedDataError(f"{_n(f.path)}: damaged boards file (its rows do not match "
                                f"their digest: a changed byte); it is left as it is: restore "
                                f"it from a copy, or move it aside")
    moved = moved_arm(f.path, meta, f.arm)
    if moved is not None:
        return moved
    st = rows.stats
    if f.compacted:
        held = np.array([p.restart for p in f.entries], dtype=np.int64)
        if not (np.all(st["seed"] == f.seed) and np.all(np.diff(st["restart"]) >= 0)
                and np.array_equal(np.unique(st["restart"]), held)):
            return DamagedDataError(f"{_n(f.path)}: holds rows of other seeds or restarts than "
                                    f"the {len(held)} restarts of seed {f.seed} its name says "
                                    f"(a compacted file renamed?): move it aside")
        return None
    p = f.entries[0]
    if not (np.all(st["seed"] == p.seed) and np.all(st["restart"] == p.restart)):
        return DamagedDataError(f"{_n(f.path)}: holds rows of seed {st['seed'][0]} restart "
                                f"{st['restart'][0]}, not of the seed {p.seed} and restart "
                                f"{p.restart} its name says (a part renamed?): move it aside")
    return None


def _recount(instance: Instance, boards: Boards, files: list[DatasetFile], bounds) -> None:
    """`check_rows` over the rows, `CHECK_ROWS` at a time; a failure is told naming its
    file and its row there."""
    k = len(boards)
    for a in range(0, k, CHECK_ROWS):
        b = min(k, a + CHECK_ROWS)
        try:
            check_rows(instance, _rows(boards, a, b), files[0].path)
        except DamagedDataError:
            first = int(np.searchsorted(bounds, a, side="right")) - 1
            for i in range(first, len(files)):
                check_rows(instance, _rows(boards, int(bounds[i]), int(bounds[i + 1])),
                           files[i].path)
            raise


def _rows(boards: Boards, a: int, b: int) -> Boards:
    return Boards(boards.cells[a:b], {k: v[a:b] for k, v in boards.stats.items()})


def _culprit(files: list[DatasetFile], instance: Instance | None, e: Exception) -> None:
    """Raise the error of the file DuckDB could not read with the others: the first file
    (those DuckDB's error names first) it cannot read alone, with `read_boards`'s error
    when that one has one; else the first `read_boards` refuses or that holds other
    boards than the first file; else a DamagedDataError with DuckDB's error."""
    import duckdb
    import pyarrow as pa

    named = set(_NAMED.findall(str(e)))
    for f in sorted(files, key=lambda f: str(f.path) not in named):
        try:
            read_all([str(f.path)])
        except (duckdb.Error, pa.ArrowException, OSError) as alone:
            read_boards(f.path, instance)  # its own error names it, else ours does
            raise DamagedDataError(f"{_n(f.path)}: damaged boards file (DuckDB cannot read "
                                   f"it: {first_line(alone)}); it is left as it is: restore it "
                                   f"from a copy, or move it aside") from None
    want = read_all([str(files[0].path)])[0]
    for f in sorted(files, key=lambda f: str(f.path) not in named):
        read_boards(f.path, instance)
        _size_of(read_all([str(f.path)])[0], want, f.path)
    raise DamagedDataError(f"{_n(files[0].path.parent.parent)}: a boards dataset whose files "
                           f"cannot be read together ({first_line(e)})") from None


def _table(boards: Boards, arms: np.ndarray):
    """The rows as one Arrow table, then `arm`; one chunk a column (DuckDB scans a chunk a
    part six times slower)."""
    import pyarrow as pa

    n = boards.cells.shape[1]
    cols = {f"c{i}": pa.array(boards.cells[:, i], pa.int16()) for i in range(n)}
    cols.update({k: pa.array(list(boards.stats[k]) if kind == "string"
                             else boards.stats[k], arrow_type(kind))
                 for k, kind in BOARD_STATS})
    cols["arm"] = pa.array(list(arms), pa.string())
    return pa.table(cols)
