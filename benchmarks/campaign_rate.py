"""A campaign's rate against a bare run of the same restarts (issue 48): what running
`solve --best` as Snakemake shard jobs costs.

    python benchmarks/campaign_rate.py [--instance E2] [--restarts 8] [--shards 2]
        [--restart-nodes 500000000] [--pairs 3] [--clues centre] [--json OUT]

One pair: a bare `e2store solve INSTANCE --best --restarts N --workers S -o F.parquet`
(S processes, seed 0), and the campaign of one arm (`{}`: the same defaults), one seed,
S shards of N/S restarts each, run by `snakemake best --cores S` (shard jobs, receipts,
then the report), in the order bare-campaign, then campaign-bare, ... (the pairs share
the machine's load alike).  Both run the same N restarts (checked: the same restarts and
nodes).  Figures, per pair and their median: placements per second of wall time (nodes /
wall seconds of the whole command), the campaign's over the bare run's; the same for the
shard jobs alone (the campaign's wall time less its report, which the bare run has not);
the campaign's fixed cost (its wall time less the bare run's, per job).

Needs Eternity II's piece file (../shared/instances/e2_gallicchio.puz) unless --instance
is given.  About (pairs x 2 x N x restart nodes / 50 M/s / S) seconds: 4 minutes with the
defaults on the 2-core development VM.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from _host import cpu_model

ROOT = Path(__file__).resolve().parents[1]
E2 = ROOT.parent / "shared" / "instances" / "e2_gallicchio.puz"


def _env() -> dict:
    env = dict(os.environ)
    env.setdefault("SLURM_CONF", os.devnull)  # no SLURM client retries (tests/test_pipeline)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _run(cmd: list[str], cwd: Path | None = None) -> tuple[float, str]:
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=cwd)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-3000:]}")
    return wall, p.stdout


def bare(work: Path, a: argparse.Namespace) -> dict:
    """The bare run: one command, S workers, a boards file."""
    cmd = ["e2store", "best", str(a.instance), "--restarts", str(a.restarts),
           "--restart-nodes", str(a.restart_nodes), "--workers", str(a.shards), "--seed", "0",
           "-o", str(work / "bare.parquet"), "--json"]
    if a.clues:
        cmd += ["--clues", a.clues]
    wall, out = _run(cmd)
    rep = json.loads(out.strip().splitlines()[-1])
    return {"wall": wall, "nodes": int(rep["nodes"]), "restarts": int(rep["restarts"])}


def campaign(work: Path, a: argparse.Namespace) -> dict:
    """The campaign: one arm, one seed, S shard jobs, then the report."""
    best = {"instance": str(a.instance), "arms": {"a": {}}, "seeds": [0],
            "shards": a.shards, "restarts": a.restarts // a.shards,
            "restart_nodes": a.restart_nodes, "workers": 1}
    if a.clues:
        best["clues"] = a.clues
    cfg = {"results": "res", "hamming": [1], "forms": ["flat"], "demo_instances": {},
           "instances": {}, "best": best}
    (work / "cfg.yaml").write_text(yaml.safe_dump(cfg))
    cmd = [sys.executable, "-m", "snakemake", "best", "--directory", str(work),
           "--snakefile", str(ROOT / "Snakefile"), "--cores", str(a.shards),
           "--configfile", str(work / "cfg.yaml"), "--replace-workflow-config"]
    wall, _ = _run(cmd, cwd=work)
    receipts = [json.loads(p.read_text()) for p in (work / "res" / "best" / "receipts")
                .rglob("*.json")]
    report = work / "res" / "best" / "report.md"
    # the report's own time: its log's mtime less the last receipt's
    last = max(r["finished"] for r in receipts)
    report_s = max(0.0, report.stat().st_mtime - last)
    return {"wall": wall, "nodes": sum(int(r["nodes"]) for r in receipts),
            "restarts": sum(int(r["restarts"]) for r in receipts), "report": report_s,
            "jobs": len(receipts)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instance", type=Path, default=E2)
    ap.add_argument("--restarts", type=int, default=8)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--restart-nodes", type=int, default=500_000_000)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--clues", default="centre")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    if not a.instance.exists():
        sys.exit(f"{a.instance}: not there (give --instance PIECE_FILE)")
    if a.restarts % a.shards:
        sys.exit("--restarts must be a multiple of --shards")
    print(f"host: {cpu_model()}, {os.cpu_count()} CPUs; {a.restarts} restarts of "
          f"{a.restart_nodes:,} nodes, {a.shards} processes / shard jobs, {a.pairs} pairs")
    rows = []
    for i in range(a.pairs):
        with tempfile.TemporaryDirectory(prefix="e2camp-") as tmp:
            work = Path(tmp)
            (work / "b").mkdir()
            (work / "c").mkdir()
            order = ("bare", "campaign") if i % 2 == 0 else ("campaign", "bare")
            got = {}
            for which in order:
                got[which] = bare(work / "b", a) if which == "bare" else \
                    campaign(work / "c", a)
        b, c = got["bare"], got["campaign"]
        if (b["restarts"], b["nodes"]) != (c["restarts"], c["nodes"]):
            sys.exit(f"not the same restarts: bare {b}, campaign {c}")
        row = {"pair": i, "bare_wall": b["wall"], "campaign_wall": c["wall"],
               "report": c["report"], "nodes": b["nodes"],
               "bare_rate": b["nodes"] / b["wall"], "campaign_rate": c["nodes"] / c["wall"],
               "jobs_rate": c["nodes"] / max(1e-9, c["wall"] - c["report"]),
               "fixed_per_job": (c["wall"] - c["report"] - b["wall"]) / c["jobs"] * a.shards}
        row["ratio"] = row["campaign_rate"] / row["bare_rate"]
        row["jobs_ratio"] = row["jobs_rate"] / row["bare_rate"]
        rows.append(row)
        print(f"pair {i} ({'-'.join(order)}): bare {b['wall']:.1f} s "
              f"({row['bare_rate'] / 1e6:.1f} M/s), campaign {c['wall']:.1f} s "
              f"({row['campaign_rate'] / 1e6:.1f} M/s; report {c['report']:.1f} s): "
              f"{row['ratio']:.3f} of the bare rate, {row['jobs_ratio']:.3f} for the shard "
              f"jobs alone; {row['fixed_per_job']:+.1f} s a job", flush=True)
    med = {k: statistics.median(r[k] for r in rows)
           for k in ("ratio", "jobs_ratio", "fixed_per_job", "bare_rate", "campaign_rate")}
    print(f"median: campaign / bare {med['ratio']:.3f} (shard jobs alone "
          f"{med['jobs_ratio']:.3f}); fixed cost {med['fixed_per_job']:+.1f} s a job; "
          f"bare {med['bare_rate'] / 1e6:.1f} M/s, campaign {med['campaign_rate'] / 1e6:.1f} M/s")
    if a.json:
        a.json.write_text(json.dumps({"rows": rows, "median": med}, indent=1))


if __name__ == "__main__":
    main()
