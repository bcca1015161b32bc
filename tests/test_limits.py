"""Resource limits (issue 39, "bound every request"): `e2store sql` and the query handle
stop a query at their time and memory limits and on Ctrl-C with one line; a table
function reaching the data views by a computed name meets the same file check as a query
naming them; `e2store serve` answers hostile parameters with a 4xx within its bounds,
never a 500, its memory flat, and runs the SQL box's queries in a capped worker process.

Subprocesses have timeouts with room for a machine three times slower than the author's."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import naive
import pytest
from click.testing import CliRunner

import e2store
from e2store import store
from e2store.cli import main
from e2store.errors import StoreError
from e2store.instance.model import Instance
from e2store.query import handle
from e2store.query.limits import DEFAULT_MEMORY_LIMIT, QueryLimitError

SLOW = ("SELECT count(*) FROM range(100000000) a, range(100000000) b "
        "WHERE a.range * 7 = b.range * 3")  # a hash join DuckDB interrupts between vectors
STREAM = "SELECT * FROM range(100000000000) WHERE range % 10000007 = 0"  # rows, now and then
HUGE = "SELECT length(repeat('x', 3000000000))"  # one 3 GB value, outside DuckDB's limit
E2STORE = [sys.executable, "-m", "e2store"]


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("limits") / "store"
    inst = Instance("lim", 5, 4, naive.random_board_pieces(5, 4, 3, 5, 39))
    store.enumerate_store(root, inst, 1, None, forms=("flat", "cartesian"))
    return root


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_the_cli_reads_the_library_defaults():
    from e2store.cli import options, query
    from e2store.query.defaults import DUCKDB_ALLOCATOR_ENV

    limit = next(p for p in query.sql.params if p.name == "memory_limit")
    assert options.parse_bytes(limit.default) == DEFAULT_MEMORY_LIMIT
    assert options.DUCKDB_ALLOCATOR_ENV is DUCKDB_ALLOCATOR_ENV
    r = CliRunner().invoke(main, ["sql", "--store", "x", "SELECT 1", "--memory-limit", "1K"])
    assert r.exit_code == 2 and "too little" in r.output
    try:
        from e2store.web.sqlbox import JEMALLOC_CONF
    except ImportError:  # no web extra
        return
    assert JEMALLOC_CONF is DUCKDB_ALLOCATOR_ENV


def test_time_limit_stops_a_query_with_one_line(root):
    """The handle's time limit interrupts a query (table or stream) and the handle runs the
    next one; `e2store sql --seconds` says so in one line, exit 2."""
    with e2store.connect(root, seconds=0.5) as st:
        for stream in (False, True):
            t = time.monotonic()
            with pytest.raises(QueryLimitError, match="time limit of 0.5 s") as err:
                reader = st.sql(SLOW if not stream else STREAM, stream=stream)
                for _ in reader:
                    pass
            assert err.value.kind == "time" and time.monotonic() - t < 6
        assert st.sql("SELECT 42 AS x").to_pylist() == [{"x": 42}]
        assert st.sql("SELECT 10 AS n", seconds=None).to_pylist() == [{"n": 10}]
    t = time.monotonic()
    r = CliRunner().invoke(main, ["sql", "--store", str(root), "--seconds", "1", SLOW])
    assert r.exit_code == 2 and time.monotonic() - t < 10, r.output
    [line] = _lines(r.output)
    assert line.startswith("e2store: error:") and "time limit of 1 s" in line
    assert "--seconds" in line


def test_memory_limit_refuses_what_duckdb_holds(root):
    """DuckDB's memory limit: a query holding more is one line naming the flag, exit 2."""
    q = "SELECT list(range) FROM range(300000000)"
    r = CliRunner().invoke(main, ["sql", "--store", str(root), "--memory-limit", "256M", q])
    assert r.exit_code == 2, r.output
    [line] = _lines(r.output)
    assert "more memory than its limit of 256 MiB" in line and "--memory-limit" in line
    with e2store.connect(root, memory_limit=256 << 20) as st:
        with pytest.raises(QueryLimitError) as err:
            st.sql(q)
        assert err.value.kind == "memory"
        assert st.sql("SELECT current_setting('memory_limit') AS m").column(0)[0].as_py() in (
            "256.0 MiB", "256 MiB")


def _peak_rss(proc: subprocess.Popen, timeout: float) -> int:
    """Poll a process's resident memory until it ends; its peak in bytes."""
    import psutil

    peak, end = 0, time.monotonic() + timeout
    ps = psutil.Process(proc.pid)
    while proc.poll() is None:
        assert time.monotonic() < end, "the command did not stop"
        try:
            peak = max(peak, ps.memory_info().rss)
        except psutil.Error:
            break
        time.sleep(0.01)
    return peak


def test_one_huge_value_is_refused_at_once(root):
    """`repeat('x', 3e9)` builds its value outside DuckDB's buffer manager: the process cap
    of `e2store sql` refuses it at once (unbounded, it takes 6 GB and 40 s)."""
    pytest.importorskip("psutil")
    t = time.monotonic()
    proc = subprocess.Popen([*E2STORE, "sql", "--store", str(root), "--memory-limit", "1G",
                             HUGE], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = _peak_rss(proc, 60)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 2, err
    [line] = _lines(err.decode())
    assert "more memory than its limit of 1 GiB" in line and "--memory-limit" in line
    assert peak < 1 << 30 and time.monotonic() - t < 30


def _sockets(pid: int) -> int:
    """Sockets the process holds open (a descriptor closed while they are listed is not)."""
    n = 0
    for f in Path(f"/proc/{pid}/fd").iterdir():
        try:
            n += os.readlink(f).startswith("socket:")
        except FileNotFoundError:
            pass
    return n


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux's /proc")
def test_ctrl_c_stops_a_running_query(root):
    """SIGINT while DuckDB runs a query that streams rows now and then (DuckDB's own check
    of Python's signals waits for the next batch): stopped within seconds, one line,
    exit 130."""
    proc = subprocess.Popen(
        [*E2STORE, "sql", "--store", str(root), "--seconds", "0", STREAM],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        end = time.monotonic() + 60
        while _sockets(proc.pid) == 0:  # the Ctrl-C watcher is set: the query runs
            assert proc.poll() is None and time.monotonic() < end, proc.communicate()
            time.sleep(0.05)
        time.sleep(0.5)
        t = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
        stopped = time.monotonic() - t
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    [line] = _lines(err.decode())
    assert line == "e2store: error: interrupted (Ctrl-C): the query was stopped"
    assert stopped < 6 and b"Traceback" not in err


def _damaged_copy(root: Path, tmp_path: Path) -> Path:
    """A copy of the store with one byte of a flat file changed (its hash no longer the
    record's)."""
    copy = tmp_path / "damaged"
    shutil.copytree(root, copy)
    victim = max(copy.glob("flat/**/*.parquet"), key=lambda p: p.stat().st_size)
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x10
    victim.write_bytes(bytes(data))
    return copy


@pytest.mark.parametrize("query", [
    "SELECT count(*) AS n FROM query_table('coro' || 'lles')",
    "SELECT count(*) AS n FROM query('SELECT * FROM ' || 'coro' || 'lles')",
    "SELECT count(*) AS n FROM query_table(lower('COROLLES'))",
])
def test_computed_names_meet_the_file_check(root, tmp_path, monkeypatch, query):
    """A table function reaching `corolles` by a computed name reads the same rows on a
    clean store, and on a damaged one meets the hash check a query naming `corolles`
    meets: caught by name (`query_table`, `query`), and without that by the views, which
    read nothing before the check (the prefilter switched off here)."""
    with e2store.connect(root) as st:
        want = st.sql("SELECT count(*) AS n FROM corolles").to_pylist()
    with e2store.connect(root) as st:
        assert st.sql(query).to_pylist() == want
    bad = _damaged_copy(root, tmp_path)
    for prefilter in (True, False):
        if not prefilter:
            monkeypatch.setattr(handle, "_NAME_FUNCTIONS", re.compile(r"(?!)"))
        with e2store.connect(bad) as st:
            assert st.sql("SELECT count(*) AS n FROM manifest").num_rows == 1
            with pytest.raises(StoreError, match="SHA-256") as err:
                st.sql(query)
            assert not isinstance(err.value, QueryLimitError)
            cur = st.cursor()  # a cursor shares the store's checks and sandbox
            with pytest.raises(StoreError, match="SHA-256"):
                cur.sql(query)
            cur.close()
    r = CliRunner().invoke(main, ["sql", "--store", str(bad), query])
    assert r.exit_code == 2 and len(_lines(r.output)) == 1, r.output


# -- serve ------------------------------------------------------------------------------
def _hostile(iid: str) -> list[tuple[str, dict]]:
    big = "9" * 5000
    cells = f"/api/instances/{iid}/cells/1/1/corolles"
    return [
        (f"/api/instances/{iid}", {"hamming": 99999999999}),
        (f"/api/instances/{iid}", {"hamming": -5}),
        (f"/instances/{iid}", {"hamming": 40}),
        ("/api/instances/%00", {}),
        ("/api/instances/..%2F..%2Fetc%2Fpasswd", {}),
        (f"/api/instances/{iid}/cells/{big}/1", {}),
        (f"/api/instances/{iid}/cells/-1/0", {}),
        (cells, {"offset": -1}),
        (cells, {"offset": 10 ** 30}),
        (cells, {"offset": 2 ** 60}),
        (cells, {"hamming": 10 ** 12}),
        (cells, {"size": 10 ** 9}),
        (cells, {"slot": 10 ** 30, "placement": 1}),
        (cells, {"slot": 1, "placement": -(10 ** 20)}),
        (cells, {"without": big}),
        (cells, {"without": "\u00b2,\u0663"}),  # digits int() reads, not ASCII
        (cells, {"without": " ".join(["999"] * 12000)}),
        (f"/instances/{iid}/cells/1/1/corolles", {"slot": big, "placement": "1"}),
        ("/api/tables", {"form": "x" * 5000}),
        ("/tables", {"form": "../etc"}),
        ("/results/files/%00", {}),
        ("/results/files/" + "a/" * 3000 + "x.csv", {}),
        ("/results/files/" + "b" * 5000 + ".csv", {}),
        ("/results/files/..%2F..%2Fsecret.csv", {}),
        ("/api/sql", {"q": "SELECT 1", "limit": 10 ** 30}),
        ("/api/sql", {"q": "SELECT " + "1+" * 12000 + "1"}),
        ("/api/sql", {"q": "SELECT 1; SELECT 2"}),
        ("/api/sql", {"q": "PRAGMA version"}),
        ("/api/sql", {"q": "SELECT * FROM read_text('/etc/passwd')"}),
        ("/nowhere/" + "x/" * 500, {}),
    ]


@pytest.fixture(scope="module")
def served(root, tmp_path_factory):
    pytest.importorskip("fastapi", reason="the web extra is not installed")
    pytest.importorskip("fastapi.testclient", reason="httpx (FastAPI's test client) missing")
    from fastapi.testclient import TestClient

    from e2store.web.app import create_app

    results = tmp_path_factory.mktemp("results")
    (results / "t.csv").write_text("a\n1\n")
    (results.parent / "secret.csv").write_text("s\n1\n")
    iid = store.read_manifest(root)["partitions"][0]["instance"]
    app = create_app(root, results=results, sql_seconds=1.0, memory_limit=512 << 20)
    with TestClient(app) as client:
        yield client, iid


def test_serve_answers_hostile_parameters_with_4xx_memory_flat(served):
    """Every hostile request is a 4xx within a second or so, never a 500; the server's
    memory stays flat over rounds of them (the bounded caches included)."""
    import psutil

    client, iid = served
    hostile = _hostile(iid)
    me = psutil.Process()
    rss = []
    for _ in range(4):
        for path, params in hostile:
            t = time.monotonic()
            r = client.get(path, params=params)
            assert 400 <= r.status_code < 500, (path, params, r.status_code, r.text[:300])
            assert "Traceback" not in r.text and time.monotonic() - t < 15, path
        for k in range(50):  # filters the browser keeps a total of
            r = client.get(f"/api/instances/{iid}/cells/1/1/corolles",
                           params={"without": str(k % 20), "size": 1})
            assert r.status_code == 200
        rss.append(me.memory_info().rss)
    assert rss[-1] - rss[1] < 64 << 20, [x >> 20 for x in rss]
    assert client.get("/api/summary").status_code == 200  # still serving


@pytest.mark.parametrize("query, words", [
    (SLOW, "time limit of 1 s"),
    (HUGE, "more memory than the server's limit of 512 MiB"),
    ("SELECT length(repeat('x', 400000000))", "time limit of 1 s"),  # not interruptible
    ("SELECT repeat(repeat('x', 10000), 4000) AS big", "over 32 MiB"),
])
def test_serve_bounds_heavy_sql(served, query, words):
    """The SQL box's query runs in a worker process: past the time limit it is refused
    (interrupted, or the worker killed soon after when one value takes that long), past
    the memory limit refused at once, a result over 32 MiB refused; the server's own
    memory does not move, and the worker's peak stays near its limit."""
    import psutil

    client, _ = served
    me = psutil.Process()
    before = me.memory_info().rss
    t = time.monotonic()
    r = client.get("/api/sql", params={"q": query})
    assert r.status_code == 400 and words in r.json()["error"], r.text
    assert time.monotonic() - t < 20
    assert me.memory_info().rss - before < 64 << 20
    for child in me.children(recursive=True):
        status = Path(f"/proc/{child.pid}/status")
        if status.exists() and "e2store.web.sqlbox" in " ".join(child.cmdline()):
            peak = int(re.search(r"VmHWM:\s+(\d+)", status.read_text()).group(1)) << 10
            assert peak < 2 << 30
    assert client.get("/api/sql", params={"q": "SELECT * FROM duckdb_settings()"}
                      ).status_code == 200  # the box still answers (values as JSON)
