"""Stages (plan, shard, gather, rotate, encode) write exactly what `enumerate` writes."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import random_instance

from e2store import store
from e2store.cli import main
from e2store.corolles import placements
from e2store.corolles.enumerate import count_corolles
from e2store.errors import StoreError
from e2store.instance.e2sfile import write_e2store
from e2store.store import stages
from e2store.zones.zonemap import zone_map

FORMS = ("flat", "prefix", "cartesian")
SMALL = {"rows_per_file": 300, "chunk_rows": 70}  # many files and row groups per partition


@pytest.fixture(scope="module")
def board():
    return random_instance(5, 4, 3, 3, 5)


@pytest.fixture(scope="module")
def reference(board, tmp_path_factory):
    """Every partition of every form at hamming 1 and 2, written by `enumerate`."""
    root = tmp_path_factory.mktemp("ref")
    for h in (1, 2):
        store.enumerate_store(root, board, h, None, forms=FORMS, **SMALL)
    return root


def _staged_store(root, inst, h, shards):
    """Every partition written stage by stage, each zone cut into `shards` shards."""
    for z in zone_map(inst.width, inst.height, h).zones:
        for k in range(shards):
            stages.enumerate_shard(root, inst, z, h, k, shards, **SMALL)
        if shards > 1:
            stages.gather_shards(root, inst, z, h, shards)
        for r in z.rotations[1:]:
            stages.rotate_partition(root, inst, z, h, r, "flat")
        stages.encode_partitions(root, inst, z, h, [0], "cartesian")
        for r in z.rotations[1:]:
            stages.rotate_partition(root, inst, z, h, r, "cartesian")
        stages.encode_partitions(root, inst, z, h, z.rotations, "prefix")


@pytest.mark.parametrize("shards", [1, 3, 7])
def test_stages_write_the_same_rows_in_the_same_order(board, reference, tmp_path, shards):
    root = tmp_path / "st"
    for h in (1, 2):
        _staged_store(root, board, h, shards)
        for z in zone_map(board.width, board.height, h).zones:
            rec = json.loads((store.partition_dir(root, board.id, h, z.id, 0, "flat")
                              / store.meta_name("flat")).read_text())
            ref = json.loads((store.partition_dir(reference, board.id, h, z.id, 0, "flat")
                              / store.meta_name("flat")).read_text())
            assert rec["nodes"] == ref["nodes"] and rec["rows"] == ref["rows"]
            for r in z.rotations:
                for f in FORMS:
                    a = store.read_partition(reference, board.id, h, z.id, r, f)
                    b = store.read_partition(root, board.id, h, z.id, r, f)
                    assert np.array_equal(a[0], b[0]), (h, z.id, r, f)
                    assert np.array_equal(a[1], b[1]), (h, z.id, r, f)
    assert not any((root / stages.SHARDS).rglob("*.parquet"))  # gathered shards are removed
    man = store.read_manifest(root)
    assert len(man["partitions"]) == len(store.read_manifest(reference)["partitions"])
    for p in man["partitions"]:  # the manifest lists exactly the files on disk
        d = root / p["path"]
        assert sorted(f["file"] for f in p["files"]) == sorted(
            x.name for x in d.glob(f"{store.FORM_FILE[p['form']]}-*.parquet"))


def test_rotating_any_form_equals_the_enumerated_rotation(board, reference, tmp_path):
    """The rotator on prefix rows too (decoded across row groups, re-encoded)."""
    root = tmp_path / "st"
    h = 2
    for z in zone_map(board.width, board.height, h).zones:
        stages.enumerate_shard(root, board, z, h, 0, 1, **SMALL)
        stages.encode_partitions(root, board, z, h, [0], "prefix")
        for r in z.rotations[1:]:
            stages.rotate_partition(root, board, z, h, r, "prefix")
            a = store.read_partition(reference, board.id, h, z.id, r, "prefix")
            b = store.read_partition(root, board.id, h, z.id, r, "prefix")
            assert np.array_equal(a[0], b[0])


def test_shard_split_covers_the_walk_and_balances_it(board):
    h = 2
    for z in zone_map(board.width, board.height, h).zones:
        total = count_corolles(board, z.x, z.y, h).corolles
        for shards in (1, 2, 5):
            split = stages.shard_split(board, z, h, shards)
            assert split.bounds[0] == 0 and split.bounds[-1] == len(split.prefixes)
            assert np.all(np.diff(split.bounds) >= 0) and len(split.bounds) == shards + 1
            assert int(split.weights.sum()) == total
            # no shard holds more than its share plus the heaviest single prefix
            share = (split.weights + 1).sum() / shards
            for k in range(shards):
                w = (split.weights[split.bounds[k]:split.bounds[k + 1]] + 1).sum()
                assert w <= share + split.weights.max() + 1
            same = stages.shard_split(board, z, h, shards)  # deterministic
            assert np.array_equal(same.bounds, split.bounds)


def test_plan_counts_every_zone_and_decides_shards(board):
    plan = stages.plan_zones(board, 2, shard_corolles=300, max_shards=4)
    zm = zone_map(board.width, board.height, 2)
    assert [p.zone for p in plan] == [z.id for z in zm.zones]
    for p, z in zip(plan, zm.zones, strict=True):
        assert p.corolles == count_corolles(board, z.x, z.y, 2).corolles
        assert p.shards == min(4, max(1, math.ceil(p.corolles / 300)))
        assert tuple(p.rotations) == tuple(z.rotations)
    assert {p.shards for p in stages.plan_zones(board, 1, shard_corolles=1)} == {1}
    with pytest.raises(StoreError, match="shard_corolles"):
        stages.plan_zones(board, 2, shard_corolles=0)


def test_gather_needs_every_shard_and_a_leftover_shard_is_redone(board, reference, tmp_path):
    root = tmp_path / "st"
    z = zone_map(board.width, board.height, 2).zones[4]
    stages.enumerate_shard(root, board, z, 2, 0, 3, **SMALL)
    stages.enumerate_shard(root, board, z, 2, 2, 3, **SMALL)
    with pytest.raises(StoreError, match=r"shard 1 of 3 .* --shard 1/3"):
        stages.gather_shards(root, board, z, 2, 3)
    assert not store.partition_dir(root, board.id, 2, z.id, 0, "flat").exists()
    # files of a killed attempt (no record) are replaced by the rerun
    d = stages.shard_dir(root, board.id, 2, z.id, 1, 3)
    d.mkdir(parents=True)
    (d / "part-00000.parquet").write_bytes(b"PAR1 half written")
    rec = stages.enumerate_shard(root, board, z, 2, 1, 3, **SMALL)
    assert not rec["skipped"] and (d / stages.SHARD_META).exists()
    again = stages.enumerate_shard(root, board, z, 2, 1, 3, **SMALL)
    assert again["skipped"]
    stages.gather_shards(root, board, z, 2, 3)
    a = store.read_partition(reference, board.id, 2, z.id, 0, "flat")
    b = store.read_partition(root, board.id, 2, z.id, 0, "flat")
    assert np.array_equal(a[0], b[0])
    assert stages.gather_shards(root, board, z, 2, 3).skipped


def test_a_one_shard_zone_killed_before_its_partition_is_published_resumes(
        board, reference, tmp_path, monkeypatch):
    """A one-shard zone publishes its shard, then the partition: a run killed between the
    two (seen once in CI's kill-and-resume pipeline test) must publish it on the rerun."""
    root = tmp_path / "st"
    z = zone_map(board.width, board.height, 1).zones[0]
    gather = stages.gather_shards

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(stages, "gather_shards", killed)
    with pytest.raises(KeyboardInterrupt):
        stages.enumerate_shard(root, board, z, 1, 0, 1, **SMALL)
    assert (stages.shard_dir(root, board.id, 1, z.id, 0, 1) / stages.SHARD_META).exists()
    assert not (store.partition_dir(root, board.id, 1, z.id, 0, "flat")
                / store.meta_name("flat")).exists()
    monkeypatch.setattr(stages, "gather_shards", gather)
    rec = stages.enumerate_shard(root, board, z, 1, 0, 1, **SMALL)
    assert rec["skipped"]
    a = store.read_partition(reference, board.id, 1, z.id, 0, "flat")
    b = store.read_partition(root, board.id, 1, z.id, 0, "flat")
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_stage_errors(board, tmp_path):
    root = tmp_path / "st"
    z = zone_map(board.width, board.height, 2).zones[4]
    with pytest.raises(StoreError, match="no complete flat partition"):
        stages.rotate_partition(root, board, z, 2, z.rotations[1], "flat")
    with pytest.raises(StoreError, match="not derived"):
        stages.rotate_partition(root, board, z, 2, 1, "flat")
    with pytest.raises(StoreError, match="not derived"):
        stages.rotate_partition(root, board, z, 2, 0, "flat")
    with pytest.raises(StoreError, match="no complete flat partition"):
        stages.encode_partitions(root, board, z, 2, [0], "prefix")
    with pytest.raises(StoreError, match="compact forms"):
        stages.encode_partitions(root, board, z, 2, [0], "flat")
    with pytest.raises(StoreError, match="shard 3 of 3"):
        stages.enumerate_shard(root, board, z, 2, 3, 3)
    assert not store.partition_dir(root, board.id, 2, z.id, 0, "flat").exists()


def test_stage_commands(board, reference, tmp_path):
    inst = tmp_path / "b.e2s"
    write_e2store(board, inst)
    root = tmp_path / "st"
    runner = CliRunner()
    z = zone_map(board.width, board.height, 2).zones[4]
    res = runner.invoke(main, ["stage", "plan", str(inst), "--hamming", "2", "--shard-corolles",
                               "150", "-o", str(tmp_path / "plan.json")])
    assert res.exit_code == 0, res.output
    plan = json.loads((tmp_path / "plan.json").read_text())
    shards = plan["zones"][z.id]["shards"]
    assert shards > 1 and plan["zones"][z.id]["corolles"] == count_corolles(
        board, z.x, z.y, 2).corolles
    common = [str(inst), "--store", str(root), "--hamming", "2", "--zone", str(z.id)]
    for k in range(shards):
        res = runner.invoke(main, ["stage", "shard", *common, "--shard", f"{k}/{shards}"])
        assert res.exit_code == 0, res.output
    res = runner.invoke(main, ["stage", "gather", *common, "--shards", str(shards), "-o",
                               str(tmp_path / "g.json")])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "g.json").read_text())[0]["rotation"] == 0
    for cmd in (["rotate", *common, "--form", "flat"],
                ["encode", *common, "--form", "prefix"],
                ["encode", *common, "--form", "cartesian", "--rotation", "0"]):
        res = runner.invoke(main, ["stage", *cmd, "-o", str(tmp_path / "r.json")])
        assert res.exit_code == 0, res.output
    done = json.loads((tmp_path / "r.json").read_text())
    assert [p["rotation"] for p in done] == [0] and done[0]["form"] == "cartesian"
    for r in z.rotations:
        for f in ("flat", "prefix"):
            a = store.read_partition(reference, board.id, 2, z.id, r, f)
            b = store.read_partition(root, board.id, 2, z.id, r, f)
            assert np.array_equal(a[0], b[0])
    res = runner.invoke(main, ["stage", "shard", *common, "--shard", "3/2"])
    assert res.exit_code == 2 and "expected 0 <= K < S" in res.output
    res = runner.invoke(main, ["stage", "rotate", *common[:-1], "99", "--form", "flat"])
    assert res.exit_code == 2 and "zone 99 does not exist" in res.output


def _exact_placements(cells: np.ndarray, n_pieces: int) -> np.ndarray:
    """Independent placement sets per slot of row-major cells (last column unused)."""
    seen = np.zeros((cells.shape[1], 4 * n_pieces + 1), dtype=bool)
    for i in range(cells.shape[1]):
        col = cells[:, i]
        seen[i, np.unique(col[col >= 0])] = True
    return seen


@pytest.mark.parametrize("shards", [1, 3])
def test_every_record_keeps_the_exact_placement_sets(board, reference, tmp_path, shards):
    """The per-slot placement sets (for cardinality) in every partition record, written by
    enumerate or by the stages (gathered shards, rotator, encoders), match the rows."""
    import e2store

    root = tmp_path / "st"
    _staged_store(root, board, 2, shards)
    for st_root in (reference, root):
        with e2store.connect(st_root) as st:
            for z in zone_map(board.width, board.height, 2).zones:
                for r in z.rotations:
                    cells, _ = store.read_partition(st_root, board.id, 2, z.id, r)
                    want = _exact_placements(cells, board.n_pieces)
                    for f in FORMS:
                        rec = json.loads((store.partition_dir(st_root, board.id, 2, z.id, r, f)
                                          / store.meta_name(f)).read_text())
                        got = placements.placements_from_hex(rec["placements"], board.n_pieces)
                        assert np.array_equal(got[:, :-1], want[:, :-1]), (z.id, r, f)
                    card = st.cardinality(board.id, 2, z.id, r).to_pylist()
                    assert [c["placements"] for c in card] == want[:, :-1].sum(1).tolist()
                    assert [c["pieces"] for c in card] == [
                        len(np.unique(np.nonzero(w[:-1])[0] >> 2)) for w in want]


def test_mark_placements_kernel_agrees_with_its_twin():
    from naive import naive_placement_sets

    rng = np.random.default_rng(5)
    for s, n, m in [(1, 0, 4), (3, 50, 8), (13, 400, 37), (5, 1000, 400)]:
        cells = rng.integers(-1, m + 3, size=(s, n)).astype(np.int16)
        seen = np.zeros((s + 1, m), dtype=bool)
        seen[-1, 0] = True  # marks already set stay set
        placements.mark_placements(seen, cells)
        want = naive_placement_sets(cells.tolist(), m)
        assert [set(np.nonzero(r)[0].tolist()) for r in seen[:s]] == want
        assert seen[-1].tolist() == [True] + [False] * (m - 1)
    with pytest.raises(ValueError, match="do not fit"):
        placements.mark_placements(np.zeros((2, 4), bool), np.zeros((3, 1), np.int16))
