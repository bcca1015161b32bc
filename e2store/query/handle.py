"""Query layer: one `connect(STORE)` handle owning an in-process DuckDB connection.

Views (built from the manifest, so only complete partitions are seen):

* `manifest`: one row per (partition, form): instance, hamming, zone, rotation, form, x, y,
  rows, corolles, nodes, seconds, bytes, files;
* `zone_stats`: one row per (instance, hamming, zone): canonical cell, member cells,
  corolles, nodes, seconds and bytes per form;
* `instances`: id, name, width, height, pieces;
* `corolles`: flat rows (`s*`, `f*`) with typed partition columns instance, hamming, zone,
  rotation;
* `stems`: cartesian rows (`s*`, `corolles`, `c*` lists) with the same partition columns.

Every query returns an Arrow table.  `probe_*` raises a typed error saying what to run;
`get_*` returns a default instead.

Limits (`e2store.query.limits`, docs/queries.md): a DuckDB `memory_limit` per handle
(2 GiB; its cursors share it), a time limit per query (`seconds`), `interrupt()`; a query
stopped so raises QueryLimitError.  The Arrow datasets behind `corolles` and `stems` are
registered on a connection only after their files were checked (`_check_files`): a query
reaching them by a computed name (`query_table('coro' || 'lles')`) cannot skip the check.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import EllipsisType

import duckdb
import numpy as np
import pyarrow as pa

from e2store.corolles.forms import CartesianRows
from e2store.errors import MissingInstanceError, MissingZoneError, StoreError
from e2store.instance.model import Instance
from e2store.query.database import DATA_VIEWS, ZONE_STATS_SQL
from e2store.query.limits import (
    DEFAULT_MEMORY_LIMIT,
    QueryLimitError,
    QueryRunner,
    RunningQuery,
    limit_error,
)
from e2store.store.layout import (
    INSTANCES_VIEW_SCHEMA,
    MANIFEST,
    MANIFEST_VIEW_SCHEMA,
    RAW_FORMS,
    instance_path,
)
from e2store.store.read import dataset, read_manifest, read_record, read_store_instance
from e2store.zones.geometry import frontier_layout, n_slots

# table functions that read a table whose name is a string computed when the query runs
_NAME_FUNCTIONS = re.compile(r"\b(query_table|query)\s*\(", re.IGNORECASE)


def connect(root: str | Path, database: str = ":memory:", *,
            memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
            seconds: float | None = None) -> CorolleStore:
    """Open a store for queries (use in `with`); raises StoreError without a manifest.
    `memory_limit`: bytes DuckDB may use (None: DuckDB's default, 80 % of RAM); `seconds`:
    the time limit of each query (None: none); a query past either raises QueryLimitError."""
    return CorolleStore(root, database, memory_limit=memory_limit, seconds=seconds)


class _Unchecked(Exception):
    """A query reached a data view whose files this connection has not checked yet (the
    view's form: `args[0]`)."""


class CorolleStore:
    """A store opened for queries: DuckDB views over its Parquet files, Arrow results.

    A handle is not shared between threads (its DuckDB connection runs one query at a
    time): give each thread its own with `cursor()`."""

    def __init__(self, root: str | Path, database: str = ":memory:",
                 _manifest: dict | None = None, *,
                 memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
                 seconds: float | None = None, _parent: CorolleStore | None = None):
        self.root = Path(root).resolve()
        self.manifest = read_manifest(self.root) if _manifest is None else _manifest
        self.memory_limit, self.seconds = memory_limit, seconds
        self._instances: dict[str, Instance] = {}
        self._registered: set[str] = set()  # data forms this connection's views can read
        if _parent is None:
            self.con = duckdb.connect(database)
            self._hashed: set[str] = set()  # forms whose files were checked (`_check_files`)
            self._datasets = {form: dataset(self.root, form, manifest=self.manifest)
                              for form in DATA_VIEWS.values()
                              if any(p["form"] == form for p in self.manifest["partitions"])}
            self._tables = self._view_tables()
            self._create_views()
        else:  # the parent's DuckDB database: its views, memory limit and sandbox
            self.con = _parent.con.cursor()
            self._hashed = _parent._hashed  # shared: files hashed once per store opened
            self._datasets, self._tables = _parent._datasets, _parent._tables
            for name, table in self._tables.items():
                self.con.register(name, table)
        self._runner = QueryRunner(self.con)  # one query at a time, under its limits

    def cursor(self) -> CorolleStore:
        """Another handle on the same store, manifest and DuckDB database (its views,
        memory limit and sandbox), with a connection of its own: one per thread (close it,
        or use it in `with`; closing this handle closes its cursors)."""
        return CorolleStore(self.root, _manifest=self.manifest,
                            memory_limit=self.memory_limit, seconds=self.seconds,
                            _parent=self)

    # context manager ----------------------------------------------------------------
    def __enter__(self) -> CorolleStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.con.close()

    # raw SQL ------------------------------------------------------------------------
    def sql(self, query: str, params: list | None = None, *, stream: bool = False,
            batch_rows: int = 1 << 16,
            seconds: float | None | EllipsisType = ...) -> pa.Table | pa.RecordBatchReader:
        """Run SQL over the views; returns an Arrow table, or with `stream` a
        `RecordBatchReader` of about `batch_rows` rows a batch (results bigger than memory).
        The first query that can reach the `corolles` or `stems` view checks that view's
        files first (`_check_files`).  `seconds`: this query's time limit (default the
        handle's; for a stream, until its last batch); past it, past the memory limit or
        after `interrupt()`, QueryLimitError."""
        limit = self.seconds if seconds is ... else seconds
        self._check_files(query)
        for _ in range(len(DATA_VIEWS) + 1):
            try:
                return self._run(query, params, stream, batch_rows, limit)
            except _Unchecked as exc:  # reached by a computed name: check, then run again
                self._check_form(exc.args[0])
        raise StoreError(f"{self.root}: query failed: the data views stay unreadable")

    def interrupt(self) -> None:
        """Stop the running query (from another thread, or a signal handler): it raises
        QueryLimitError (kind "interrupt").  Between queries it does nothing."""
        self._runner.interrupt()

    def _run(self, query: str, params: list | None, stream: bool, batch_rows: int,
             seconds: float | None) -> pa.Table | pa.RecordBatchReader:
        """`sql` once, under the time limit; errors as StoreError / QueryLimitError."""
        return self._runner.run(query, params, stream=stream, batch_rows=batch_rows,
                                seconds=seconds, failure=self._failure)

    def _failure(self, exc: BaseException, run: RunningQuery | None) -> BaseException:
        """The error a failed query raises: QueryLimitError for a limit, _Unchecked for a
        data view not checked yet, StoreError for the rest (a RuntimeError that is not
        DuckDB's interrupt is raised as it is)."""
        limit = limit_error(exc, run, self.root, self.memory_limit)
        if limit is not None or isinstance(exc, RuntimeError):
            return limit or exc
        if isinstance(exc, duckdb.CatalogException):
            for view, form in DATA_VIEWS.items():
                if (form in self._datasets and form not in self._registered
                        and f"_{view} does not exist" in str(exc)):
                    return _Unchecked(form)
        return StoreError(f"{self.root}: query failed: {exc}")

    def check_files(self, query: str) -> frozenset[str]:
        """Check now the files of the data views `query` can reach (once per store opened),
        without running it; returns the data forms checked so far (`trust_checked`)."""
        self._check_files(query, register=False)
        return frozenset(self._hashed)

    def trust_checked(self, forms: Iterable[str]) -> None:
        """Count the data forms another handle of this store checked (`check_files`) as
        checked: a server's SQL worker process, told by the server."""
        self._hashed.update(f for f in forms if f in self._datasets)

    def _check_files(self, query: str, register: bool = True) -> None:
        """Check the files of each data view `query` names (any, when it calls a table
        function reading a table by a computed name: `query_table`, `query`), then let this
        connection read them (`_check_form`)."""
        text = query.lower()
        computed = _NAME_FUNCTIONS.search(text) is not None
        for view, form in DATA_VIEWS.items():
            if form in self._datasets and (computed or view in text):
                self._check_form(form, register)

    def _check_form(self, form: str, register: bool = True) -> None:
        """Hash the files of a data form, once per store opened, against the manifest
        (StoreError naming a damaged file and `e2store verify`): the views' scans check page
        CRCs, which cover neither page headers nor footers.  Then register its dataset on
        this connection: until then its view reads nothing (`_create_views`)."""
        from e2store.store.read import check_file_hash

        if form not in self._hashed:
            for p in self.manifest["partitions"]:
                if p["form"] != form:
                    continue
                for f in p["files"]:
                    check_file_hash(self.root / p["path"] / f["file"], self.root,
                                    f["sha256"])
            self._hashed.add(form)
        if register and form not in self._registered:
            view = next(v for v, f in DATA_VIEWS.items() if f == form)
            self.con.register(f"_{view}", self._datasets[form])
            self._registered.add(form)

    # views --------------------------------------------------------------------------
    def _view_tables(self) -> dict[str, pa.Table]:
        """The Arrow tables behind the `manifest` and `instances` views."""
        parts = self.manifest["partitions"]
        rows = [{
            "instance": p["instance"], "hamming": p["hamming"], "zone": p["zone"],
            "rotation": p["rotation"], "form": p["form"], "x": p["x"], "y": p["y"],
            "cells": len(p.get("cells", [])), "canonical_x": p["canonical"][0],
            "canonical_y": p["canonical"][1], "rows": p["rows"], "corolles": p["corolles"],
            "nodes": p.get("nodes") or 0, "seconds": p["seconds"],
            "bytes": sum(f["bytes"] for f in p["files"]), "files": len(p["files"]),
        } for p in parts]
        inst_rows = []
        for iid in sorted({p["instance"] for p in parts}):
            inst = self.instance(iid)
            inst_rows.append({"instance": iid, "name": inst.name, "width": inst.width,
                              "height": inst.height, "pieces": inst.n_pieces})
        return {"_manifest": pa.Table.from_pylist(rows, schema=MANIFEST_VIEW_SCHEMA),
                "_instances": pa.Table.from_pylist(inst_rows, schema=INSTANCES_VIEW_SCHEMA)}

    def _create_views(self) -> None:
        """The views, once per DuckDB database (cursors share them), its memory limit, and
        the sandbox: no file read or write, no extension, no way back."""
        for name, table in self._tables.items():
            self.con.register(name, table)
        self.con.execute("CREATE VIEW manifest AS SELECT * FROM _manifest")
        self.con.execute(f"CREATE VIEW zone_stats AS {ZONE_STATS_SQL}")
        self.con.execute("CREATE VIEW instances AS SELECT * FROM _instances")
        for view, form in DATA_VIEWS.items():
            if form in self._datasets:
                # an Arrow dataset (DuckDB reads it with file access locked), bound for
                # its columns, then unregistered: a connection reads it once it registers
                # it again, after the files' check (`_check_form`), whatever the query
                # names (`query_table('coro' || 'lles')` included)
                self.con.register(f"_{view}", self._datasets[form])
                self.con.execute(f"CREATE VIEW {view} AS SELECT * FROM _{view}")
                self.con.unregister(f"_{view}")
            else:  # no such partitions yet: an empty view with the partition columns
                self.con.execute(
                    f"CREATE VIEW {view} AS SELECT NULL::VARCHAR AS instance, "
                    f"NULL::INTEGER AS hamming, NULL::INTEGER AS zone, "
                    f"NULL::INTEGER AS rotation WHERE false")
        if self.memory_limit is not None:
            self.con.execute(f"SET memory_limit = '{int(self.memory_limit)}B'")
        # read-only and confined: no file read or write, no extension, no way back
        self.con.execute("SET enable_external_access = false")
        self.con.execute("SET lock_configuration = true")

    # lookups ------------------------------------------------------------------------
    def instance(self, instance_id: str) -> Instance:
        """The instance kept in the store; MissingInstanceError if there is none."""
        if instance_id not in self._instances:
            path = instance_path(self.root, instance_id)
            if not path.exists():
                known = sorted({p["instance"] for p in self.manifest["partitions"]})
                raise MissingInstanceError(
                    f"{self.root}: no instance {instance_id!r} (the store holds "
                    f"{', '.join(known) or 'none'}; run `e2store enumerate` for it)")
            self._instances[instance_id] = read_store_instance(self.root, instance_id)
        return self._instances[instance_id]

    def probe_partition(self, instance: str, hamming: int, zone: int, rotation: int = 0,
                        form: str = "flat") -> dict:
        """The manifest entry of a partition; MissingZoneError saying what to run if absent."""
        for p in self.manifest["partitions"]:
            if (p["instance"], p["hamming"], p["zone"], p["rotation"], p["form"]) == (
                    instance, hamming, zone, rotation, form):
                return p
        self.instance(instance)  # a missing instance is the clearer error
        raise MissingZoneError(
            f"{self.root}: no {form} partition for instance={instance} hamming={hamming} "
            f"zone={zone} rotation={rotation} (run `e2store enumerate INSTANCE --hamming "
            f"{hamming} --form {form} --store {self.root}`)")

    def get_partition(self, instance: str, hamming: int, zone: int, rotation: int = 0,
                      form: str = "flat", default=None):
        """Like probe_partition, returning `default` when the partition is missing."""
        try:
            return self.probe_partition(instance, hamming, zone, rotation, form)
        except (MissingZoneError, MissingInstanceError):
            return default

    def zone_stats(self, instance: str | None = None, hamming: int | None = None) -> pa.Table:
        """Per zone: canonical cell, member cells, corolles, nodes, seconds, bytes per form."""
        where, params = _where(instance=instance, hamming=hamming)
        return self.sql(f"SELECT * FROM zone_stats {where}", params)

    def cardinality(self, instance: str, hamming: int, zone: int,
                    rotation: int = 0) -> pa.Table:
        """Per slot: how many distinct pieces (and placements) occur in the zone's corolles
        (the published study's cardinality counter; 0 off the board).  From the cartesian
        form when present (stems, plus the candidates that have a completion), else from
        a scan of the flat rows."""
        stored = self._stored_placements(instance, hamming, zone, rotation)
        if stored is not None:
            return stored
        if self.get_partition(instance, hamming, zone, rotation, "cartesian") is not None:
            return self._cardinality_cartesian(instance, hamming, zone, rotation)
        self.probe_partition(instance, hamming, zone, rotation, "flat")
        parts = []
        for i in range(n_slots(hamming)):
            parts.append(f"SELECT {i} AS slot, count(DISTINCT s{i} // 4) AS pieces, "
                         f"count(DISTINCT s{i}) AS placements FROM sel WHERE s{i} >= 0")
        sel = ("WITH sel AS (SELECT * FROM corolles WHERE instance = ? AND hamming = ? "
               "AND zone = ? AND rotation = ?) ")
        return self.sql(sel + " UNION ALL ".join(parts) + " ORDER BY slot",
                        [instance, hamming, zone, rotation])

    def _stored_placements(self, instance, hamming, zone, rotation) -> pa.Table | None:
        """The cardinality from the per-slot placement sets a partition record keeps
        (written with the partition), or None for a store written without them."""
        for form in RAW_FORMS:  # a distinct form's placements name only the first copies
            part = self.get_partition(instance, hamming, zone, rotation, form)
            if part is None:
                continue
            record = read_record(self.root, instance, hamming, zone, rotation, form)
            if not record.get("placements"):
                continue
            out: dict[str, list[int]] = {"slot": [], "pieces": [], "placements": []}
            for i, h in enumerate(record["placements"]):
                bits = np.unpackbits(np.frombuffer(bytes.fromhex(h), dtype=np.uint8),
                                     bitorder="little")
                placed = np.nonzero(bits)[0]
                out["slot"].append(i)
                out["pieces"].append(len(np.unique(placed >> 2)))
                out["placements"].append(len(placed))
            return pa.table(out)
        return None

    def _cardinality_cartesian(self, instance, hamming, zone, rotation) -> pa.Table:
        t = self.sql("SELECT * EXCLUDE (instance, hamming, zone, rotation) FROM stems "
                     "WHERE instance = ? AND hamming = ? AND zone = ? AND rotation = ?",
                     [instance, hamming, zone, rotation])
        if hamming == 0:
            t = t.rename_columns(["corolles", "c0"])
        rows = CartesianRows.from_table(t, hamming)
        s_in = rows.stems.shape[1]
        seen: list[np.ndarray] = [rows.stems[:, i] for i in range(s_in)]
        if rows.n_rows:
            _, _, vals, _ = rows.padded()
            ok = rows.feasible()
            seen += [vals[k, :len(v)][ok[k, :len(v)]] for k, v in enumerate(rows.values)]
        else:
            seen += [np.zeros(0, np.int16)] * len(rows.offsets)
        out: dict[str, list[int]] = {"slot": [], "pieces": [], "placements": []}
        for i, col in enumerate(seen):
            col = col[col >= 0]
            out["slot"].append(i)
            out["pieces"].append(len(np.unique(col >> 2)))
            out["placements"].append(len(np.unique(col)))
        return pa.table(out)

    def frontier_distribution(self, instance: str, hamming: int, zone: int,
                              rotation: int = 0) -> pa.Table:
        """How often each colour occurs at each frontier position (-1: off the board).
        The store keeps no frontier (format version 3): each position's colour is looked
        up from its cell's placement, in the query."""
        self.probe_partition(instance, hamming, zone, rotation, "flat")
        fronts = frontier_sql(self.instance(instance), hamming)
        cols = ", ".join(f"f{i}" for i in range(len(fronts)))
        return self.sql(
            f"SELECT CAST(substr(position, 2) AS INTEGER) AS position, colour, "
            f"count(*) AS corolles FROM (UNPIVOT (SELECT {', '.join(fronts)} FROM corolles "
            f"WHERE instance = ? AND hamming = ? AND zone = ? AND rotation = ?) "
            f"ON {cols} INTO NAME position VALUE colour) GROUP BY ALL ORDER BY ALL",
            [instance, hamming, zone, rotation])

    def compatible(self, instance: str, hamming: int, zone: int, rotation: int = 0, *,
                   fixed: Mapping[int, int] | None = None, forbidden: Iterable[int] = (),
                   limit: int | None = None) -> pa.Table:
        """The corolles of a zone partition with the given slots fixed (slot -> packed
        placement `piece*4+r`) and none of the `forbidden` pieces, as flat cell rows.

        Uses the cartesian form when present (filter stems and candidate lists in SQL, then
        expand only what is left), else a scan of the flat rows.
        """
        fixed = {int(k): int(v) for k, v in (fixed or {}).items()}
        forbidden = sorted({int(p) for p in forbidden})
        S = n_slots(hamming)
        for k in fixed:
            if not 0 <= k < S:
                raise StoreError(f"slot {k} does not exist at hamming {hamming} "
                                 f"(expected 0 <= slot < {S})")
        if self.get_partition(instance, hamming, zone, rotation, "cartesian") is not None:
            cells = self._compatible_cartesian(instance, hamming, zone, rotation, fixed,
                                               forbidden)
            if limit is not None:
                cells = cells[:limit]
            return pa.Table.from_arrays([pa.array(cells[:, i]) for i in range(S)],
                                        names=[f"s{i}" for i in range(S)])
        self.probe_partition(instance, hamming, zone, rotation, "flat")
        conds = ["instance = ?", "hamming = ?", "zone = ?", "rotation = ?"]
        params: list = [instance, hamming, zone, rotation]
        for k, v in sorted(fixed.items()):
            conds.append(f"s{k} = ?")
            params.append(v)
        if forbidden:
            flist = ", ".join(str(p) for p in forbidden)
            conds += [f"(s{i} < 0 OR s{i} // 4 NOT IN ({flist}))" for i in range(S)]
        cols = ", ".join(f"s{i}" for i in range(S))
        q = f"SELECT {cols} FROM corolles WHERE {' AND '.join(conds)}"
        if limit is not None:
            q += f" LIMIT {int(limit)}"
        return self.sql(q, params)

    def _compatible_cartesian(self, instance, hamming, zone, rotation, fixed, forbidden):
        s_in = n_slots(hamming - 1) if hamming > 0 else 0
        m = 4 * hamming if hamming else 1
        conds = ["instance = ?", "hamming = ?", "zone = ?", "rotation = ?"]
        params: list = [instance, hamming, zone, rotation]
        flist = ", ".join(str(p) for p in forbidden) or "NULL"
        for k, v in fixed.items():
            if k < s_in:
                conds.append(f"s{k} = ?")
                params.append(v)
        if forbidden:
            conds += [f"(s{i} < 0 OR s{i} // 4 NOT IN ({flist}))" for i in range(s_in)]
        lists = []
        for j in range(m):
            slot = s_in + j if hamming else 0
            if slot in fixed:
                expr = (f"list_filter(c{j}, lambda v: v = {fixed[slot]} AND "
                        f"v // 4 NOT IN ({flist}))" if forbidden else
                        f"list_filter(c{j}, lambda v: v = {fixed[slot]})")
            elif forbidden:
                expr = f"list_filter(c{j}, lambda v: v < 0 OR v // 4 NOT IN ({flist}))"
            else:
                expr = f"c{j}"
            lists.append(f"{expr} AS c{j}")
        stem_cols = "".join(f"s{i}, " for i in range(s_in))
        inner = (f"SELECT {stem_cols}corolles, {', '.join(lists)} FROM stems "
                 f"WHERE {' AND '.join(conds)}")
        nonempty = " AND ".join(f"len(c{j}) > 0" for j in range(m))
        t = self.sql(f"SELECT * FROM ({inner}) WHERE {nonempty}", params)
        if hamming == 0:  # the centre is the only ring: its list holds the whole corolle
            t = t.rename_columns(["corolles", "c0"])
        rows = CartesianRows.from_table(t, hamming)
        # exact counts of the filtered lists, then expansion of only what is left
        counts = _injective_counts(rows)
        rows = CartesianRows(hamming, rows.stems, counts, rows.offsets, rows.values)
        return rows.expand() if counts.sum() else np.zeros((0, n_slots(hamming)), np.int16)

    def write_database(self, path: str | Path) -> None:
        """The views as a DuckDB file or SQL script whose paths are relative to the store
        (`e2store.query.database`)."""
        from e2store.query.database import write_database

        write_database(self.root, path, self.sql("SELECT * FROM instances"),
                       {p["form"] for p in self.manifest["partitions"]})


def _injective_counts(rows: CartesianRows) -> np.ndarray:
    """Exact completions per row after filtering its lists."""
    return rows.row_counts()


def _where(**kw) -> tuple[str, list]:
    conds, params = [], []
    for k, v in kw.items():
        if v is not None:
            conds.append(f"{k} = ?")
            params.append(v)
    return ("WHERE " + " AND ".join(conds) if conds else ""), params


__all__ = ["connect", "CorolleStore", "MANIFEST", "QueryLimitError"]


def frontier_sql(instance: Instance, hamming: int) -> list[str]:
    """SQL expressions `... AS f<i>` of the frontier colours of a flat row of `instance` at
    `hamming` (`e2store.corolles.forms.frontier_of` in SQL): the colour each frontier
    side's placement shows, from a list literal of every placement's colours, -1 off the
    board."""
    fslots, fsides = frontier_layout(hamming)
    colours = ("CAST([" + ",".join(map(str, instance.rotated_table().ravel().tolist()))
               + "] AS TINYINT[])")
    return [f"CASE WHEN s{a} < 0 THEN CAST(-1 AS TINYINT) ELSE ({colours})[s{a} * 4 + {b + 1}] "
            f"END AS f{i}"
            for i, (a, b) in enumerate(zip(fslots.tolist(), fsides.tolist(), strict=True))]
