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

import contextlib
import fcntl
import os
import re
import secrets
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow as pa

from e2store.errors import StoreError
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
    script (`FILE.sql`, run from the store), atomically: into `.FILE.<pid>.<token>.tmp`
    (and DuckDB's `.tmp.wal`), renamed over FILE at the end.  The run holds the lock
    `.FILE.<pid>.<token>.lock` meanwhile, so a run killed before its rename leaves files
    the next run writing FILE removes first (`_remove_stale_temps`), while a running
    one's are left alone."""
    root, path = Path(root), Path(path)
    statements = view_statements(instances, forms)
    _remove_stale_temps(path)
    run = f"{os.getpid()}.{secrets.token_hex(4)}"
    tmp = path.with_name(f".{path.name}.{run}.tmp")
    with _run_lock(path.with_name(f".{path.name}.{run}.lock")):
        _write_views(root, path, tmp, statements)


def _write_views(root: Path, path: Path, tmp: Path, statements: list[str]) -> None:
    """`write_database`'s work, through `tmp` (removed, with its WAL, whatever happens)."""
    try:
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
    finally:
        tmp.unlink(missing_ok=True)
        tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)


# what a run of `write_database` leaves beside FILE: .FILE.<pid>.<token>.{tmp,tmp.wal,lock}
_RUN_FILE = re.compile(r"(\d+)\.([0-9a-f]{8})\.(tmp|tmp\.wal|lock)")


@contextlib.contextmanager
def _run_lock(lock: Path) -> Iterator[None]:
    """Hold an exclusive `flock` on `lock` (created, removed at the end) while this run's
    temp files exist.  Taken again if a cleaner removed the file between its creation and
    the lock (it then took this run for a dead one), so that no temp file is ever created
    under a lock another run can take."""
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:  # a missing or read-only directory: say which
            raise StoreError(f"{lock.parent}: cannot write a file there: "
                             f"{exc.strerror or exc}") from None
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            if os.path.samestat(os.fstat(fd), os.stat(lock)):
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)  # before the lock is released: no one takes it stale
        os.close(fd)


def _pid_alive(pid: int) -> bool:
    """Whether a process `pid` runs on this host (True when unsure: keep its files)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0
    return True


def _remove_stale_temps(path: Path) -> int:
    """Remove the temp files of runs writing `path` that were killed before their rename;
    returns how many runs.  A run whose lock is free is dead; a run with no lock (written
    by an e2store from before the locks) is dead when its pid is (same-host check).  Files
    of live runs, and files named otherwise (`.FILE.tmp`), are left alone."""
    parent = path.parent
    prefix = f".{path.name}."
    try:
        names = os.listdir(parent)
    except OSError:
        return 0  # the write reports the directory's problem
    runs: dict[str, set[str]] = {}
    for name in names:
        m = _RUN_FILE.fullmatch(name[len(prefix):]) if name.startswith(prefix) else None
        if m:
            runs.setdefault(f"{m[1]}.{m[2]}", set()).add(m[3])
    removed = 0
    for run, kinds in runs.items():
        base = parent / f"{prefix}{run}"
        temps = [base.with_name(base.name + ".tmp"), base.with_name(base.name + ".tmp.wal")]
        if "lock" not in kinds:
            if _pid_alive(int(run.split(".")[0])):
                continue
            for f in temps:
                f.unlink(missing_ok=True)
            removed += 1
            continue
        lock = base.with_name(base.name + ".lock")
        try:
            fd = os.open(lock, os.O_RDWR)
        except FileNotFoundError:
            continue  # the run just finished
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a live run
            for f in temps:
                f.unlink(missing_ok=True)
            lock.unlink(missing_ok=True)
            removed += 1
        finally:
            os.close(fd)
    return removed


def _sql_path(path: Path) -> str:
    return str(path).replace("'", "''")
