"""The solve rules of the main job (pipeline/rules/solve.smk): the `solve:` config section,
an end-to-end run (openings, shards, merge) against `e2store solve` single-process, and dry
runs with the pipeline's own store and of the default config."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml
from test_pipeline import REPO, _env, _job_counts, _snakemake, _validate

GEN = ["--size", "4x4", "--frame-colours", "2", "--inner-colours", "3", "--seed", "3",
       "--name", "g4"]


def _e2store(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "e2store", *args], capture_output=True,
                          text=True, env=_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def test_solve_section_is_optional_and_checked():
    assert "solve" not in _validate({})
    good = {"instance": "g4", "cells": [[0, 0], [1, 1]], "hamming": 1}
    cfg = _validate({"solve": good})
    assert cfg["solve"]["cells"] == [[0, 0], [1, 1]]
    from snakemake.exceptions import WorkflowError

    for bad in ({"cells": [[0, 0]], "hamming": 1}, {**good, "cells": []},
                {**good, "cells": [[0, 0, 1]]}, {**good, "cells": [[-1, 0]]},
                {**good, "hamming": -1}, {**good, "shards": 0}, {**good, "scan": "zigzag"},
                {**good, "extra": 1}, {**good, "instance": "bad name"}):
        with pytest.raises(WorkflowError):
            _validate({"solve": bad})


def test_solve_rules_end_to_end(tmp_path):
    """A generated 4x4 (imported by the pipeline) and a store built beside it: the merged
    total of 3 shard jobs equals `e2store solve` (totals without the symmetry break are
    compared in test_openings.py)."""
    work = tmp_path / "work"
    work.mkdir()
    _e2store("generate-instance", *GEN, "-o", str(work / "g4.e2s"))
    _e2store("enumerate", str(work / "g4.e2s"), "--hamming", "1", "--store", str(work / "st"))
    base = {"results": "res", "hamming": [1], "forms": ["flat"],
            "instances": {"g4": "g4.e2s"}}
    for sb, name in ((True, "a"),):
        cfg = {**base, "results": f"res_{name}",
               "solve": {"instance": "g4", "store": "st", "cells": [[0, 0], [1, 1]],
                         "hamming": 1, "shards": 3, "symmetry_break": sb}}
        (work / f"{name}.yaml").write_text(yaml.safe_dump(cfg))
        target = f"res_{name}/solve/solve.json"
        proc = _snakemake(work, None, target, "--configfile", str(work / f"{name}.yaml"))
        assert proc.returncode == 0, proc.stderr[-3000:]
        merged = json.loads((work / target).read_text())
        args = ["solve", str(work / f"res_{name}" / "instances" / "g4.e2s"), "--json"]
        single = json.loads(_e2store(*args, *([] if sb else ["--no-symmetry-break"]))
                            .stdout)
        assert merged["solutions"] == single["solutions"] > 0
        assert merged["shards"] == 3 and merged["complete"]
        assert merged["symmetry_break"] is sb
        shards = [json.loads((work / f"res_{name}/solve/shards/shard-{k}.json").read_text())
                  for k in range(3)]
        assert sum(s["openings"] for s in shards) == merged["openings"]
        assert [s["shard"] for s in shards] == [[k, 3] for k in range(3)]


def test_dry_run_with_the_pipeline_store(tmp_path):
    cfg = {"results": "res", "hamming": [1], "forms": ["flat"],
           "demo_instances": {"g4": {"size": "4x4", "frame_colours": 2, "inner_colours": 3,
                                     "seed": 3}},
           "solve": {"instance": "g4", "cells": [[0, 0], [1, 1]], "hamming": 1, "shards": 5,
                     "workers": 2, "scan": "spiral-in"}}
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(cfg))
    proc = _snakemake(tmp_path, tmp_path / "cfg.yaml", "-n", "-p")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    counts = _job_counts(out)
    assert counts["openings"] == 1 and counts["solve_shard"] == 5
    assert counts["solve_merge"] == 1 and counts["receipt"] == 1  # waits for the store
    assert "--at 0,0 --at 1,1 --hamming 1 --symmetry-break" in out
    assert "--shard 4/5 --scan spiral-in --workers 2" in out
    for bad, msg in (({"instance": "nope"}, "not a configured instance"),
                     ({"hamming": 2}, "not enumerated by the pipeline")):
        wrong = {**cfg, "solve": {**cfg["solve"], **bad}}
        (tmp_path / "bad.yaml").write_text(yaml.safe_dump(wrong))
        proc = _snakemake(tmp_path, tmp_path / "bad.yaml", "-n")
        assert proc.returncode != 0 and msg in proc.stdout + proc.stderr


def test_default_config_has_no_solve_jobs(tmp_path):
    proc = _snakemake(tmp_path, REPO / "config.yaml", "-n")
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = _job_counts(proc.stdout + proc.stderr)
    assert not {"openings", "solve_shard", "solve_merge"} & set(counts)


def test_lint_of_the_solve_rules(tmp_path):
    cfg = {"results": "res", "hamming": [1], "forms": ["flat"],
           "demo_instances": {"g4": {"size": "4x4", "frame_colours": 2, "inner_colours": 3,
                                     "seed": 3}},
           "solve": {"instance": "g4", "cells": [[0, 0]], "hamming": 1}}
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(cfg))
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--lint", "--snakefile",
                           str(REPO / "Snakefile"), "--directory", str(tmp_path),
                           "--configfile", str(tmp_path / "cfg.yaml")],
                          capture_output=True, text=True, env=_env(), timeout=120)
    out = proc.stdout + proc.stderr
    assert "Lints for rule solve_shard" in out
    findings = {ln.strip() for ln in out.splitlines() if ln.startswith("    * ")}
    assert findings <= {"* Specify a conda environment or container for each rule.:"}, out
