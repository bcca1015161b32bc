"""SQL over Arrow tables held in memory: each a view of an in-process DuckDB connection,
under the limits and the sandbox of a store's handle (`e2store.query.handle`): a memory
limit, a time limit per query, `interrupt()`, and once the views are made no file read or
write, no extension, no way back.  `e2store sql --boards DIR` queries a boards dataset's
rows so, read and checked beforehand (`e2store.solver.boards_dataset`)."""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from types import EllipsisType

import duckdb
import pyarrow as pa

from e2store.errors import StoreError
from e2store.query.limits import (
    DEFAULT_MEMORY_LIMIT,
    QUERY_ERRORS,
    RunningQuery,
    limit_error,
    limited_batches,
)

_VIEW = re.compile(r"[a-z][a-z0-9_]{0,62}")


class TablesHandle:
    """DuckDB views over the Arrow `tables` ({view name: table}); `where` names them in
    errors (a directory).  One query at a time, as a store's handle (use in `with`)."""

    def __init__(self, tables: Mapping[str, pa.Table], where: str, *,
                 memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
                 seconds: float | None = None):
        self.where, self.memory_limit, self.seconds = where, memory_limit, seconds
        self._query: RunningQuery | None = None
        self._lock = threading.Lock()
        self.con = duckdb.connect(":memory:")
        for name, table in tables.items():
            if not _VIEW.fullmatch(name):
                raise ValueError(f"view name {name!r}: expected a lower-case SQL name")
            self.con.register(f"_{name}", table)
            self.con.execute(f"CREATE VIEW {name} AS SELECT * FROM _{name}")
        if memory_limit is not None:
            self.con.execute(f"SET memory_limit = '{int(memory_limit)}B'")
        # read-only and confined: no file read or write, no extension, no way back
        self.con.execute("SET enable_external_access = false")
        self.con.execute("SET lock_configuration = true")

    def __enter__(self) -> TablesHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.con.close()

    def interrupt(self) -> None:
        """Stop the running query (from another thread, or a signal handler)."""
        query = self._query
        if query is not None:
            query.stop("interrupt")

    def sql(self, query: str, params: list | None = None, *, stream: bool = False,
            batch_rows: int = 1 << 16,
            seconds: float | None | EllipsisType = ...) -> pa.Table | pa.RecordBatchReader:
        """Run SQL over the views: an Arrow table, or with `stream` a `RecordBatchReader`;
        past the time limit (`seconds`, default the handle's), the memory limit or after
        `interrupt()`, QueryLimitError; another failure, StoreError naming `where`."""
        query_run = RunningQuery(self.con.interrupt, self.seconds if seconds is ... else seconds)
        run: RunningQuery | None = query_run  # None once a stream's reader owns it
        with self._lock:
            if self._query is not None:  # a stream left unread: its timer ends here
                self._query.end()
            self._query = query_run
        query_run.start()
        try:
            rel = self.con.sql(query, params=params or None)
            if rel is None:  # a statement without a result
                empty = pa.table({})
                return pa.RecordBatchReader.from_batches(empty.schema, []) if stream else empty
            if stream:  # DuckDB 2 names it to_arrow_reader, 1.x fetch_record_batch
                read = getattr(rel, "to_arrow_reader", None) or rel.fetch_record_batch
                reader = read(batch_rows)
                out = pa.RecordBatchReader.from_batches(reader.schema, limited_batches(
                    reader, query_run, lambda exc: self._failure(exc, query_run)))
                run = None  # the stream's end ends it
                return out
            table = rel.to_arrow_table()
            if query_run.stopped is not None:  # done after the timer fired
                raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")
            return table
        except QUERY_ERRORS as exc:
            raise self._failure(exc, run) from None
        finally:
            if run is not None:
                run.end()

    def _failure(self, exc: BaseException, run: RunningQuery | None) -> BaseException:
        limit = limit_error(exc, run, self.where, self.memory_limit)
        if limit is not None or isinstance(exc, RuntimeError):
            return limit or exc
        return StoreError(f"{self.where}: query failed: {exc}")
