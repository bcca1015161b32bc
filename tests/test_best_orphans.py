"""A campaign's shard jobs end with the Snakemake that started them (issue 58): a `kill -9`
of `snakemake best` leaves no `e2store solve` (nor its workers) running; a SIGTERM to it
ends them too.  A receipt is the shard as the dataset holds it (restarts, nodes, search
and fill seconds), so a rerun that ran nothing says what the run before did; a shard
job's log has its command, start, a line per restart, result and exit code."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from naive_best import unsolvable_pieces
from test_best_campaign import BEST, FAST, _no_perfect_board, _work
from test_pipeline import _command, _env, _snakemake

from e2store.boards.dataset import (
    compact_boards_dataset,
    dataset_parts,
    read_boards_dataset,
)
from e2store.boards.restarts import restart_arrays
from e2store.campaign import (
    Campaign,
    cost_totals,
    is_shard_argv,
    run_shard,
    shard_command,
    shard_costs,
    shard_done,
)
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.instance.model import Instance
from e2store.processes import descendants, process_argv, process_start, run_watched
from e2store.solver.best import solve_best

RUN = {"breaks": "20,24,28,30,32", "restart_nodes": 5000, "kernel": "generic"}
KEYS = ("restarts", "nodes", "search_seconds", "fill_seconds", "seconds")


def _sums(boards: Path, inst: Instance, arm: str, seed: int, shard: tuple[int, int]) -> dict:
    """The shard's totals from every row of the dataset, read and checked whole (the
    report's way: `restart_arrays`), not from `shard_costs`."""
    d = read_boards_dataset(boards, inst)
    r = restart_arrays(d.boards, d.arms)[arm]
    mine = (r["seed"] == seed) & (r["restart"] % shard[1] == shard[0])
    s, f = float(r["seconds"][mine].sum()), float(r["fill_seconds"][mine].sum())
    return {"restarts": int(mine.sum()), "nodes": int(r["nodes"][mine].sum()),
            "search_seconds": s, "fill_seconds": f, "seconds": s + f}


def _same(got: dict, want: dict) -> None:
    for k in KEYS:
        assert got[k] == pytest.approx(want[k], abs=2e-3), (k, got, want)


# -- the receipt's totals --------------------------------------------------------------


def test_shard_costs_are_the_datasets_rows_parts_or_compacted(tmp_path):
    write_e2store(Instance("u", 6, 6, unsolvable_pieces(6, 6, 3)), tmp_path / "u.e2s")
    inst = read_instance(tmp_path / "u.e2s")
    out = tmp_path / "ds"
    for k in (0, 1):
        solve_best(inst, out, restarts=3, seed=2, arm="x", shard=(k, 2), **RUN)
    solve_best(inst, out, restarts=2, seed=5, arm="x", shard=(0, 2), **RUN)  # another seed
    for k in (0, 1):
        costs = shard_costs(out, "x", 2, (k, 2))
        assert costs["restart"].tolist() == [k, k + 2, k + 4]
        assert (costs["fill_seconds"] >= 0).all() and (costs["seconds"] > 0).all()
        _same(cost_totals(costs), _sums(out, inst, "x", 2, (k, 2)))
        assert shard_done(out, "x", 2, (k, 2)) == {k, k + 2, k + 4}
    before = cost_totals(shard_costs(out, "x", 2, (1, 2)))
    part = tuple(cost_totals(shard_costs(out, "x", 2, (1, 2)), {1, 3}).values())
    assert part[:2] == (1, before["nodes"] // 3)  # restart 5 alone
    # compacted: the same totals; a part left beside its compacted file counted once
    keep = (out / "arm=x" / "part-s2-r000000003.parquet").read_bytes()
    compact_boards_dataset(out, inst, min_parts=1)
    assert not (out / "arm=x" / "part-s2-r000000003.parquet").exists()
    (out / "arm=x" / "part-s2-r000000003.parquet").write_bytes(keep)
    assert cost_totals(shard_costs(out, "x", 2, (1, 2))) == before
    assert cost_totals(shard_costs(out, "nothing", 2, (1, 2)))["restarts"] == 0
    assert cost_totals(shard_costs(out, "x", 9, (0, 1))) == dict.fromkeys(KEYS, 0)


def test_a_shard_jobs_receipt_and_log_and_a_rerun_that_runs_nothing(tmp_path, monkeypatch):
    write_e2store(Instance("u", 6, 6, unsolvable_pieces(6, 6, 3)), tmp_path / "u.e2s")
    inst = read_instance(tmp_path / "u.e2s")
    boards, shard = str(tmp_path / "ds") + "/", (1, 2)
    solve_best(inst, boards, restarts=1, seed=4, arm="a", shard=shard, **RUN)  # restart 1
    done = shard_done(boards, "a", 4, shard)
    c = Campaign.from_mapping({"arms": {"a": {"breaks": RUN["breaks"], "kernel": "generic"}},
                               "seeds": [4], "shards": 2, "restarts": 3,
                               "restart_nodes": 5000},
                              instance=str(tmp_path / "u.e2s"), boards=boards)
    cmd = shard_command(c, "a", 4, shard, ("--restarts", "2"))
    monkeypatch.setenv("PATH", _env()["PATH"])  # this venv's `e2store` first
    doc = run_shard(cmd, boards, "a", 4, shard, receipt=tmp_path / "r.json",
                    log=tmp_path / "r.log", done=done)
    assert json.loads((tmp_path / "r.json").read_text()) == doc
    want = _sums(tmp_path / "ds", inst, "a", 4, shard)
    assert want["restarts"] == 3
    _same(doc, want)
    assert doc["run"]["restarts"] == 2 and doc["ended"] == "nodes"
    assert doc["run"]["seconds"] < doc["seconds"] and doc["run"]["wall_seconds"] > 0
    log = (tmp_path / "r.log").read_text().splitlines()
    assert log[0] == " ".join(cmd) and log[1].startswith("started ")
    lines = [line for line in log if " restart " in line]
    assert [line.split(" restart ")[1].split(":")[0] for line in lines] == ["3", "5"]
    assert "depth" in lines[0] and "filled" in lines[0] and "s fill" in lines[0]
    assert log[-3].startswith("result {") and log[-2].startswith("exit 0 at ")
    assert log[-1].startswith("shard: 3 restarts")
    # the same job again with nothing left: the same totals, nothing added
    again = run_shard(cmd, boards, "a", 4, shard, receipt=tmp_path / "r.json",
                      log=tmp_path / "r.log", done=shard_done(boards, "a", 4, shard),
                      run=False)
    assert {k: again[k] for k in KEYS} == {k: doc[k] for k in KEYS}
    assert again["ended"] == "done before" and again["run"]["restarts"] == 0
    assert "nothing to run" in (tmp_path / "r.log").read_text()
    assert not list(tmp_path.glob(".r.json*"))  # written atomically: no temp file left


# -- a command that ends with its caller -----------------------------------------------

SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]


def test_run_watched_stops_the_command_when_its_watch_fails(tmp_path):
    t0, calls = time.monotonic(), []
    code, out, stopped = run_watched(SLEEPER, watch=lambda: time.monotonic() < t0 + 0.5,
                                     every=lambda: calls.append(1), poll=0.1)
    assert (code, out, stopped) == (-signal.SIGTERM, "", True) and calls
    assert time.monotonic() - t0 < 30
    # deaf to SIGTERM: SIGKILL after the grace
    up = tmp_path / "up"
    deaf = [sys.executable, "-c", "import pathlib, signal, sys, time; signal.signal("
            "signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); "
            "pathlib.Path(sys.argv[1]).touch(); time.sleep(120)", str(up)]
    code, out, stopped = run_watched(deaf, watch=lambda: not up.exists(), poll=0.1,
                                     grace=0.5)
    assert (code, out, stopped) == (-signal.SIGKILL, "up\n", True)
    assert run_watched([sys.executable, "-c", "print('done')"])[:2] == (0, "done\n")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG: Linux")
def test_the_command_ends_when_the_process_running_it_is_killed(tmp_path):
    """The caller's thread runs `run_watched` (as a Snakemake job's does); its process
    killed by SIGKILL, the command gets SIGTERM from the kernel."""
    code = textwrap.dedent(f"""
        import sys, threading
        from e2store.processes import run_watched
        t = threading.Thread(target=run_watched, args=({SLEEPER!r},))
        t.start()
        t.join()
    """)
    middle = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline, kids = time.time() + 60, []
        while time.time() < deadline and [process_argv(p) for p in kids] != [SLEEPER]:
            time.sleep(0.05)  # until the command runs (exec'd: its own command line)
            kids = descendants(middle.pid)
        assert [process_argv(p) for p in kids] == [SLEEPER]
        start = process_start(kids[0])
        assert start is not None
    finally:
        middle.kill()
        middle.wait()
    deadline = time.time() + 30
    while process_start(kids[0]) == start and time.time() < deadline:
        time.sleep(0.05)
    assert process_start(kids[0]) != start


def test_a_shard_command_line_is_known():
    c = Campaign.from_mapping({"arms": {"a": {}}, "seeds": [3], "shards": 2, "restarts": 4},
                              instance="u.e2s", boards="res/best/boards/")
    cmd = shard_command(c, "a", 3, (1, 2), ("--restarts", "4"))
    assert is_shard_argv(["/venv/bin/python3", "/venv/bin/e2store", *cmd[1:]])
    assert not is_shard_argv(["/venv/bin/e2store", "best", "u.e2s", "--json"])
    assert not is_shard_argv(["python", "-m", "snakemake", "--target-jobs", "best_shard"])


# -- a campaign's Snakemake killed -----------------------------------------------------

CAMPAIGN = {**BEST, "arms": {"a": FAST}, "restarts": 60, "restart_nodes": 2_000_000,
            "workers": 2}


def _session(sid: int) -> list[int]:
    """The live processes of session `sid` (a zombie is over)."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.getsid(int(name)) == sid and process_start(int(name)) is not None:
                    out.append(int(name))
            except OSError:
                pass
    return out


def _start_and_stop(work: Path, sig: int) -> dict[int, int]:
    """Start `snakemake best` in a session of its own, and once a shard job's search runs
    and wrote a part, send `sig` to Snakemake alone; wait until no process of the session
    is left (60 s).  Returns the parts of each shard then."""
    boards = work / "res" / "best" / "boards"
    subprocess.run(_command(work, None, "--unlock", "--configfile", str(work / "cfg.yaml")),
                   capture_output=True, env=_env(), timeout=300)
    run = subprocess.Popen(_command(work, None, "best", "--configfile", str(work / "cfg.yaml")),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env(),
                           start_new_session=True, text=True)
    try:
        deadline, ready = time.time() + 600, False
        while run.poll() is None and time.time() < deadline and not ready:
            time.sleep(0.05)
            for pid in descendants(run.pid):
                argv = process_argv(pid) or []
                if is_shard_argv(argv) and boards.exists():
                    k, n = map(int, argv[argv.index("--shard") + 1].split("/"))
                    ready = len(shard_done(boards, "a", 3, (k, n))) > 0
        assert run.poll() is None and ready, run.stderr.read()[-3000:] if run.stderr else ""
        assert any("spawn_main" in " ".join(process_argv(p) or [])  # its workers too
                   for p in descendants(run.pid))
        os.kill(run.pid, sig)
        deadline = time.time() + 60
        while (left := _session(run.pid)) and time.time() < deadline:
            time.sleep(0.2)
        assert not left, [process_argv(p) for p in left]
    finally:
        for pid in _session(run.pid):  # a failed test leaves nothing running
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        run.wait()
    return {k: len(shard_done(boards, "a", 3, (k, 2))) for k in range(2)}


def _receipts(work: Path) -> dict[int, dict]:
    where = work / "res" / "best" / "receipts" / "a"
    return {k: json.loads((where / f"s3-shard-{k}-of-2.json").read_text()) for k in range(2)}


def test_a_killed_campaign_leaves_no_search_running_and_its_rerun_counts_the_shard(
        tmp_path):
    """`kill -9` of `snakemake best` (workers 2): its job's search and workers end within
    60 s; after `--unlock`, the rerun's receipts are the dataset's totals, and a rerun
    that runs nothing (receipts and report removed) keeps them."""
    work = _no_perfect_board(_work(tmp_path / "w", CAMPAIGN))
    inst = read_instance(work / "u.e2s")
    boards = work / "res" / "best" / "boards"
    had = _start_and_stop(work, signal.SIGKILL)
    assert 0 < sum(had.values()) < 2 * CAMPAIGN["restarts"]
    logs = [p.read_text() for p in (work / "res" / "best" / "logs" / "a").glob("*.log")]
    assert any(log.rstrip().endswith("the Snakemake that started this job ended")
               for log in logs), logs
    subprocess.run(_command(work, None, "--unlock", "--configfile", str(work / "cfg.yaml")),
                   capture_output=True, env=_env(), timeout=300)
    proc = _snakemake(work, None, "best", "--configfile", str(work / "cfg.yaml"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    first = _receipts(work)
    for k, doc in first.items():
        want = _sums(boards, inst, "a", 3, (k, 2))
        assert want["restarts"] == CAMPAIGN["restarts"]
        _same(doc, want)
        assert doc["run"]["restarts"] == CAMPAIGN["restarts"] - had[k]
    assert len(dataset_parts(boards)) == 2 * CAMPAIGN["restarts"]
    # nothing left to run: the same totals (read from the compacted files the report made)
    for doc in (work / "res" / "best" / "receipts" / "a").glob("*.json"):
        doc.unlink()
    (work / "res" / "best" / "report.md").unlink()
    proc = _snakemake(work, None, "best", "--configfile", str(work / "cfg.yaml"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    for k, doc in _receipts(work).items():
        assert {key: doc[key] for key in KEYS} == {key: first[k][key] for key in KEYS}
        assert doc["ended"] == "done before" and doc["run"]["restarts"] == 0


@pytest.mark.slow
def test_a_campaign_stopped_by_sigterm_ends_its_searches(tmp_path):
    """SIGTERM to `snakemake best` alone (Snakemake itself would wait for its running jobs):
    the searches end, then Snakemake; the rerun completes the shards."""
    work = _no_perfect_board(_work(tmp_path / "w", CAMPAIGN))
    _start_and_stop(work, signal.SIGTERM)
    subprocess.run(_command(work, None, "--unlock", "--configfile", str(work / "cfg.yaml")),
                   capture_output=True, env=_env(), timeout=300)
    proc = _snakemake(work, None, "best", "--configfile", str(work / "cfg.yaml"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert all(d["restarts"] == CAMPAIGN["restarts"] for d in _receipts(work).values())

