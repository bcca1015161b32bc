"""The prefix and cartesian forms: kernels against twins, every form expands to the flat rows."""

from __future__ import annotations

import itertools
import json
import shutil

import naive
import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from helpers import random_instance, vouch_for
from hypothesis import given, settings
from hypothesis import strategies as st

from e2store import store
from e2store.cli import main
from e2store.corolles import _kernels
from e2store.corolles.enumerate import enumerate_corolles
from e2store.corolles.factorised import cartesian_rows
from e2store.corolles.forms import frontier_of, prefix_decode, prefix_shared
from e2store.errors import StoreError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.zones.geometry import n_slots, ring_offsets
from e2store.zones.zonemap import zone_map

_instance = random_instance


def _rowset(cells, front):
    return set(map(tuple, np.hstack([cells.astype(int), front.astype(int)]).tolist()))


@pytest.mark.parametrize("w,h_board,seed", [(3, 3, 1), (4, 3, 2), (4, 4, 4)])
def test_cartesian_kernel_agrees_with_naive_twin(w, h_board, seed):
    inst = _instance(w, h_board, seed)
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    for h in range(4):
        off = ring_offsets(h)
        s_in = n_slots(h - 1) if h else 0
        for y, x in itertools.product(range(h_board), range(w)):
            want = {k: (dict(v[0]), v[1])
                    for k, v in naive.naive_cartesian(pieces, w, h_board, x, y, h).items()}
            cr = cartesian_rows(inst, x, y, h)
            got = {}
            for j in range(cr.n_rows):
                stem = frozenset(((x + int(off[i, 0]), y + int(off[i, 1])), int(v) >> 2,
                                  int(v) & 3) for i, v in enumerate(cr.stems[j]) if v >= 0)
                lists = []
                for k in range(len(cr.offsets)):
                    vals = cr.values[k][cr.offsets[k][j]:cr.offsets[k][j + 1]].tolist()
                    if vals != [-1]:
                        dx, dy = off[s_in + k] if h else off[0]
                        lists.append(((x + int(dx), y + int(dy)), vals))
                got[stem] = (dict(lists), int(cr.counts[j]))
            assert got == want, (x, y, h)


def test_expand_kernel_agrees_with_naive_twin():
    rng = np.random.default_rng(3)
    for _ in range(40):
        n, s_in, m = int(rng.integers(0, 4)), int(rng.integers(0, 4)), int(rng.integers(0, 4))
        stems = rng.integers(-1, 12, size=(n, s_in)).astype(np.int16)
        lists = [[sorted(rng.choice(48, size=int(rng.integers(0, 4)), replace=False).tolist())
                  or [-1] for _ in range(m)] for _ in range(n)]
        offsets = np.zeros((m, n + 1), np.int64)
        width = max([len(li[k]) for li in lists for k in range(m)] + [1])
        values = np.full((m, max(1, n * width)), -1, np.int16)
        for k in range(m):
            pos = 0
            for j in range(n):
                values[k, pos:pos + len(lists[j][k])] = lists[j][k]
                pos += len(lists[j][k])
                offsets[k, j + 1] = pos
        want = [r for j in range(n) for r in naive.naive_expand(stems[j].tolist(), lists[j])]
        got = _kernels.expand_cartesian(stems, offsets, values, 12, len(want))
        assert got.tolist() == want
        ok = _kernels.feasible_candidates(stems, offsets, values, 12)
        for j in range(n):
            rows_j = naive.naive_expand(stems[j].tolist(), lists[j])
            for k in range(m):
                for q in range(offsets[k, j], offsets[k, j + 1]):
                    want_ok = any(r[s_in + k] == values[k, q] for r in rows_j)
                    assert ok[k, q] == want_ok, (j, k, q)
        counts = _kernels.count_cartesian_rows(stems, offsets, values, 12)
        assert counts.tolist() == [len(naive.naive_expand(stems[j].tolist(), lists[j]))
                                   for j in range(n)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(-1, 3), min_size=5, max_size=5), max_size=40),
       st.integers(0, 40))
def test_prefix_roundtrip(rows, cut):
    cells = np.array(rows, dtype=np.int16).reshape(-1, 5)
    a, b = cells[:cut], cells[cut:]
    sa = prefix_shared(a, None)
    sb = prefix_shared(b, a[-1] if len(a) else None)
    shared = np.concatenate([sa, sb])
    if len(cells):
        assert shared[0] == 0
    assert np.array_equal(prefix_decode(shared, cells), cells)
    # a shared slot really equals the previous row's
    for j in range(1, len(cells)):
        assert (cells[j, : shared[j]] == cells[j - 1, : shared[j]]).all()


def test_all_forms_expand_to_the_flat_rows(tmp_path):
    inst = _instance(5, 4, 21)
    forms = ("flat", "prefix", "cartesian")
    for h in range(4):
        store.enumerate_store(tmp_path, inst, h, None, forms=forms, chunk_rows=300,
                              rows_per_file=700)
        zm = zone_map(5, 4, h)
        for z in zm.zones:
            for m in z.members:
                want_c, want_f = enumerate_corolles(inst, m.x, m.y, h)
                flat = store.read_partition(tmp_path, inst.id, h, z.id, m.rotation, "flat")
                for form in forms:
                    c, f = store.read_partition(tmp_path, inst.id, h, z.id, m.rotation, form)
                    assert len(c) == len(want_c), (h, z.id, m, form)
                    assert _rowset(c, f) == _rowset(want_c, want_f), (h, z.id, m, form)
                prefix = store.read_partition(tmp_path, inst.id, h, z.id, m.rotation, "prefix")
                assert np.array_equal(prefix[0], flat[0])  # same rows, same order
    parts = store.read_manifest(tmp_path)["partitions"]
    assert {p["form"] for p in parts} == set(forms)
    for p in parts:
        meta = pq.ParquetFile(tmp_path / p["path"] / p["files"][0]["file"]).schema_arrow.metadata
        kv = {k.decode(): v.decode() for k, v in meta.items()}
        assert kv["e2store.form"] == p["form"]
        assert kv["e2store.hamming"] == str(p["hamming"])
        assert kv["e2store.rotation"] == str(p["rotation"])
        assert json.loads(kv["e2store.slots"]) == ring_offsets(p["hamming"]).tolist()


def test_frontier_of_matches_the_enumerator():
    inst = _instance(5, 4, 21)
    for h in range(4):
        cells, front = enumerate_corolles(inst, 1, 1, h)
        assert np.array_equal(frontier_of(cells, inst, h), front)


@pytest.mark.parametrize("name,h", [("pieces_4x4.txt", 1), ("pieces_4x4.txt", 2),
                                    ("pieces_5x5.txt", 1),
                                    # 35 s; the 4x4 board checks hamming 2 in the default run
                                    pytest.param("pieces_5x5.txt", 2, marks=pytest.mark.slow)])
def test_benchmark_instances_all_forms(tmp_path, shared_instances, name, h):
    inst = read_instance(shared_instances / "benchmark" / name)
    store.enumerate_store(tmp_path, inst, h, None, forms=("flat", "prefix", "cartesian"),
                          threads=2)
    for p in store.read_manifest(tmp_path)["partitions"]:
        if p["form"] != "flat":
            continue
        ref = _rowset(*store.read_partition(tmp_path, inst.id, h, p["zone"], p["rotation"]))
        assert len(ref) == p["corolles"]
        for form in ("prefix", "cartesian"):
            got = store.read_partition(tmp_path, inst.id, h, p["zone"], p["rotation"], form)
            assert _rowset(*got) == ref, (p["zone"], p["rotation"], form)


def test_mismatched_or_newer_files_are_refused(tmp_path):
    inst = _instance(5, 4, 21)
    store.enumerate_store(tmp_path, inst, 1, [0, 1], forms=("flat", "cartesian"))
    d0 = store.partition_dir(tmp_path, inst.id, 1, 0, 0, "cartesian")
    d1 = store.partition_dir(tmp_path, inst.id, 1, 1, 0, "cartesian")
    shutil.copy(d1 / "cartesian-00000.parquet", d0 / "cartesian-00000.parquet")
    with pytest.raises(StoreError, match="damaged data file .its SHA-256"):
        store.read_partition(tmp_path, inst.id, 1, 0, 0, "cartesian")
    vouch_for(d0 / "cartesian-00000.parquet", "cartesian")
    with pytest.raises(StoreError, match="metadata zone is '1', expected '0'"):
        store.read_partition(tmp_path, inst.id, 1, 0, 0, "cartesian")
    d1 = store.partition_dir(tmp_path, inst.id, 1, 1, 0, "flat")
    t = pq.read_table(d1 / "part-00000.parquet")
    kv = dict(t.schema.metadata)
    kv[b"e2store.format_version"] = b"99"
    pq.write_table(t.replace_schema_metadata(kv), d1 / "part-00000.parquet")
    vouch_for(d1 / "part-00000.parquet", "flat")
    with pytest.raises(StoreError, match="newer than this e2store reads"):
        store.read_partition(tmp_path, inst.id, 1, 1, 0)
    with pytest.raises(StoreError, match="--form prefix"):
        store.read_partition(tmp_path, inst.id, 1, 1, 0, "prefix")


def test_adding_a_form_later_and_the_cli(tmp_path):
    inst = _instance(5, 4, 21)
    path = tmp_path / "i.e2s"
    write_e2store(inst, path)
    out = tmp_path / "st"
    run = CliRunner().invoke
    r = run(main, ["enumerate", str(path), "--hamming", "2", "--store", str(out)])
    assert r.exit_code == 0
    flat_files = sorted(p.name for p in out.rglob("part-*.parquet"))
    r = run(main, ["enumerate", str(path), "--hamming", "2", "--store", str(out), "--form",
                   "cartesian", "--form", "prefix"])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.rglob("part-*.parquet")) == flat_files
    digests = set()
    for form in ("flat", "prefix", "cartesian"):
        r = run(main, ["expand", "--store", str(out), "--hamming", "2", "--zone", "3",
                       "--rotation", "0", "--form", form, "-o", str(tmp_path / f"{form}.parquet")])
        assert r.exit_code == 0, r.output
        digests.add(r.output.split("sha256 ")[1].strip())
        assert pq.read_table(tmp_path / f"{form}.parquet").num_rows > 0
    assert len(digests) == 1
    r = run(main, ["enumerate", str(path), "--hamming", "2", "--store", str(out), "--form",
                   "cartesian", "--force", "--at", "0,0"])
    assert r.exit_code == 0
    assert store.read_partition(out, inst.id, 2, 0, 0, "cartesian")[0].shape[0] > 0


def test_summary_reports_each_form(tmp_path):
    from e2store.reports.summary import summarize

    inst = _instance(5, 4, 21)
    store.enumerate_store(tmp_path, inst, 2, None, forms=("flat", "prefix", "cartesian"))
    entries = summarize(tmp_path)["entries"]
    assert [e["form"] for e in entries] == ["flat", "prefix", "cartesian"]
    assert len({e["corolles"] for e in entries}) == 1
    flat, prefix, cart = entries
    assert flat["rows"] == prefix["rows"] > cart["rows"]  # cartesian: a row per stem
    assert all(e["complete"] for e in entries)


def test_crafted_counts_cannot_overrun_the_expand_buffer():
    """The stored `corolles` column never sizes a write: a count too small or too large is
    a ValueError after a bounded walk (before the check, too small corrupted the heap)."""
    rng = np.random.default_rng(5)
    stems = rng.integers(0, 12, size=(3, 2)).astype(np.int16)
    lists = [[[20, 24, 28], [32, 36]], [[40, 44], [21, 25, 29]], [[33], [37, 41]]]
    offsets = np.zeros((2, 4), np.int64)
    values = np.full((2, 9), -1, np.int16)
    for k in range(2):
        pos = 0
        for j in range(3):
            values[k, pos:pos + len(lists[j][k])] = lists[j][k]
            pos += len(lists[j][k])
            offsets[k, j + 1] = pos
    true_total = sum(len(naive.naive_expand(stems[j].tolist(), lists[j])) for j in range(3))
    assert len(_kernels.expand_cartesian(stems, offsets, values, 12, true_total)) == true_total
    for wrong in (0, 1, true_total - 1, true_total + 5, -3):
        with pytest.raises(ValueError, match="stored counts say"):
            _kernels.expand_cartesian(stems, offsets, values, 12, wrong)
