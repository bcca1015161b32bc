"""The boards dataset of `e2store solve --best -o DIR` (issue 48): one part per restart,
written once and never rewritten; the boards of the file form; a rerun running only the
missing restarts; a `kill -9` then a rerun giving an unbroken run's boards; `sql --boards`
counting what the library reads; a damaged part refused in one line naming it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from naive_best import unsolvable_pieces

from e2store.boards.dataset import (
    SCRATCH,
    boards_sink,
    dataset_parts,
    is_dataset_target,
    part_name,
    read_boards_dataset,
)
from e2store.boards.table import read_boards
from e2store.cli import main
from e2store.errors import DamagedDataError, SolverError
from e2store.files import BusyError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.instance.model import Instance
from e2store.solver.best import solve_best

RUN = {"breaks": "20,24,28,30,32", "restart_nodes": 20000,
       "finish": False}  # two rows a restart (the finish: tests/test_best_finish.py)
SAME = ("depth", "score", "joins", "mismatches", "holes", "seed", "restart", "nodes",
        "source", "url")  # every column but when it was found and how long it took


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def inst(tmp_path) -> Instance:
    write_e2store(Instance("u", 6, 6, unsolvable_pieces(6, 6, 3)), tmp_path / "u.e2s")
    return read_instance(tmp_path / "u.e2s")


def rows(b, order=None) -> list[tuple]:
    """Each row's board and stats but `found` and `seconds`, in (seed, restart, row) order
    unless `order` is given."""
    out = [(tuple(b.cells[i].tolist()), *(b.stats[k][i] for k in SAME)) for i in range(len(b))]
    return out if order is None else [out[i] for i in order]


def by_restart(b) -> list[tuple]:
    return rows(b, np.lexsort((np.arange(len(b)), b.stats["restart"], b.stats["seed"])))


def test_what_names_a_dataset(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_bytes(b"")
    assert is_dataset_target(tmp_path / "d") and is_dataset_target(f"{tmp_path}/new/")
    assert is_dataset_target(tmp_path / "campaign")  # no suffix, not there
    assert not is_dataset_target(tmp_path / "f")  # an existing file, whatever its name
    for name in ("b.parquet", "b.arrow", "b.pq"):
        assert not is_dataset_target(tmp_path / name)
    write_e2store(Instance("u", 6, 6, unsolvable_pieces(6, 6, 3)), tmp_path / "u.e2s")
    r = cli("solve", tmp_path / "u.e2s", "-o", f"{tmp_path}/sols/")  # the exact search
    assert r.exit_code == 2 and "a directory is a boards dataset of --best" in r.output


def test_a_part_per_restart_never_rewritten(inst, tmp_path):
    out = tmp_path / "ds"
    d = solve_best(inst, f"{out}/", restarts=3, **RUN)
    assert d["boards_dataset"] and d["arm"] == "default" and d["restarts"] == 3
    parts = dataset_parts(out)
    assert [(p.arm, p.seed, p.restart, p.path.name) for p in parts] == [
        ("default", 0, k, part_name(0, k)) for k in range(3)]
    assert part_name(0, 2) == "part-s0-r000000002.parquet"
    before = {p.path: (p.path.read_bytes(), p.path.stat().st_mtime_ns) for p in parts}
    for p in parts:  # each part a complete boards file of its restart's two rows
        b = read_boards(p.path, inst)
        assert list(b.stats["source"]) == ["best", "filled"]
        assert set(b.stats["restart"]) == {p.restart}
    time.sleep(0.01)
    assert solve_best(inst, out, restarts=3, **RUN)["restarts"] == 3
    assert [p.restart for p in dataset_parts(out)] == list(range(6))
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in before} == before
    assert os.listdir(out / "arm=default" / SCRATCH) == []  # no temp file left
    assert sorted(os.listdir(out / "arm=default")) == [SCRATCH] + [
        part_name(0, k) for k in range(6)]  # and no lock


def test_the_dataset_holds_the_file_forms_boards(inst, tmp_path):
    a = solve_best(inst, tmp_path / "f.parquet", restarts=4, seed=5, **RUN)
    b = solve_best(inst, tmp_path / "ds", restarts=4, seed=5, **RUN)
    assert {k: v for k, v in a.items() if k not in ("seconds", "nodes_per_second",
                                                    "boards_file")} == {
        k: v for k, v in b.items() if k not in ("seconds", "nodes_per_second", "boards_file",
                                                "boards_dataset", "arm")}
    f = read_boards(tmp_path / "f.parquet", inst)
    d = read_boards_dataset(tmp_path / "ds", inst)
    assert len(f) == len(d.boards) == 8 and len(d.parts) == 4 and set(d.arms) == {"default"}
    assert by_restart(f) == rows(d.boards)
    assert d.table.num_rows == 8 and d.table.column_names[-1] == "arm"


def test_a_rerun_runs_only_the_missing_restarts(inst, tmp_path):
    whole = tmp_path / "whole"
    solve_best(inst, whole, restarts=5, fill=False, **RUN)
    out = tmp_path / "ds"
    solve_best(inst, out, restarts=5, fill=False, **RUN)
    for k in (1, 3):
        (out / "arm=default" / part_name(0, k)).unlink()
    d = solve_best(inst, out, restarts=2, fill=False, **RUN)
    assert d["restarts"] == 2  # restarts 1 and 3, the missing ones
    assert [p.restart for p in dataset_parts(out)] == list(range(5))
    assert rows(read_boards_dataset(out, inst).boards) == rows(
        read_boards_dataset(whole, inst).boards)
    # arms and seeds are apart: another seed, another arm each start at restart 0
    solve_best(inst, out, restarts=1, seed=7, fill=False, **RUN)
    solve_best(inst, out, restarts=2, arm="b", fill=False, **RUN)
    assert [(p.arm, p.seed, p.restart) for p in dataset_parts(out)] == [
        ("b", 0, 0), ("b", 0, 1), *(("default", 0, k) for k in range(5)), ("default", 7, 0)]
    with pytest.raises(SolverError, match="arm"):
        solve_best(inst, out, restarts=1, arm="../x", **RUN)
    with pytest.raises(SolverError, match="boards file"):
        solve_best(inst, tmp_path / "f.parquet", restarts=1, arm="b", **RUN)


def test_one_writer_per_arm_and_seed(inst, tmp_path):
    out = tmp_path / "ds"
    with boards_sink(out, inst, 0) as sink:
        assert sink.done == set()
        with pytest.raises(BusyError, match="seed of a boards dataset"):
            with boards_sink(out, inst, 0):
                pass
        with boards_sink(out, inst, 1), boards_sink(out, inst, 0, arm="b"):
            pass  # another seed, another arm: written beside it
    other = Instance("v", 6, 6, unsolvable_pieces(6, 6, 4))
    solve_best(inst, out, restarts=1, fill=False, **RUN)
    with pytest.raises(SolverError, match="holds boards of instance"):
        solve_best(other, out, restarts=1, seed=2, **RUN)


def test_killed_writers_temp_files_are_removed(inst, tmp_path):
    out = tmp_path / "ds"
    solve_best(inst, out, restarts=1, fill=False, **RUN)
    scratch = out / "arm=default" / SCRATCH
    dead = scratch / f".{part_name(0, 9)}.999999999.0123abcd.tmp"  # no lock, no such pid
    dead.write_bytes(b"half a part")
    solve_best(inst, out, restarts=1, fill=False, **RUN)  # restart 1: not the dead one's
    assert os.listdir(scratch) == []


def _kill_test_args(tmp_path) -> list[str]:
    path = tmp_path / "k.e2s"
    write_e2store(Instance("k", 8, 8, unsolvable_pieces(8, 8, 5)), path)
    return [sys.executable, "-m", "e2store", "best", str(path), "--breaks",
            "40,45,50", "--restart-nodes", "500000", "--no-fill", "--json"]


def test_kill_9_then_a_rerun_gives_an_unbroken_runs_boards(tmp_path):
    """A run killed with SIGKILL while it writes parts, then rerun for the restarts it
    did not end: the same (seed, restart) set and boards as an unbroken run, no temp
    file left."""
    args, n = _kill_test_args(tmp_path), 30
    env = {**os.environ, "E2STORE_PROGRESS_INTERVAL": "60"}
    out = tmp_path / "ds"
    p = subprocess.Popen([*args, "--restarts", str(n), "-o", str(out)], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    inst = read_instance(tmp_path / "k.e2s")
    deadline = time.monotonic() + 300  # room for a slow machine: compiling, then restarts
    while time.monotonic() < deadline and p.poll() is None:
        if (out / "arm=default").is_dir() and len(dataset_parts(out)) >= 3:
            break
        time.sleep(0.01)
    p.send_signal(signal.SIGSTOP)  # frozen where it is (a part half made, maybe): a busy
    # machine's read would otherwise outlast the run
    assert len(read_boards_dataset(out, inst).boards) >= 3  # read while the run writes
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=60)
    done = len(dataset_parts(out))
    assert 3 <= done < n, (done, p.returncode)  # killed in the middle
    rerun = subprocess.run([*args, "--restarts", str(n - done), "-o", str(out)], env=env,
                           capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    whole = subprocess.run([*args, "--restarts", str(n), "-o", str(tmp_path / "whole")],
                           env=env, capture_output=True, text=True, timeout=600)
    assert whole.returncode == 0, whole.stderr
    assert [(p.seed, p.restart) for p in dataset_parts(out)] == [(0, k) for k in range(n)]
    assert rows(read_boards_dataset(out, inst).boards) == rows(
        read_boards_dataset(tmp_path / "whole", inst).boards)
    assert os.listdir(out / "arm=default" / SCRATCH) == []
    assert not [f for f in os.listdir(out / "arm=default") if f.endswith(".lock")]


def test_sql_counts_what_the_library_reads(inst, tmp_path):
    out = tmp_path / "ds"
    solve_best(inst, out, restarts=3, **RUN)
    solve_best(inst, out, restarts=2, arm="quota", seed=4, fill=False, **RUN)
    d = read_boards_dataset(out)  # without the instance: no recount, the digests checked
    want: dict[tuple, int] = {}
    for arm, s, sc in zip(d.arms, d.boards.stats["source"], d.boards.stats["score"],
                          strict=True):
        want[(arm, s, int(sc))] = want.get((arm, s, int(sc)), 0) + 1
    r = cli("sql", "--boards", out, "SELECT arm, source, score, count(*) AS n FROM boards "
            "GROUP BY ALL ORDER BY ALL", "--json")
    assert r.exit_code == 0, r.output
    got = {(x["arm"], x["source"], x["score"]): x["n"]
           for x in map(json.loads, r.stdout.splitlines())}
    assert got == want and sum(got.values()) == 8
    r = cli("sql", "--boards", out, "SELECT count(*) FROM read_parquet('"
            f"{out}/*/*.parquet')")  # the sandbox: no file is read by a query
    assert r.exit_code != 0 and "disabled" in r.output
    r = cli("sql", "--boards", out, "--store", out, "SELECT 1")
    assert r.exit_code == 2 and "not both" in r.output


def _rewrite(path: Path, change) -> None:
    """Rewrite a part with `change(table)` applied, its metadata (and digest) kept."""
    t = pq.read_table(path)
    pq.write_table(change(t).replace_schema_metadata(t.schema.metadata), path)


def test_a_damaged_part_is_refused_in_one_line(inst, tmp_path):
    out = tmp_path / "ds"
    solve_best(inst, out, restarts=4, **RUN)
    part = out / "arm=default" / part_name(0, 2)
    good = part.read_bytes()

    def one_line(exc_type, match):
        with pytest.raises(exc_type, match=match) as e:
            read_boards_dataset(out, inst)
        assert part.name in str(e.value) and "\n" not in str(e.value)
        for args in (("sql", "--boards", out, "SELECT count(*) FROM boards"),
                     ("score", tmp_path / "u.e2s", out)):
            r = cli(*args)
            assert r.exit_code == 2 and part.name in r.output, r.output
            assert len(r.output.strip().splitlines()) == 1, r.output

    _rewrite(part, lambda t: t.set_column(0, "c0", pa.array(  # a changed value
        [int(v) ^ 4 for v in t.column("c0").to_pylist()], pa.int16())))
    one_line(DamagedDataError, "digest")
    part.write_bytes(good[: len(good) // 2])  # cut: not a Parquet file any more
    one_line(SolverError, "not a boards file, or a damaged one")
    part.write_bytes(good)
    assert len(read_boards_dataset(out, inst).boards) == 8
    (out / "arm=default" / part_name(0, 7)).write_bytes(good)  # a part renamed
    part = out / "arm=default" / part_name(0, 7)
    one_line(DamagedDataError, "its name says")


def test_bit_flips_in_a_part_never_give_other_rows(inst, tmp_path):
    """Every byte a flip changes either leaves the rows as written (a byte no reader
    uses) or is an error naming the part: never other rows."""
    out = tmp_path / "ds"
    solve_best(inst, out, restarts=2, **RUN)
    ref = rows(read_boards_dataset(out, inst).boards)
    part = out / "arm=default" / part_name(0, 1)
    good = part.read_bytes()
    rng = np.random.default_rng(3)
    caught = 0
    for pos in rng.choice(len(good), 60, replace=False):
        bad = bytearray(good)
        bad[pos] ^= 1 << int(rng.integers(8))
        part.write_bytes(bytes(bad))
        try:
            got = rows(read_boards_dataset(out, inst).boards)
        except (DamagedDataError, SolverError) as e:
            assert part.name in str(e), str(e)
            caught += 1
            continue
        assert got == ref
    assert caught > 0


def test_a_later_read_reads_only_the_new_parts(inst, tmp_path):
    """`since`: the parts read before are not read again, and the rows are those of a
    fresh read, in (arm, seed, restart) order (what `serve --boards DIR` does)."""
    out = tmp_path / "ds"
    solve_best(inst, out, restarts=2, seed=1, **RUN)
    first = read_boards_dataset(out, inst)
    solve_best(inst, out, restarts=2, seed=0, **RUN)  # parts before and after the first
    solve_best(inst, out, restarts=1, arm="a", fill=False, **RUN)
    later = read_boards_dataset(out, inst, since=first)
    fresh = read_boards_dataset(out, inst)
    assert [p[:3] for p in later.parts] == [p[:3] for p in fresh.parts] == [
        ("a", 0, 0), ("default", 0, 0), ("default", 0, 1), ("default", 1, 0), ("default", 1, 1)]
    assert rows(later.boards) == rows(fresh.boards) and list(later.arms) == list(fresh.arms)
    assert later.table.to_pylist() == fresh.table.to_pylist()
    assert read_boards_dataset(out, inst, since=later) is later  # nothing new
    _rewrite(first.parts[0].path, lambda t: t.set_column(0, "c0", pa.array(
        [int(v) ^ 4 for v in t.column("c0").to_pylist()], pa.int16())))
    assert len(read_boards_dataset(out, inst, since=later).boards) == 9  # not read again
    with pytest.raises(DamagedDataError):
        read_boards_dataset(out, inst)


def test_score_and_render_take_a_dataset(inst, tmp_path):
    out = tmp_path / "ds"
    solve_best(inst, out, restarts=2, **RUN)
    solve_best(inst, out, restarts=1, arm="b", seed=3, **RUN)
    d = read_boards_dataset(out, inst)
    r = cli("score", tmp_path / "u.e2s", out, "--json")
    assert r.exit_code == 0, r.output
    scores = [json.loads(line)["score"] for line in r.stdout.splitlines()]
    assert scores == list(d.boards.stats["score"]) and len(scores) == 6
    r = cli("render", "board", tmp_path / "u.e2s", "--best", out, "-o", tmp_path / "b.svg")
    assert r.exit_code == 0, r.output
    assert "the best: filled" in r.output and (tmp_path / "b.svg").stat().st_size > 0
