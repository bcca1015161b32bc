"""Boards you can trust (issue 45): boards files carry a digest of their rows, checked on
every read with a recount of each board; a damaged file is refused, never rewritten as
sound; one writer per boards file; a killed run's temp files are removed by the next write;
workers end with their parent; the store's instance copies are under a digest."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import random_instance
from naive_best import naive_score, unsolvable_pieces

from e2store.boards.table import (
    boards_table,
    make_boards,
    read_boards,
    recount,
    write_boards,
)
from e2store.cli import main
from e2store.errors import DamagedDataError, DamagedStoreError, SolverError
from e2store.files import BusyError, atomic_write_bytes, exclusive_writer, write_table
from e2store.instance.e2sfile import write_e2store
from e2store.instance.model import Instance

ENV = {**os.environ, "E2STORE_PROGRESS_INTERVAL": "60"}
TIMEOUT = 180  # seconds: a process that loads numba, on a machine three times slower


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def random_boards(inst: Instance, k: int, seed: int):
    """k random partial boards of `inst` with their stats counted by the naive scorer."""
    rng = np.random.default_rng(seed)
    n = inst.width * inst.height
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    cells, rows = [], []
    for i in range(k):
        b = np.array([p * 4 + int(rng.integers(4)) for p in rng.permutation(n)])
        b[rng.random(n) < 0.2] = -1
        matched, joins, holes = naive_score(pieces, inst.width, inst.height, b.tolist())
        h = np.array(b).reshape(inst.height, inst.width) >= 0
        pairs = int((h[:, 1:] & h[:, :-1]).sum() + (h[1:] & h[:-1]).sum())
        cells.append(b)
        rows.append({"depth": n - holes, "score": matched, "joins": joins,
                     "mismatches": pairs - matched, "holes": holes, "seed": seed,
                     "restart": i, "nodes": 1000 * i, "seconds": 0.5 * i, "source": "best"})
    return make_boards(n, cells, rows)


@pytest.fixture
def inst() -> Instance:
    return random_instance(5, 5, 3)


def test_recount_agrees_with_the_naive_scorer(inst):
    b = random_boards(inst, 30, 1)
    rc = recount(inst, b.cells)
    assert rc["matched"].tolist() == b.stats["score"].tolist()
    assert rc["holes"].tolist() == b.stats["holes"].tolist()
    assert rc["mismatched"].tolist() == b.stats["mismatches"].tolist()
    assert (rc["problem"] == -1).all()
    twice = b.cells.copy()
    twice[0, 1] = twice[0, 0] = 4 * 7
    assert recount(inst, twice)["problem"][0] >= 0


@pytest.mark.parametrize("suffix", [".parquet", ".arrow"])
def test_bit_flips_are_caught_or_harmless(inst, tmp_path, suffix):
    """Every flipped bit of a boards file: the read refuses it, or gives the very rows
    written (a flip in bytes no reader uses); never other rows."""
    path = tmp_path / f"b{suffix}"
    b = random_boards(inst, 12, 2)
    write_boards(path, inst, b)
    good = path.read_bytes()
    b = read_boards(path, inst)  # as written: with the URLs made on writing
    rng = np.random.default_rng(5)
    caught = same = 0
    for pos in rng.choice(len(good), size=120, replace=False):
        bad = bytearray(good)
        bad[pos] ^= 1 << int(rng.integers(8))
        path.write_bytes(bytes(bad))
        try:
            got = read_boards(path, inst)
        except (SolverError, DamagedDataError):
            caught += 1
            continue
        assert np.array_equal(got.cells, b.cells)
        assert all(np.array_equal(got.stats[k], b.stats[k]) for k in b.stats)
        same += 1
    assert caught + same == 120 and caught >= 30  # IPC pads its buffers: many bytes unused


def test_a_wrong_column_with_a_fresh_digest_is_caught_by_the_recount(inst, tmp_path):
    """A writer that stores scores its boards do not have (the digest then vouches for
    them) is still refused: the scores are recounted from the boards."""
    b = random_boards(inst, 5, 3)
    b.stats["score"] = np.full(5, 40, dtype=np.int32)
    path = tmp_path / "b.parquet"
    write_table(path, boards_table(inst, b))
    read_boards(path)  # the digest alone holds
    with pytest.raises(DamagedDataError, match=r"row 0: score 40, the board shows"):
        read_boards(path, inst)
    r = run("score", _instance_file(inst, tmp_path), path)
    assert r.exit_code == 2 and "damaged boards file" in r.output and "Traceback" not in r.output
    pytest.importorskip("fastapi")
    from e2store.web.boards import boards_page

    with pytest.raises(DamagedDataError):
        boards_page(path, inst)


def _instance_file(inst: Instance, tmp_path: Path) -> Path:
    path = tmp_path / f"{inst.name}.e2s"
    write_e2store(inst, path)
    return path


def test_a_column_of_another_type_is_refused_not_wrapped(inst, tmp_path):
    import pyarrow as pa

    b = random_boards(inst, 3, 4)
    t = boards_table(inst, b)
    i = t.schema.get_field_index("c0")
    wide = t.set_column(i, pa.field("c0", pa.int32()),
                        pa.array([70000, 1, 2], type=pa.int32()))
    path = tmp_path / "b.parquet"
    write_table(path, wide)
    with pytest.raises(DamagedDataError, match="column 'c0' is int32"):
        read_boards(path, inst)
    meta = dict(t.schema.metadata)
    meta[b"width"] = b"abc"
    write_table(path, t.replace_schema_metadata(meta))
    with pytest.raises(DamagedDataError, match="width 'abc'"):
        read_boards(path, inst)
    write_table(path, t.drop_columns(["score"]))
    with pytest.raises(DamagedDataError, match="no column 'score'"):
        read_boards(path, inst)


def test_version_1_files_are_read_with_the_recount(inst, tmp_path):
    b = random_boards(inst, 4, 6)
    t = boards_table(inst, b)
    meta = {k: v for k, v in t.schema.metadata.items() if k != b"rows_sha256"}
    meta[b"version"] = b"1"
    path = tmp_path / "old.parquet"
    write_table(path, t.replace_schema_metadata(meta))
    assert np.array_equal(read_boards(path, inst).cells, b.cells)


@pytest.fixture
def unsolvable(tmp_path) -> Path:
    path = tmp_path / "u.e2s"
    write_e2store(Instance("u", 6, 6, unsolvable_pieces(6, 6, 3)), path)
    return path


BEST = ["--breaks", "20,24,28", "--restart-nodes", 3000, "--no-fill"]


def test_a_damaged_file_is_never_resumed(unsolvable, tmp_path):
    """A resumed `solve --best` refuses a damaged boards file and leaves it as it was."""
    out = tmp_path / "b.parquet"
    assert run("best", unsolvable, *BEST, "--restarts", 2, "-o", out).exit_code == 0
    good = out.read_bytes()
    t = read_boards(out)
    t.stats["score"] = t.stats["score"] + np.eye(1, len(t), dtype=np.int32)[0]
    inst = Instance("u", 6, 6, unsolvable_pieces(6, 6, 3))
    write_table(out, boards_table(inst, t))  # a digest vouching for a wrong score
    damaged = out.read_bytes()
    r = run("best", unsolvable, *BEST, "--restarts", 1, "-o", out)
    assert r.exit_code == 2 and "damaged boards file" in r.output, r.output
    assert out.read_bytes() == damaged != good


def test_one_writer_per_boards_file(unsolvable, tmp_path):
    out = tmp_path / "b.parquet"
    with exclusive_writer(out, "boards file"):
        r = run("best", unsolvable, *BEST, "--restarts", 1, "-o", out)
        assert r.exit_code == 2 and not out.exists()
        assert r.output.count("\n") == 1 and "being written by another run (pid" in r.output
        with pytest.raises(BusyError):
            with exclusive_writer(out):
                pass
    assert run("best", unsolvable, *BEST, "--restarts", 1, "-o", out).exit_code == 0
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".b.parquet")]


def test_a_rerun_does_the_missing_restarts_only(unsolvable, tmp_path):
    """Restarts a killed run left undone (a gap, as two workers leave) are run by the
    rerun; none twice."""
    out = tmp_path / "b.parquet"
    assert run("best", unsolvable, *BEST, "--restarts", 4, "--seed", 3, "-o", out
               ).exit_code == 0
    b = read_boards(out)
    inst = Instance("u", 6, 6, unsolvable_pieces(6, 6, 3))
    keep = [i for i in range(len(b)) if b.stats["restart"][i] != 1]
    write_boards(out, inst, make_boards(36, b.cells[keep], [b.row(i) for i in keep]))
    assert run("best", unsolvable, *BEST, "--restarts", 2, "--seed", 3, "-o", out
               ).exit_code == 0
    again = read_boards(out)
    assert sorted(again.stats["restart"].tolist()) == [0, 1, 2, 3, 4]
    one = again.stats["restart"] == 1
    assert np.array_equal(again.cells[one][0], b.cells[b.stats["restart"] == 1][0])


def test_a_killed_writers_temp_files_are_removed_by_the_next_write(tmp_path):
    target = tmp_path / "x.parquet"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    stale = [tmp_path / f".x.parquet.{dead}.0badc0de.tmp",
             tmp_path / f".x.parquet.{os.getpid()}.1badc0de.tmp",  # lock file free: dead
             tmp_path / f".x.parquet.{os.getpid()}.1badc0de.lock",
             tmp_path / ".x.parquet.ab_12cd9.tmp"]  # an old-style name, an hour old
    for p in stale:
        p.write_bytes(b"partial")
    os.utime(stale[-1], (time.time() - 7200, time.time() - 7200))
    young = tmp_path / ".x.parquet.zz_12cd9.tmp"  # old-style and young: maybe live, kept
    young.write_bytes(b"partial")
    atomic_write_bytes(target, b"data")
    assert target.read_bytes() == b"data"
    assert sorted(p.name for p in tmp_path.iterdir()) == [young.name, "x.parquet"]


def _descendants(pid: int) -> set[int]:
    """The pids of every process below `pid` (from /proc)."""
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d.name))
    out, todo = set(), [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.add(k)
            todo.append(k)
    return out


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc and prctl")
def test_killing_the_parent_ends_its_workers(unsolvable, tmp_path):
    out = tmp_path / "b.parquet"
    p = subprocess.Popen([sys.executable, "-m", "e2store", "best", str(unsolvable),
                          "--breaks", "20,24,28", "--restart-nodes", "3000", "--minutes", "5",
                          "--workers", "2", "--no-fill", "-o", str(out)],
                         env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    try:
        deadline = time.time() + TIMEOUT
        while time.time() < deadline and not (out.exists() and len(_descendants(p.pid)) >= 2):
            time.sleep(0.2)
        kids = _descendants(p.pid)
        assert len(kids) >= 2, "the workers never started"
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        deadline = time.time() + 30
        while time.time() < deadline and any(_alive(k) for k in kids):
            time.sleep(0.2)
        assert not [k for k in kids if _alive(k)]
    finally:
        with __import__("contextlib").suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="kill -9 of a child")
def test_kill_9_during_writes_then_a_rerun(unsolvable, tmp_path):
    """kill -9 at random moments of a run writing boards (tiny restarts: it writes most of
    the time), then a rerun: the file reads (no half-written file), every restart appears
    once, the restarts are 0..n-1, and no temp file is left."""
    out = tmp_path / "b.parquet"
    args = [sys.executable, "-m", "e2store", "best", str(unsolvable), "--breaks",
            "20,24,28", "--restart-nodes", "200", "--seed", "5", "-o", str(out)]
    rng = np.random.default_rng(11)
    for delay in rng.uniform(0.0, 1.0, 2):
        p = subprocess.Popen([*args, "--minutes", "5"], env=ENV, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        deadline = time.time() + TIMEOUT
        while time.time() < deadline and not out.exists():
            time.sleep(0.05)
        time.sleep(float(delay))
        p.kill()
        p.wait()
    r = subprocess.run([*args, "--restarts", "3", "--json"], env=ENV, capture_output=True,
                       text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    b = read_boards(out)
    keys = list(zip(b.stats["restart"].tolist(), b.stats["source"].tolist(), strict=True))
    assert len(keys) == len(set(keys))
    restarts = sorted({k for k, _ in keys})
    assert restarts == list(range(len(restarts))) and len(restarts) >= 4
    assert json.loads(r.stdout)["restarts"] == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.parquet", "u.e2s"]


def test_instance_copies_are_under_a_digest(tmp_path):
    """Flipped bits in the store's instance copy: `verify` reports every one, and no read
    gives another instance (a flip the pieces do not see leaves the same instance)."""
    import e2store

    inst = random_instance(4, 4, 2)
    piece_file = _instance_file(inst, tmp_path)
    store = tmp_path / "s"
    assert run("enumerate", piece_file, "--hamming", 1, "--store", store, "--form",
               "flat").exit_code == 0
    copy = store / "instances" / f"{inst.id}.e2s"
    manifest = json.loads((store / "manifest.json").read_text())
    assert set(manifest["instances"]) == {inst.id}
    good = copy.read_bytes()
    rng = np.random.default_rng(3)
    for pos in rng.choice(len(good), size=20, replace=False):
        bad = bytearray(good)
        bad[pos] ^= 1 << int(rng.integers(8))
        copy.write_bytes(bytes(bad))
        r = run("verify", "--store", store)
        assert r.exit_code == 1 and "instances/" in r.output, r.output
        try:
            with e2store.connect(store) as st:
                got = st.instance(inst.id)
        except DamagedStoreError as e:
            assert "damaged instance copy" in str(e)
        else:
            assert np.array_equal(got.pieces, inst.pieces) and got.id == inst.id
    copy.write_bytes(good.replace(b"# e2store", b"# E2store", 1))  # only the bytes differ
    r = run("verify", "--store", store, "--repair")
    assert r.exit_code == 0 and "rewrote instances/" in r.output, r.output
    assert copy.read_bytes() == good
    shutil.rmtree(store / "instances")
    r = run("verify", "--store", store)
    assert r.exit_code == 1 and "missing" in r.output
