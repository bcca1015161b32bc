"""A best-score campaign on a real SLURM cluster (issue 48): `snakemake best` through
`sbatch` with `--profile profiles/slurm`, one job per (arm, seed, shard), equals the same
campaign run locally, restart for restart; a shard job `scancel`ed mid-run and rerun
completes its shard with no restart lost or repeated (its stale writer lock refuses
nothing).

Marked `slurm`, as tests/test_slurm.py (whose helpers it uses): `bash
tests/cluster/start-slurm.sh` (as root), then `pytest -m slurm`; without a cluster the tests
skip, saying so."""

from __future__ import annotations

import collections
import fcntl
import json
import math
import os
import re
import subprocess
import time
from pathlib import Path

import pytest
from test_best_campaign import BEST, _no_perfect_board, _restarts, _work
from test_pipeline import REPO, _command, _env, _snakemake
from test_slurm import SMALL, _cluster_up, _states, _submitted

from e2store.boards.dataset import dataset_parts

pytestmark = pytest.mark.slurm

SHARDS = BEST["shards"]
# long shard jobs, to catch one running: 6 restarts a shard of 0.5-1 s each here (on a
# board with no perfect board: a restart finding one would end its shard early)
LONG = {**BEST, "restarts": 6, "restart_nodes": 3_000_000}


def _with_best(options: list[str]) -> list[str]:
    """test_slurm's small requests (the cluster has 2 CPUs and the profile's values are for
    real nodes) with the campaign's rules: best_shard at 1 thread, 1 GB."""
    out: list[str] = []
    for word in options:
        out.append(word)
        if word == "--set-threads":
            out.append("best_shard=1")
        elif word == "--set-resources":
            out += ["best_shard:mem_mb=1000", "best_report:mem_mb=1000"]
    return out


BEST_SMALL = _with_best(SMALL)


@pytest.fixture(scope="module", autouse=True)
def cluster():
    why = _cluster_up()
    if why:
        pytest.skip(why)


def _cmd(work: Path, *extra: str) -> list[str]:
    """`snakemake best` of the campaign of work/cfg.yaml through the SLURM profile
    (--configfile last: it takes every word after it)."""
    return _command(work, None, "best", *extra, "--profile", str(REPO / "profiles" / "slurm"),
                    *BEST_SMALL, "--configfile", str(work / "cfg.yaml"), cores=None)


def _slurm(work: Path, *extra: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(_cmd(work, *extra), capture_output=True, text=True,
                          env=_env(slurm=True), timeout=1800, cwd=work)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    return proc


def _local(work: Path) -> Path:
    proc = _snakemake(work, None, "best", "--configfile", str(work / "cfg.yaml"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return work / "res" / "best" / "boards"


def _rules(log: str) -> collections.Counter:
    """The rules of the SLURM jobs a run submitted (the plugin logs under rule_<rule>/)."""
    return collections.Counter(re.findall(
        r"submitted with SLURM jobid \d+ \(log: \S*/rule_(\w+)/", log))


def _same_campaign(local: Path, slurm: Path, restarts: int) -> None:
    """Both datasets hold each (arm, seed, restart) of the campaign once, with the same
    boards."""
    want = [(a, s, k) for a in sorted(BEST["arms"]) for s in BEST["seeds"]
            for k in range(SHARDS * restarts)]
    for boards in (local, slurm):
        assert [(p.arm, p.seed, p.restart) for p in dataset_parts(boards)] == want
    a, b = _restarts(local), _restarts(slurm)
    assert sorted(a) == sorted(b) and {k[:3] for k in a} == set(want)
    for key in sorted(a):
        assert a[key] == b[key], key


def test_the_profile_asks_for_a_best_shard_job_s_time_and_memory(tmp_path):
    """A `minutes` budget: the job's runtime is the budget plus a margin, its memory grows
    with its workers; a `restarts` budget: the profile's default runtime."""
    minutes = {k: v for k, v in BEST.items() if k != "restarts"} | {"minutes": 50,
                                                                    "workers": 2}
    for best, runtime, mem in ((minutes, math.ceil(50 * 1.1) + 10, 2000), (BEST, 30, 1500)):
        work = _work(tmp_path / str(runtime), best)
        # the profile without the tests' small requests (a dry run caps threads at --cores)
        cmd = _command(work, None, "best", "-n", "--cores", "4", "--profile",
                       str(REPO / "profiles" / "slurm"), "--configfile", str(work / "cfg.yaml"))
        proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(slurm=True),
                              timeout=600, cwd=work)
        assert proc.returncode == 0, proc.stderr[-3000:]
        jobs = re.findall(r"rule best_shard:.*?resources: ([^\n]*)", proc.stdout, re.S)
        assert len(jobs) == 2 * SHARDS, proc.stdout[-3000:]
        for res in jobs:
            assert f"runtime={runtime}," in res + "," and f"mem_mb={mem}," in res, res


def test_a_campaign_through_sbatch_equals_the_same_campaign_run_locally(tmp_path):
    """2 arms x 2 shards x 1 seed, a restarts budget: one SLURM job per shard and the
    report, all COMPLETED, and the same dataset as a local run, restart for restart."""
    local = _local(_work(tmp_path / "local"))
    work = _work(tmp_path / "slurm")
    t0 = time.perf_counter()
    proc = _slurm(work)
    seconds = time.perf_counter() - t0
    log = proc.stdout + proc.stderr
    jobs = _submitted(proc)
    assert _rules(log) == {"best_shard": 2 * SHARDS, "best_report": 1}, log[-3000:]
    assert set(_states(jobs).values()) == {"COMPLETED"}
    _same_campaign(local, work / "res" / "best" / "boards", BEST["restarts"])
    assert (work / "res" / "best" / "report.md").stat().st_size > 0
    for arm in BEST["arms"]:
        for k in range(SHARDS):
            receipt = json.loads((work / "res" / "best" / "receipts" / arm /
                                  f"s3-shard-{k}-of-{SHARDS}.json").read_text())
            assert receipt["restarts"] == BEST["restarts"] and receipt["ended"] == "nodes"
    print(f"campaign 2 arms x {SHARDS} shards through SLURM: {len(jobs)} jobs in "
          f"{seconds:.0f} s")


def _running_shard(work: Path) -> tuple[str, str, int] | None:
    """(SLURM id, arm, shard) of a running best_shard job of `work` (the plugin logs it
    under rule_best_shard/<arm>_<seed>_<shard>_<shards>/)."""
    out = subprocess.run(["squeue", "-h", "-t", "RUNNING", "-O", "JobID:20,StdOut:1000"],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        job, _, log = line.strip().partition(" ")
        m = re.search(r"/rule_best_shard/(\w+?)_\d+_(\d+)_\d+/", log.strip())
        if m and log.strip().startswith(str(work)):
            return job, m[1], int(m[2])
    return None


def _shard_parts(boards: Path, arm: str, shard: int) -> list:
    if not (boards / f"arm={arm}").is_dir():
        return []
    return [p for p in dataset_parts(boards, arm) if p.restart % SHARDS == shard]


def _lock_is_free(lock: Path) -> bool:
    fd = os.open(lock, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def test_a_shard_cancelled_mid_run_then_a_rerun_loses_and_repeats_no_restart(tmp_path):
    """`scancel` of a best_shard job after some of its restarts: the run fails (the job
    CANCELLED), the cancelled solver left no live lock; the rerun (the profile's
    rerun-incomplete) runs the shard's missing restarts alone, keeps every part written
    before, and the dataset equals an uninterrupted local campaign's."""
    restarts = LONG["restarts"]
    t0 = time.perf_counter()
    local = _local(_no_perfect_board(_work(tmp_path / "local", LONG)))
    work = _no_perfect_board(_work(tmp_path / "slurm", LONG))
    boards = work / "res" / "best" / "boards"
    t1 = time.perf_counter()
    run = subprocess.Popen(_cmd(work, "--retries", "0"), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, env=_env(slurm=True), cwd=work)
    cancelled = None
    deadline = time.time() + 900
    while cancelled is None and time.time() < deadline and run.poll() is None:
        found = _running_shard(work)
        # after a restart of the shard and well before its last: mid-run
        if found and 1 <= len(_shard_parts(boards, found[1], found[2])) <= restarts - 3:
            subprocess.run(["scancel", found[0]], check=True)
            cancelled = found
        time.sleep(0.2)
    log, _ = run.communicate(timeout=1800)
    t2 = time.perf_counter()
    assert cancelled is not None, "no best_shard job was seen running mid-shard"
    job, arm, shard = cancelled
    assert run.returncode != 0, log[-3000:]
    assert _states([job])[job].startswith("CANCELLED")
    assert f"SLURM-job '{job}' failed, SLURM status is: 'CANCELLED'" in log, log[-3000:]
    receipt = work / "res" / "best" / "receipts" / arm / f"s3-shard-{shard}-of-{SHARDS}.json"
    before = {p.path: p.path.stat() for p in dataset_parts(boards)}
    done = len(_shard_parts(boards, arm, shard))
    assert 1 <= done < restarts and not receipt.exists()
    # the killed writer's lock: left behind (SIGTERM ends Python without cleanup) but held
    # by no process, so the rerun is not refused
    lock = boards / f"arm={arm}" / f".seed=3.shard={shard}of{SHARDS}.lock"
    assert not lock.exists() or _lock_is_free(lock), lock.read_text()
    stale = lock.exists()

    rerun = _slurm(work)
    t3 = time.perf_counter()
    again = _rules(rerun.stdout + rerun.stderr)["best_shard"]
    assert again >= 1
    assert set(_states(_submitted(rerun)).values()) == {"COMPLETED"}
    # restarts written before the cancel: the same files, never written again
    for path, st in before.items():
        now = path.stat()
        assert (now.st_ino, now.st_mtime_ns) == (st.st_ino, st.st_mtime_ns), path
    made = json.loads(receipt.read_text())  # the shard's totals; the rerun ran the missing
    assert made["run"]["restarts"] == restarts - done and made["ended"] == "nodes", made
    assert made["restarts"] == restarts, made
    _same_campaign(local, boards, restarts)
    assert (work / "res" / "best" / "report.md").stat().st_size > 0
    print(f"{arm} shard {shard}/{SHARDS} cancelled after {done} of {restarts} restarts "
          f"(stale lock left: {stale}); local run {t1 - t0:.0f} s, run cancelled "
          f"{t2 - t1:.0f} s, rerun of {again} shard jobs {t3 - t2:.0f} s")
