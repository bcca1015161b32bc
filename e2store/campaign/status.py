"""Where a campaign's jobs leave word, and the one reader of it (`status`): each (arm, seed,
shard) job's receipt (`<results>/best/receipts/<arm>/s<seed>-shard-<k>-of-<n>.json`,
written atomically when the job ends) and log (`<results>/best/logs/...`, the same name in
`.log`, begun when the job starts), named here (`job_name`, `receipt_path`, `log_path`)
and read here; and the run locks its writers hold in the dataset (named and listed by
`e2store.boards.parts`, their holder by `e2store.files`).  Read only: a lock is never
taken here (a writer starting then would be refused)."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

RECEIPTS, LOGS = "receipts", "logs"
_JOB = re.compile(r"s([0-9]+)-shard-([0-9]+)-of-([0-9]+)\.(json|log|trace\.csv)")

Key = tuple[str, int, int | None, int | None]  # (arm, seed, shard k, of n)


def job_name(seed: int | str, shard: tuple[int | str, int | str]) -> str:
    """The name of a job's receipt and log, without suffix: `s<seed>-shard-<k>-of-<n>`
    (Snakemake's wildcards, `{seed}`, are taken as they are)."""
    return f"s{seed}-shard-{shard[0]}-of-{shard[1]}"


def receipt_path(results: str | Path, arm: str, seed: int | str,
                 shard: tuple[int | str, int | str]) -> str:
    """A job's receipt under a campaign's results directory (`<results>/best`)."""
    return os.path.join(results, RECEIPTS, arm, job_name(seed, shard) + ".json")


def log_path(results: str | Path, arm: str, seed: int | str,
             shard: tuple[int | str, int | str]) -> str:
    """A job's log under a campaign's results directory."""
    return os.path.join(results, LOGS, arm, job_name(seed, shard) + ".log")


def trace_path(results: str | Path, arm: str, seed: int | str,
               shard: tuple[int | str, int | str]) -> str:
    """A job's trace (`e2store best --trace`) beside its log."""
    return os.path.join(results, LOGS, arm, job_name(seed, shard) + ".trace.csv")


@dataclass
class CampaignStatus:
    """What a campaign's files say now: `receipts` (the jobs that ended, each its JSON,
    {} when unreadable now), `writers` ("running", or "stopped" for a lock naming a dead
    process of this host: a killed run), `started` (the jobs whose log exists)."""

    receipts: dict[Key, dict] = field(default_factory=dict)
    writers: dict[Key, str] = field(default_factory=dict)
    started: set[Key] = field(default_factory=set)
    results: Path | None = None
    traces: dict[Key, Path] = field(default_factory=dict)


def campaign_dir(boards: str | Path) -> Path | None:
    """A campaign's results directory (`<results>/best`) when the dataset `boards` is its
    `boards/` directory beside its receipts, else None."""
    root = Path(os.path.abspath(boards))
    return root.parent if root.name == "boards" and (root.parent / RECEIPTS).is_dir() else None


def campaign_status(boards: str | Path) -> CampaignStatus:
    """The status of the dataset `boards` and, when it is a campaign's, of its jobs."""
    results = campaign_dir(boards)
    out = CampaignStatus(writers=writers(boards), results=results)
    if results is not None:
        out.receipts = {k: v for k, v in _jobs(results / RECEIPTS, "json").items()}
        out.started = set(_jobs(results / LOGS, "log"))
        out.traces = {k: Path(trace_path(results, k[0], k[1], (k[2] or 0, k[3] or 1)))
                      for k in _jobs(results / LOGS, "trace.csv")}
    return out


def _jobs(where: Path, suffix: str) -> dict[Key, dict]:
    """The jobs' files of `suffix` under `where` (`<arm>/<job_name>.<suffix>`), by key:
    a receipt's JSON ({} when unreadable now), a log's {}."""
    out: dict[Key, dict] = {}
    if not where.is_dir():
        return out
    for arm_dir in sorted(where.iterdir()):
        if not arm_dir.is_dir():
            continue
        for f in sorted(arm_dir.iterdir()):
            m = _JOB.fullmatch(f.name)
            if m is None or m[4] != suffix:
                continue
            got: object = {}
            if suffix == "json":
                try:
                    got = json.loads(f.read_text())
                except (OSError, ValueError):
                    got = {}
            out[(arm_dir.name, int(m[1]), int(m[2]), int(m[3]))] = \
                got if isinstance(got, dict) else {}
    return out


def writers(boards: str | Path) -> dict[Key, str]:
    """The dataset's writers by (arm, seed, k, n) (k, n None for a run of every restart),
    from their lock files: "running", or "stopped" when the lock names a process of this
    host that is gone (a killed run: its rerun goes on from its next restart)."""
    from e2store.boards.parts import run_locks
    from e2store.files import lock_holder, pid_alive

    host = os.uname().nodename
    out: dict[Key, str] = {}
    for arm_dir in sorted(Path(boards).glob("arm=*")):
        try:
            names = [e.name for e in os.scandir(arm_dir) if e.name.startswith(".seed=")]
        except OSError:
            continue
        for seed, k, n, name in run_locks(names):
            try:
                h = lock_holder(arm_dir / name)
            except OSError:
                continue  # gone: its writer ended
            dead = h is not None and h[1] == host and not pid_alive(h[0])
            out[(arm_dir.name[4:], seed, k, n)] = "stopped" if dead else "running"
    return out
