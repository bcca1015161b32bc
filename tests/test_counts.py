"""Count tables: the Moebius last-ring kernel against brute force, symmetric shapes, shards,
resume after a kill, records and tables, and factorised == enumerated on sample cells."""

from __future__ import annotations

import itertools
import json
import random

import naive
import numpy as np
import pytest
from click.testing import CliRunner
from helpers import random_instance

from e2store.cli import main
from e2store.corolles import _kernels
from e2store.corolles.enumerate import corolle_layout, count_corolles
from e2store.corolles.factorised import count_factorised, symmetry_order
from e2store.counts.shards import (
    METHOD,
    count_shard,
    count_tables,
    count_zone,
    gather_zone,
    record_path,
    run_shard,
    zone_cells,
)
from e2store.errors import StoreError, ZoneError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.reports.tables import MISSING, Board, table_csv, table_markdown


def _lists_to_bits(lists: list[list[int]], n_pieces: int):
    words = (n_pieces + 63) // 64
    m = len(lists)
    eff = np.zeros((m, words), dtype=np.uint64)
    pwt = np.zeros((m, n_pieces), dtype=np.int64)
    for i, lst in enumerate(lists):
        for c in lst:
            p = c >> 2
            pwt[i, p] += 1
            eff[i, p >> 6] |= np.uint64(1) << np.uint64(p & 63)
    sizes = np.array([len(lst) for lst in lists], dtype=np.int64)
    return eff, sizes, np.arange(m, dtype=np.int64), pwt, bool(pwt.max(initial=0) <= 1)


@pytest.mark.parametrize("seed", range(40))
def test_injective_kernel_agrees_with_brute_force(seed):
    """Random lists sharing pieces, some pieces in several rotations of one list (weights),
    pieces past 64 (several bitset words), up to 8 lists."""
    rnd = random.Random(seed)
    n_pieces = rnd.choice([6, 12, 70, 130])
    m = rnd.randint(1, 8 if n_pieces > 12 else 6)
    pool = rnd.sample(range(n_pieces), min(n_pieces, rnd.randint(3, 10)))
    lists = []
    for _ in range(m):
        k = rnd.randint(0 if seed % 7 == 0 else 1, 4)
        lst = sorted({p * 4 + rnd.randrange(4 if seed % 2 else 1) for p in rnd.choices(pool, k=k)})
        lists.append(lst)
    want = naive.naive_injective(lists)
    got = _kernels.injective_choices(*_lists_to_bits(lists, n_pieces))
    assert got == want, lists


def test_injective_kernel_dense_component():
    """Eight lists that all share every piece: every set partition is a valid block set."""
    lists = [[p * 4 for p in range(9)] for _ in range(8)]
    assert _kernels.injective_choices(*_lists_to_bits(lists, 9)) == 9 * 8 * 7 * 6 * 5 * 4 * 3 * 2


@pytest.mark.parametrize("w,h,x,y,hamming,order,enumerate_too", [
    (5, 5, 2, 2, 2, 4, True), (7, 7, 3, 3, 2, 4, False), (7, 5, 3, 2, 2, 2, True),
    (5, 7, 2, 3, 2, 2, True), (6, 6, 2, 2, 2, 1, True), (9, 9, 4, 4, 3, 4, False),
    (3, 3, 1, 1, 1, 4, True)])
def test_symmetric_shapes_count_a_fraction_of_the_centres(w, h, x, y, hamming, order,
                                                          enumerate_too):
    """The count over centres with r < 4/q, times q, equals the count over every centre."""
    layout = corolle_layout(w, h, x, y, hamming)
    assert symmetry_order(layout) == order
    inst = random_instance(w, h, 100 + w * 10 + h, 3, 8 if w * h < 81 else 30)
    full = count_factorised(inst, x, y, hamming, symmetric=False)
    fast = count_factorised(inst, x, y, hamming)
    assert (fast.corolles, fast.stems) == (full.corolles, full.stems)
    if enumerate_too:
        assert count_corolles(inst, x, y, hamming, threads=2).corolles == full.corolles


def test_symmetric_zones_match_the_naive_twin():
    inst = random_instance(5, 5, 7, 3, 8)
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    for hamming in (1, 2, 3):
        want = naive.naive_factorised(pieces, 5, 5, 2, 2, hamming)
        got = count_factorised(inst, 2, 2, hamming)
        assert (got.corolles, got.stems) == want, hamming


def test_shards_add_up_to_the_unsharded_count():
    inst = random_instance(6, 6, 5, 3, 6)
    for x, y in [(2, 2), (2, 1), (0, 0)]:
        want = count_factorised(inst, x, y, 2)
        for shards in (1, 3, 7):
            parts = [count_shard(inst, x, y, 2, k, shards) for k in range(shards)]
            assert sum(p.corolles for p in parts) == want.corolles
            assert sum(p.stems for p in parts) == want.stems
            assert [p.prefixes[0] for p in parts[1:]] == [p.prefixes[1] for p in parts[:-1]]


def test_records_resume_and_are_redone_when_broken(tmp_path):
    inst = random_instance(6, 6, 5, 3, 6)
    first = count_zone(tmp_path, inst, 2, 2, 2, 4)
    assert first.resumed == 0
    again = count_zone(tmp_path, inst, 2, 2, 2, 4)
    assert (again.corolles, again.resumed) == (first.corolles, 4)
    # a kill mid-write leaves at most a temp file: a broken or missing record is redone
    rec = record_path(tmp_path, inst.id, 2, 2, 2, 1, 4)
    rec.write_text(rec.read_text()[:20])
    record_path(tmp_path, inst.id, 2, 2, 2, 3, 4).unlink()
    third = count_zone(tmp_path, inst, 2, 2, 2, 4)
    assert (third.corolles, third.resumed) == (first.corolles, 2)
    # a record of another method or another count is not trusted
    data = json.loads(rec.read_text())
    assert data["method"] == METHOD
    rec.write_text(json.dumps({**data, "method": "old", "corolles": 1}))
    assert run_shard(tmp_path, inst, 2, 2, 2, 1, 4).resumed is False
    assert gather_zone(tmp_path, inst, 2, 2, 2, 4).corolles == first.corolles


def test_gather_names_the_missing_shards(tmp_path):
    inst = random_instance(5, 5, 3)
    run_shard(tmp_path, inst, 2, 2, 2, 0, 3)
    with pytest.raises(StoreError, match=r"shard\(s\) 1, 2 of 3.*count-shard"):
        gather_zone(tmp_path, inst, 2, 2, 2, 3)


def test_tables_from_records(tmp_path):
    a, b = random_instance(4, 4, 1), random_instance(5, 5, 2)
    for inst in (a, b):
        for x, y in zone_cells(inst, 1):
            count_zone(tmp_path, inst, x, y, 1, 1)
    x, y = zone_cells(a, 2)[0]
    count_zone(tmp_path, a, x, y, 2, 2)
    boards = [(Board(i.id, i.name, i.width, i.height), i) for i in (b, a)]
    tables = count_tables(tmp_path, boards, [1, 2])
    assert [(t.metric, t.hamming) for t in tables] == [("corolles", 1), ("seconds", 1),
                                                      ("corolles", 2), ("seconds", 2)]
    c1 = tables[0]
    assert c1.labels == ("4x4", "5x5")
    for j, inst in enumerate((a, b)):
        cells = set(zone_cells(inst, 1))
        for cell, row in zip(c1.cells, c1.values, strict=True):
            if cell in cells:
                assert row[j] == count_factorised(inst, *cell, 1).corolles
            else:
                assert row[j] is None
    c2 = tables[2]
    assert sum(v is MISSING for row in c2.values for v in row) == (
        len(zone_cells(a, 2)) - 1 + len(zone_cells(b, 2)))
    assert "?: not counted yet" in table_markdown(c2)
    assert table_csv(c2).splitlines()[0] == "x,y,4x4,5x5"


def test_cli_counts_tables_and_shards(tmp_path, shared_instances):
    path = shared_instances / "benchmark" / "pieces_4x4.txt"
    out = tmp_path / "rec"
    r = CliRunner().invoke(main, ["tabulate", str(path), "--hamming", "1", "--hamming", "2",
                                  "--records", str(out), "-o", str(tmp_path / "t"),
                                  "--shard-stems", "5", "--json"])
    assert r.exit_code == 0, r.output
    lines = [json.loads(s) for s in r.stdout.splitlines()]
    got = {(d["hamming"], d["x"], d["y"]): d["corolles"] for d in lines}
    # DESIGN.md's worked example
    assert [got[1, 0, 0], got[1, 1, 0], got[1, 0, 1], got[1, 1, 1]] == [56, 294, 294, 797]
    assert [got[2, 0, 0], got[2, 1, 0], got[2, 0, 1], got[2, 1, 1]] == [708, 1268, 1301, 320]
    assert any(d["shards"] > 1 for d in lines)
    md = (tmp_path / "t" / "corolles_h2.md").read_text()
    assert "| 0 1 | 1,301 |" in md
    # one shard job on its own, then the tables with --require
    r = CliRunner().invoke(main, ["stage", "count-shard", str(path), "--hamming", "2", "--at",
                                  "1,1", "--shard", "0/2", "--records", str(tmp_path / "o2"),
                                  "--json"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["stage", "count-gather", str(path), "--hamming", "2",
                                  "--records", str(tmp_path / "o2"), "--require", "-o",
                                  str(tmp_path / "t2")])
    assert r.exit_code == 2 and "1,1 have no complete set of shard records" in r.output


def test_max_stems_leaves_big_zones_out_of_the_plan_and_the_tables(tmp_path,
                                                                     shared_instances):
    """4x4 hamming 2 (stems: the worked example's hamming-1 counts 56, 294, 294, 797): with
    --max-stems 500 the zone (1,1) is planned with 0 shards, never counted, and shown as
    uncounted with its stems; --require spares it only when the plan is given."""
    path = shared_instances / "benchmark" / "pieces_4x4.txt"
    r = CliRunner().invoke(main, ["tabulate", str(path), "--hamming", "2", "--max-stems",
                                  "500", "--records", str(tmp_path / "rec"), "-o",
                                  str(tmp_path / "t"), "--json"])
    assert r.exit_code == 0, r.output
    lines = {(d["x"], d["y"]): d for d in map(json.loads, r.stdout.splitlines())}
    assert lines[1, 1] == {"instance": lines[0, 0]["instance"], "x": 1, "y": 1, "hamming": 2,
                           "stems": 797, "uncounted": True}
    assert [lines[c]["corolles"] for c in ((0, 0), (1, 0), (0, 1))] == [708, 1268, 1301]
    assert not (tmp_path / "rec" / lines[0, 0]["instance"] / "h2" / "1-1").exists()
    md = (tmp_path / "t" / "corolles_h2.md").read_text()
    assert "| 1 1 | ? (797 stems) |" in md and "more stems than its max_stems" in md
    assert "1,1,NA" in (tmp_path / "t" / "corolles_h2.csv").read_text()

    plan = tmp_path / "plan.json"
    r = CliRunner().invoke(main, ["stage", "count-plan", str(path), "--hamming", "2",
                                  "--max-stems", "300", "-o", str(plan)])
    assert r.exit_code == 0, r.output
    zones = {(z["x"], z["y"]): (z["stems"], z["shards"])
             for z in json.loads(plan.read_text())["zones"]}
    assert zones == {(0, 0): (56, 1), (1, 0): (294, 1), (0, 1): (294, 1), (1, 1): (797, 0)}
    tables = ["stage", "count-gather", str(path), "--hamming", "2", "--records",
              str(tmp_path / "rec"), "--require", "-o", str(tmp_path / "t2")]
    r = CliRunner().invoke(main, tables)
    assert r.exit_code == 2 and "1,1 have no complete set" in r.output
    r = CliRunner().invoke(main, [*tables, "--plan", str(plan)])
    assert r.exit_code == 0, r.output
    assert "| 1 1 | ? (797 stems) |" in (tmp_path / "t2" / "corolles_h2.md").read_text()
    plan.write_text('{"zones": [{"x": 1}]}')
    r = CliRunner().invoke(main, [*tables, "--plan", str(plan)])
    assert r.exit_code == 2 and "not a count plan" in r.output and str(plan) in r.output


def test_cli_bad_shard_is_a_usage_error(tmp_path):
    inst_path = tmp_path / "i.e2s"
    write_e2store(random_instance(4, 4, 1), inst_path)
    r = CliRunner().invoke(main, ["stage", "count-shard", str(inst_path), "--hamming", "2",
                                  "--at", "1,1", "--shard", "3/2", "--records",
                                  str(tmp_path / "o")])
    assert r.exit_code == 2 and "0 <= K < S" in r.output
    assert not (tmp_path / "o").exists()


def test_factorised_equals_enumerated_on_benchmark_cells(shared_instances):
    """Every zone cell of 4x4 and 5x5 at h = 1..3 and the small 6x6 zones at h = 2."""
    bench = shared_instances / "benchmark"
    cases = [(n, h, None) for n in (4, 5) for h in (1, 2, 3)]
    cases.append((6, 2, [(0, 0), (1, 0), (0, 1), (2, 0), (0, 2), (1, 1)]))
    for n, h, cells in cases:
        inst = read_instance(bench / f"pieces_{n}x{n}.txt")
        for x, y in cells or zone_cells(inst, h):
            want = count_corolles(inst, x, y, h, threads=2).corolles
            assert count_factorised(inst, x, y, h).corolles == want, (n, h, x, y)


def test_counts_are_reproducible(tmp_path):
    inst = random_instance(6, 6, 9, 3, 8)
    a = count_zone(tmp_path / "a", inst, 2, 2, 2, 3, threads=2)
    b = count_zone(tmp_path / "b", inst, 2, 2, 2, 5, threads=1)
    assert (a.corolles, a.stems) == (b.corolles, b.stems)
    rec_a = json.loads(record_path(tmp_path / "a", inst.id, 2, 2, 2, 0, 3).read_text())
    assert rec_a["corolles"] == count_shard(inst, 2, 2, 2, 0, 3).corolles
    assert list(itertools.islice(zone_cells(inst, 2), 1)) == [(0, 0)]


@pytest.mark.parametrize("m", [8, 9])
def test_injective_kernel_is_exact_up_to_the_int64_limit(m):
    """Lists of 200 pieces, the first two sharing one: (200^2 - 1) 200^(m-2) choices.  With
    8 lists (2.6e18) the count is exact; with 9 (5.1e20) it is refused (-1), not wrapped."""
    lists = [[(200 * i + p) * 4 for p in range(200)] for i in range(m)]
    lists[1][0] = lists[0][0]
    got = _kernels.injective_choices(*_lists_to_bits(lists, 200 * m))
    want = (200 * 200 - 1) * 200 ** (m - 2)
    assert got == (want if want < 4e18 else -1)


def test_counts_beyond_int64_are_refused_not_wrapped():
    """One inner colour: every interior piece fits every interior cell in 4 rotations, so
    the last ring of a 9x9 centre at hamming 3 has 12 lists of 196 placements."""
    inst = random_instance(9, 9, 3, 1, 1)
    with pytest.raises(ZoneError, match="64-bit range"):
        count_factorised(inst, 4, 4, 3)
