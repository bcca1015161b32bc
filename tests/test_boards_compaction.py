"""Compaction of a boards dataset (issue 48): a seed's parts merged into compacted files of
many restarts, every part checked first; the dataset reads the same rows in the same order
before and after, a run resumed after it repeats no restart, a seed a run writes is left
alone, a killed compaction's leftover parts are read once and removed by the next one, a
read racing a compaction reads every restart once, and the command equals the library."""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from naive_best import unsolvable_pieces

import e2store.boards.compact as compaction
import e2store.boards.parts as layout
import e2store.boards.read as reading
from e2store.boards.dataset import (
    COMPACTED,
    SCRATCH,
    boards_sink,
    compact_boards_dataset,
    compact_name,
    dataset_parts,
    part_name,
    read_boards_dataset,
)
from e2store.boards.schema import BOARD_STATS, DIGEST_KEY
from e2store.boards.table import Boards, read_boards, rows_digest
from e2store.campaign import restarts_left
from e2store.cli import main
from e2store.errors import DamagedDataError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.instance.model import Instance
from e2store.solver.best import solve_best

RUN = {"breaks": "20,24,28,30,32", "restart_nodes": 5000, "kernel": "generic"}


@pytest.fixture
def inst(tmp_path) -> Instance:
    write_e2store(Instance("u", 6, 6, unsolvable_pieces(6, 6, 3)), tmp_path / "u.e2s")
    return read_instance(tmp_path / "u.e2s")


@pytest.fixture
def dataset(inst, tmp_path) -> Path:
    """Two arms, three seeds: 5 + 3 restarts in arm default (seeds 0 and 3), 2 in arm b;
    made once per session and copied (the search is the slow part)."""
    out = tmp_path / "ds"
    made = _MADE.get("ds")
    if made is None or not made.exists():
        made = tmp_path / "made"
        solve_best(inst, made, restarts=5, **RUN)
        solve_best(inst, made, restarts=3, seed=3, **RUN)
        solve_best(inst, made, restarts=2, arm="b", fill=False, **RUN)
        _MADE["ds"] = made
    shutil.copytree(made, out)
    return out


_MADE: dict[str, Path] = {}


def everything(d) -> tuple:
    """A read's rows (every column), arms, restarts and counts, comparable with ==."""
    b = d.boards
    return ([tuple(b.cells[i].tolist()) + tuple(b.row(i).values()) for i in range(len(b))],
            list(d.arms), [p[:3] for p in d.parts], d.counts.tolist())


def names(out: Path) -> list[str]:
    return sorted(str(p.relative_to(out)) for p in out.glob("arm=*/*.parquet"))


def test_compaction_keeps_every_row_in_order(inst, dataset):
    before = read_boards_dataset(dataset, inst)
    r = compact_boards_dataset(dataset, inst, min_parts=1, max_restarts=3)
    assert [(c["arm"], c["seed"], c["parts"], c["file"]) for c in r["compacted"]] == [
        ("b", 0, 2, compact_name(0, 0, 1, 2)),
        ("default", 0, 3, compact_name(0, 0, 2, 3)),  # 5 restarts, at most 3 a file
        ("default", 0, 2, compact_name(0, 3, 4, 2)),
        ("default", 3, 3, compact_name(3, 0, 2, 3))]
    assert r["parts_removed"] == 10 and r["skipped"] == [] and r["recounted"]
    assert names(dataset) == sorted(f"arm={c['arm']}/{c['file']}" for c in r["compacted"])
    after = read_boards_dataset(dataset, inst)
    assert everything(after) == everything(before)
    assert after.table.to_pylist() == before.table.to_pylist()
    assert [p[:3] for p in dataset_parts(dataset)] == [p[:3] for p in before.parts]
    assert all(p.compacted and p.path.name.startswith("compact-") for p in after.parts)
    for c in r["compacted"]:  # each a complete boards file, rows in (restart, source) order
        b = read_boards(dataset / f"arm={c['arm']}" / c["file"], inst)
        assert len(b) == c["rows"] and list(b.stats["restart"]) == sorted(b.stats["restart"])
    assert (dataset / "arm=default" / COMPACTED).is_file()
    assert list((dataset / "arm=default" / SCRATCH).iterdir()) == []
    # other tools read a compacted dataset as before: each board once
    n = duckdb.sql(f"SELECT count(*) FROM read_parquet('{dataset}/*/*.parquet', "
                   f"hive_partitioning = true)").fetchall()[0][0]
    assert n == len(before.boards) == 26  # (5 + 3) restarts x 3 rows, 2 x 1 unfilled
    # nothing left to compact: a second run writes nothing
    again = compact_boards_dataset(dataset, inst, min_parts=1)
    assert again["compacted"] == [] and again["parts_removed"] == 0
    assert everything(read_boards_dataset(dataset, inst)) == everything(before)


def test_a_seed_with_fewer_parts_than_min_parts_is_left(inst, dataset):
    r = compact_boards_dataset(dataset, min_parts=4, arm="default")
    assert [(c["seed"], c["parts"]) for c in r["compacted"]] == [(0, 5)]
    assert [(s["arm"], s["seed"], s["parts"]) for s in r["skipped"]] == [("default", 3, 3)]
    assert "fewer than min_parts 4" in r["skipped"][0]["why"] and not r["recounted"]
    assert (dataset / "arm=default" / part_name(3, 0)).exists()
    assert (dataset / "arm=b" / part_name(0, 1)).exists()  # another arm: not asked


def _rewrite(path: Path, change, digest: bool = False) -> None:
    """Rewrite a boards file with `change(table)` applied; its metadata kept, the digest
    made again for the new rows when `digest` (a change only a recount sees)."""
    t = pq.read_table(path)
    meta = {k.decode(): v.decode() for k, v in t.schema.metadata.items()}
    new = change(t)
    if digest:
        n = sum(name.startswith("c") and name[1:].isdigit() for name in new.column_names)
        cells = np.column_stack([new.column(f"c{i}").to_numpy() for i in range(n)])
        stats = {k: (np.array(new.column(k).to_pylist(), dtype=object)
                     if new.column(k).type == pa.string() else new.column(k).to_numpy())
                 for k, _ in BOARD_STATS}
        meta[DIGEST_KEY] = rows_digest(meta, Boards(cells.astype(np.int16), stats))
    pq.write_table(new.replace_schema_metadata(meta), path)


def test_a_damaged_part_is_refused_and_nothing_removed(inst, dataset):
    before = names(dataset)
    part = dataset / "arm=default" / part_name(0, 3)
    good = part.read_bytes()
    _rewrite(part, lambda t: t.set_column(0, "c0", pa.array(
        [int(v) ^ 4 for v in t.column("c0").to_pylist()], pa.int16())))
    with pytest.raises(DamagedDataError, match="digest") as e:
        compact_boards_dataset(dataset, min_parts=1, arm="default")
    assert part.name in str(e.value) and "\n" not in str(e.value)
    assert names(dataset) == before
    assert list((dataset / "arm=default" / SCRATCH).iterdir()) == []
    # a score changed with its digest made again: the recount refuses it, nothing merged
    part.write_bytes(good)
    _rewrite(part, lambda t: t.set_column(t.column_names.index("score"), "score", pa.array(
        [v + 1 for v in t.column("score").to_pylist()], pa.int32())), digest=True)
    with pytest.raises(DamagedDataError, match="row 0: score") as e:
        compact_boards_dataset(dataset, inst, min_parts=1, arm="default")
    assert part.name in str(e.value) and names(dataset) == before


def test_a_seed_a_run_writes_is_skipped(inst, dataset):
    with boards_sink(dataset, inst, 0):  # a run of (default, 0)
        with boards_sink(dataset, inst, 3, shard=(1, 2)):  # a shard of (default, 3)
            r = compact_boards_dataset(dataset, min_parts=1)
    assert [(c["arm"], c["seed"]) for c in r["compacted"]] == [("b", 0)]
    assert [(s["arm"], s["seed"]) for s in r["skipped"]] == [("default", 0), ("default", 3)]
    assert all("a run writes it" in s["why"] and "pid" in s["why"] for s in r["skipped"])
    assert (dataset / "arm=default" / part_name(0, 0)).exists()
    r = compact_boards_dataset(dataset, min_parts=1)  # the runs ended: compacted now
    assert [(c["arm"], c["seed"]) for c in r["compacted"]] == [("default", 0), ("default", 3)]
    assert not [f for f in (dataset / "arm=default").iterdir() if f.name.endswith(".lock")]


def test_a_killed_compactions_leftovers_are_read_once_then_removed(inst, dataset):
    """Killed between writing its compacted file and removing the parts: each restart is
    read once (the parts must hold the same rows), and the next compaction removes them."""
    before = read_boards_dataset(dataset, inst)
    kept = {p: p.read_bytes() for p in (dataset / "arm=default").glob("part-s0-*")}
    compact_boards_dataset(dataset, inst, min_parts=1, arm="default")
    for p in sorted(kept)[:3]:  # some parts back, as a kill leaves them
        p.write_bytes(kept[p])
    assert len(list((dataset / "arm=default").glob("part-*"))) == 3
    assert everything(read_boards_dataset(dataset, inst)) == everything(before)
    parts = dataset_parts(dataset)
    assert [p[:3] for p in parts] == [p[:3] for p in before.parts]
    assert all(p.compacted for p in parts if p.arm == "default")
    with boards_sink(dataset, inst, 0) as sink:
        assert sink.done == {0, 1, 2, 3, 4}
    assert restarts_left(dataset, "default", 0, (0, 1), 7) == 2
    # a leftover holding other rows than its compacted file's: refused, naming it
    p, q = sorted(kept)[0], sorted(kept)[-1]  # restart 0 holding restart 4's boards
    p.write_bytes(kept[q])
    _rewrite(p, lambda t: t.set_column(t.column_names.index("restart"), "restart",
                                       pa.array([0] * t.num_rows, pa.int64())), digest=True)
    with pytest.raises(DamagedDataError, match="other rows") as e:
        read_boards_dataset(dataset, inst)
    assert p.name in str(e.value)
    with pytest.raises(DamagedDataError, match="other rows"):
        compact_boards_dataset(dataset, inst, min_parts=1, arm="default")
    p.write_bytes(kept[p])
    r = compact_boards_dataset(dataset, inst, min_parts=1, arm="default")
    assert r["leftovers_removed"] == 3
    assert not list((dataset / "arm=default").glob("part-s0-*"))
    assert everything(read_boards_dataset(dataset, inst)) == everything(before)


def test_a_resumed_run_after_compaction_repeats_no_restart(inst, tmp_path):
    out, whole = tmp_path / "ds", tmp_path / "whole"
    solve_best(inst, f"{out}/", restarts=4, **RUN)
    compact_boards_dataset(out, inst, min_parts=1)
    assert not list((out / "arm=default").glob("part-*"))
    d = solve_best(inst, f"{out}/", restarts=3, **RUN)
    assert d["restarts"] == 3
    assert [p.restart for p in dataset_parts(out)] == list(range(7))
    solve_best(inst, whole, restarts=7, **RUN)
    same = ("depth", "score", "mismatches", "holes", "seed", "restart", "nodes", "source")

    def rows(b):
        return [(tuple(b.cells[i].tolist()), *(b.stats[k][i] for k in same))
                for i in range(len(b))]

    assert rows(read_boards_dataset(out, inst).boards) == rows(
        read_boards_dataset(whole, inst).boards)
    # a shard's rerun after its parts were compacted: its next restarts
    solve_best(inst, out, restarts=2, seed=5, shard=(1, 2), **RUN)
    compact_boards_dataset(out, inst, min_parts=1)
    assert restarts_left(out, "default", 5, (1, 2), 3) == 1
    solve_best(inst, out, restarts=1, seed=5, shard=(1, 2), **RUN)
    assert [p.restart for p in dataset_parts(out) if p.seed == 5] == [1, 3, 5]


def test_since_after_a_compaction_reads_as_a_fresh_read(inst, dataset):
    first = read_boards_dataset(dataset, inst)
    compact_boards_dataset(dataset, inst, min_parts=1, arm="default", max_restarts=4)
    solve_best(inst, dataset, restarts=1, seed=3, **RUN)  # a new part beside them
    later = read_boards_dataset(dataset, inst, since=first)
    fresh = read_boards_dataset(dataset, inst)
    assert everything(later) == everything(fresh)
    assert [p.path for p in later.parts] == [p.path for p in fresh.parts]
    assert later.table.to_pylist() == fresh.table.to_pylist()
    assert read_boards_dataset(dataset, inst, since=later) is later  # nothing new
    # the files read before are not read again: a changed byte in one is not seen
    c = next((dataset / "arm=default").glob("compact-s3-*"))
    _rewrite(c, lambda t: t.set_column(0, "c0", pa.array(
        [int(v) ^ 4 for v in t.column("c0").to_pylist()], pa.int16())))
    assert everything(read_boards_dataset(dataset, inst, since=later)) == everything(fresh)
    with pytest.raises(DamagedDataError, match=c.name):
        read_boards_dataset(dataset, inst)


def test_a_read_racing_a_compaction_reads_every_restart_once(inst, dataset, monkeypatch):
    want = everything(read_boards_dataset(dataset, inst))
    stale = layout.dataset_files(dataset)  # listed, then compacted before the files are read
    compact_boards_dataset(dataset, min_parts=1)
    real, calls = layout.dataset_files, []

    def listed(root, arm=None):
        calls.append(1)
        return stale if len(calls) == 1 else real(root, arm)

    monkeypatch.setattr(reading, "dataset_files", listed)
    assert everything(read_boards_dataset(dataset, inst)) == want and len(calls) == 2
    monkeypatch.undo()
    # a listing while a compaction renames and removes: listed again until it is still
    marks = iter([b"1", b"2", b"2", b"2"])
    monkeypatch.setattr(layout, "_marker", lambda where: next(marks))
    assert sorted(layout._listing(dataset / "arm=b")) == sorted(
        p.name for p in (dataset / "arm=b").iterdir())
    assert next(marks, None) is None  # two listings: the first was not still


def test_reads_while_a_compaction_runs(inst, tmp_path, monkeypatch):
    """Reads in a loop while another thread compacts, a file of 2 restarts at a time (each
    file's parts left beside it a while): every read holds every row once, in order."""
    out = tmp_path / "ds"
    solve_best(inst, out, restarts=16, fill=False, **RUN)
    want = everything(read_boards_dataset(out))
    done, seen = threading.Event(), []
    bump = compaction._bump

    def slow_bump(arm_dir):
        time.sleep(0.05)  # the compacted file there, its parts too
        bump(arm_dir)
        time.sleep(0.02)

    monkeypatch.setattr(compaction, "_bump", slow_bump)

    def compact():
        try:
            compact_boards_dataset(out, min_parts=1, max_restarts=2)
        finally:
            done.set()

    t = threading.Thread(target=compact)
    t.start()
    while not done.is_set():
        d = read_boards_dataset(out)
        assert everything(d) == want
        seen.append(sum(p.compacted for p in d.parts))
    t.join()
    assert len(set(seen)) > 2, seen  # reads of datasets half compacted
    assert everything(read_boards_dataset(out)) == want
    assert len(list((out / "arm=default").glob("compact-*"))) == 8


def test_the_command_equals_the_library(inst, dataset, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(dataset, other)
    lib = compact_boards_dataset(dataset, inst, min_parts=3)
    r = CliRunner().invoke(main, ["compact-boards", str(other), "--instance",
                                  str(tmp_path / "u.e2s"), "--min-parts", "3", "--json"])
    assert r.exit_code == 0, r.output
    cli = json.loads(r.stdout)
    for d in (lib, cli):
        del d["seconds"], d["dataset"]
    assert cli == lib
    assert names(other) == names(dataset)
    assert everything(read_boards_dataset(other, inst)) == everything(
        read_boards_dataset(dataset, inst))
    shutil.rmtree(other)
    shutil.copytree(_MADE["ds"], other)
    r = CliRunner().invoke(main, ["compact-boards", str(other), "--arm", "b",
                                  "--min-parts", "1"])
    assert r.exit_code == 0, r.output
    assert f"arm=b seed 0: 2 parts (2 boards) -> {compact_name(0, 0, 1, 2)}" in r.output
    assert "1 compacted files written, 2 parts merged (digests checked)" in r.output
    r = CliRunner().invoke(main, ["compact-boards", str(tmp_path / "none")])
    assert r.exit_code == 2 and "no boards dataset there" in r.output


def test_one_arm_s_directory_is_refused_naming_the_dataset(inst, dataset):
    """An arm's directory given as a dataset: one line naming the dataset's directory (it
    read as an empty dataset before: a report of no arms)."""
    from e2store.errors import SolverError

    with pytest.raises(SolverError, match=r"arm=b: one arm's directory .* give the "
                                          r"directory holding it"):
        read_boards_dataset(dataset / "arm=b", inst)
