"""SQL over Arrow tables held in memory: each a view of an in-process DuckDB connection,
under the limits and the sandbox of a store's handle (`e2store.query.handle`): a memory
limit, a time limit per query, `interrupt()`, and once the views are made no file read or
write, no extension, no way back.  `e2store sql --boards DIR` queries a boards dataset's
files so, checked beforehand (`e2store.boards.open_boards(...).arrow_dataset()`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import EllipsisType
from typing import Any

import duckdb
import pyarrow as pa

from e2store.errors import StoreError
from e2store.query.limits import (
    DEFAULT_MEMORY_LIMIT,
    QueryRunner,
    RunningQuery,
    limit_error,
)

_VIEW = re.compile(r"[a-z][a-z0-9_]{0,62}")


class TablesHandle:
    """DuckDB views over the Arrow `tables` ({view name: table or `pyarrow.dataset`, read
    by Arrow with DuckDB's file access locked}); `where` names them in errors (a
    directory).  One query at a time, as a store's handle (use in `with`)."""

    def __init__(self, tables: Mapping[str, pa.Table | Any], where: str, *,
                 memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
                 seconds: float | None = None):
        self.where, self.memory_limit, self.seconds = where, memory_limit, seconds
        self.con = duckdb.connect(":memory:")
        self._runner = QueryRunner(self.con)  # one query at a time, under its limits
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
        self._runner.interrupt()

    def sql(self, query: str, params: list | None = None, *, stream: bool = False,
            batch_rows: int = 1 << 16,
            seconds: float | None | EllipsisType = ...) -> pa.Table | pa.RecordBatchReader:
        """Run SQL over the views: an Arrow table, or with `stream` a `RecordBatchReader`;
        past the time limit (`seconds`, default the handle's), the memory limit or after
        `interrupt()`, QueryLimitError; another failure, StoreError naming `where`."""
        return self._runner.run(query, params, stream=stream, batch_rows=batch_rows,
                                seconds=self.seconds if seconds is ... else seconds,
                                failure=self._failure)

    def _failure(self, exc: BaseException, run: RunningQuery | None) -> BaseException:
        limit = limit_error(exc, run, self.where, self.memory_limit)
        if limit is not None or isinstance(exc, RuntimeError):
            return limit or exc
        return StoreError(f"{self.where}: query failed: {exc}")
