"""A query over a store's views run for a terminal: rows streamed batch by batch under a
time limit, a memory limit (DuckDB's, and a cap on the process) and Ctrl-C, which also
stops the DuckDB query running (docs/queries.md).

Nothing heavy is imported with this module: its defaults serve a command's --help.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

QUERY_SECONDS = 60.0  # the default time limit of a query run for a terminal (`e2store sql`)


@contextlib.contextmanager
def ctrl_c_interrupts(st: Any) -> Iterator[None]:
    """While in the block, Ctrl-C also interrupts the handle's running DuckDB query.

    Python runs a signal handler only between bytecodes of the main thread, which waits
    inside DuckDB while a query runs: a thread woken by the signal's wakeup byte
    (`signal.set_wakeup_fd`) calls `st.interrupt()`; the main thread's KeyboardInterrupt
    follows once DuckDB returns.  Only in the main thread (elsewhere, nothing changes)."""
    import signal
    import socket

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    try:
        previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    except ValueError:
        reader.close()
        writer.close()
        yield
        return

    def watch() -> None:
        while True:
            try:
                got = reader.recv(64)  # the numbers of the signals received
            except OSError:
                return
            if not got:
                return
            if signal.SIGINT in got:
                st.interrupt()

    thread = threading.Thread(target=watch, name="ctrl-c", daemon=True)
    thread.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous)
        writer.close()
        thread.join(timeout=5)
        reader.close()


@contextlib.contextmanager
def process_cap(memory_limit: int) -> Iterator[None]:
    """The process's data memory capped at what it holds now plus `memory_limit`, a
    quarter more and 512 MiB while in the block (`cap_process_memory`)."""
    from e2store.query.limits import cap_process_memory

    restore = cap_process_memory(memory_limit)
    try:
        yield
    finally:
        restore()


def _batches(reader: Any, store: Path) -> Iterator[list[dict]]:
    """The reader's batches as rows; an error met while the query runs is the same
    one-line StoreError as one met when it starts."""
    import duckdb
    import pyarrow as pa

    from e2store.errors import StoreError

    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except (duckdb.Error, pa.ArrowException) as exc:
            raise StoreError(f"{store}: query failed: {exc}") from None
        yield batch.to_pylist()


@contextlib.contextmanager
def sql_rows(store: str | Path, query: str, memory_limit: int,
             seconds: float | None = QUERY_SECONDS, *, tables: dict[str, Any] | None = None,
             ) -> Iterator[tuple[list[str], Iterator[list[dict]]]]:
    """Run `query` over the store's views: (column names, batches of rows as dicts) while
    in the block, under the time limit (`seconds`, None: none), the memory limit (DuckDB's
    and the process's, `process_cap`) and Ctrl-C (`ctrl_c_interrupts`).  Past a limit:
    `QueryLimitError`.  `tables`: instead of a store's, views over these Arrow tables
    ({name: table}, `e2store.query.tables`; `store` names them in errors), under the same
    limits and sandbox."""
    from e2store.query.handle import connect
    from e2store.query.tables import TablesHandle

    handle = (connect(store, memory_limit=memory_limit, seconds=seconds) if tables is None
              else TablesHandle(tables, str(store), memory_limit=memory_limit,
                                seconds=seconds))
    with handle as st, ctrl_c_interrupts(st), process_cap(memory_limit):
        reader = st.sql(query, stream=True)
        yield list(reader.schema.names), _batches(reader, Path(store))
