"""The SQL box of `e2store serve`: each query runs in a worker process, never in the
server's, so that no client's SQL can take the server's memory or time (docs/explorer.md,
*Limits*).

A worker is a fresh interpreter (`worker_main`: no fork of a threaded server, no import of
the server's main module) talking over a socket pair; it opens the store under DuckDB's
memory limit and caps its own memory (`cap_process_memory`), so one huge value a
function builds fails at once.  Its handle's timer interrupts a query at the time limit;
a worker that has not answered `SQL_GRACE` seconds later (a function building one huge
value does not stop when interrupted) is killed, and the next query starts another.
"""

from __future__ import annotations

import threading
from pathlib import Path

from e2store.errors import E2StoreError, StoreError
from e2store.query import CorolleStore
from e2store.query.defaults import DUCKDB_ALLOCATOR_ENV as JEMALLOC_CONF  # a worker's setting
from e2store.query.limits import DEFAULT_MEMORY_LIMIT, size_text
from e2store.web.data import (
    SQL_ROWS,
    SQL_SECONDS,
    QueryRefused,
    check_select,
    select_rows,
)

SQL_GRACE = 2.0  # seconds past the time limit before a worker that did not stop is killed
SQL_START_SECONDS = 120.0  # the longest a worker may take to start (imports, views)


class SqlBox:
    """The server's SQL box: `workers` worker processes, one query at a time each, started
    when needed; the server checks the store's files (`CorolleStore.check_files`) and tells
    the worker."""

    def __init__(self, store: CorolleStore, *, seconds: float = SQL_SECONDS,
                 memory_limit: int | None = DEFAULT_MEMORY_LIMIT, workers: int = 1):
        self.store, self.seconds, self.memory_limit = store, seconds, memory_limit
        self._slots = threading.BoundedSemaphore(workers)
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._closed = False

    def run(self, query: str, limit: int = SQL_ROWS) -> dict:
        """`run_sql` in a worker: the same answer, or QueryRefused / StoreError (400), or
        SqlBusy (503) when no worker was free within the time limit."""
        text = check_select(query, limit)
        checked = self.store.check_files(text)
        if not self._slots.acquire(timeout=self.seconds + SQL_GRACE):
            raise SqlBusy(f"the SQL box is busy with other queries (each stops after "
                          f"{self.seconds:g} s): ask again")
        try:
            worker = self._take()
            keep = False
            try:
                answer = worker.ask((text, limit, self.seconds, sorted(checked)),
                                    self.seconds + SQL_GRACE)
                keep = True
            finally:
                self._give(worker, keep)
        finally:
            self._slots.release()
        if answer[0] == "ok":
            return answer[1]
        if answer[0] == "refused":
            raise QueryRefused(answer[1])
        raise StoreError(answer[1])

    def close(self) -> None:
        """Stop the workers (the server's shutdown)."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.stop()

    def _take(self) -> _Worker:
        with self._lock:
            if self._closed:
                raise SqlBusy("the server is shutting down")
            if self._idle:
                return self._idle.pop()
        return _Worker(self.store.root, self.memory_limit)

    def _give(self, worker: _Worker, keep: bool) -> None:
        with self._lock:
            if keep and not self._closed:
                self._idle.append(worker)
                return
        worker.stop()


class SqlBusy(E2StoreError, RuntimeError):
    """The SQL box has no free worker (503: ask again later)."""


class _Worker:
    """A process running SQL box queries (`worker_main`), one at a time: a fresh
    interpreter (no fork of a threaded server, no import of the server's main module),
    talking over a socket pair."""

    def __init__(self, root: Path, memory_limit: int | None):
        import os
        import socket
        import subprocess
        import sys
        from multiprocessing.connection import Connection

        ours, theirs = socket.socketpair()
        env = dict(os.environ)
        env.setdefault(*JEMALLOC_CONF)  # read when the worker's DuckDB starts
        code = "import sys; from e2store.web.sqlbox import worker_main; worker_main(*sys.argv[1:])"
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", code, str(theirs.fileno()), str(root),
                 "" if memory_limit is None else str(memory_limit)],
                pass_fds=[theirs.fileno()], env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())
        try:
            ready = self.conn.recv() if self.conn.poll(SQL_START_SECONDS) else None
        except (EOFError, OSError):
            ready = None
        if ready != ("ready",):
            self.stop()
            why = ready[1] if isinstance(ready, tuple) and len(ready) > 1 else "no answer"
            raise StoreError(f"{root}: the SQL box could not start its worker ({why})")

    def ask(self, request: tuple, seconds: float) -> tuple:
        """Send a query and wait up to `seconds` for its answer; QueryRefused when the
        worker did not answer in time (it is then killed) or died."""
        try:
            self.conn.send(request)
            if not self.conn.poll(seconds):
                self.stop()
                raise QueryRefused(f"the query ran past the time limit of {request[2]:g} s")
            return self.conn.recv()
        except (EOFError, OSError):
            self.stop()
            raise QueryRefused("the query stopped the SQL box's worker (out of memory?): "
                               "ask for less") from None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)
        self.conn.close()


def worker_main(fd: str, root: str, memory_limit: str) -> None:
    """A SQL box worker process (`_Worker`): open the store under the memory limit, cap
    the process's memory, then answer `(query, limit, seconds, checked forms)` requests on
    the socket `fd` with ("ok", answer), ("refused", message) or ("failed", message)
    until it closes."""
    import signal
    from multiprocessing.connection import Connection

    from e2store.query import connect
    from e2store.query.limits import cap_process_memory

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server stops it, not Ctrl-C
    conn = Connection(int(fd))
    limit = int(memory_limit) if memory_limit else None
    try:
        store = connect(root, memory_limit=limit)
        cap_process_memory(limit)
    except BaseException as exc:  # noqa: BLE001 (the server says why)
        conn.send(("failed", str(exc) or type(exc).__name__))
        return
    conn.send(("ready",))
    while True:
        try:
            text, rows, seconds, checked = conn.recv()
        except (EOFError, OSError):
            return
        store.trust_checked(checked)
        try:
            answer: tuple = ("ok", select_rows(store, text, rows, seconds))
        except QueryRefused as exc:
            answer = ("refused", str(exc))
        except E2StoreError as exc:
            answer = ("failed", str(exc))
        except MemoryError:
            answer = ("refused", f"the query needs more memory than the server's limit of "
                                 f"{size_text(limit)}")
        except Exception as exc:  # noqa: BLE001 (a query's failure is the client's answer)
            answer = ("failed", f"query failed: {exc}")
        try:
            conn.send(answer)
        except MemoryError:
            conn.send(("refused", "the result is too large to send: ask for fewer rows"))
        except (OSError, ValueError):
            return
