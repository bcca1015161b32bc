"""A store's views as a DuckDB database or SQL script any DuckDB reads (`e2store build-db`).

Every path in the views is relative to the store and is a glob, not a list of files: the
database keeps working after the store moves, and sees partitions added later.  DuckDB
resolves a relative path against its working directory or its `file_search_path`, so it is
opened from the store (`cd STORE && duckdb FILE.duckdb`) or told where the store is
(`duckdb -cmd "SET file_search_path='STORE'" FILE.duckdb`).  The file is written in the
storage format of DuckDB 1.0 (`STORAGE_VERSION`), which every DuckDB from 1.0 on opens.

Views: `corolles` (flat rows) and `stems` (cartesian rows) over every hamming, with the
typed partition columns; `manifest` and `zone_stats` over `manifest.json` (rewritten by
every publish, so they follow the store too); `instances` is a table (the instance files
are not JSON): rebuild the database after adding an instance.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

from e2store.errors import StoreError
from e2store.files import temp_beside
from e2store.store.layout import MANIFEST, form_glob

STORAGE_VERSION = "v1.0.0"  # the oldest storage format: DuckDB 1.0 and later open the file

HIVE_TYPES = ("hive_types = {'instance': VARCHAR, 'hamming': INTEGER, 'zone': INTEGER, "
              "'rotation': INTEGER}")

# one row per (partition, form); its columns are MANIFEST_VIEW_SCHEMA's
_PARTITION_STRUCT = ("STRUCT(instance VARCHAR, hamming INTEGER, zone INTEGER, rotation INTEGER, "
                     "form VARCHAR, x INTEGER, y INTEGER, cells INTEGER[][], "
                     "canonical INTEGER[], \"rows\" BIGINT, corolles BIGINT, nodes BIGINT, "
                     "seconds DOUBLE, files STRUCT(file VARCHAR, \"rows\" BIGINT, "
                     "bytes BIGINT, sha256 VARCHAR)[])")
MANIFEST_SQL = f"""
SELECT p.instance, p.hamming, p.zone, p.rotation, p.form, p.x, p.y,
       len(p.cells)::INTEGER AS cells, p.canonical[1] AS canonical_x,
       p.canonical[2] AS canonical_y, p."rows", p.corolles, coalesce(p.nodes, 0) AS nodes,
       p.seconds, coalesce(list_sum([f.bytes FOR f IN p.files]), 0)::BIGINT AS bytes,
       len(p.files)::INTEGER AS files
FROM (SELECT unnest(partitions) AS p
      FROM read_json('{MANIFEST}', columns = {{'partitions': '{_PARTITION_STRUCT}[]'}},
                     maximum_object_size = 2147483647))"""

ZONE_STATS_SQL = """
SELECT instance, hamming, zone,
       any_value(canonical_x) AS x, any_value(canonical_y) AS y,
       sum(cells) FILTER (WHERE form = any_form) AS cells,
       max(corolles) FILTER (WHERE rotation = 0) AS corolles,
       max(nodes) FILTER (WHERE rotation = 0) AS nodes,
       max(seconds) FILTER (WHERE rotation = 0) AS seconds,
       sum(bytes) FILTER (WHERE form = 'flat') AS flat_bytes,
       sum(bytes) FILTER (WHERE form = 'prefix') AS prefix_bytes,
       sum(bytes) FILTER (WHERE form = 'cartesian') AS cartesian_bytes,
       list(DISTINCT form ORDER BY form) AS forms
FROM (SELECT *, min(form) OVER (PARTITION BY instance, hamming, zone) AS any_form
      FROM manifest)
GROUP BY instance, hamming, zone
ORDER BY instance, hamming, zone"""

DATA_VIEWS = {"corolles": "flat", "stems": "cartesian"}


def _literal(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, int | float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def view_statements(instances: pa.Table, forms: set[str]) -> list[str]:
    """The SQL that makes the views (relative to the store) and the `instances` table.
    A data view of a form the store does not hold yet reads no file (an empty view with
    the partition columns), so the script runs on any store."""
    out = [f"CREATE OR REPLACE VIEW manifest AS {MANIFEST_SQL}",
           f"CREATE OR REPLACE VIEW zone_stats AS {ZONE_STATS_SQL}"]
    for view, form in DATA_VIEWS.items():
        if form in forms:
            out.append(f"CREATE OR REPLACE VIEW {view} AS SELECT * FROM read_parquet("
                       f"'{form_glob(form)}', hive_partitioning = true, union_by_name = true, "
                       f"{HIVE_TYPES})")
        else:
            out.append(f"CREATE OR REPLACE VIEW {view} AS SELECT NULL::VARCHAR AS instance, "
                       f"NULL::INTEGER AS hamming, NULL::INTEGER AS zone, "
                       f"NULL::INTEGER AS rotation WHERE false")
    cols = ", ".join(f"{f.name} {'VARCHAR' if pa.types.is_string(f.type) else 'INTEGER'}"
                     for f in instances.schema)
    out.append(f"CREATE OR REPLACE TABLE instances ({cols})")
    for row in instances.to_pylist():
        out.append(f"INSERT INTO instances VALUES "
                   f"({', '.join(_literal(v) for v in row.values())})")
    return out


def write_database(root: str | Path, path: str | Path, instances: pa.Table,
                   forms: set[str]) -> None:
    """Write the views as a DuckDB file (`FILE.duckdb`, storage version 1.0) or as a SQL
    script (`FILE.sql`, run from the store), atomically: into a temp file beside FILE (and
    DuckDB's `.wal` beside it) under a run lock, renamed over FILE at the end; a run killed
    before its rename leaves files the next run writing FILE removes first
    (`e2store.files.temp_beside`), while a running one's are left alone."""
    root, path = Path(root), Path(path)
    statements = view_statements(instances, forms)
    try:
        with temp_beside(path) as tmp:
            _write_views(root, path, tmp, statements)
    except OSError as exc:
        if isinstance(exc, StoreError):
            raise
        raise StoreError(f"{exc.filename or path.parent}: cannot write {path} there: "
                         f"{exc.strerror or exc}") from None


def _write_views(root: Path, path: Path, tmp: Path, statements: list[str]) -> None:
    """`write_database`'s work, through `tmp` (removed, with its WAL, by the caller)."""
    if path.suffix == ".sql":
        tmp.write_text("-- the views of an e2store store; run from the store directory:\n"
                       "--   cd STORE && duckdb -init views.sql\n"
                       + "".join(f"{s.strip()};\n" for s in statements))
    else:
        con = duckdb.connect()
        try:
            con.execute(f"ATTACH '{_sql_path(tmp)}' AS out "
                        f"(STORAGE_VERSION '{STORAGE_VERSION}')")
            con.execute("USE out")
            # the views are checked where they will run: from the store
            con.execute(f"SET file_search_path = '{_sql_path(root.resolve())}'")
            for s in statements:
                con.execute(s)
            for view in ("manifest", "zone_stats", *DATA_VIEWS):
                con.execute(f"SELECT * FROM {view} LIMIT 0")
            con.execute("USE memory")
            con.execute("DETACH out")
        except duckdb.Error as exc:
            raise StoreError(f"{root}: cannot write {path}: {exc}") from None
        finally:
            con.close()
    tmp.replace(path)


def _sql_path(path: Path) -> str:
    return str(path).replace("'", "''")
