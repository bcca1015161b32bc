"""`open_boards(path)`: one handle over a boards file or a boards dataset, usable in
`with`, in the manner of deltalake's table handle: its files (one row per part or
compacted file, like add actions), its rows as Arrow (checked, or read as they are for
the columns asked), its restarts (the per-restart columns a campaign's analysis takes),
its best board, a writer's sink and the compaction.

A read that checks (`to_arrow(checked=True)`, `best`, `restarts(checked=True)`) reads
every file's rows, digest and (given the instance) recount, as `read_boards_dataset`
does, and keeps what it read: the next checked read of the same handle reads only the
files added since.  `checked=False` reads the columns asked for from the files as they
are (Parquet's own page checks only): for figures over many restarts where the files were
checked when written or compacted."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from e2store.boards.dataset import (
    BoardsSink,
    DatasetBoards,
    boards_sink,
    compact_boards_dataset,
    is_dataset_target,
    read_boards_dataset,
)
from e2store.boards.parts import DatasetFile, Holder, Part, dataset_files, holder_files
from e2store.boards.read import assemble, read_files
from e2store.boards.restarts import (
    merge_restarts,
    restart_chunks,
    restart_columns,
    restart_stream,
    top_places,
)
from e2store.boards.schema import DIGEST_KEY
from e2store.boards.table import Boards, concat_all, new_boards, read_boards
from e2store.errors import DamagedDataError, SolverError
from e2store.instance.model import Instance
from e2store.instance.parsing import shown_path as _n

DEFAULT_ARM = "default"  # a boards file's rows are one arm


class BoardsHandle:
    """A boards file or dataset at `path` (`open_boards`)."""

    def __init__(self, path: str | Path, instance: Instance | None = None):
        self.path = Path(path)
        self.instance = instance
        self.is_dataset = is_dataset_target(path)
        self._read: DatasetBoards | None = None
        self._file: Boards | None = None

    def __enter__(self) -> BoardsHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Forget what was read (the files are never held open between calls)."""
        self._read = self._file = None

    def __repr__(self) -> str:
        kind = "dataset" if self.is_dataset else "file"
        return f"<BoardsHandle {kind} {str(self.path)!r}>"

    # -- the files -------------------------------------------------------------------
    def files(self):
        """One row per file: `path`, `arm`, `seed` (null for a boards file), `first` and
        `last` restart, `restarts`, `rows`, `bytes`, `compacted`, `digest` (its
        `rows_sha256`).  From the names and the files' footers: no row is read."""
        import pyarrow as pa

        from e2store.files import table_schema

        self._exists()
        cols: dict[str, list[Any]] = {k: [] for k in (
            "path", "arm", "seed", "first", "last", "restarts", "rows", "bytes",
            "compacted", "digest")}
        listed: list[tuple[Path, str, int | None, list[int], bool]]
        if self.is_dataset:
            listed = [(f.path, f.arm, f.seed, [e.restart for e in f.entries], f.compacted)
                      for f in dataset_files(self.path)]
        else:
            b = self._boards()
            r = [int(v) for v in b.stats["restart"]]
            seeds = {int(v) for v in b.stats["seed"]}
            listed = [(self.path, DEFAULT_ARM, seeds.pop() if len(seeds) == 1 else None,
                       sorted(set(r)), False)]
        for path, arm, seed, restarts, compacted in listed:
            meta = table_schema(path).metadata or {}
            cols["path"].append(str(path))
            cols["arm"].append(arm)
            cols["seed"].append(seed)
            cols["first"].append(min(restarts) if restarts else None)
            cols["last"].append(max(restarts) if restarts else None)
            cols["restarts"].append(len(restarts))
            cols["rows"].append(_row_count(path))
            cols["bytes"].append(path.stat().st_size)
            cols["compacted"].append(compacted)
            cols["digest"].append(meta.get(DIGEST_KEY.encode(), b"").decode(errors="replace"))
        types = {"path": pa.string(), "arm": pa.string(), "seed": pa.int64(),
                 "first": pa.int64(), "last": pa.int64(), "restarts": pa.int64(),
                 "rows": pa.int64(), "bytes": pa.int64(), "compacted": pa.bool_(),
                 "digest": pa.string()}
        return pa.table({k: pa.array(v, type=types[k]) for k, v in cols.items()})

    # -- the rows --------------------------------------------------------------------
    def read(self) -> DatasetBoards:
        """Every row, checked (`read_boards_dataset`; a boards file as a dataset of one
        arm); a second call reads only the files added since."""
        self._exists()
        if not self.is_dataset:
            b = self._boards()
            arms = np.full(len(b), DEFAULT_ARM, dtype=object)
            return DatasetBoards(b, arms, [], np.zeros(0, np.int64))
        self._read = read_boards_dataset(self.path, self.instance, since=self._read)
        return self._read

    def to_arrow(self, arms: Sequence[str] | None = None,
                 columns: Sequence[str] | None = None, *, checked: bool = True):
        """The rows as one Arrow table (the files' columns, then `arm`), of the arms asked
        for (all by default), with the columns asked for (all by default; `arm` always).
        `checked`: every file checked first (module docstring); else the columns read as
        they are."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if checked:
            t = self.read().table
        else:
            t = self._unchecked(arms, columns)
        if arms is not None:
            t = t.filter(pc.is_in(t.column("arm"), value_set=pa.array(list(arms),
                                                                      pa.string())))
        if columns is not None:
            missing = [c for c in columns if c not in t.column_names]
            if missing:
                raise SolverError(f"{_n(self.path)}: no column {missing[0]!r:.60} in its "
                                  f"boards (columns c0.., {', '.join(t.column_names[-13:])})")
            t = t.select([c for c in columns if c != "arm"] + ["arm"])
        return t

    def restarts(self, *, checked: bool | str = True) -> dict[str, dict[str, np.ndarray]]:
        """Per arm, one value per restart (`restart_columns`).  `checked` True: every row
        read and checked (`read`); False: a file at a time from the per-restart columns
        alone (`restart_stream`: their pages' checksums and each file's metadata
        verified, never a board's cells); "compacted": the compacted files so (they were
        checked, every board recounted, when compacted), the parts read and checked."""
        if checked is True:
            d = self.read()
            return restart_columns(d.boards.stats, d.boards.cells.shape[1], d.arms)
        n = self._cells()
        if checked is False or not self.is_dataset:
            return restart_stream(self._holders(), n)
        trusted, parts = self._trusted(checked)
        out = restart_stream(trusted, n)
        if parts:
            d = assemble([read_files(self.path, parts, self.instance)])
            out = merge_restarts(out, restart_columns(d.boards.stats, n, d.arms))
        return out

    def restart_chunks(self, *, checked: bool | str = "compacted",
                       ) -> Iterator[tuple[str, str | None, dict[str, np.ndarray]]]:
        """(arm, file, per-restart arrays) a file at a time, what a report folds
        (`e2store.campaign.tally_chunks`): memory of one file, whatever the number of
        restarts.  `checked` as `restarts`; a file streamed carries no `url`
        (`final_url(file, seed, restart)` reads one); rows read and checked come with
        file None and their urls."""
        if checked is True:
            yield from ((arm, None, r) for arm, r in self.restarts(checked=True).items())
            return
        n = self._cells()
        if checked is False or not self.is_dataset:
            yield from restart_chunks(self._holders(), n)
            return
        trusted, parts = self._trusted(checked)
        yield from restart_chunks(trusted, n)
        if parts:
            d = assemble([read_files(self.path, parts, self.instance)])
            yield from ((arm, None, r) for arm, r in restart_columns(
                d.boards.stats, n, d.arms).items())

    def _trusted(self, checked: bool | str) -> tuple[dict[str, list[Holder]], list[DatasetFile]]:
        """The compacted files per arm (read trusted) and the parts (read and checked)."""
        if checked != "compacted":
            raise ValueError(f"checked={checked!r}: True, False or 'compacted'")
        holders = holder_files(self.path)
        trusted: dict[str, list[Holder]] = {}
        for f in holders:
            if f.compacted:
                trusted.setdefault(f.arm, []).append(f)
        parts = [DatasetFile(f.path, f.arm, f.seed, [Part(f.arm, f.seed, f.first, f.path)],
                             False) for f in holders if not f.compacted]
        return trusted, parts

    def repeats(self, *, checked: bool | str = True) -> dict[str, dict[str, int]]:
        """Per arm, its restarts' final complete boards (each restart's last row: finished,
        else filled, else its best, when it has no hole) and how many repeat one of the
        arm's before, turned too: {"complete", "distinct", "repeats"}, from the final
        boards' keys (`board_key`: kept or not), read as `restarts(checked=...)` reads."""
        out = {}
        rows = self.restarts(checked=checked)
        if any("key" not in r for r in rows.values()):  # files of version 3: keys from cells
            rows = self.restarts(checked=True)
        for arm, r in rows.items():
            keys = np.asarray(r["key"], dtype=object)
            complete = keys[keys != ""]
            distinct = len(set(complete.tolist()))
            out[arm] = {"complete": len(complete), "distinct": distinct,
                        "repeats": len(complete) - distinct}
        return out

    def best(self) -> dict[str, Any] | None:
        """The best board kept (highest score, then deepest, then first), checked: its
        row's statistics, `arm` and `cells` (W*H placements), or None when there is
        none."""
        d = self.read()
        b = d.boards
        kept = np.flatnonzero(np.asarray(b.stats["kept"], dtype=bool))
        if not len(kept):
            return None
        score, depth = np.asarray(b.stats["score"])[kept], np.asarray(b.stats["depth"])[kept]
        i = int(kept[np.lexsort((kept, -depth, -score))[0]])
        return {**b.row(i), "arm": str(d.arms[i]), "cells": b.cells[i].astype(np.int64)}

    def arrow_dataset(self) -> Any:
        """The files as one Arrow dataset (`pyarrow.dataset`), the columns of a boards file
        and `arm` (its directory's): what `e2store sql --boards` queries, a view over the
        files, never a copy of their rows.  They are checked first as a report reads them
        (`restart_chunks(checked="compacted")`: a compacted file's per-restart columns,
        metadata and name, a part read in full, digest and all), and each page read by a
        query is checked against its CRC; a file of version 3 shows `kept` and `key` as
        NULL (`compact-boards` writes version 4)."""
        import pyarrow as pa
        import pyarrow.dataset as ds

        from e2store.boards.schema import boards_schema

        for _ in self.restart_chunks(checked="compacted" if self.is_dataset else False):
            pass  # each file checked, nothing held
        paths = [str(f) if isinstance(f, str) else str(f.path)
                 for files in self._holders().values() for f in files]
        schema = boards_schema(self._cells()).append(pa.field("arm", pa.string()))
        fmt = ds.ParquetFileFormat(default_fragment_scan_options=ds.ParquetFragmentScanOptions(
            page_checksum_verification=True))
        if not self.is_dataset:
            return ds.dataset(paths, schema=schema.remove(schema.get_field_index("arm")),
                              format=fmt)
        return ds.dataset(paths, schema=schema, format=fmt, partition_base_dir=str(self.path),
                          partitioning=ds.partitioning(pa.schema([("arm", pa.string())]),
                                                       flavor="hive"))

    def top(self, n: int, *, checked: bool | str = "compacted") -> Boards:
        """The best `n` kept boards of distinct cells (score, then depth, then the order
        of a read), best first: the compacted files' places found from their statistics
        columns (`top_places`), only the files holding one read (digest checked), the
        parts read and checked (`checked` True: every row read and checked, `read`): what
        a campaign's saved boards need, never every board at once."""
        if checked is True or not self.is_dataset:
            d = self.read()
            return _distinct_top(d.boards, d.arms, np.arange(len(d.boards)), n)
        trusted, parts = self._trusted(checked)
        loose = assemble([read_files(self.path, parts, self.instance)]) if parts else None
        k = max(1, n)
        while True:
            places = top_places(trusted, k)
            blocks: list[Boards] = []
            arms: list[str] = []
            order: list[int] = []
            for path in sorted({p[-1] for p in places}):
                at = [p[5] for p in places if p[-1] == path]
                b = read_boards(path)  # its digest checked (recounted when compacted)
                blocks.append(Boards(b.cells[at], {c: v[at] for c, v in b.stats.items()}))
                arms += [p[2] for p in places if p[-1] == path]
                order += at
            if loose is not None:
                blocks.append(loose.boards)
                arms += [str(a) for a in loose.arms]
                order += range(len(loose.boards))
            both = (concat_all(blocks) if blocks else new_boards(self._cells()))
            out = _distinct_top(both, np.asarray(arms, dtype=object),
                                np.asarray(order, dtype=np.int64), n)
            if len(out) >= n or len(places) < k:
                return out
            k *= 4

    # -- writing ---------------------------------------------------------------------
    @contextlib.contextmanager
    def sink(self, seed: int, *, arm: str | None = None,
             shard: tuple[int, int] | None = None) -> Iterator[BoardsSink]:
        """Where a run of `seed` writes (`boards_sink`): needs the instance."""
        if self.instance is None:
            raise SolverError("open_boards(..., instance=...) is needed to write boards")
        with boards_sink(self.path, self.instance, seed, arm, shard) as sink:
            self._read = None
            yield sink

    def compact(self, **options: Any) -> dict[str, Any]:
        """Merge each seed's parts into compacted files (`compact_boards_dataset`)."""
        if not self.is_dataset:
            raise SolverError(f"{_n(self.path)} is a boards file: only a dataset's parts "
                              f"are compacted")
        self._exists()
        out = compact_boards_dataset(self.path, self.instance, **options)
        self._read = None
        return out

    # -- helpers ---------------------------------------------------------------------
    def _exists(self) -> None:
        if not self.path.exists():
            raise FileNotFoundError(f"{_n(self.path)}: no such boards "
                                    f"{'dataset' if self.is_dataset else 'file'}")

    def _boards(self) -> Boards:
        if self._file is None:
            self._file = read_boards(self.path, self.instance)
        return self._file

    def _cells(self) -> int:
        """W*H of the boards, from the first file's metadata."""
        w, h = self._size()
        return w * h

    def _size(self) -> tuple[int, int]:
        """(W, H) of the boards, from the first file's metadata."""
        from e2store.boards.schema import board_size
        from e2store.files import table_schema

        first = holder_files(self.path)[:1] if self.is_dataset else []
        path = first[0].path if first else self.path
        try:
            raw = table_schema(path).metadata or {}
        except FileNotFoundError:
            raise
        except Exception as e:  # pyarrow's errors: a damaged footer, a file that is no table
            line = (str(e).splitlines() or [type(e).__name__])[0][:160]
            raise DamagedDataError(f"{_n(path)}: damaged boards file ({line}); it is left as "
                                   f"it is: restore it from a copy, or move it aside") from None
        meta = {k.decode(errors="replace"): v.decode(errors="replace") for k, v in raw.items()}
        size = board_size(meta)
        if size is None:
            raise SolverError(f"{_n(path)}: not a boards file (no width and height)")
        return size

    def _holders(self) -> dict[str, list[Holder]] | dict[str, list[str]]:
        """arm -> the files holding its restarts (each restart in one: a compacted file
        before a part left beside it), in order (`holder_files`)."""
        if not self.is_dataset:
            return {DEFAULT_ARM: [str(self.path)]}
        out: dict[str, list[Holder]] = {}
        for f in holder_files(self.path):
            out.setdefault(f.arm, []).append(f)
        return out

    def _unchecked(self, arms: Sequence[str] | None, columns: Sequence[str] | None):
        """The columns asked for of the files holding each restart, as they are."""
        import pyarrow as pa

        from e2store.files import read_table

        self._exists()
        want = None if columns is None else [c for c in columns if c != "arm"]
        if not self.is_dataset:
            t = read_table(self.path)
            t = t if want is None else t.select(want)
            return t.append_column("arm", pa.array([DEFAULT_ARM] * len(t), pa.string()))
        tables = []
        for arm, path in ((a, Path(f.path if isinstance(f, Holder) else f))
                          for a, fs in self._holders().items() for f in fs
                          if arms is None or a in arms):
            t = read_table(path)
            t = t if want is None else t.select(want)
            t = t.replace_schema_metadata(None)
            tables.append(t.append_column("arm", pa.array([arm] * len(t), pa.string())))
        if not tables:
            return pa.table({**{c: pa.array([], pa.int64()) for c in (want or [])},
                             "arm": pa.array([], pa.string())})
        return pa.concat_tables(tables)


def open_boards(path: str | Path, instance: Instance | None = None) -> BoardsHandle:
    """A handle over the boards file or dataset at `path` (module docstring); `instance`
    makes checked reads recount every board, and is needed to write."""
    return BoardsHandle(path, instance)


def _row_count(path: Path) -> int:
    """Rows of a table file, from its footer."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from e2store.files import is_ipc

    if is_ipc(path):
        with pa.memory_map(str(path)) as source:
            return int(pa.ipc.open_file(source).read_all().num_rows)
    return int(pq.ParquetFile(path).metadata.num_rows)


def _distinct_top(boards: Boards, arms: np.ndarray, order: np.ndarray, n: int) -> Boards:
    """The best `n` kept rows of `boards` of distinct cells: by score, then depth, then
    (arm, seed, restart, `order`: a row's place in its file), best first."""
    st = boards.stats
    kept = np.flatnonzero(np.asarray(st["kept"], dtype=bool))
    arm_code = np.unique(np.asarray(arms, dtype=str), return_inverse=True)[1].reshape(-1)
    rows = kept[np.lexsort((order[kept], st["restart"][kept], st["seed"][kept],
                            arm_code[kept], -st["depth"][kept], -st["score"][kept]))]
    seen: set[bytes] = set()
    chosen: list[int] = []
    for i in rows.tolist():
        if len(chosen) >= n:
            break
        b = boards.cells[i].tobytes()
        if b not in seen:
            seen.add(b)
            chosen.append(i)
    return Boards(boards.cells[chosen], {c: v[chosen] for c, v in st.items()}, boards.meta)
