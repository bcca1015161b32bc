"""The pipeline on a real SLURM cluster (issue 26): every heavy job through `sbatch` with
`--profile profiles/slurm` (account and partition on the command line, no edited file),
and the same results as a local run.

Marked `slurm`: excluded from the default run; `bash tests/cluster/start-slurm.sh` (as
root) starts a one-node cluster, then `pytest -m slurm`.  Without a cluster the tests skip,
saying so."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from test_counts_pipeline import _workdir as _counts_workdir
from test_pipeline import (
    REPO,
    TINY,
    _command,
    _env,
    _run_tiny,
    _same_results,
    _snakemake,
    _store_files,
    _tiny_workdir,
)

from e2store.store.read import read_manifest

pytestmark = pytest.mark.slurm

ACCOUNT = PARTITION = "e2store"  # tests/cluster/start-slurm.sh
# the cluster has 2 CPUs: the profile's 8-thread requests would never be scheduled
SMALL = ["--set-threads", "plan=1", "shard=1", "enumerate=1", "count_shard=1",
         "--set-resources", *(f"{r}:mem_mb=1000" for r in (
             "plan", "shard", "enumerate", "rotate", "encode", "count_plan", "count_shard",
             "count_tables")),
         "--default-resources", f"slurm_account={ACCOUNT}", f"slurm_partition={PARTITION}",
         "mem_mb=1000", "runtime=30",
         "--slurm-init-seconds-before-status-checks", "2", "--seconds-between-status-checks",
         "2", "--jobs", "4"]


def _cluster_up() -> str | None:
    """Why the tests cannot run, or None when a cluster answers."""
    if shutil.which("sbatch") is None or shutil.which("sinfo") is None:
        return "no SLURM commands (run tests/cluster/start-slurm.sh as root)"
    state = subprocess.run(["sinfo", "-h", "-p", PARTITION, "-o", "%T"], capture_output=True,
                           text=True)
    if state.returncode != 0 or not re.search(r"idle|mix|alloc", state.stdout):
        return (f"partition {PARTITION} is not up ({state.stdout.strip() or state.stderr.strip()}"
                f"): run tests/cluster/start-slurm.sh as root")
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401
    except ImportError:
        return "snakemake-executor-plugin-slurm is not installed (pip install '.[slurm]')"
    return None


@pytest.fixture(scope="module", autouse=True)
def cluster():
    why = _cluster_up()
    if why:
        pytest.skip(why)


def _slurm(work: Path, config: Path | None, *extra: str, check: bool = True,
           ) -> subprocess.CompletedProcess:
    """Snakemake through the SLURM profile (targets first: --configfile takes every word
    after it)."""
    cmd = _command(work, None, *extra, "--profile", str(REPO / "profiles" / "slurm"), *SMALL,
                   cores=None)
    if config is not None:
        cmd += ["--configfile", str(config)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(slurm=True), timeout=1800,
                          cwd=work)  # the plugin's job logs go to ./.snakemake/slurm_logs
    if check:
        assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def _submitted(proc: subprocess.CompletedProcess) -> list[str]:
    """The SLURM job ids a run submitted (its log lines)."""
    return re.findall(r"submitted with SLURM jobid (\d+)", proc.stderr + proc.stdout)


def _states(jobs: list[str]) -> dict[str, str]:
    out = subprocess.run(["sacct", "-n", "-X", "-P", "-o", "JobID,State", "-j", ",".join(jobs)],
                         capture_output=True, text=True, check=True).stdout
    return dict(line.split("|", 1) for line in out.splitlines() if line)


def test_start_script_again_leaves_the_cluster_as_it_is():
    """Idempotent: with every daemon up, the script starts nothing and says the cluster is
    up."""
    pids = subprocess.run(["pgrep", "-x", "slurmctld"], capture_output=True, text=True).stdout
    proc = subprocess.run(["bash", str(REPO / "tests" / "cluster" / "start-slurm.sh")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "started" not in proc.stdout and "cluster e2store up" in proc.stdout
    assert subprocess.run(["pgrep", "-x", "slurmctld"], capture_output=True,
                          text=True).stdout == pids


@pytest.fixture(scope="module")
def local_tiny(tmp_path_factory) -> Path:
    """The main job's tiny config run locally once: what every SLURM run must equal."""
    return _run_tiny(tmp_path_factory.mktemp("local"))


def test_main_job_through_sbatch_equals_a_local_run(tmp_path, local_tiny):
    local = local_tiny
    work = _tiny_workdir(tmp_path / "slurm")
    t0 = time.perf_counter()
    proc = _slurm(work, work / "cfg.yaml")
    seconds = time.perf_counter() - t0
    jobs = _submitted(proc)
    assert len(jobs) > 20  # plan, enumerate, rotate, encode of every zone
    assert set(_states(jobs).values()) == {"COMPLETED"}
    _same_results(local / "res", work / "res")
    print(f"main job (tiny config) through SLURM: {len(jobs)} jobs in {seconds:.0f} s")


def test_sharded_count_tables_through_sbatch_equal_a_local_run(tmp_path):
    from test_counts_pipeline import _run

    local = _counts_workdir(tmp_path / "local")
    assert _run(local, local / "cfg.yaml", "counts_tables").returncode == 0
    work = _counts_workdir(tmp_path / "slurm")
    proc = _slurm(work, work / "cfg.yaml", "counts_tables")
    logs = "\n".join(re.findall(r"rule count_shard:.*?jobid: \d+", proc.stderr, re.S))
    assert logs.count("rule count_shard") >= 2  # the 4x4's sharded zone, shard by shard
    for table in sorted((local / "res" / "tables").glob("corolles_h*.csv")):
        assert (work / "res" / "tables" / table.name).read_text() == table.read_text()


def _solve_workdir(path: Path) -> Path:
    path.mkdir(parents=True)
    gen = ["--size", "4", "--frame-colours", "2", "--inner-colours", "3", "--seed", "3"]
    subprocess.run(["e2store", "generate-instance", *gen, "-o", str(path / "g4.e2s")],
                   check=True, env=_env(slurm=True), capture_output=True)
    subprocess.run(["e2store", "enumerate", str(path / "g4.e2s"), "--hamming", "1", "--store",
                    str(path / "st")], check=True, env=_env(slurm=True), capture_output=True)
    cfg = {"results": "res", "hamming": [1], "forms": ["flat"], "instances": {"g4": "g4.e2s"},
           "solve": {"instance": "g4", "store": "st", "cells": [[0, 0], [1, 1]],
                     "hamming": 1, "shards": 3, "symmetry_break": True}}
    (path / "cfg.yaml").write_text(yaml.safe_dump(cfg))
    return path


def test_sharded_solve_through_sbatch_equals_a_local_solve(tmp_path):
    work = _solve_workdir(tmp_path / "w")
    proc = _slurm(work, work / "cfg.yaml", "res/solve/solve.json")
    assert len(_submitted(proc)) >= 3
    merged = json.loads((work / "res" / "solve" / "solve.json").read_text())
    single = json.loads(subprocess.run(
        ["e2store", "solve", str(work / "res" / "instances" / "g4.e2s"), "--json"],
        check=True, env=_env(slurm=True), capture_output=True, text=True).stdout)
    assert merged["solutions"] == single["solutions"] > 0 and merged["complete"]


def _running_job_of(rule: str) -> str | None:
    """The SLURM id of a running job of `rule` (the plugin logs it under rule_<rule>/)."""
    out = subprocess.run(["squeue", "-h", "-t", "RUNNING", "-O", "JobID:20,StdOut:1000"],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        job, _, log = line.strip().partition(" ")
        if f"/rule_{rule}/" in log:
            return job
    return None


# the 5x5 of the tiny config at hamming 2 alone: its three big zones are sharded (2, 4, 2)
SHARDED = {**TINY, "hamming": [2], "forms": ["flat"]}
del SHARDED["instances"]


def test_a_shard_cancelled_by_slurm_then_a_rerun_equals_an_uninterrupted_run(tmp_path):
    """`scancel` of a running shard job: the run stops with that job failed (state
    CANCELLED, not waited for forever); the rerun (the profile's rerun-incomplete) completes
    it, and the store equals an uninterrupted local run's."""
    local, work = tmp_path / "local", tmp_path / "slurm"
    for path in (local, work):
        path.mkdir()
        (path / "cfg.yaml").write_text(yaml.safe_dump(SHARDED))
    proc = _snakemake(local, local / "cfg.yaml")
    assert proc.returncode == 0, proc.stderr[-3000:]
    cmd = _command(work, work / "cfg.yaml", "--profile", str(REPO / "profiles" / "slurm"),
                   *SMALL, "--retries", "0", cores=None)
    run = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env=_env(slurm=True), cwd=work)
    cancelled = None
    deadline = time.time() + 600
    while cancelled is None and time.time() < deadline and run.poll() is None:
        cancelled = _running_job_of("shard")
        if cancelled:
            subprocess.run(["scancel", cancelled], check=True)
        time.sleep(0.2)
    log, _ = run.communicate(timeout=1800)
    assert cancelled is not None, "no shard job was seen running"
    assert run.returncode != 0, log[-3000:]
    assert _states([cancelled])[cancelled].startswith("CANCELLED")
    assert f"SLURM-job '{cancelled}' failed, SLURM status is: 'CANCELLED'" in log, log[-3000:]
    rerun = _slurm(work, work / "cfg.yaml")
    assert "rule shard:" in rerun.stderr  # the cancelled shard runs again
    a, b = local / "res", work / "res"
    assert _store_files(a / "store") == _store_files(b / "store")
    assert read_manifest(a / "store")["checksum"] == read_manifest(b / "store")["checksum"]
    tables = sorted(p.name for p in (a / "tables").iterdir() if not p.name.startswith("seconds"))
    assert tables and tables == sorted(
        p.name for p in (b / "tables").iterdir() if not p.name.startswith("seconds"))
    for name in tables:
        assert (a / "tables" / name).read_bytes() == (b / "tables" / name).read_bytes(), name
