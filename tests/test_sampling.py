"""Estimated counts (e2store.corolles.sampling): the path kernel against its naive twin, exact when
nothing is sampled, within a few standard errors of the exact count, reproducible."""

from __future__ import annotations

import json

import naive
import numpy as np
import pytest
from click.testing import CliRunner
from helpers import random_instance

from e2store.cli import main
from e2store.corolles import _kernels
from e2store.corolles.enumerate import candidate_table, corolle_layout, kernel_args, level_prefixes
from e2store.corolles.factorised import count_factorised
from e2store.corolles.sampling import estimate_count
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.zones.geometry import ring_offsets


@pytest.mark.parametrize("w,h,x,y,hamming,k,extra", [
    (5, 5, 2, 2, 2, 1, 4), (5, 4, 1, 1, 2, 2, 3), (6, 6, 2, 3, 3, 2, 8), (4, 4, 0, 0, 3, 0, 5),
    (6, 5, 5, 4, 2, 1, 4)])
def test_sample_paths_agrees_with_naive_twin(w, h, x, y, hamming, k, extra):
    inst = random_instance(w, h, 40 + x + 7 * y, 2, 3)
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    lay = corolle_layout(w, h, x, y, hamming)
    extra = min(extra, lay.n_levels - k)
    table = candidate_table(inst, lay)
    cells = [(x + int(dx), y + int(dy)) for dx, dy in ring_offsets(hamming)[lay.slot_of]]
    pre = level_prefixes(lay, table, k)[:12]
    u = np.random.default_rng(5).random((len(pre), 6, extra))
    paths, weights = _kernels.sample_paths(pre, u, inst.n_pieces, *kernel_args(lay, table))
    want_paths, want_w = naive.naive_sample_paths(pieces, w, h, cells, pre.tolist(), u.tolist())
    assert weights.tolist() == want_w
    assert any(v > 0 for v in want_w)
    for row, want, wt in zip(paths.tolist(), want_paths, want_w, strict=True):
        if wt > 0:
            assert row == want


def test_exact_when_the_strata_reach_the_path_end():
    inst = random_instance(6, 6, 5, 3, 6)
    for x, y, h in [(2, 2, 2), (1, 0, 3), (0, 0, 1), (3, 2, 0)]:
        got = estimate_count(inst, x, y, h, samples=10**6, tail=2)
        want = count_factorised(inst, x, y, h).corolles
        assert got.exact and got.stderr == 0.0 and got.corolles == want, (x, y, h)


@pytest.mark.parametrize("x,y,h,tail", [(2, 2, 2, 0), (1, 1, 3, 1), (2, 0, 3, 1), (3, 0, 3, 0),
                                        (0, 2, 3, 0)])
def test_estimate_within_a_few_standard_errors(x, y, h, tail):
    """Seeded, so deterministic; a biased kernel or a wrong weight lands many errors off."""
    inst = random_instance(7, 7, 11, 3, 9)
    want = count_factorised(inst, x, y, h, threads=2).corolles
    got = estimate_count(inst, x, y, h, samples=300_000, tail=tail, seed=3, threads=2)
    assert not got.exact and got.stderr > 0
    assert abs(got.corolles - want) < 4 * got.stderr, (got, want)
    assert got.rel_error < 0.05


def test_same_seed_same_estimate_whatever_the_threads():
    inst = random_instance(7, 7, 12, 3, 9)
    a = estimate_count(inst, 3, 3, 3, samples=50_000, seed=9, threads=1)
    b = estimate_count(inst, 3, 3, 3, samples=50_000, seed=9, threads=3)
    c = estimate_count(inst, 3, 3, 3, samples=50_000, seed=10, threads=1)
    assert (a.corolles, a.stderr, a.samples) == (b.corolles, b.stderr, b.samples)
    assert c.corolles != a.corolles


def test_empty_zone_is_exactly_zero():
    pieces = [(0, 0, 1, 1)] * 9  # nine corners: nothing fits an edge or the centre
    from e2store.instance.model import Instance
    got = estimate_count(Instance("corners", 3, 3, pieces), 1, 1, 1, samples=100)
    assert got.exact and got.corolles == 0


def test_bad_arguments_are_refused():
    inst = random_instance(4, 4, 1)
    with pytest.raises(ValueError, match="samples"):
        estimate_count(inst, 0, 0, 2, samples=0)
    with pytest.raises(ValueError, match="tail"):
        estimate_count(inst, 0, 0, 2, tail=-1)


def test_cli_json_and_errors(tmp_path):
    inst = random_instance(6, 6, 5, 3, 6)
    path = tmp_path / "g.e2s"
    write_e2store(inst, path)
    r = CliRunner().invoke(main, ["count-estimate", str(path), "--hamming", "3", "--at", "2,1",
                                  "--at", "0,0", "--samples", "20000", "--json"])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [(e["x"], e["y"]) for e in rows] == [(2, 1), (0, 0)]
    for e in rows:
        assert e["hamming"] == 3 and e["corolles"] > 0 and e["rel_error"] >= 0
    want = count_factorised(read_instance(path), 0, 0, 3).corolles
    assert rows[1]["exact"] and rows[1]["corolles"] == want
    out = tmp_path / "est.json"
    r = CliRunner().invoke(main, ["count-estimate", str(path), "--hamming", "3", "--at", "2,1",
                                  "--samples", "20000", "-o", str(out)])
    assert r.exit_code == 0 and "%" in r.output
    assert json.loads(out.read_text())[0]["corolles"] == rows[0]["corolles"]
    r = CliRunner().invoke(main, ["count-estimate", str(path), "--hamming", "3",
                                  "--samples", "0"])
    assert r.exit_code != 0 and "samples" in r.output
    r = CliRunner().invoke(main, ["count-estimate", str(path), "--hamming", "2", "--at", "9,9"])
    assert r.exit_code != 0 and "9" in r.output


def test_cli_plan_estimates_the_left_out_zones_and_tables_show_them(tmp_path):
    """count-plan leaves (1,1) out; count-estimate --plan samples just that zone; the
    corolles table shows the estimate there and the exact count elsewhere."""
    inst = random_instance(6, 6, 5, 3, 6)
    path = tmp_path / "g.e2s"
    write_e2store(inst, path)
    run = CliRunner().invoke
    plan, est, rec = tmp_path / "plan.json", tmp_path / "est.json", tmp_path / "rec"
    r = run(main, ["stage", "count-plan", str(path), "--hamming", "2", "--max-stems", "20000",
                   "-o", str(plan)])
    assert r.exit_code == 0, r.output
    left = [(z["x"], z["y"]) for z in json.loads(plan.read_text())["zones"] if not z["shards"]]
    assert left and len(left) < 6
    r = run(main, ["count-estimate", str(path), "--hamming", "2", "--plan", str(plan),
                   "--samples", "5000", "-o", str(est)])
    assert r.exit_code == 0, r.output
    rows = json.loads(est.read_text())
    assert [(e["x"], e["y"]) for e in rows] == left
    r = run(main, ["tabulate", str(path), "--hamming", "2", "--max-stems", "20000",
                   "--records", str(rec)])
    assert r.exit_code == 0, r.output
    r = run(main, ["stage", "count-gather", str(path), "--hamming", "2", "--records", str(rec),
                   "--plan", str(plan), "--estimates", str(est), "--require", "-o",
                   str(tmp_path / "t")])
    assert r.exit_code == 0, r.output
    md = (tmp_path / "t" / "corolles_h2.md").read_text()
    for e in rows:
        assert f"| {e['x']} {e['y']} | ≈ {e['corolles']:.4e} ± " in md
    assert "estimated by sampling" in md
    done = next(z for z in json.loads(plan.read_text())["zones"] if z["shards"])
    want = count_factorised(inst, done["x"], done["y"], 2).corolles
    assert f"| {done['x']} {done['y']} | {want:,} |" in md
    bad = tmp_path / "bad.json"
    bad.write_text('[{"x": 1}]')
    r = run(main, ["stage", "count-gather", str(path), "--hamming", "2", "--records", str(rec),
                   "--estimates", str(bad), "-o", str(tmp_path / "t2")])
    assert r.exit_code != 0 and "bad.json" in r.output and "not an estimates file" in r.output
    other = random_instance(6, 6, 6, 3, 6)
    write_e2store(other, tmp_path / "o.e2s")
    r = run(main, ["count-estimate", str(tmp_path / "o.e2s"), "--hamming", "2", "--plan",
                   str(plan)])
    assert r.exit_code != 0 and "plan of" in r.output
