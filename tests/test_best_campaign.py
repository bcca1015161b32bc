"""A best-score campaign as a config (issue 48, pipeline/rules/best.smk): the `best` target
on a tiny board, 2 arms x 2 shards with a restarts budget, holds each (arm, seed, restart)
once, the boards `solve --best` finds by hand; a killed job's rerun completes its shard;
bad configs are
refused in one line before anything runs."""

from __future__ import annotations

import collections
import json
import os
import random
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from naive import random_board_pieces
from naive_best import unsolvable_pieces
from test_pipeline import REPO, _benchmark_file, _command, _env, _instance, _snakemake

from e2store.boards.dataset import dataset_parts, read_boards_dataset
from e2store.campaign import Campaign, check_config_file
from e2store.errors import SolverError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.instance.model import Instance
from e2store.solver.best import solve_best

FAST = {"kernel": "generic", "breaks": "20,24,28,30,32"}
ARMS = {"a": dict(FAST), "b": {**FAST, "quota": "none", "no-fill": True}}
BEST = {"instance": "u.e2s", "arms": ARMS, "seeds": [3], "shards": 2, "restarts": 2,
        "restart_nodes": 5000}
CFG = {"results": "res", "hamming": [1], "forms": ["flat"],
       "instances": {"b4": "pieces_4x4.txt"}, "best": BEST}


def _work(root: Path, best: dict | None = None, text: str | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    write_e2store(Instance("u", 6, 6, unsolvable_pieces(6, 6, 3)), root / "u.e2s")
    _benchmark_file(root / "pieces_4x4.txt", _instance(w=4, h=4, seed=9, n_frame=2,
                                                       n_inner=3))
    cfg = {**CFG, "best": BEST if best is None else best}
    (root / "cfg.yaml").write_text(text if text is not None else yaml.safe_dump(cfg))
    return root


def _no_perfect_board(work: Path) -> Path:
    """The campaign's 6x6 replaced by one no board matches perfectly: a random board's
    pieces with one inner side recoloured leave two colours on an odd number of sides (a
    perfect board pairs every side), so no restart ends its shard early."""
    pieces = [list(p) for p in random_board_pieces(6, 6, 3, 4, 3)]
    i = next(i for i, p in enumerate(pieces) if 0 not in p)
    pieces[i][0] = 4 + (pieces[i][0] - 4 + 1) % 4  # another of the inner colours 4..7
    assert any(n % 2 for n in collections.Counter(c for p in pieces for c in p if c).values())
    write_e2store(Instance("u", 6, 6, [tuple(p) for p in pieces]), work / "u.e2s")
    return work


def _restarts(boards: Path) -> dict[tuple, tuple]:
    """(arm, seed, restart, source) -> the board's cells and its search statistics (not its
    times), for every row of a campaign's dataset; each key once."""
    got = read_boards_dataset(boards, read_instance(boards.parents[2] / "u.e2s"))
    b, out = got.boards, {}
    for i in range(len(b)):
        key = (str(got.arms[i]), int(b.stats["seed"][i]), int(b.stats["restart"][i]),
               str(b.stats["source"][i]))
        assert key not in out, key
        out[key] = (tuple(b.cells[i].tolist()), *(int(b.stats[k][i]) for k in (
            "score", "depth", "joins", "mismatches", "holes", "nodes")), str(b.stats["url"][i]))
    return out


def _rows(b, source="best") -> list[tuple]:
    keep = [i for i in range(len(b)) if b.stats["source"][i] == source]
    return sorted((int(b.stats["restart"][i]), tuple(b.cells[i].tolist()),
                   int(b.stats["score"][i]), int(b.stats["depth"][i])) for i in keep)


def test_the_campaign_runs_every_arm_seed_and_shard_once(tmp_path):
    work = _work(tmp_path / "w")
    proc = _snakemake(work, None, "best", "--configfile", str(work / "cfg.yaml"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    boards = work / "res" / "best" / "boards"
    parts = [(p.arm, p.seed, p.restart) for p in dataset_parts(boards)]
    assert parts == [(a, 3, k) for a in ("a", "b") for k in range(4)]
    assert (work / "res" / "best" / "report.md").stat().st_size > 0
    receipt = json.loads((work / "res" / "best" / "receipts" / "b" /
                          "s3-shard-1-of-2.json").read_text())
    assert receipt["restarts"] == 2 and receipt["shard"] == [1, 2]
    assert "--shard 1/2 --arm b" in receipt["command"] and "--no-fill" in receipt["command"]
    # each job's trace beside its log: its last line the shard's restarts this job ran
    from e2store.solver.best import read_trace

    trace = read_trace(work / "res" / "best" / "logs" / "b" / "s3-shard-1-of-2.trace.csv")
    assert trace and trace[-1]["restarts"] == 2 and trace[-1]["score"] is not None
    # the campaign file the jobs ran from, and what `campaign status` and `report` say
    camp = work / "res" / "best" / "campaign.json"
    c = Campaign.from_file(camp)
    assert set(c.arms) == {"a", "b"} and not c.arms["b"].fill and c.restarts == 2
    st = _e2store(work, "campaign", "status", camp, "--json")
    assert [(j["arm"], j["shard"], j["state"], j["restarts"]) for j in st["jobs"]] == [
        (a, [k, 2], "done", 2) for a in ("a", "b") for k in (0, 1)]
    assert all(j["held"] == 2 for j in st["jobs"])
    rep = _e2store(work, "campaign", "report", camp, "-o", work / "again.md", "--json")
    assert [a["restarts"] for a in rep["arms"]] == [4, 4]
    assert (work / "again.md").read_text() == (work / "res" / "best" / "report.md"
                                                ).read_text().replace("report-", "again-")
    inst = read_instance(work / "u.e2s")
    got = read_boards_dataset(boards, inst)
    for arm, kw in (("a", {}), ("b", {"quota": "none", "fill": False})):
        solve_best(inst, tmp_path / f"hand-{arm}", seed=3, restarts=4, restart_nodes=5000,
                   **FAST, **kw)
        hand = read_boards_dataset(tmp_path / f"hand-{arm}", inst).boards
        idx = [i for i in range(len(got.boards)) if got.arms[i] == arm]
        sub = type(hand)(got.boards.cells[idx], {k: v[idx] for k, v in
                                                 got.boards.stats.items()})
        assert _rows(sub) == _rows(hand) and len(sub) == len(hand)
    # a part deleted: the job's receipt says 2 restarts, the dataset holds 1 (issue 57)
    (boards / "arm=a" / "part-s3-r000000002.parquet").unlink()
    proc = subprocess.run(["e2store", "campaign", "status", str(camp)], cwd=work, text=True,
                          capture_output=True, env=_env(), timeout=600)
    assert proc.returncode == 1 and "a seed 3 shard 0/2: missing" in proc.stdout, proc.stdout
    assert "1 missing (a part deleted?)" in proc.stdout
    # a job killed after a part of two (no receipt, no report): the rerun completes it
    (work / "res" / "best" / "receipts" / "a" / "s3-shard-0-of-2.json").unlink()
    (work / "res" / "best" / "report.md").unlink()
    proc = _snakemake(work, None, "best", "--configfile", str(work / "cfg.yaml"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [(p.arm, p.restart) for p in dataset_parts(boards, "a")] == [
        ("a", k) for k in range(4)]
    receipt = json.loads((work / "res" / "best" / "receipts" / "a" /
                          "s3-shard-0-of-2.json").read_text())
    # the shard's totals (its two restarts), and what this rerun added (the one deleted)
    assert receipt["restarts"] == 2 and receipt["run"]["restarts"] == 1
    assert (work / "res" / "best" / "report.md").exists()
    # the best boards saved as Blackwood-style files, as `save-boards` writes them
    saved = sorted((work / "res" / "best" / "saved").glob("*.txt"))
    best = read_boards_dataset(boards, inst)
    assert 0 < len(saved) <= 20
    top = max(int(s) for s in best.boards.stats["score"])
    assert read_boards_scores(saved, inst)[0] == top


@pytest.mark.parametrize("best, says", [
    ({**BEST, "arms": {"a": {"frist": 1}}}, "best.arms.a: option 'frist': unknown"),
    ({**BEST, "arms": {"a": {"seed": 1}}}, "best.arms.a: option 'seed' is the campaign's"),
    ({**BEST, "arms": {"a": {"order": "sideways"}}}, "best.arms.a: piece order 'sideways'"),
    ({**BEST, "arms": {"a": {"no-fill": "yes"}}}, "a flag takes true or false"),
    ({k: v for k, v in BEST.items() if k != "restarts"}, "give a budget per shard job"),
    ({**BEST, "minutes": 1}, "(not both)"),
    # issue 57: every value checked before any job, not by the jobs failing
    ({**BEST, "arms": {"a": {"breaks": "1,2,x"}}}, "best.arms.a: "),
    ({**BEST, "arms": {"a": {"scan": "bogus"}}}, "best.arms.a: unknown scan order 'bogus'"),
    ({**BEST, "arms": {"a": {"fixed": "/etc/passwd"}}}, "best.arms.a: "),
    ({**BEST, "arms": {"a": {"kernel": "turbo"}}}, "best.arms.a: kernel 'turbo'"),
    ({**BEST, "restart_nodes": 1.0e+30}, "best.restart_nodes"),
    ({**BEST, "restarts": 10**30}, "best.restarts"),
    ({**BEST, "keep_boards": {"min_score": -1}}, "best.keep_boards"),
    ({**{k: v for k, v in BEST.items() if k != "restarts"}, "minutes": float("nan")},
     "best.minutes"),
    ({**{k: v for k, v in BEST.items() if k != "restarts"}, "minutes": float("inf")},
     "best.minutes"),
])
def test_bad_configs_are_refused_in_one_line(tmp_path, best, says):
    work = _work(tmp_path / "w", best)
    proc = _snakemake(work, None, "best", "-n", "--configfile", str(work / "cfg.yaml"))
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    lines = [line for line in out.splitlines() if "config: " in line]
    assert len(lines) == 1 and says in lines[0], out[-2000:]
    assert not (work / "res").exists()


def _e2store(work: Path, *args) -> dict:
    """`e2store ARGS --json` run in `work`, its JSON."""
    proc = subprocess.run(["e2store", *map(str, args)], cwd=work, capture_output=True,
                          text=True, env=_env(), timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def read_boards_scores(paths, inst) -> list[int]:
    from e2store.boards import read_saved_board
    from e2store.boards.table import score

    return sorted((score(inst, read_saved_board(p, inst)).matched for p in paths),
                  reverse=True)


def test_the_instance_is_a_name_of_the_config_or_a_piece_file(tmp_path):
    """best.instance names a configured instance (its piece file read in place) or is a
    path; anything else is one line, nothing run."""
    work = _work(tmp_path / "w", {**BEST, "instance": "b4"})  # its arms' breaks: 6x6's
    proc = _snakemake(work, None, "best", "-n", "--configfile", str(work / "cfg.yaml"))
    assert proc.returncode != 0 and "config: best.arms.a: break schedule '20,24,28,30,32'" \
        in proc.stdout + proc.stderr  # checked on the instance before any job
    work = _work(tmp_path / "w", {**BEST, "instance": "b4",
                                  "arms": {"a": {"breaks": "4,6,8", "kernel": "generic"}}})
    proc = _snakemake(work, None, "best", "-n", "--configfile", str(work / "cfg.yaml"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert re.search(r"input: res/best/campaign\.json, pieces_4x4\.txt\n",
                     proc.stdout + proc.stderr), proc.stdout
    work = _work(tmp_path / "t", {**BEST, "targets": [40, 41], "depths": [30]})
    proc = _snakemake(work, None, "best", "-n", "-p", "--configfile", str(work / "cfg.yaml"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "e2store campaign report res/best/campaign.json -o res/best/report.md" in proc.stdout
    work = _work(tmp_path / "x", {**BEST, "instance": "nowhere"})
    proc = _snakemake(work, None, "best", "-n", "--configfile", str(work / "cfg.yaml"))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "best.instance 'nowhere': neither an instance" in out
    assert not (work / "res").exists()


def test_two_arms_of_one_name_are_refused(tmp_path):
    text = yaml.safe_dump({k: v for k, v in CFG.items() if k != "best"}) + (
        "best:\n  instance: u.e2s\n  restarts: 1\n  arms:\n    a: {}\n    a: {quota: none}\n")
    work = _work(tmp_path / "w", text=text)
    proc = _snakemake(work, None, "best", "-n", "--configfile", str(work / "cfg.yaml"))
    assert proc.returncode != 0 and "key 'a' given twice" in proc.stdout + proc.stderr
    with pytest.raises(SolverError, match=r"line \d+: key 'a' given twice"):
        check_config_file(work / "cfg.yaml")


def test_the_campaign_object():
    """A `best:` section as one checked `Campaign`: arms as the library's options, the
    jobs, the budget, a round trip through its file; values refused in one line."""
    c = Campaign.from_mapping({**BEST, "arms": {"x": None, "y": {"quota": "none",
                                                                  "no-fill": False}}},
                              instance="u.e2s", boards="res/best/boards/")
    assert c.arms["x"].quota == "auto" and c.arms["y"].quota == "none" and c.arms["y"].fill
    assert c.arms["x"].restart_nodes == 5000  # the campaign's, in every arm
    assert c.jobs() == [(a, 3, (k, 2)) for a in ("x", "y") for k in (0, 1)]
    assert c.budget() == ("--restarts", "2")
    m = Campaign.from_mapping({**BEST, "restarts": None, "minutes": 1.5}, instance="u",
                              boards="b/")
    assert m.budget() == ("--minutes", "1.5")
    for bad, says in ((float("nan"), "minutes"), (float("inf"), "minutes"), (0, "minutes"),
                      (True, "minutes")):
        with pytest.raises(SolverError, match=says):
            Campaign.from_mapping({**BEST, "restarts": None, "minutes": bad}, instance="u",
                                  boards="b/")
    with pytest.raises(SolverError, match="arm"):
        Campaign.from_mapping({**BEST, "arms": {"../x": {}}}, instance="u", boards="b/")
    with pytest.raises(SolverError, match="seeds"):
        Campaign.from_mapping({**BEST, "seeds": [1, 1]}, instance="u", boards="b/")


def test_the_campaign_of_a_config_file(tmp_path):
    """`Campaign.from_config` resolves a config file as the pipeline does: the instance a
    name of the config's instances or a path, the dataset under its results."""
    work = _work(tmp_path / "w", {**BEST, "instance": "b4",
                                  "arms": {"a": {"breaks": "4,6,8"}},
                                  "keep_boards": {"min_score": 20}})
    c = Campaign.from_config(work / "cfg.yaml")
    assert c.instance == "pieces_4x4.txt" and c.boards == "res/best/boards/"
    assert c.arms["a"].breaks == "4,6,8" and c.restarts == 2 and c.keep_min_score == 20
    (work / "bad.yaml").write_text("results: r\n")
    with pytest.raises(SolverError, match="no `best:` section"):
        Campaign.from_config(work / "bad.yaml")


def test_the_campaign_file_round_trips(tmp_path):
    c = Campaign.from_mapping({**BEST, "depths": [30], "targets": [40, 41],
                               "keep_boards": {"min_score": 45}},
                              instance="u.e2s", boards="res/best/boards/")
    c.write(tmp_path / "c.json")
    assert Campaign.from_file(tmp_path / "c.json") == c
    (tmp_path / "bad.json").write_text('{"format": "e2store-campaign", "version": 9}')
    with pytest.raises(SolverError, match="not a campaign file"):
        Campaign.from_file(tmp_path / "bad.json")


def test_a_yaml_alias_bomb_and_a_schema_error_are_one_line(tmp_path):
    """Aliases that expand without end are refused before any validation walks them (in
    milliseconds, not 120 s); a schema error is one line naming the key."""
    import time as _time

    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{n}: &{n} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, n in zip("abcdefgh", "bcdefghi", strict=True))  # 10^9 values expanded
    text = bomb + yaml.safe_dump({k: v for k, v in CFG.items() if k != "best"}) + (
        "best:\n  instance: u.e2s\n  restarts: 1\n  arms: {a: {}}\n  depths: *i\n")
    work = _work(tmp_path / "w", text=text)
    t0 = _time.monotonic()
    with pytest.raises(SolverError, match="aliases expand to over"):
        check_config_file(work / "cfg.yaml")
    assert _time.monotonic() - t0 < 30
    proc = _snakemake(work, None, "best", "-n", "--configfile", str(work / "cfg.yaml"))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "aliases expand to over" in out, out[-2000:]
    work = _work(tmp_path / "s", {**BEST, "saved": "many"})
    proc = _snakemake(work, None, "best", "-n", "--configfile", str(work / "cfg.yaml"))
    out = proc.stdout + proc.stderr
    lines = [line for line in out.splitlines() if "config: " in line]
    assert proc.returncode != 0 and len(lines) == 1 and "best.saved" in lines[0], out[-2000:]
    assert len(lines[0]) < 300


@pytest.mark.parametrize("name, jobs", [("best-e2.yaml", 8), ("best-e2-five.yaml", 6)])
def test_the_example_configs_plan_every_job(name, jobs):
    """config/best-e2.yaml (2 arms x 2 seeds x 2 shards) and best-e2-five.yaml (3 arms x 1
    seed x 2 shards) pass the schema and `snakemake best -n` plans their jobs and the
    report (from the repository: ../shared holds their piece file)."""
    from test_pipeline import REPO, _validate

    cfg = _validate(yaml.safe_load((REPO / "config" / name).read_text()))
    assert cfg["best"]["instance"] == "../shared/instances/e2_gallicchio.puz"
    if not (REPO.parent / "shared" / "instances" / "e2_gallicchio.puz").exists():
        pytest.skip("../shared/instances/e2_gallicchio.puz not found")
    proc = _snakemake(REPO, None, "best", "-n", "--configfile", f"config/{name}",
                      "--replace-workflow-config")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert re.search(rf"best_shard\s+{jobs}\b", proc.stdout + proc.stderr)


def test_kill_9_at_random_moments_then_a_rerun_equals_an_unbroken_campaign(tmp_path):
    """The whole `snakemake best` (its jobs and their searches) killed with SIGKILL twice,
    each time once a random number of parts are written, then run again to its end: the
    same dataset as a campaign never stopped, each (arm, seed, restart) once."""
    best = {**BEST, "arms": {"a": FAST}, "restarts": 4, "restart_nodes": 1_000_000}
    unbroken = _no_perfect_board(_work(tmp_path / "unbroken", best))
    proc = _snakemake(unbroken, None, "best", "--configfile", str(unbroken / "cfg.yaml"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    work = _no_perfect_board(_work(tmp_path / "killed", best))
    boards = work / "res" / "best" / "boards"
    cmd = _command(work, None, "best", "--configfile", str(work / "cfg.yaml"))
    rng = random.Random(48)
    total = best["shards"] * best["restarts"]
    for _ in range(2):
        have = len(dataset_parts(boards)) if boards.exists() else 0
        if have + 1 > total - 1:  # the last kill came late: no part is left to kill before
            break
        at = rng.randint(have + 1, min(have + 3, total - 1))  # kill once `at` parts exist
        subprocess.run(_command(work, None, "--unlock", "--configfile", str(work / "cfg.yaml")),
                       capture_output=True, env=_env(), timeout=300)  # the killed run's lock
        run = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env=_env(), start_new_session=True, text=True)
        deadline = time.time() + 600
        while run.poll() is None and time.time() < deadline:
            if boards.exists() and len(dataset_parts(boards)) >= at:
                time.sleep(rng.uniform(0, 0.3))  # a random moment past it
                break
            time.sleep(0.02)
        assert run.poll() is None, (at, run.stderr.read()[-3000:] if run.stderr else "")
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
    subprocess.run(_command(work, None, "--unlock", "--configfile", str(work / "cfg.yaml")),
                   capture_output=True, env=_env(), timeout=300)
    proc = _snakemake(work, None, "best", "--configfile", str(work / "cfg.yaml"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    got, want = _restarts(boards), _restarts(unbroken / "res" / "best" / "boards")
    assert got == want and len({k[:3] for k in got}) == total


E2 = REPO.parent / "shared" / "instances" / "e2_gallicchio.puz"


def test_a_campaign_on_eternity_ii_equals_solve_best_by_hand(tmp_path):
    """Eternity II, centre clue, small budgets: 2 shards of 1 restart through Snakemake hold
    the restarts `solve_best` finds by hand, board for board."""
    if not E2.exists():
        pytest.skip(f"{E2} not found")
    arm = {"kernel": "generic", "no-fill": True}
    best = {"instance": str(E2), "clues": "centre", "arms": {"bw": arm}, "seeds": [5],
            "shards": 2, "restarts": 1, "restart_nodes": 300_000}
    work = _work(tmp_path / "w", best)
    proc = _snakemake(work, None, "best", "--configfile", str(work / "cfg.yaml"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    inst = read_instance(E2)
    got = read_boards_dataset(work / "res" / "best" / "boards", inst)
    assert [(p.arm, p.seed, p.restart) for p in got.parts] == [("bw", 5, 0), ("bw", 5, 1)]
    solve_best(inst, tmp_path / "hand/", clues="centre", seed=5, restarts=2,
               restart_nodes=300_000, kernel="generic", fill=False, arm="bw")
    hand = read_boards_dataset(tmp_path / "hand", inst)
    assert _rows(got.boards) == _rows(hand.boards) and len(hand.boards) == 2
    saved = sorted((work / "res" / "best" / "saved").glob("*.txt"))
    assert saved and max(read_boards_scores(saved, inst)) == max(
        r[2] for r in _rows(hand.boards))
