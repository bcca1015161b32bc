"""A boards dataset's files read together by one DuckDB query (`e2store.boards.read`
checks what it reads): their key-value metadata, and their columns a batch of rows at a
time, each batch converted to numpy and let go (the Arrow rows are never all held)."""

from __future__ import annotations

import numpy as np

from e2store.boards.schema import (
    BOARDS_VERSION,
    arrow_type,
    column_kinds,
    stats_of_version,
)

BATCH_ROWS = 32_768  # rows DuckDB hands over at a time (Eternity II: ~80 MB)


def connect():
    import duckdb

    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")  # a library's read draws nothing
    return con


def read_columns(con, files: list[str], n: int, version: int = BOARDS_VERSION):
    """(cells, stats, rows of each file) of every file, read by one DuckDB query a batch
    of rows at a time (each converted, then let go: the Arrow rows are never all held),
    in file order then file row order; None when the columns are not those of a boards
    file of `n` cells, or hold a null."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = [k for k, _ in column_kinds(n, version)]
    kinds = dict(stats_of_version(version))
    reader = con.sql("SELECT * FROM read_parquet(?, filename = true, file_row_number = true, "
                     "hive_partitioning = false)", params=[files]).to_arrow_reader(BATCH_ROWS)
    schema = reader.schema
    if schema.names[:len(names)] != names or sorted(schema.names[len(names):]) != [
            "file_row_number", "filename"] or any(
            schema.field(k).type != arrow_type(kind) for k, kind in column_kinds(n, version)):
        return None
    value_set = pa.array(files)
    cells: list[np.ndarray] = []
    stats: dict[str, list[np.ndarray]] = {k: [] for k in kinds}
    part: list[np.ndarray] = []
    row: list[np.ndarray] = []

    def convert(held: list) -> bool:
        """Take the batches `held` (small ones gathered: a part is a batch of its own)
        into the lists; False when a column holds a null."""
        t = pa.Table.from_batches(held).combine_chunks()
        if any(t.column(i).null_count for i in range(len(names))):
            return False
        c = np.empty((t.num_rows, n), dtype=np.int16)
        for i in range(n):
            c[:, i] = t.column(i).to_numpy()
        cells.append(c)
        for k, kind in kinds.items():  # numbers copied: a view would hold all of `t`
            col = t.column(k).to_numpy()
            stats[k].append(col.astype(object, copy=False) if kind == "string"
                            else col.astype(kind))
        part.append(pc.index_in(t.column("filename"), value_set=value_set).to_numpy(
            zero_copy_only=False).astype(np.int64))
        row.append(t.column("file_row_number").to_numpy().astype(np.int64))
        return True

    held, rows = [], 0
    for batch in reader:
        held.append(batch)
        rows += batch.num_rows
        if rows >= BATCH_ROWS:
            if not convert(held):
                return None
            held, rows = [], 0
    if held and not convert(held):
        return None
    both = (np.concatenate(cells) if len(cells) != 1 else cells[0]) if cells else np.zeros(
        (0, n), np.int16)
    cells.clear()
    out = {k: (np.concatenate(v) if v else np.zeros(0, dtype=object if kinds[k] == "string"
                                                    else kinds[k])) for k, v in stats.items()}
    f = np.concatenate(part) if part else np.zeros(0, np.int64)
    r = np.concatenate(row) if row else np.zeros(0, np.int64)
    if np.any(np.diff(f) < 0) or np.any((np.diff(f) == 0) & (np.diff(r) <= 0)):
        order = np.lexsort((r, f))  # DuckDB keeps the files' order: rarely needed
        both, f = both[order], f[order]
        out = {k: v[order] for k, v in out.items()}
    return both, out, np.bincount(f, minlength=len(files))


def file_metas(con, files: list[str]) -> list[dict[str, str]]:
    """Each file's key-value metadata but Arrow's schema."""
    kv = con.sql("SELECT file_name, key, value FROM parquet_kv_metadata(?) WHERE key <> "
                 "'ARROW:schema'::BLOB", params=[files]).to_arrow_table()
    index = {f: i for i, f in enumerate(files)}
    metas: list[dict[str, str]] = [{} for _ in files]
    for f, k, v in zip(*(kv.column(c).to_pylist() for c in ("file_name", "key", "value")),
                       strict=True):
        metas[index[f]][k.decode(errors="replace")] = v.decode(errors="replace")
    return metas


def read_all(files: list[str]) -> list[dict[str, str]]:
    """Read every row of `files` with DuckDB (its error when it cannot); their metadata."""
    con = connect()
    try:
        con.sql("SELECT * FROM read_parquet(?, filename = true, file_row_number = true, "
                "hive_partitioning = false)", params=[files]).to_arrow_table()
        return file_metas(con, files)
    finally:
        con.close()
