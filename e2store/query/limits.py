"""The limits of a query (docs/queries.md, *Limits*): DuckDB's memory limit of a handle,
a time limit per query (a timer interrupting it), and a cap on the process's memory for
what DuckDB's limit does not see.  `QueryLimitError` says which a query hit."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pyarrow as pa

from e2store.errors import StoreError
from e2store.query.defaults import DEFAULT_MEMORY_LIMIT as DEFAULT_MEMORY_LIMIT  # declared there

PROCESS_HEADROOM = 512 << 20  # bytes a capped process holds beyond its query memory limit
# what a query failing as it runs raises (RuntimeError: DuckDB's Ctrl-C check)
QUERY_ERRORS = (duckdb.Error, pa.ArrowException, MemoryError, RuntimeError)


class QueryLimitError(StoreError):
    """A query stopped by a limit: its time limit (`kind` "time"), the memory limit
    ("memory") or an interrupt (Ctrl-C, `CorolleStore.interrupt`: "interrupt")."""

    def __init__(self, message: str, kind: str, limit: float | None = None):
        super().__init__(message)
        self.kind, self.limit = kind, limit


def cap_process_memory(budget: int | None,
                       headroom: int | None = None) -> Callable[[], None]:
    """Cap this process's data memory (RLIMIT_DATA: heap and private mappings) at what it
    holds now plus `budget` plus `headroom` (default a quarter of `budget`, for what
    DuckDB's allocator holds beyond its limit, and `PROCESS_HEADROOM` for Python): what
    DuckDB's memory_limit does not see (one huge value a function builds,
    `repeat('x', 3e9)`) then fails at once as DuckDB's out-of-memory error instead of
    growing.  Returns a function putting the previous cap back.  Linux only: elsewhere,
    or with `budget` None, nothing is capped.  (DuckDB's allocator keeps the address
    space it frees unless `DUCKDB_JE_MALLOC_CONF=retain:false` was set before it started,
    as `e2store sql` and the server's SQL workers do.)"""
    try:
        import resource

        status = Path("/proc/self/status").read_text()
    except (ImportError, OSError):
        return lambda: None
    held = re.search(r"^VmData:\s+(\d+)\s+kB", status, re.MULTILINE)
    if budget is None or held is None:
        return lambda: None
    if headroom is None:
        headroom = budget // 4 + PROCESS_HEADROOM
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    want = int(held.group(1)) * 1024 + int(budget) + int(headroom)
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    if soft != resource.RLIM_INFINITY and soft <= want:
        return lambda: None  # capped tighter already
    resource.setrlimit(resource.RLIMIT_DATA, (want, hard))
    return lambda: resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def size_text(n: int | None) -> str:
    """A byte count for a message: `2 GiB`, `512 MiB` (None: DuckDB's default)."""
    if n is None:
        return "DuckDB's default"
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.4g} {unit}"
    return f"{n} bytes"


class RunningQuery:
    """One running query: its time limit (a timer calling `interrupt` after `seconds`) and
    what stopped it ("time", "interrupt"), if anything.  Once `end` ran, `stop` does
    nothing: a later query on the same connection is not touched."""

    def __init__(self, interrupt: Callable[[], None], seconds: float | None):
        self.interrupt, self.seconds = interrupt, seconds
        self.stopped: str | None = None
        self.live = True
        self.timer: threading.Timer | None = None
        self.lock = threading.RLock()  # RLock: `stop` may run in a signal handler

    def start(self) -> None:
        if self.seconds is not None and self.seconds > 0:
            self.timer = threading.Timer(self.seconds, self.stop, args=("time",))
            self.timer.daemon = True
            self.timer.start()

    def stop(self, why: str) -> None:
        """Interrupt the query (`why`: "time" or "interrupt"), unless it ended."""
        with self.lock:
            if self.live and self.stopped is None:
                self.stopped = why
                self.interrupt()

    def end(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        with self.lock:
            self.live = False


def limit_error(exc: BaseException, run: RunningQuery | None, where: object,
                memory_limit: int | None) -> QueryLimitError | None:
    """The QueryLimitError a failed query's `exc` means (its timer fired, an interrupt,
    out of memory), naming `where` (the store); None for another failure."""
    text = str(exc)
    stopped = run.stopped if run is not None else None
    if stopped == "time" and run is not None:
        return QueryLimitError(f"{where}: the query ran past its time limit of "
                               f"{run.seconds:g} s", "time", run.seconds)
    if (stopped == "interrupt" or isinstance(exc, duckdb.InterruptException)
            or "interrupt" in text.lower()):
        return QueryLimitError(f"{where}: the query was interrupted", "interrupt")
    if not isinstance(exc, RuntimeError) and (
            isinstance(exc, duckdb.OutOfMemoryException | MemoryError | pa.ArrowMemoryError)
            or "Out of Memory Error" in text):
        why = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
        return QueryLimitError(f"{where}: the query needs more memory than its limit of "
                               f"{size_text(memory_limit)} ({why})", "memory", memory_limit)
    return None


def limited_batches(reader: pa.RecordBatchReader, run: RunningQuery,
                    failure: Callable[[BaseException], BaseException],
                    ) -> Iterator[pa.RecordBatch]:
    """A streamed result's batches under its query's limits: an error is raised as
    `failure(error)`, and so is a batch that came after the timer fired (one long value
    DuckDB did not stop in); the query ends with the stream."""
    try:
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                batch = None
            except QUERY_ERRORS as exc:
                raise failure(exc) from None
            if run.stopped is not None:
                raise failure(duckdb.InterruptException("INTERRUPT"))
            if batch is None:
                return
            yield batch
    finally:
        run.end()


class QueryRunner:
    """Queries of one DuckDB connection, one at a time, each under its limits: its timer,
    `interrupt()`, and a stream ended with its last batch (a store's handle and an
    in-memory tables handle run every query through one)."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con
        self.lock = threading.Lock()
        self.query: RunningQuery | None = None  # the running one (`interrupt`)

    def interrupt(self) -> None:
        """Stop the running query: it raises what `failure` makes of the interrupt."""
        query = self.query
        if query is not None:
            query.stop("interrupt")

    def run(self, query: str, params: list | None, *, stream: bool, batch_rows: int,
            seconds: float | None,
            failure: Callable[[BaseException, RunningQuery | None], BaseException],
            ) -> pa.Table | pa.RecordBatchReader:
        """Run `query` under `seconds`: an Arrow table, or with `stream` a reader of about
        `batch_rows` rows a batch; a failure is raised as `failure(error, run)`."""
        query_run = RunningQuery(self.con.interrupt, seconds)
        run: RunningQuery | None = query_run  # None once a stream's reader owns it
        with self.lock:
            if self.query is not None:  # a stream left unread: its timer ends here
                self.query.end()
            self.query = query_run
        query_run.start()
        try:
            rel = self.con.sql(query, params=params or None)
            if rel is None:  # a statement without a result (CREATE, SET, ...)
                empty = pa.table({})
                return pa.RecordBatchReader.from_batches(empty.schema, []) if stream else empty
            if stream:  # DuckDB 2 names it to_arrow_reader, 1.x fetch_record_batch
                read = getattr(rel, "to_arrow_reader", None) or rel.fetch_record_batch
                reader = read(batch_rows)
                out = pa.RecordBatchReader.from_batches(reader.schema, limited_batches(
                    reader, query_run, lambda exc: failure(exc, query_run)))
                run = None  # the stream's end ends it
                return out
            table = rel.to_arrow_table()
            if query_run.stopped is not None:  # done after the timer fired: one value took long
                raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")
            return table
        except QUERY_ERRORS as exc:
            raise failure(exc, run) from None
        finally:
            if run is not None:
                run.end()
