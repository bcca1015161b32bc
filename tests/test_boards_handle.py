"""`open_boards`, one handle over a boards file or dataset (issue 57, item 1), against the
readers it stands on, on the same files: its files against the names and footers, its
rows checked and unchecked against `read_boards_dataset`, its restarts against
`campaign_rows`, its best board against a naive maximum, its sink and compaction."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest
from naive_best import unsolvable_pieces

from e2store.boards import campaign_rows, open_boards, read_boards, read_boards_dataset
from e2store.boards.dataset import dataset_parts
from e2store.boards.schema import RESTART_COLUMNS, column_kinds
from e2store.campaign.analysis import best_restarts
from e2store.errors import DamagedDataError, SolverError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.instance.model import Instance
from e2store.solver.best import solve_best

RUN = {"breaks": "20,24,28,30,32", "restart_nodes": 20000, "finish": False}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A dataset of two arms (seeds 0 and 1 in one), and a boards file, of one 6x6 run."""
    tmp = tmp_path_factory.mktemp("handle")
    write_e2store(Instance("u", 6, 6, unsolvable_pieces(6, 6, 3)), tmp / "u.e2s")
    inst = read_instance(tmp / "u.e2s")
    for arm, seed in (("a", 0), ("a", 1), ("b", 0)):
        solve_best(inst, output=tmp / "d", arm=arm, seed=seed, restarts=3, **RUN)
    solve_best(inst, output=tmp / "f.parquet", restarts=2, **RUN)
    return inst, tmp


def _key(t):
    """The rows of an Arrow table as sorted tuples (arm, seed, restart, source, ...)."""
    cols = ["arm", "seed", "restart", "source"] + [c for c in t.column_names
                                                    if c not in ("arm", "seed", "restart",
                                                                 "source")]
    return sorted(zip(*(t.column(c).to_pylist() for c in cols), strict=True))


def test_files_are_the_names_and_footers(made):
    inst, tmp = made
    with open_boards(tmp / "d", inst) as h:
        f = h.files()
    parts = dataset_parts(tmp / "d")
    assert f.num_rows == len(parts) == 9
    assert sorted(zip(f["arm"].to_pylist(), f["seed"].to_pylist(), f["first"].to_pylist(),
                      strict=True)) == sorted((p.arm, p.seed, p.restart) for p in parts)
    for path, rows, digest in zip(f["path"].to_pylist(), f["rows"].to_pylist(),
                                  f["digest"].to_pylist(), strict=True):
        meta = pq.read_schema(path).metadata
        assert rows == pq.read_metadata(path).num_rows == 2
        assert digest == meta[b"rows_sha256"].decode() and len(digest) == 64
    one = open_boards(tmp / "f.parquet").files()
    assert one.num_rows == 1 and one["rows"][0].as_py() == 4 and one["restarts"][0].as_py() == 2


def test_rows_checked_and_unchecked_agree_with_the_reader(made):
    inst, tmp = made
    want = read_boards_dataset(tmp / "d", inst).table
    h = open_boards(tmp / "d", inst)
    assert h.to_arrow().equals(want)
    loose = h.to_arrow(checked=False)
    assert _key(loose) == _key(want.select(loose.column_names))
    cols = ["score", "depth"]
    t = h.to_arrow(arms=["b"], columns=cols, checked=False)
    assert t.column_names == cols + ["arm"] and set(t["arm"].to_pylist()) == {"b"}
    assert t.num_rows == 6 == h.to_arrow(arms=["b"], columns=cols).num_rows
    with pytest.raises(SolverError, match="no column 'nope'"):
        h.to_arrow(columns=["nope"])


def test_restarts_from_the_columns_alone_equal_the_checked_ones(made):
    inst, tmp = made
    h = open_boards(tmp / "d", inst)
    want = campaign_rows(tmp / "d", inst)
    for got in (h.restarts(), h.restarts(checked=False)):
        assert set(got) == set(want) == {"a", "b"}
        for arm in want:
            for k, v in want[arm].items():
                if k == "url":
                    continue
                if "seconds" in k:  # float32 from the columns alone
                    assert np.allclose(got[arm][k], v, rtol=1e-6, atol=1e-6), (arm, k)
                else:
                    assert np.array_equal(got[arm][k], v), (arm, k)
            assert len(got[arm]["url"]) == len(want[arm]["url"])
    loose = h.restarts(checked=False)
    for arm in want:  # the URLs of the best restarts, which the report lists
        best = [b["url"] for b in best_restarts(want[arm])]
        assert [b["url"] for b in best_restarts(loose[arm])] == best and all(best)
    assert set(RESTART_COLUMNS) <= {k for k, _ in column_kinds(36)}


def test_best_is_the_naive_maximum(made):
    inst, tmp = made
    for path in (tmp / "d", tmp / "f.parquet"):
        h = open_boards(path, inst)
        b = h.read().boards
        top = max(range(len(b)), key=lambda i: (b.stats["score"][i], b.stats["depth"][i], -i))
        best = h.best()
        assert best["score"] == b.stats["score"][top] and best["depth"] == b.stats["depth"][top]
        assert np.array_equal(best["cells"], b.cells[top])
    assert open_boards(tmp / "f.parquet").best()["arm"] == "default"


def test_sink_and_compaction_through_the_handle(made, tmp_path):
    inst, tmp = made
    src = read_boards(tmp / "f.parquet", inst)
    h = open_boards(tmp_path / "new", inst)
    with h.sink(7, arm="x") as sink:
        for r in (0, 1):
            rows = np.flatnonzero(src.stats["restart"] == r)
            sub = type(src)(src.cells[rows], {k: v[rows] for k, v in src.stats.items()})
            sub.stats["seed"] = np.full(len(rows), 7, np.int64)
            sink.write(r, sub)
    assert h.files().num_rows == 2 and len(h.read().boards) == 4
    done = h.compact(min_parts=1)
    f = h.files()
    assert done and f.num_rows == 1 and f["compacted"][0].as_py() and f["restarts"][0].as_py() == 2
    assert len(h.to_arrow()) == 4
    with pytest.raises(SolverError, match="instance"):
        with open_boards(tmp_path / "other").sink(0):
            pass


def test_a_damaged_file_is_refused_by_a_checked_read(made, tmp_path):
    import shutil

    inst, tmp = made
    shutil.copytree(tmp / "d", tmp_path / "d")
    part = dataset_parts(tmp_path / "d")[0].path
    t = pq.read_table(part)
    cells = t.column("c0").to_pylist()
    cells[0] = (cells[0] + 4) % (36 * 4)
    import pyarrow as pa

    t = t.set_column(0, "c0", pa.array(cells, pa.int16()))
    pq.write_table(t, part)
    with pytest.raises(DamagedDataError):
        open_boards(tmp_path / "d", inst).to_arrow()


def test_repeats_on_planted_equal_boards(made, tmp_path):
    """Equal complete boards, turned too, are counted per arm as repeats; a board with a
    hole is no complete board; a naive twin counts them from the rows."""
    from e2store.boards.keys import quarter_turn

    inst, tmp = made
    src = read_boards(tmp / "f.parquet", inst)
    final = [i for i in range(len(src)) if src.stats["source"][i] == "filled"]
    a, b = src.cells[final[0]], src.cells[final[1]]
    assert (a >= 0).all() and (b >= 0).all()
    boards = [a, quarter_turn(a[None], 6, 6)[0], a, b, np.where(np.arange(36) == 0, -1, a)]
    h = open_boards(tmp_path / "p", inst)
    with h.sink(0, arm="x") as sink:
        for r, cells in enumerate(boards):
            rows = type(src)(cells[None].astype(np.int16),
                             {k: v[final[0]:final[0] + 1].copy() for k, v in src.stats.items()})
            rc = {"score": "matched", "mismatches": "mismatched", "holes": "holes"}
            from e2store.boards.table import recount

            got = recount(inst, rows.cells)
            for k, v in rc.items():
                rows.stats[k] = got[v].astype(np.int32)
            rows.stats["depth"] = np.array([36 - int(got["holes"][0])], np.int32)
            rows.stats["seed"], rows.stats["restart"] = np.array([0]), np.array([r])
            rows.stats["source"] = np.array(["best"], dtype=object)
            rows.stats["url"] = np.array([""], dtype=object)
            sink.write(r, rows)
    got = h.repeats()
    # naive: a board's key is the smallest of its turns' tuples
    def key(c):
        turns = [c]
        for _ in range(3):
            turns.append(quarter_turn(turns[-1][None], 6, 6)[0])
        return min(tuple(t.tolist()) for t in turns)

    complete = [c for c in boards if (c >= 0).all()]
    assert got == {"x": {"complete": len(complete), "distinct": len({key(c) for c in complete}),
                         "repeats": len(complete) - len({key(c) for c in complete})}}
    assert got["x"]["repeats"] == 2
