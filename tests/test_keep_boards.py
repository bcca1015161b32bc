"""Boards kept above a score (`e2store best --keep-min-score`, a campaign's `keep_boards:
{min_score}`) and the boards format's version 4 (`kept`, `key`): every restart keeps its
statistics rows and its final board's key, the boards below the score lose their cells;
datasets mixing versions 3 and 4 read as one (issue 57)."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
from naive_best import unsolvable_pieces

from e2store.boards import open_boards
from e2store.boards.schema import BOARD_STATS_V3, DIGEST_KEY
from e2store.boards.table import boards_table, read_boards, rows_digest
from e2store.errors import DamagedDataError, SolverError
from e2store.files import write_table
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.instance.model import Instance
from e2store.solver.best import solve_best

RUN = {"breaks": "14,16,18,20", "restart_nodes": 5000}
KEEP = 37  # of 40 joins: some boards of the run above it, some below


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One 5x5 run of 6 restarts written twice: every board kept, and above KEEP alone."""
    tmp = tmp_path_factory.mktemp("keep")
    write_e2store(Instance("u", 5, 5, unsolvable_pieces(5, 5, 3)), tmp / "u.e2s")
    inst = read_instance(tmp / "u.e2s")
    for name, keep in (("all", None), ("keep", KEEP)):
        solve_best(inst, output=tmp / f"{name}/", seed=3, restarts=6, keep_min_score=keep,
                   **RUN)
    solve_best(inst, output=tmp / "keep.parquet", seed=3, restarts=6, keep_min_score=KEEP,
               **RUN)
    return inst, tmp


def test_every_restart_keeps_its_rows_the_boards_below_lose_their_cells(runs):
    inst, tmp = runs
    a = open_boards(tmp / "all", inst).read().boards
    b = open_boards(tmp / "keep", inst).read().boards  # checked: every row recounted
    kept = b.stats["kept"]
    assert len(a) == len(b) and kept.any() and not kept.all()
    assert np.array_equal(kept, a.stats["score"] >= KEEP)
    for k in ("score", "depth", "holes", "mismatches", "source", "seed", "restart", "nodes",
              "key"):
        assert np.array_equal(a.stats[k], b.stats[k]), k
    assert (b.cells[~kept] == -1).all() and np.array_equal(a.cells[kept], b.cells[kept])
    assert set(b.stats["url"][~kept]) == {""} and all(b.stats["url"][kept])
    one = read_boards(tmp / "keep.parquet", inst)
    assert np.array_equal(one.stats["kept"], kept) and np.array_equal(one.cells, b.cells)


def test_the_report_and_repeats_are_the_same_kept_or_not(runs):
    """Statistics rows and keys are all a report reads: the same report, the same
    repeats, the best board (kept) the same."""
    from e2store.campaign import analyse, tally_boards

    inst, tmp = runs
    h_all, h_keep = open_boards(tmp / "all", inst), open_boards(tmp / "keep", inst)
    def shown(h) -> list:  # all but the times, which the two runs took each their own
        arms = analyse(tally_boards(h)).to_dict()["arms"]
        return [{k: a[k] for k in ("restarts", "depth", "filled", "reach", "repeats",
                                   "best_restarts")} for a in arms]

    assert shown(h_all) == shown(h_keep) and shown(h_all)[0]["repeats"] is not None
    assert h_all.repeats() == h_keep.repeats()
    assert h_all.repeats()["default"]["complete"] == 6
    assert h_all.best()["key"] == h_keep.best()["key"] != ""


def test_a_board_not_kept_with_a_cell_is_refused(runs, tmp_path):
    inst, tmp = runs
    b = read_boards(tmp / "keep.parquet", inst)
    i = int(np.flatnonzero(~b.stats["kept"])[0])
    b.cells[i, 0] = b.cells[int(np.flatnonzero(b.stats["kept"])[0]), 0]
    t = boards_table(inst, b)  # a writer that let a cell through: its digest is right
    write_table(tmp_path / "bad.parquet", t)
    with pytest.raises(DamagedDataError, match=f"row {i}: a board not kept"):
        read_boards(tmp_path / "bad.parquet", inst)


def test_a_wrong_key_is_refused(runs, tmp_path):
    inst, tmp = runs
    b = read_boards(tmp / "keep.parquet", inst)
    t = boards_table(inst, b)
    keys = t.column("key").to_pylist()
    j = next(k for k, v in enumerate(keys) if v and b.stats["kept"][k])
    keys[j] = keys[j][::-1]
    t = t.set_column(t.schema.get_field_index("key"), "key", pa.array(keys, pa.string()))
    meta = {k.decode(): v.decode() for k, v in t.schema.metadata.items()}
    b.stats["key"] = np.array(keys, dtype=object)
    meta[DIGEST_KEY] = rows_digest(meta, b)  # a digest that agrees: the recount does not
    write_table(tmp_path / "key.parquet", t.replace_schema_metadata(meta))
    with pytest.raises(DamagedDataError, match=f"row {j}: key, not its board's"):
        read_boards(tmp_path / "key.parquet", inst)


def _as_version_3(path) -> None:
    """The boards file `path` rewritten as e2store wrote version 3 (no `kept`, `key`)."""
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    meta = {k.decode(): v.decode() for k, v in t.schema.metadata.items()}
    t = t.drop_columns(["kept", "key"]).replace_schema_metadata(None)
    meta["version"] = "3"
    n = sum(1 for c in t.column_names if c.startswith("c") and c[1:].isdigit())
    from e2store.boards.table import Boards

    cells = np.column_stack([t.column(f"c{i}").to_numpy() for i in range(n)])
    stats = {k: (np.array(t.column(k).to_pylist(), dtype=object) if kind == "string"
                 else t.column(k).to_numpy()) for k, kind in BOARD_STATS_V3}
    meta[DIGEST_KEY] = rows_digest(meta, Boards(cells, stats), BOARD_STATS_V3)
    write_table(path, t.replace_schema_metadata(meta))


def test_a_dataset_of_versions_3_and_4_reads_as_one_and_compacts_to_4(runs, tmp_path):
    import shutil

    import pyarrow.parquet as pq

    inst, tmp = runs
    d = tmp_path / "mixed"
    shutil.copytree(tmp / "all", d)
    parts = sorted(d.glob("arm=default/part-*.parquet"))
    for p in parts[::2]:
        _as_version_3(p)
    assert {pq.read_schema(p).metadata[b"version"] for p in parts} == {b"3", b"4"}
    want = open_boards(tmp / "all", inst).read().boards
    with open_boards(d, inst) as h:
        got = h.read().boards  # keys of the version 3 files made from their boards
        for k in ("score", "restart", "key", "kept"):
            assert np.array_equal(got.stats[k], want.stats[k]), k
        assert h.repeats() == open_boards(tmp / "all", inst).repeats()
        h.compact(min_parts=2)
        files = h.files()
    assert [pq.read_schema(p).metadata[b"version"] for p in files["path"].to_pylist()] == [b"4"]
    assert np.array_equal(open_boards(d, inst).read().boards.stats["key"], want.stats["key"])


def test_the_command_and_the_campaign_take_the_threshold(runs, tmp_path):
    from click.testing import CliRunner

    from e2store.campaign import Campaign, shard_command
    from e2store.cli import main

    inst, tmp = runs
    r = CliRunner().invoke(main, ["best", str(tmp / "u.e2s"), "--restarts", "2",
                                  "--restart-nodes", "5000", "--breaks", RUN["breaks"],
                                  "--keep-min-score", "39", "-o", str(tmp_path / "c.parquet"),
                                  "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["restarts"] == 2
    b = read_boards(tmp_path / "c.parquet", inst)
    assert np.array_equal(b.stats["kept"], b.stats["score"] >= 39)
    c = Campaign.from_mapping({"arms": {"a": {}}, "restarts": 2,
                               "keep_boards": {"min_score": 39}},
                              instance=tmp / "u.e2s", boards=tmp_path / "d/")
    cmd = shard_command(c, "a", 0, (0, 1), c.budget())
    assert cmd[cmd.index("--keep-min-score") + 1] == "39"
    for bad in ({"min_score": -1}, {"score": 3}, 5):
        with pytest.raises(SolverError, match=r"best\.keep_boards"):
            Campaign.from_mapping({"arms": {"a": {}}, "restarts": 2, "keep_boards": bad},
                                  instance=tmp / "u.e2s", boards=tmp_path / "d/")


@pytest.mark.parametrize("n", [1, 3, 7, 40])
def test_top_reads_the_best_boards_alone_as_the_full_read_picks_them(runs, tmp_path, n):
    """`open_boards(...).top(n)`, what a campaign's saved boards take (compacted files'
    places from their statistics, only those files read), against the naive pick over
    every row read: score, then depth, then read order, distinct cells, kept alone."""
    import shutil

    from e2store.boards.saved import best_rows

    inst, tmp = runs
    d = tmp_path / "d"
    shutil.copytree(tmp / "keep", d)
    solve_best(inst, output=d, arm="b", seed=4, restarts=3, keep_min_score=KEEP, **RUN)
    with open_boards(d, inst) as h:
        h.compact(arm="default", min_parts=2)  # one arm compacted, one in parts
        full = h.read().boards
        seen, want = set(), []
        for i in best_rows(full):
            if full.cells[i].tobytes() not in seen:
                seen.add(full.cells[i].tobytes())
                want.append(i)
        want = want[:n]
        for checked in ("compacted", True):
            got = h.top(n, checked=checked)
            assert np.array_equal(got.cells, full.cells[want]), checked
            assert got.stats["restart"].tolist() == full.stats["restart"][want].tolist()
            assert got.stats["kept"].all()


def test_sql_boards_is_a_view_over_the_checked_files(runs, tmp_path):
    """`sql --boards`: a `pyarrow.dataset` over the dataset's files (no copy of the rows),
    every row with its arm, `kept` and `key` as stored; a version 3 file's NULL."""
    import shutil

    import pyarrow.dataset as ds
    from click.testing import CliRunner

    from e2store.cli import main

    inst, tmp = runs
    d = tmp_path / "d"
    shutil.copytree(tmp / "keep", d)
    first = next(p for p in sorted(d.glob("arm=default/part-*.parquet"))
                 if read_boards(p).stats["kept"].all())  # a version 3 file keeps all
    _as_version_3(first)
    with open_boards(d, inst) as h:
        view = h.arrow_dataset()
        want = h.read().boards
    assert isinstance(view, ds.FileSystemDataset) and len(view.files) == 6
    q = ("SELECT arm, count(*) AS n, count(kept) AS said, count(*) FILTER (WHERE kept) AS "
         "kept, count(DISTINCT NULLIF(key, '')) AS keys FROM boards GROUP BY arm")
    r = CliRunner().invoke(main, ["sql", "--boards", str(d), q, "--json"])
    assert r.exit_code == 0, r.output
    row = json.loads(r.stdout.splitlines()[0])
    restart = int(read_boards(first).stats["restart"][0])
    v4 = want.stats["restart"] != restart
    assert row == {"arm": "default", "n": len(want), "said": int(v4.sum()),
                   "kept": int(want.stats["kept"][v4].sum()),
                   "keys": len(set(want.stats["key"][v4]) - {""})}


def test_score_and_render_take_the_boards_kept(runs):
    """`score` lists the boards kept, each with its row in the file; the best drawn is
    the best kept."""
    from click.testing import CliRunner

    from e2store.cli import main

    inst, tmp = runs
    b = read_boards(tmp / "keep.parquet", inst)
    r = CliRunner().invoke(main, ["score", str(tmp / "u.e2s"), str(tmp / "keep.parquet"),
                                  "--json"])
    assert r.exit_code == 0, r.output
    boards = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    rows = [x["row"] for x in boards]
    assert rows == np.flatnonzero(b.stats["kept"]).tolist()
    assert all(x["score"] == int(b.stats["score"][x["row"]]) for x in boards)
