"""Identical pieces in the store and the openings (issue 24): the distinct form and
`openings --distinct`, against the raw rows grouped by hand by the colours each cell shows."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from click.testing import CliRunner
from naive import naive_canonical, naive_corolles, random_board_pieces
from test_openings import brute_openings

from e2store.cli import main
from e2store.errors import SolverError, StoreError
from e2store.instance.classes import DistinctPieces
from e2store.instance.e2sfile import write_e2store
from e2store.instance.model import Instance
from e2store.query.openings import openings, read_openings, write_openings
from e2store.solver.parallel import solve_openings
from e2store.store.build import enumerate_store
from e2store.store.read import iter_partition, read_distinct, read_manifest, read_partition

CASE = (4, 3, 2, 2, 2)  # 4x3, two frame and two inner colours: classes of 2 and 3 copies


def dup_instance(width: int, height: int, n_frame: int, n_inner: int, seed: int) -> Instance:
    pcs = random_board_pieces(width, height, n_frame, n_inner, seed)
    return Instance(f"dup{width}x{height}s{seed}", width, height, np.array(pcs, dtype=np.int64))


def shows(pieces, v: int) -> tuple | None:
    """The colours placement v shows (W, N, E, S), None for an empty cell: what stays of a
    placement once identical pieces and equivalent rotations are merged."""
    if v < 0:
        return None
    return tuple(pieces[v >> 2][(s - (v & 3)) % 4] for s in range(4))


def grouped(pieces, rows) -> Counter:
    """Raw rows grouped by hand: each row as the colours its cells show, with how many raw
    rows show them."""
    return Counter(tuple(shows(pieces, int(v)) for v in row) for row in rows)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    inst = dup_instance(*CASE)
    root = tmp_path_factory.mktemp("distinct_store")
    for h in (1, 2):
        enumerate_store(root, inst, h, None, forms=("flat", "distinct"))
    return root, inst


def test_canonical_expand_and_multiplicity_against_the_grouping():
    """`canonical` names each group of raw corolles once, `multiplicity` counts it, and
    `expand` gives the group back (the naive enumerator's corolles as raw rows)."""
    inst = dup_instance(*CASE)
    d = DistinctPieces.of(inst)
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    raw = naive_corolles(pieces, 4, 3, 1, 1, 2)
    cells = sorted({c for cor in raw for c, _, _ in cor})
    rows = np.array([[dict(((c, p * 4 + r) for c, p, r in cor))[c] for c in cells]
                     for cor in raw], dtype=np.int64)
    canon = d.canonical(rows)
    groups = grouped(pieces, rows)
    uniq, counts = np.unique(canon, axis=0, return_counts=True)
    assert len(uniq) == len(groups) < len(rows)
    assert Counter(grouped(pieces, uniq)) == Counter(groups.keys())  # one name per group
    assert sorted(counts.tolist()) == sorted(groups.values())
    assert (d.multiplicity(uniq) == counts).all()
    assert (d.canonical(uniq) == uniq).all()
    back = d.expand(uniq)
    assert sorted(map(tuple, back.tolist())) == sorted(map(tuple, rows.tolist()))


def test_canonical_kernel_equals_its_twin():
    """`canonical_chunk` (numba) against `naive_canonical` on raw rows, rotated ones too."""
    from e2store.corolles.forms import canonical_chunk, rotate_chunk

    inst = dup_instance(*CASE)
    d = DistinctPieces.of(inst)
    raw = np.concatenate([c for c, _ in _raw_chunks(inst)], axis=1)
    for q in (0, 1, 3):
        cells = rotate_chunk(raw, np.zeros((12, raw.shape[1]), np.int8), 2, q)[0]
        got, mult = canonical_chunk(cells, d)
        want, wmult = naive_canonical(cells.tolist(), d.cls, d.same.tolist(), d.weight)
        assert got.tolist() == want and mult.tolist() == wmult
        assert (got.T == d.canonical(cells.T)).all()


def _raw_chunks(inst):
    from e2store.corolles.enumerate import iter_corolles

    return iter_corolles(inst, 1, 1, 2)


def test_distinct_partitions_group_the_flat_ones(store):
    """Every partition (rotations included): the distinct rows are the flat rows grouped,
    each once, with their multiplicities; its record's corolles are the raw ones."""
    root, inst = store
    d = DistinctPieces.of(inst)
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    parts = read_manifest(root)["partitions"]
    rec = {(p["hamming"], p["zone"], p["rotation"], p["form"]): p for p in parts}
    n = 0
    for (h, z, r, form), p in rec.items():
        if form != "flat":
            continue
        cells, _ = read_partition(root, inst.id, h, z, r, "flat")
        dc, df, mult = read_distinct(root, inst.id, h, z, r)
        want = grouped(pieces, cells)
        got = dict(zip(grouped(pieces, dc).keys(), mult.tolist(), strict=True))
        assert len(got) == len(dc) and got == dict(want), (h, z, r)
        assert (d.canonical(dc) == dc).all()
        flat_front = {tuple(c): tuple(f) for c, f in zip(d.canonical(cells).tolist(),
                                                          read_partition(root, inst.id, h, z, r,
                                                                         "flat")[1].tolist(),
                                                          strict=True)}
        assert all(flat_front[tuple(c)] == tuple(f) for c, f in zip(dc.tolist(), df.tolist(),
                                                                    strict=True))
        drec = rec[(h, z, r, "distinct")]
        assert (drec["rows"], drec["corolles"]) == (len(dc), p["corolles"])
        assert drec["rows"] < p["rows"]
        n += 1
    assert n > 10
    with pytest.raises(StoreError, match="read_distinct"):
        next(iter_partition(root, inst.id, 1, 0, 0, "distinct"))


def test_cli_enumerate_expand_verify_distinct(tmp_path):
    inst = dup_instance(*CASE)
    path = tmp_path / "dup.e2s"
    write_e2store(inst, path)
    runs = {}
    for threads in (1, 2):
        root = tmp_path / f"s{threads}"
        res = CliRunner().invoke(main, ["enumerate", str(path), "--hamming", "2", "--form",
                                        "flat", "--distinct", "--store", str(root),
                                        "--threads", str(threads)])
        assert res.exit_code == 0, res.output
        runs[threads] = json.loads((root / "manifest.json").read_text())["checksum"]
    assert runs[1] == runs[2]  # reproducible, whatever the threads
    root = tmp_path / "s1"
    digests = {}
    zone, rot = max((p["rotation"], p["zone"]) for p in read_manifest(root)["partitions"])[::-1]
    assert rot > 0
    for form in ("flat", "distinct"):
        res = CliRunner().invoke(main, ["expand", "--store", str(root), "--hamming", "2",
                                        "--zone", str(zone), "--rotation", str(rot), "--form",
                                        form])
        assert res.exit_code == 0, res.output
        digests[form] = res.output.split("sha256 ")[1].strip()
        if form == "distinct":
            assert "distinct rows" in res.output
    assert digests["flat"] == digests["distinct"]
    res = CliRunner().invoke(main, ["verify", "--store", str(root)])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["summary", "--store", str(root)])
    assert res.exit_code == 0 and "| distinct |" in res.output, res.output


@pytest.mark.parametrize("cells,sym", [([(0, 0), (2, 1)], False), ([(1, 0), (2, 0)], True)])
def test_distinct_openings_group_the_brute_force(store, tmp_path, cells, sym):
    root, inst = store
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    op = openings(inst, root, cells, 1, symmetry_break=sym, distinct=True)
    raw = openings(inst, root, cells, 1, symmetry_break=sym)
    if not sym:
        assert {tuple(r) for r in raw.boards.tolist()} == brute_openings(inst, cells, 1)
    want = grouped(pieces, raw.boards)
    got = dict(zip(grouped(pieces, op.boards).keys(), op.multiplicity.tolist(), strict=True))
    assert len(got) == op.count and got == dict(want)
    assert op.to_dict()["raw_openings"] == raw.count > op.count > 0
    path = tmp_path / "op.parquet"
    write_openings(path, op)
    back = read_openings(path)
    assert (back.boards == op.boards).all() and (back.multiplicity == op.multiplicity).all()
    with pytest.raises(SolverError, match="distinct openings"):
        solve_openings(inst, back)


def test_cli_openings_distinct(store, tmp_path):
    root, inst = store
    path = tmp_path / "dup.e2s"
    write_e2store(inst, path)
    out = tmp_path / "op.parquet"
    res = CliRunner().invoke(main, ["openings", str(path), "--store", str(root), "--hamming",
                                    "1", "--at", "0,0", "--at", "2,1", "--distinct", "-o",
                                    str(out), "--json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["distinct"] and d["raw_openings"] > d["openings"] == read_openings(out).count
    res = CliRunner().invoke(main, ["solve", str(path), "--openings", str(out)])
    assert res.exit_code != 0 and "distinct openings" in res.output


def test_tabulate_distinct_equals_the_distinct_count(tmp_path):
    """Sharded distinct count records sum to `count_corolles(..., distinct=True)`, resume,
    and make the distinct tables."""
    from e2store.corolles.enumerate import count_corolles
    from e2store.zones.zonemap import zone_map

    inst = dup_instance(*CASE)
    path = tmp_path / "dup.e2s"
    write_e2store(inst, path)
    args = ["tabulate", str(path), "--hamming", "2", "--distinct", "--records",
            str(tmp_path / "rec"), "--shard-stems", "1", "--max-shards", "3", "--json",
            "-o", str(tmp_path / "tables")]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    assert len(rows) == len(zone_map(4, 3, 2).zones) and any(r["shards"] > 1 for r in rows)
    for r in rows:
        want = count_corolles(inst, r["x"], r["y"], 2, distinct=True)
        assert (r["corolles"], r["raw_corolles"]) == (want.corolles, want.raw), r
        assert r["raw_corolles"] == count_corolles(inst, r["x"], r["y"], 2).corolles
    again = CliRunner().invoke(main, args)
    assert all(json.loads(line)["resumed"] == json.loads(line)["shards"]
               for line in again.output.splitlines())
    table = (tmp_path / "tables" / "distinct_h2.csv").read_text().splitlines()
    assert len(table) == 1 + len(rows)
    assert (tmp_path / "tables" / "distinct_raw_h2.md").exists()
