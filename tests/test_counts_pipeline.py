"""The count-table rules of the main job (pipeline/rules/counts.smk): the `counts:` config
section, an end-to-end run on the benchmark 4x4 and a generated 2x2 (values against an
independent factorised count and DESIGN.md's worked example, a no-op rerun, a shard
recomputed after its record is deleted), and dry runs of config/counts.yaml and of the
default config."""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

import pytest
import yaml
from conftest import SHARED
from helpers import random_instance
from test_pipeline import REPO, _benchmark_file, _job_counts, _snakemake, _validate

from e2store.corolles.factorised import count_factorised
from e2store.instance.formats import read_instance
from e2store.zones.zonemap import zone_map

BENCH = "../shared/instances/benchmark"
# a 2x2 (one zone: two quick jobs, a second column) beside the benchmark 4x4, whose hamming-2
# zone (1,1) has 797 stems (its hamming-1 corolles) -> 2 shards
COUNTS = {"instances": {"b2": "pieces_2x2.txt", "b4": f"{BENCH}/pieces_4x4.txt"},
          "hamming": [1, 2], "shard_stems": 400, "max_shards": 2, "threads": 1}
CFG = {"results": "res", "hamming": [1], "forms": ["flat"],
       "instances": {"b4": f"{BENCH}/pieces_4x4.txt"}, "counts": COUNTS}
TABLES = sorted(f"{m}_h{h}.{ext}" for m in ("corolles", "seconds") for h in (1, 2)
                for ext in ("csv", "md"))
# DESIGN.md, worked example (benchmark pieces_4x4.txt)
WORKED = {1: {(0, 0): 56, (1, 0): 294, (0, 1): 294, (1, 1): 797},
          2: {(0, 0): 708, (1, 0): 1268, (0, 1): 1301, (1, 1): 320}}


def _workdir(root: Path) -> Path:
    """root/main with root/shared -> ../shared, so the config's paths read as from the repo."""
    if not SHARED.is_dir():
        pytest.skip(f"shared instances not found at {SHARED}")
    work = root / "main"
    work.mkdir(parents=True)
    (root / "shared").symlink_to(SHARED.parent)
    (work / "cfg.yaml").write_text(yaml.safe_dump(CFG))
    _benchmark_file(work / "pieces_2x2.txt", random_instance(2, 2, seed=4, n_frame=2, n_inner=4))
    return work


def _run(work: Path, config: Path, *extra: str):
    """Snakemake with the targets first (--configfile takes every word after it)."""
    return _snakemake(work, None, *extra, "--configfile", str(config))


def _csv(path: Path) -> dict[tuple[int, int], dict[str, str]]:
    with path.open(newline="") as fh:
        return {(int(r["x"]), int(r["y"])): r for r in csv.DictReader(fh)}


def _tree(root: Path) -> dict[str, int]:
    """mtime_ns of every file under root, by relative path."""
    return {p.relative_to(root).as_posix(): p.stat().st_mtime_ns
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def counts_run(tmp_path_factory):
    """`snakemake counts_tables` run once on the tiny config; (workdir, seconds)."""
    work = _workdir(tmp_path_factory.mktemp("counts"))
    t0 = time.perf_counter()
    proc = _run(work, work / "cfg.yaml", "counts_tables")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return work, time.perf_counter() - t0


def test_counts_section_is_optional_and_checked():
    from snakemake.exceptions import WorkflowError

    assert "counts" not in _validate({})
    cfg = _validate({"counts": {"instances": {"a": "a.txt"}}})
    assert cfg["counts"] == {"instances": {"a": "a.txt"}, "hamming": [1, 2],
                             "shard_stems": 50_000_000, "max_shards": 64, "threads": 1}
    good = {"instances": {"a": "a.txt"}}
    for bad in ({}, {"instances": {}}, {"instances": {"bad name": "a.txt"}},
                {"instances": {"a": ""}}, {**good, "hamming": []},
                {**good, "hamming": [1, 1]}, {**good, "hamming": [-1]},
                {**good, "shard_stems": 0}, {**good, "max_shards": 0},
                {**good, "threads": 0}, {**good, "max_stems": 0},
                {**good, "max_stems": {"a": 0}}, {**good, "max_stems": {"bad name": 5}},
                {**good, "max_stems": "1e9"}, {**good, "extra": 1},
                {**good, "estimate_samples": 0}, {**good, "estimate_samples": "1e7"}):
        with pytest.raises(WorkflowError):
            _validate({"counts": bad})


def test_count_tables_end_to_end(counts_run):
    work, _ = counts_run
    res = work / "res" / "counts"
    assert sorted(p.name for p in (res / "tables").iterdir()) == TABLES
    assert not (work / "res" / "store").exists()  # the main job's store is not built
    insts = {n: read_instance(work / p) for n, p in COUNTS["instances"].items()}
    for h in (1, 2):
        corolles = _csv(res / "tables" / f"corolles_h{h}.csv")
        seconds = _csv(res / "tables" / f"seconds_h{h}.csv")
        assert corolles.keys() == seconds.keys()
        for name, label in (("b2", "2x2"), ("b4", "4x4")):
            inst = insts[name]
            plan = json.loads((res / "plans" / f"{name}_h{h}.json").read_text())
            assert plan["instance"] == inst.id and plan["hamming"] == h
            cells = [(z.x, z.y) for z in zone_map(inst.width, inst.height, h).zones]
            assert [(z["x"], z["y"]) for z in plan["zones"]] == cells
            for (x, y), row in corolles.items():
                want = count_factorised(inst, x, y, h).corolles if (x, y) in cells else None
                assert row[label] == ("" if want is None else str(want)), (name, h, x, y)
                assert (seconds[x, y][label] == "") == (want is None)
            for z in plan["zones"]:
                total = 0
                for k in range(z["shards"]):
                    part = f"h{h}/{z['x']}-{z['y']}/shard-{k}-of-{z['shards']}.json"
                    got = json.loads((res / "receipts" / name / part).read_text())
                    assert got["instance"] == inst.id and not got["resumed"]
                    assert (res / "records" / inst.id / part).is_file()
                    total += got["corolles"]
                assert str(total) == corolles[z["x"], z["y"]][label]
        for cell, n in WORKED[h].items():
            assert corolles[cell]["4x4"] == str(n)
    plan = json.loads((res / "plans" / "b4_h2.json").read_text())
    assert [z["shards"] for z in plan["zones"]] == [1, 1, 1, 2]
    md = (res / "tables" / "corolles_h2.md").read_text()
    assert "| x y | 2x2 | 4x4 |" in md and "| 0 1 |  | 1,301 |" in md


def test_second_run_is_a_no_op(counts_run):
    work, _ = counts_run
    before = _tree(work / "res")
    proc = _run(work, work / "cfg.yaml", "counts_tables")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Nothing to be done" in proc.stdout + proc.stderr
    assert _tree(work / "res") == before


def test_lost_shard_is_recounted_alone(counts_run):
    """One shard loses its receipt and record (recounted), another its receipt only (read
    back from the record): only those two jobs and the hamming-2 tables run again."""
    work, _ = counts_run
    res = work / "res" / "counts"
    inst_id = json.loads((res / "plans" / "b4_h2.json").read_text())["instance"]
    lost, kept = "h2/1-1/shard-1-of-2.json", "h2/0-1/shard-0-of-1.json"
    tables = {f: (res / "tables" / f).read_bytes() for f in TABLES}
    old = {p: json.loads((res / "receipts" / "b4" / p).read_text()) for p in (lost, kept)}
    (res / "receipts" / "b4" / lost).unlink()
    (res / "records" / inst_id / lost).unlink()
    (res / "receipts" / "b4" / kept).unlink()
    before = _tree(res)
    proc = _run(work, work / "cfg.yaml", "counts_tables")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _job_counts(proc.stdout + proc.stderr) == {
        "count_shard": 2, "count_tables": 1, "counts_tables": 1, "total": 4}
    new = {p: json.loads((res / "receipts" / "b4" / p).read_text()) for p in (lost, kept)}
    assert not new[lost]["resumed"] and new[kept]["resumed"]
    assert new[kept] == {**old[kept], "resumed": True}
    assert new[lost]["corolles"] == old[lost]["corolles"]
    assert (res / "records" / inst_id / lost).is_file()
    after = _tree(res)
    changed = {p for p in after if after[p] != before.get(p)}
    assert {p for p in changed if not p.startswith("logs/")} == {
        f"receipts/b4/{lost}", f"receipts/b4/{kept}", f"records/{inst_id}/{lost}",
        *(f"tables/{f}" for f in TABLES if "_h2." in f)}
    for f in TABLES:
        if not f.startswith("seconds_h2"):  # the recounted shard took its own time
            assert (res / "tables" / f).read_bytes() == tables[f], f
    assert _csv(res / "tables" / "seconds_h2.csv").keys() == _csv(
        res / "tables" / "corolles_h2.csv").keys()


def test_max_stems_leaves_a_zone_out_of_the_run(tmp_path):
    """`max_stems: {b4: 500}` (a limit for that board) on the 4x4 at hamming 2: the zone
    (1,1) (797 stems) gets no shard job and the table shows it uncounted; the other three are
    counted."""
    work = _workdir(tmp_path)
    cfg = {**CFG, "counts": {"instances": {"b4": f"{BENCH}/pieces_4x4.txt"}, "hamming": [2],
                             "max_stems": {"b4": 500}, "estimate_samples": 4000}}
    (work / "cfg.yaml").write_text(yaml.safe_dump(cfg))
    proc = _run(work, work / "cfg.yaml", "counts_tables")
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = work / "res" / "counts"
    assert sorted(p.parent.name for p in (res / "receipts" / "b4" / "h2").rglob("*.json")) == [
        "0-0", "0-1", "1-0"]
    plan = json.loads((res / "plans" / "b4_h2.json").read_text())
    assert [(z["x"], z["y"], z["stems"], z["shards"]) for z in plan["zones"]] == [
        (0, 0, 56, 1), (1, 0, 294, 1), (0, 1, 294, 1), (1, 1, 797, 0)]
    corolles = _csv(res / "tables" / "corolles_h2.csv")
    assert {c: r["4x4"] for c, r in corolles.items()} == {
        (0, 0): "708", (1, 0): "1268", (0, 1): "1301", (1, 1): "NA"}
    assert "| 1 1 | ? (797 stems) |" in (res / "tables" / "seconds_h2.md").read_text()
    # the left-out zone is estimated (estimate_samples), within a few errors of DESIGN's 320
    est, = json.loads((res / "estimates" / "b4_h2.json").read_text())
    assert (est["x"], est["y"], est["hamming"], est["exact"]) == (1, 1, 2, False)
    assert abs(est["corolles"] - WORKED[2][(1, 1)]) < 4 * est["stderr"]
    md = (res / "tables" / "corolles_h2.md").read_text()
    assert f"| 1 1 | ≈ {est['corolles']:.4e} ± {100 * est['rel_error']:.2f}% |" in md


def test_counts_config_dry_run(tmp_path):
    """config/counts.yaml as documented (with `all` too): 7 boards x 2 hammings planned,
    and the main job's small 4x4 store."""
    cfg = _validate(yaml.safe_load((REPO / "config" / "counts.yaml").read_text()))
    names = [f"pieces_{n}x{n}" for n in range(4, 11)]
    assert sorted(cfg["counts"]["instances"]) == sorted(names)
    assert cfg["counts"]["hamming"] == [1, 2]
    work = _workdir(tmp_path)
    for name, path in cfg["counts"]["instances"].items():
        assert (work / path).is_file() and path.endswith(f"/{name}.txt")
    proc = _run(work, REPO / "config" / "counts.yaml", "all", "counts_tables", "-n", "-p",
                "--replace-workflow-config")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    counts = _job_counts(out)
    assert counts["count_plan"] == 14 and counts["count_tables"] == 2
    assert counts["counts_tables"] == 1 and counts["import_instance"] == 1
    assert "--shard-stems 50000000 --max-shards 64 -o" in out
    assert "results/benchmark-counts/counts/tables/corolles_h2.csv" in out


@pytest.mark.parametrize("name, files", [
    ("counts-e2.yaml", {"e2": "e2pieces_jwortmann.txt"}),
    ("counts-clues.yaml", {f"clue{k}": f"clue{k}_jwortmann.txt" for k in range(1, 5)}),
])
def test_real_board_counts_configs_are_valid(name, files):
    """config/counts-e2.yaml and counts-clues.yaml (the real board's and the clue puzzles'
    tables, README) pass the schema and name the piece files in ../shared."""
    cfg = _validate(yaml.safe_load((REPO / "config" / name).read_text()))
    assert cfg["counts"]["instances"] == {k: f"../shared/instances/{f}"
                                          for k, f in files.items()}
    assert cfg["counts"]["hamming"] == [1, 2]


def test_hamming3_config_limits_boards_one_by_one(tmp_path):
    """config/counts-h3.yaml: 4x4 .. 10x10 at hamming 3, 4x4 .. 7x7 without a limit (every
    zone counted), the bigger boards with one; the plans get --max-stems only for those, and
    the zones left out are estimated."""
    cfg = _validate(yaml.safe_load((REPO / "config" / "counts-h3.yaml").read_text()))
    assert cfg["counts"]["hamming"] == [3]
    names = [f"pieces_{n}x{n}" for n in range(4, 11)]
    assert sorted(cfg["counts"]["instances"]) == sorted(names)
    assert sorted(cfg["counts"]["max_stems"]) == sorted(names[4:])
    work = _workdir(tmp_path)
    proc = _run(work, REPO / "config" / "counts-h3.yaml", "counts_tables", "-n", "-p",
                "--replace-workflow-config")
    assert proc.returncode == 0, proc.stderr[-3000:]
    plans = [ln for ln in (proc.stdout + proc.stderr).splitlines()
             if "e2store stage count-plan " in ln]
    assert len(plans) == 7
    for ln in plans:
        limited = any(f"/{n}.txt" in ln for n in names[4:])
        assert ("--max-stems" in ln) == limited, ln
    # the zones left out are estimated, one job per board, before the tables
    estimates = [ln for ln in (proc.stdout + proc.stderr).splitlines()
                 if "e2store count-estimate " in ln]
    assert len(estimates) == 7 and all("--samples 10000000" in ln for ln in estimates)


def test_default_config_has_no_count_jobs(tmp_path):
    proc = _snakemake(tmp_path, REPO / "config.yaml", "-n")
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = _job_counts(proc.stdout + proc.stderr)
    assert counts["all"] == 1
    assert not {"count_plan", "count_shard", "count_tables", "counts_tables"} & set(counts)
