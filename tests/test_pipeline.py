"""The main job: `e2store summary` against an independent recount, the config schema,
end-to-end Snakemake runs on a tiny config (outputs, reproducibility, a killed run, the HTML
report), dry runs (default config, SLURM profile, benchmark config) and the linter."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import naive
import pyarrow.parquet as pq
import pytest
import yaml
from click.testing import CliRunner

from e2store import store
from e2store.cli import main
from e2store.corolles.enumerate import count_corolles
from e2store.errors import StoreError
from e2store.instance.formats import read_instance
from e2store.instance.model import Instance
from e2store.instance.stats import instance_stats, stats_json
from e2store.reports.plots import PLOT_METRICS
from e2store.reports.summary import format_markdown, summarize
from e2store.reports.tables import METRICS, load_tables, table_csv, table_markdown
from e2store.store import stages
from e2store.zones.zonemap import zone_map

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "schemas" / "config.schema.yaml"


def _instance(w=5, h=4, seed=21, n_frame=3, n_inner=5, name=None) -> Instance:
    return Instance(name or f"rnd{seed}", w, h,
                    naive.random_board_pieces(w, h, n_frame, n_inner, seed))


def _on_disk(root: Path, inst: Instance, h: int) -> dict:
    """Recount one instance and hamming from the files on disk and the enumerator itself."""
    base = root / "flat" / f"hamming={h}" / f"instance={inst.id}"
    zm = zone_map(inst.width, inst.height, h)
    metas = sorted(base.glob(f"zone=*/rotation=*/{store.PARTITION_META}"))
    files = sorted(base.glob("zone=*/rotation=*/*.parquet"))
    digest = hashlib.sha256()
    by_part = sorted(files, key=lambda f: (int(f.parts[-3].split("=")[1]),
                                           int(f.parts[-2].split("=")[1]), f.name))
    for f in by_part:
        rel = f.relative_to(root).as_posix()
        digest.update(f"{rel} {hashlib.sha256(f.read_bytes()).hexdigest()}\n".encode())
    rot0 = [json.loads(m.read_text()) for m in metas if m.parent.name == "rotation=0"]
    return {
        "size": f"{inst.width}x{inst.height}",
        "zones": len(zm.zones),
        "partitions": len(metas),
        "corolles": sum(count_corolles(inst, z.x, z.y, h).corolles for z in zm.zones),
        "corolles_all_cells": sum(count_corolles(inst, x, y, h).corolles
                                  for y in range(inst.height) for x in range(inst.width)),
        "rows": sum(pq.ParquetFile(f).metadata.num_rows for f in files),
        "bytes": sum(f.stat().st_size for f in files),
        "nodes": sum(m["nodes"] for m in rot0),
        "seconds": sum(m["seconds"] for m in rot0),
        "checksum": digest.hexdigest(),
    }


@pytest.fixture(scope="module")
def small_store(tmp_path_factory):
    root = tmp_path_factory.mktemp("store")
    a, b = _instance(), _instance(4, 4, seed=5, n_frame=2, n_inner=3, name="sq")
    for h in (1, 2):
        store.enumerate_store(root, a, h, None)
    store.enumerate_store(root, b, 1, None)
    return root, a, b


def test_summary_matches_an_independent_recount(small_store):
    root, a, b = small_store
    s = summarize(root)
    assert s["checksum"] == store.read_manifest(root)["checksum"]
    assert [(e["instance"], e["hamming"]) for e in s["entries"]] == sorted(
        [(a.id, 1), (a.id, 2), (b.id, 1)])
    for e in s["entries"]:
        inst = a if e["instance"] == a.id else b
        want = _on_disk(root, inst, e["hamming"])
        got = {k: e[k] for k in want}
        got["seconds"] = pytest.approx(want["seconds"], abs=1e-5)
        assert got == want, (e["instance"], e["hamming"])
        assert e["complete"] and e["zones_expected"] == e["zones"]
        assert (e["width"], e["height"]) == (inst.width, inst.height)
        assert e["name"] == inst.name
        assert e["bytes_per_row"] == pytest.approx(want["bytes"] / want["rows"], abs=1e-3)
    t = s["totals"]
    for k in ("partitions", "corolles", "corolles_all_cells", "rows", "bytes", "nodes"):
        assert t[k] == sum(e[k] for e in s["entries"])


def test_summary_selection_and_markdown(small_store):
    root, a, b = small_store
    s = summarize(root, [a.id], [2])
    assert [(e["instance"], e["hamming"]) for e in s["entries"]] == [(a.id, 2)]
    assert summarize(root, hammings=[1])["totals"]["corolles"] == sum(
        e["corolles"] for e in summarize(root)["entries"] if e["hamming"] == 1)
    with pytest.raises(StoreError, match=f"instance={b.id} hamming=2"):
        summarize(root, [a.id, b.id], [2])
    md = format_markdown(summarize(root))
    assert md.startswith("# e2store summary")
    rows = [ln for ln in md.splitlines() if ln.startswith(f"| {a.id} ")]
    assert len(rows) == 2 and f"| {summarize(root, [a.id], [1])['entries'][0]['corolles']:,} |" \
        in rows[0]


def test_summary_command_writes_atomically_and_selects_by_file(small_store, tmp_path):
    root, a, _ = small_store
    inst_file = store.instance_path(root, a.id)
    md, js = tmp_path / "out" / "s.md", tmp_path / "out" / "s.json"
    r = CliRunner().invoke(main, ["summary", "--store", str(root), "-o", str(md), "-o",
                                  str(js), "--instance", str(inst_file), "--hamming", "1"])
    assert r.exit_code == 0, r.output
    got = json.loads(js.read_text())
    assert got == json.loads(json.dumps(summarize(root, [a.id], [1])))
    assert md.read_text() == format_markdown(got)
    assert sorted(p.name for p in md.parent.iterdir()) == ["s.json", "s.md"]  # no temp files
    r = CliRunner().invoke(main, ["summary", "--store", str(root), "--hamming", "1"])
    assert r.exit_code == 0 and r.output.startswith("# e2store summary")


def test_summary_of_a_store_without_manifest_is_one_error_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "e2store", "summary", "--store",
                           str(tmp_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "no manifest" in proc.stderr
    assert "Traceback" not in proc.stderr


# --------------------------------------------------------------------------- config schema


def _validate(cfg: dict) -> dict:
    from snakemake.utils import validate

    cfg = copy.deepcopy(cfg)
    validate(cfg, str(SCHEMA))
    return cfg


def test_default_config_is_valid_and_defaults_are_filled():
    cfg = _validate(yaml.safe_load((REPO / "config.yaml").read_text()))
    assert cfg["hamming"] == [1, 2] and cfg["instances"] == {}
    sizes = {tuple(map(int, str(d["size"]).split("x"))) for d in cfg["demo_instances"].values()}
    assert any(w == h for w, h in sizes) and any(w != h for w, h in sizes)
    assert cfg["forms"] == ["flat", "prefix", "cartesian"]
    assert _validate({}) == {"results": "results", "threads": 1, "hamming": [1, 2],
                             "forms": ["flat"], "shard_corolles": 50_000_000,
                             "max_shards": 64, "demo_instances": {}, "instances": {}}


GOOD_DEMO = {"size": "5x5", "frame_colours": 3, "inner_colours": 4, "seed": 1}


@pytest.mark.parametrize("bad", [
    {"unknown_key": 1},
    {"forms": ["flat", "zip"]},
    {"threads": 0},
    {"hamming": []},
    {"hamming": [1, 1]},
    {"hamming": [-1]},
    {"results": ""},
    {"demo_instances": {"d": {**GOOD_DEMO, "size": "5by5"}}},
    {"demo_instances": {"d": {k: v for k, v in GOOD_DEMO.items() if k != "seed"}}},
    {"demo_instances": {"d": {**GOOD_DEMO, "seed": -1}}},
    {"demo_instances": {"d": {**GOOD_DEMO, "frame_colours": 0}}},
    {"demo_instances": {"d": {**GOOD_DEMO, "colour": 3}}},
    {"demo_instances": {"bad name": GOOD_DEMO}},
    {"demo_instances": {"trailing\n": GOOD_DEMO}},  # `$` matches before a final newline
    {"demo_instances": {"d": {**GOOD_DEMO, "size": "5x5\n"}}},
    {"instances": {"x": 3}},
])
def test_config_schema_rejects_bad_configs(bad):
    from snakemake.exceptions import WorkflowError

    _validate({"demo_instances": {"d": GOOD_DEMO}})
    with pytest.raises(WorkflowError):
        _validate({"demo_instances": {"d": GOOD_DEMO}, **bad})


# --------------------------------------------------------------------------- end to end

METRICS_FILES = [f"{m}_h{h}.{ext}" for h in (1, 2) for m in METRICS for ext in ("csv", "md")]


def _benchmark_file(path: Path, inst: Instance) -> None:
    """Write `inst` (square) in the benchmark `pieces_NxN.txt` layout."""
    lines = [str(inst.width), str(inst.n_colours), "0", "0"]
    lines += [" ".join(str(int(c)) for c in p) for p in inst.pieces]
    path.write_text("\n".join(lines) + "\n")


def _command(workdir: Path, config: Path | None, *extra: str, cores: int | None = 2) -> list:
    cmd = [sys.executable, "-m", "snakemake", "--directory", str(workdir),
           "--snakefile", str(REPO / "Snakefile")]
    cmd += ["--cores", str(cores)] if cores else []
    cmd += ["--configfile", str(config)] if config else []
    return cmd + list(extra)


def _env(slurm: bool = False) -> dict:
    """The environment of the subprocesses: this venv's tools first on PATH."""
    env = dict(os.environ)
    # snakemake loads the SLURM executor plugin (the test extra installs it), which runs
    # `scontrol show config` on start: where a SLURM client is installed but no controller
    # runs, that retries for 9 s per snakemake call.  No test here talks to SLURM (the
    # `slurm`-marked tests in test_slurm.py ask for `slurm=True`), so an empty SLURM
    # configuration makes scontrol fail at once.
    if not slurm:
        env.setdefault("SLURM_CONF", os.devnull)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _snakemake(workdir: Path, config: Path | None, *extra: str,
               cores: int | None = 2) -> subprocess.CompletedProcess:
    # the first run compiles every kernel beside another test process: 155 s on 2 cores
    return subprocess.run(_command(workdir, config, *extra, cores=cores), capture_output=True,
                          text=True, env=_env(), timeout=900)


# the tiny config of the end-to-end runs: a generated 5x5 and an imported 4x4, hamming 1 and 2
TINY_DEMO = {"size": "5x5", "frame_colours": 3, "inner_colours": 4, "seed": 1}
TINY = {"results": "res", "threads": 1, "hamming": [1, 2], "forms": ["flat", "cartesian"],
        "shard_corolles": 100_000,
        "demo_instances": {"tiny": TINY_DEMO}, "instances": {"ext": "pieces_4x4.txt"}}
TINY_EXT = {"w": 4, "h": 4, "seed": 9, "n_frame": 2, "n_inner": 3}


def _tiny_workdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    _benchmark_file(path / "pieces_4x4.txt", _instance(**TINY_EXT))
    (path / "cfg.yaml").write_text(yaml.safe_dump(TINY))
    return path


def _run_tiny(path: Path) -> Path:
    work = _tiny_workdir(path)
    proc = _snakemake(work, work / "cfg.yaml")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return work


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """The main job run once on the tiny config, from clean; (workdir, seconds)."""
    t0 = time.perf_counter()
    work = _run_tiny(tmp_path_factory.mktemp("run_a"))
    return work, time.perf_counter() - t0


def _store_files(root: Path) -> dict[str, str]:
    """sha256 of every Parquet file visible in a store (outside .staging), by path."""
    return {f.relative_to(root).as_posix(): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(root.rglob("*.parquet"))
            if store.STAGING not in f.parts and stages.SHARDS not in f.parts}


def test_pipeline_end_to_end(tiny_run):
    work, _ = tiny_run
    ext = _instance(**TINY_EXT)
    res = work / "res"
    for name in ("tiny", "ext"):
        assert (res / "instances" / f"{name}.e2s").exists()
        assert "result:  ok" in (res / "instances" / f"{name}.validate.txt").read_text()
        for h in (1, 2):
            plan = json.loads((res / "plans" / f"{name}_h{h}.json").read_text())
            for z in plan["zones"]:
                assert (res / "logs" / "enumerate" / f"{name}_h{h}_z{z['zone']}.log").exists()
    imported = read_instance(res / "instances" / "ext.e2s")
    assert imported.name == "ext" and imported.content_hash == ext.content_hash
    summary = json.loads((res / "summary.json").read_text())
    manifest = store.read_manifest(res / "store")
    assert summary["checksum"] == manifest["checksum"]
    assert {(e["name"], e["hamming"], e["form"]) for e in summary["entries"]} == {
        (n, h, f) for n in ("tiny", "ext") for h in (1, 2) for f in ("flat", "cartesian")}
    for e in summary["entries"]:
        parts = [p for p in manifest["partitions"] if p["instance"] == e["instance"]
                 and p["hamming"] == e["hamming"] and p["form"] == e["form"]]
        assert e["corolles"] == sum(p["corolles"] for p in parts if p["rotation"] == 0)
        assert e["rows"] == sum(p["rows"] for p in parts)
        assert e["bytes"] == sum(f["bytes"] for p in parts for f in p["files"])
        assert e["partitions"] == len(parts) and e["complete"]
        receipt = json.loads((res / "receipts" / f"{e['name']}_h{e['hamming']}.json")
                             .read_text())
        assert e in receipt["entries"]
    assert (res / "summary.md").read_text() == format_markdown(summary)
    # tables and plots: what `e2store tables` / `plot` give for the configured instances
    ids = [read_instance(res / "instances" / f"{n}.e2s").id for n in ("tiny", "ext")]
    assert sorted(p.name for p in (res / "tables").iterdir()) == sorted(METRICS_FILES)
    for t in load_tables(res / "store", ids, [1, 2]):
        assert (res / "tables" / f"{t.stem}.csv").read_text() == table_csv(t)
        assert (res / "tables" / f"{t.stem}.md").read_text() == table_markdown(t)
        assert t.labels == ("4x4", "5x5")
    for m in PLOT_METRICS:
        assert (res / "plots" / f"{m}.png").read_bytes().startswith(b"\x89PNG")
    # zone maps and instance statistics
    for n in ("tiny", "ext"):
        inst = read_instance(res / "instances" / f"{n}.e2s")
        for h in (1, 2):
            got = json.loads((res / "zones" / f"{n}_h{h}.json").read_text())
            assert got == zone_map(inst.width, inst.height, h).to_dict()
        got = json.loads((res / "stats" / f"{n}.json").read_text())
        assert got == json.loads(stats_json(instance_stats(inst)))
    again = _snakemake(work, work / "cfg.yaml", "--dry-run")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr


def _same_results(a: Path, b: Path) -> None:
    """Two results folders of the tiny config hold the same store, tables, plots, zone maps,
    statistics and instances, byte for byte (timings apart)."""
    files = _store_files(a / "store")
    assert files and files == _store_files(b / "store")
    assert store.read_manifest(a / "store")["checksum"] == store.read_manifest(
        b / "store")["checksum"]
    same = [f"tables/{f}" for f in METRICS_FILES if not f.startswith("seconds")]
    same += [f"plots/{m}.png" for m in PLOT_METRICS]
    same += [p.relative_to(a).as_posix() for d in ("zones", "stats", "instances")
             for p in sorted((a / d).iterdir())]
    for rel in same:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


@pytest.mark.slow
def test_two_clean_runs_give_identical_stores(tiny_run, tmp_path):
    """Slow (a third run of the main job): the default suite checks the same on the killed
    and resumed run below."""
    _same_results(tiny_run[0] / "res", _run_tiny(tmp_path / "run_b") / "res")


def _staging_parquet(staging: Path) -> bool:
    """Whether a job is writing a Parquet file under `staging` (a staging folder published
    or removed while it is listed counts as not yet)."""
    try:
        return staging.is_dir() and any(staging.rglob("*.parquet"))
    except FileNotFoundError:
        return False


@pytest.mark.slow  # 77 s: the store-level kill and rerun is tests/test_store.py's, by default
def test_killed_run_resumes_to_the_same_store(tiny_run, tmp_path):
    """SIGKILL of the whole Snakemake process group while an enumerate job writes, then
    `--rerun-incomplete`: never a partial Parquet file in view, and the same results as the
    clean run (store, tables, plots, zones, statistics: reproducible)."""
    want = store.read_manifest(tiny_run[0] / "res" / "store")
    work = _tiny_workdir(tmp_path / "run_c")
    root = work / "res" / "store"
    proc = subprocess.Popen(_command(work, work / "cfg.yaml"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=_env(), start_new_session=True)
    deadline = time.time() + 60
    try:
        while time.time() < deadline and proc.poll() is None:
            if _staging_parquet(root / store.STAGING):
                break  # an enumerate job is writing a partition
            time.sleep(0.01)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    if proc.returncode == 0:
        pytest.skip("the run finished before it could be killed")
    complete = {(p.parent, p.name) for p in root.rglob(store.PARTITION_META.split(".")[0] + "*")
                if store.STAGING not in p.parts}
    for rel in _store_files(root):
        f = root / rel
        form = next(k for k, v in store.FORM_FILE.items() if f.name.startswith(f"{v}-"))
        assert (f.parent, store.meta_name(form)) in complete, f"partial file visible: {rel}"
    for f in (root / stages.SHARDS).rglob("*.parquet"):  # published shards are complete
        assert (f.parent / stages.SHARD_META).exists(), f"partial shard visible: {f}"
    assert not (work / "res" / "summary.json").exists()
    unlock = _snakemake(work, work / "cfg.yaml", "--unlock")
    assert unlock.returncode == 0, unlock.stderr[-2000:]
    rerun = _snakemake(work, work / "cfg.yaml", "--rerun-incomplete")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    got = store.read_manifest(root)
    assert got["checksum"] == want["checksum"]
    listed = {f"{p['path']}/{f['file']}": f["sha256"] for p in got["partitions"]
              for f in p["files"]}
    assert _store_files(root) == listed == _store_files(tiny_run[0] / "res" / "store")
    _same_results(tiny_run[0] / "res", work / "res")


def test_html_report(tiny_run):
    work = tiny_run[0]
    out = work / "res" / "report.html"
    proc = _snakemake(work, work / "cfg.yaml", "--report", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    html = out.read_text()
    for name in ["corolles_h1.csv", "bytes_h2.md", *(f"{m}.png" for m in PLOT_METRICS)]:
        assert name in html
    assert "Tables" in html and "Plots" in html
    assert "e2store main job: the corolle store of 1 demo" in html


# --------------------------------------------------------------------------- dry runs, lint


def _job_counts(text: str) -> dict[str, int]:
    """The `Job stats` table of a dry run: rule -> count."""
    lines = text[text.index("Job stats:"):].splitlines()[3:]
    counts = {}
    for ln in lines:
        parts = ln.split()
        if len(parts) != 2 or not parts[1].isdigit():
            break
        counts[parts[0]] = int(parts[1])
    return counts


# jobs known before the plan checkpoints run (zone jobs are added once each plan exists)
MAIN_JOBS = {"generate_instance": 3, "validate_instance": 3, "plan": 6, "receipt": 6,
             "summary": 1, "tables": 1, "plots": 1, "zone_map": 6, "instance_stats": 3,
             "all": 1}


def test_dry_run_of_the_default_config(tmp_path):
    proc = _snakemake(tmp_path, REPO / "config.yaml", "-n", "-p")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    assert _job_counts(out) == {**MAIN_JOBS, "total": sum(MAIN_JOBS.values())}
    assert "--shard-corolles 250000 --max-shards 64 --threads 1" in out
    assert "e2store zones --size <TBD> --hamming 2 --json" in out  # size read once it exists


def test_dry_run_with_the_slurm_profile(tmp_path):
    pytest.importorskip("snakemake_executor_plugin_slurm",
                        reason="snakemake-executor-plugin-slurm is not installed")
    profile = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
    assert profile["executor"] == "slurm"
    proc = _snakemake(tmp_path, REPO / "config.yaml", "-n", "--profile",
                      str(REPO / "profiles" / "slurm"), cores=8)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    assert "Using profile" in out
    assert _job_counts(out) == {**MAIN_JOBS, "total": sum(MAIN_JOBS.values())}
    blocks = re.split(r"(?:rule|checkpoint) ", out)  # plan is a checkpoint
    enum = next(b for b in blocks if b.startswith("plan:"))
    assert "--threads 8" in enum  # set-threads (capped by --cores; uncapped on SLURM)
    assert "slurm_account=<account>" in enum and "slurm_partition=<partition>" in enum
    assert "mem_mb=4000" in enum and "runtime=60" in enum
    gen = next(b for b in blocks if b.startswith("generate_instance:"))
    assert "mem_mb=2000" in gen and "runtime=30" in gen


def test_benchmark_config(tmp_path, shared_instances):
    cfg = _validate(yaml.safe_load((REPO / "config" / "benchmark.yaml").read_text()))
    assert cfg["hamming"] == [1, 2] and cfg["forms"] == ["flat", "cartesian"]
    assert cfg["demo_instances"] == {}
    assert sorted(cfg["instances"]) == ["pieces_4x4", "pieces_5x5", "pieces_6x6"]
    work = tmp_path / "main"
    work.mkdir()
    (tmp_path / "shared").symlink_to(shared_instances.parent)  # ../shared as from the repo
    for name, path in cfg["instances"].items():
        assert (work / path).is_file() and name in path
    proc = _snakemake(work, REPO / "config" / "benchmark.yaml", "-n", "-p",
                      "--replace-workflow-config")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    counts = _job_counts(out)
    assert counts["import_instance"] == 3 and counts["plan"] == 6
    assert "generate_instance" not in counts
    assert "--shard-corolles 50000000 --max-shards 64 --threads 2" in out
    assert "results/benchmark/tables/corolles_h2.csv" in out


def test_lint_asks_only_for_software_environments():
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--lint", "--snakefile",
                           str(REPO / "Snakefile"), "--directory", str(REPO)],
                          capture_output=True, text=True, env=_env(), timeout=120)
    out = proc.stdout + proc.stderr
    findings = {ln.strip() for ln in out.splitlines() if ln.startswith("    * ")}
    assert findings <= {"* Specify a conda environment or container for each rule.:"}, out
