"""Status files of long runs (`--status FILE`, issue 25): what `e2store.progress.status_file`
writes while a run goes on and when it ends, the commands that take the option, and the
explorer's page and API that follow them (status files and Snakemake working dirs)."""

from __future__ import annotations

import io
import json
import os
import time

import pytest
from click.testing import CliRunner
from tqdm import tqdm

from e2store.cli import main
from e2store.instance.e2sfile import write_e2store
from e2store.instance.generate import generate_instance
from e2store.progress import progress_snapshot, status_file


def _wait_for(path, pred, seconds=5.0):
    end = time.time() + seconds
    while time.time() < end:
        if path.exists():
            doc = json.loads(path.read_text())
            if pred(doc):
                return doc
        time.sleep(0.02)
    raise AssertionError(f"{path}: never {pred}")


def test_status_file_follows_a_run(tmp_path):
    path = tmp_path / "run.json"
    with status_file(path, "test", every=0.05):
        bar = tqdm(total=200, desc="walk", unit="node", file=io.StringIO())
        bar.update(50)
        bar.set_postfix(solutions=3, note="x")
        doc = _wait_for(path, lambda d: d["tasks"] and d["tasks"][0]["done"] == 50)
        assert doc["state"] == "running" and doc["command"] == "test"
        assert doc["pid"] == os.getpid() and doc["format"] == "e2store-status"
        task = doc["tasks"][0]
        assert task["task"] == "walk" and task["total"] == 200 and task["unit"] == "node"
        assert task["found"] == {"solutions": 3, "note": "x"}
        assert task["rate"] > 0 and abs(task["eta"] - 150 / task["rate"]) <= 0.051  # 0.1 s
        bar.close()
    assert json.loads(path.read_text())["state"] == "done"
    assert progress_snapshot() == []  # the closed bar is gone


@pytest.mark.parametrize("exc, state", [(ValueError("boom"), "failed"),
                                        (KeyboardInterrupt(), "interrupted"),
                                        (SystemExit(0), "done"), (SystemExit(2), "failed")])
def test_status_file_says_how_a_run_ended(tmp_path, exc, state):
    path = tmp_path / "run.json"
    with pytest.raises(type(exc)), status_file(path, "test", every=10):
        raise exc
    doc = json.loads(path.read_text())
    assert doc["state"] == state
    assert ("error" in doc) == (state == "failed")
    if isinstance(exc, ValueError):
        assert doc["error"] == "boom"


def test_solve_and_tabulate_write_their_status(tmp_path):
    inst = generate_instance(4, 4, 3, 3, seed=5)
    src = tmp_path / "g.e2s"
    write_e2store(inst, src)
    r = CliRunner().invoke(main, ["solve", str(src), "--status", str(tmp_path / "s.json")])
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["command"] == "solve" and doc["state"] == "done"
    r = CliRunner().invoke(main, ["tabulate", str(src), "--hamming", "1", "--records",
                                  str(tmp_path / "rec"), "--status", str(tmp_path / "t.json")])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "t.json").read_text())["state"] == "done"
    r = CliRunner().invoke(main, ["solve", str(tmp_path / "none.e2s"), "--status",
                                  str(tmp_path / "f.json")])
    assert r.exit_code == 2
    doc = json.loads((tmp_path / "f.json").read_text())
    assert doc["state"] == "failed" and "none.e2s" in doc["error"]


SNAKEMAKE_LOG = """Building DAG of jobs...
Finished jobid: 3 (Rule: one)
1 of 4 steps (25%) done
Finished jobid: 1 (Rule: one)
2 of 4 steps (50%) done
"""


def test_the_explorer_follows_runs(tmp_path):
    pytest.importorskip("fastapi.testclient", reason="the web extra is not installed")
    from fastapi.testclient import TestClient

    from e2store import store
    from e2store.web.app import create_app

    inst = generate_instance(4, 4, 3, 3, seed=5)
    root = tmp_path / "store"
    store.enumerate_store(root, inst, 1, [0])
    live, old, bad = tmp_path / "live.json", tmp_path / "old.json", tmp_path / "bad.json"
    with status_file(live, "solve", every=0.05):
        bar = tqdm(total=10, desc="solve g", file=io.StringIO())
        bar.update(4)
        bar.set_postfix(solutions=2)
        _wait_for(live, lambda d: d["tasks"] and d["tasks"][0]["done"] == 4)
        stale = json.loads(live.read_text())
        stale["updated"] -= 3600
        old.write_text(json.dumps(stale))
        bad.write_text("{not json")
        runs = {}
        for state, log in (("running", SNAKEMAKE_LOG),
                           ("done", SNAKEMAKE_LOG + "4 of 4 steps (100%) done\n"),
                           ("failed", SNAKEMAKE_LOG + "Error in rule bad:\n    jobid: 2\n"
                            "Exiting because a job execution failed. Look above\n")):
            d = tmp_path / f"smk-{state}" / ".snakemake" / "log"
            d.mkdir(parents=True)
            (d / "2026-11-26T170000.000000.snakemake.log").write_text(log)
            runs[state] = d.parent.parent
        followed = [live, old, bad, tmp_path / "later.json", *runs.values(), tmp_path]
        with TestClient(create_app(root, status=followed)) as client:
            got = client.get("/api/status").json()["runs"]
            page = client.get("/status").text
        bar.close()
    states = [r["state"] for r in got]
    assert states == ["running", "stale", "unreadable", "not started", "running", "done",
                      "failed", "not started"]
    assert got[0]["tasks"][0]["done"] == 4 and got[0]["tasks"][0]["found"] == {"solutions": 2}
    assert got[4]["tasks"][0]["done"] == 2 and got[4]["tasks"][0]["total"] == 4
    assert got[6]["error"] == "Error in rule bad"
    assert '<meta http-equiv="refresh"' in page and page.count('class="run"') == 8
