"""The status of long runs for the explorer: `--status FILE` files written by `e2store
solve` / `tabulate` (`e2store.progress.status_file`), and Snakemake working directories
(the newest log under `.snakemake/log/`)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

STALE_SECONDS = 60.0  # a running status not rewritten for this long may belong to a dead run
_STEPS = re.compile(r"^(\d+) of (\d+) steps \((\d+)%\) done")
_FAILED = ("Exiting because a job execution failed", "WorkflowError", "Error in rule")


def run_status(path: Path) -> dict:
    """One followed run: a status file, or a Snakemake working directory."""
    if path.is_dir():
        return snakemake_status(path)
    out: dict = {"path": str(path), "kind": "e2store"}
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        return {**out, "state": "not started", "tasks": []}
    except (OSError, ValueError) as exc:
        return {**out, "state": "unreadable", "error": str(exc), "tasks": []}
    if not isinstance(doc, dict) or doc.get("format") != "e2store-status":
        return {**out, "state": "unreadable", "tasks": [],
                "error": "not an e2store status file (written by --status FILE)"}
    age = time.time() - float(doc.get("updated", 0))
    if doc.get("state") == "running" and age > STALE_SECONDS:
        doc["state"] = "stale"  # its writer stopped writing: killed, or on a hung machine
    return {**out, **doc, "age": round(age, 1)}


def snakemake_status(workdir: Path) -> dict:
    """A Snakemake run in `workdir`: steps done of the total, and how its newest log ends."""
    logs = sorted((workdir / ".snakemake" / "log").glob("*.snakemake.log"))
    out: dict = {"path": str(workdir), "kind": "snakemake", "tasks": []}
    if not logs:
        return {**out, "state": "not started"}
    log = logs[-1]
    done = total = None
    state = "running"
    errors = []
    for line in log.read_text(errors="replace").splitlines():
        m = _STEPS.match(line)
        if m:
            done, total = int(m.group(1)), int(m.group(2))
        elif line.startswith("Nothing to be done"):
            state = "done"
        elif line.startswith("Error in rule"):
            errors.append(line.rstrip(":"))
        if line.startswith(_FAILED[0]) or line.startswith(_FAILED[1]):
            state = "failed"
    if state == "running" and done is not None and done == total:
        state = "done"
    age = time.time() - log.stat().st_mtime
    task = {"task": "snakemake steps", "done": done or 0, "total": total, "unit": "step",
            "found": {}}
    return {**out, "state": state, "log": str(log), "age": round(age, 1),
            "tasks": [task] if total else [], **({"error": "; ".join(errors)} if errors
                                                 else {})}
