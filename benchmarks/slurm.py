"""Benchmark the cost of running the pipeline through SLURM (issue 26): what one job costs.

Needs a cluster (as root: `bash tests/cluster/start-slurm.sh`) and the plugin
(`pip install '.[slurm]'`). Prints, with the host's CPU model:

1. `sbatch --wait` of `true`, one after another: the floor of a job (submit, schedule,
   start, end, accounting), seconds per job;
2. a Snakemake workflow of --jobs trivial jobs (`touch`), through the executor plugin and
   locally: the plugin's overhead per job (submission, status polling);
3. the main job on a small config (a generated 5x5, hamming 1 and 2, flat and cartesian)
   through `--profile profiles/slurm` and locally: wall times, jobs, overhead per job, and
   from `sacct` the mean wait in the queue and the mean run time of a job.

    python benchmarks/slurm.py [--jobs 20] [--account e2store] [--partition e2store]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import yaml
from _host import cpu_model

ROOT = Path(__file__).resolve().parents[1]
CONFIG = {"results": "res", "threads": 1, "hamming": [1, 2], "forms": ["flat", "cartesian"],
          "shard_corolles": 100_000,
          "demo_instances": {"tiny": {"size": "5x5", "frame_colours": 3, "inner_colours": 4,
                                      "seed": 1}}}
TRIVIAL = """rule all:
    input: expand("out/{i}.txt", i=range(config["jobs"]))

rule one:
    output: "out/{i}.txt"
    shell: "touch {output}"
"""


def slurm_flags(account: str, partition: str) -> list[str]:
    """The tests' command-line settings (tests/test_slurm.py): small requests, quick
    polling."""
    rules = ("plan", "shard", "enumerate", "rotate", "encode", "count_plan", "count_shard",
             "count_tables")
    return ["--set-threads", "plan=1", "shard=1", "enumerate=1", "count_shard=1",
            "--set-resources", *(f"{r}:mem_mb=1000" for r in rules),
            "--default-resources", f"slurm_account={account}", f"slurm_partition={partition}",
            "mem_mb=1000", "runtime=30",
            "--slurm-init-seconds-before-status-checks", "2",
            "--seconds-between-status-checks", "2", "--jobs", "4"]


def timed(cmd: list[str], cwd: Path) -> tuple[float, str]:
    """(seconds, log) of a command that must succeed."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{proc.stderr[-3000:]}")
    return seconds, proc.stdout + proc.stderr


def sacct_times(jobs: list[str]) -> tuple[float, float]:
    """Mean (queue wait, run time) in seconds of SLURM jobs, from sacct."""
    out = subprocess.run(["sacct", "-n", "-X", "-P", "-o", "Submit,Start,End", "-j",
                          ",".join(jobs)], capture_output=True, text=True, check=True).stdout
    waits, runs = [], []
    for line in out.splitlines():
        submit, start, end = (datetime.fromisoformat(t) for t in line.split("|"))
        waits.append((start - submit).total_seconds())
        runs.append((end - start).total_seconds())
    return sum(waits) / len(waits), sum(runs) / len(runs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=20, help="trivial jobs of parts 1 and 2")
    ap.add_argument("--account", default="e2store")
    ap.add_argument("--partition", default="e2store")
    args = ap.parse_args()
    if shutil.which("sbatch") is None:
        print("no sbatch: start a cluster (tests/cluster/start-slurm.sh)", file=sys.stderr)
        return 2
    version = subprocess.run(["sinfo", "--version"], capture_output=True, text=True).stdout
    print(f"host: {cpu_model()}; {version.strip()}")
    tmp = Path(tempfile.mkdtemp(prefix="e2slurm-"))
    account = ["-A", args.account, "-p", args.partition]

    n = max(args.jobs // 4, 1)
    ids, t = [], time.perf_counter()
    for _ in range(n):
        ids.append(subprocess.run(["sbatch", "--parsable", "--wait", *account, "-o", "/dev/null",
                                   "--wrap", "true"], capture_output=True, text=True,
                                  check=True).stdout.split(";")[0].strip())
    t = time.perf_counter() - t
    wait, _ = sacct_times(ids)
    print(f"1. sbatch --wait of `true`, {n} in a row: {t / n:.2f} s per job (sbatch's own "
          f"polling included); {wait:.1f} s from submission to start (sacct)")

    flow = tmp / "trivial"
    flow.mkdir()
    (flow / "Snakefile").write_text(TRIVIAL)
    base = [sys.executable, "-m", "snakemake"]
    config = ["--config", f"jobs={args.jobs}"]  # last: it takes every word after it
    local, _ = timed([*base, "--cores", "2", *config], flow)
    shutil.rmtree(flow / "out")
    slurm, _ = timed([*base, "--executor", "slurm", *slurm_flags(args.account, args.partition),
                      *config], flow)
    print(f"2. {args.jobs} trivial Snakemake jobs: {slurm:.1f} s through SLURM, {local:.1f} s "
          f"locally: {(slurm - local) / args.jobs:.2f} s per job (4 at once)")

    runs = {}
    for where in ("local", "slurm"):
        work = tmp / where
        work.mkdir()
        (work / "cfg.yaml").write_text(yaml.safe_dump(CONFIG))
        cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"),
               "--directory", str(work), "--configfile", str(work / "cfg.yaml")]
        if where == "local":
            cmd += ["--cores", "2"]
        else:
            cmd += ["--profile", str(ROOT / "profiles" / "slurm"),
                    *slurm_flags(args.account, args.partition)]
        runs[where] = timed(cmd, work)
    jobs = re.findall(r"submitted with SLURM jobid (\d+)", runs["slurm"][1])
    wait, run = sacct_times(jobs)
    t_local, t_slurm = runs["local"][0], runs["slurm"][0]
    print(f"3. main job (5x5, hamming 1 and 2): {t_slurm:.0f} s through SLURM ({len(jobs)} "
          f"jobs), {t_local:.0f} s locally: {(t_slurm - t_local) / len(jobs):.2f} s per job; "
          f"a job waits {wait:.1f} s in the queue and runs {run:.1f} s on average")
    shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
