"""`e2store score` and `e2store solve --best` from the command line (issue 38): scores of
board files and URLs, the boards file and its reruns, workers reproducing one process
restart by restart, Ctrl-C keeping what was found, bad input as one line and exit 2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import random_instance
from naive_best import naive_score, unsolvable_pieces

from e2store.boards.table import read_boards
from e2store.cli import main
from e2store.instance.e2sfile import write_e2store
from e2store.instance.model import Instance
from e2store.instance.url import board_url
from e2store.solver.best import SCHEDULES

SHARED = Path(__file__).resolve().parents[2] / "shared" / "instances"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def unsolvable(tmp_path) -> Path:
    path = tmp_path / "u.e2s"
    write_e2store(Instance("u", 6, 6, unsolvable_pieces(6, 6, 3)), path)
    return path


def test_score_of_a_board_file_and_its_url(tmp_path):
    inst = random_instance(5, 5, 4)
    path = tmp_path / "g.e2s"
    write_e2store(inst, path)
    rng = np.random.default_rng(0)
    board = np.array([p * 4 + int(rng.integers(4)) for p in rng.permutation(25)])
    board[[3, 8, 20]] = -1
    lines = [f"{i % 5} {i // 5} {v // 4} {v % 4}" for i, v in enumerate(board) if v >= 0]
    (tmp_path / "b.txt").write_text("\n".join(lines) + "\n")
    r = run("score", path, tmp_path / "b.txt", "--json")
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    assert (got["score"], got["joins"], got["holes"]) == naive_score(pieces, 5, 5,
                                                                     board.tolist())
    by_url = json.loads(run("score", board_url(inst, board), "--json").stdout)
    assert (by_url["score"], by_url["holes"]) == (got["score"], got["holes"])
    text = run("score", path, tmp_path / "b.txt").output
    assert f"score      {got['score']} / 40 joins matched" in text
    filled = json.loads(run("score", path, tmp_path / "b.txt", "--fill", "--json").stdout)
    assert filled["holes"] == 0 and filled["score"] >= got["score"]


@pytest.mark.parametrize("args, message", [
    (["--breaks", "20,10"], "--breaks: break schedule '20,10': depths must be strictly "
                            "increasing"),
    (["--breaks", "3,x"], "or comma-separated depths"),
    (["--breaks", "30,40"], "depths must be in 0..35"),
    (["--clues", "corner"], "--clues: clue set 'corner': unknown"),
    (["--clues", "centre"], "not that set"),
    (["--seed", "pieces.txt"], "the old `--seed FILE` was removed"),
    (["--first"], "No such option '--first'"),
    (["--order", "store"], "--store: the store's piece order and colour quota read a "
                           "corolle store: none given"),
    (["--quota", "purple"], "--quota: colour quota 'purple': expected none, blackwood"),
])
def test_bad_best_input_is_one_line(unsolvable, args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run("best", unsolvable, "--restarts", 1, *args)
    assert r.exit_code == 2, r.output
    assert message in r.output and "Traceback" not in r.output
    assert not Path("best-boards.parquet").exists()


def test_breaks_need_best(unsolvable):
    r = run("solve", unsolvable, "--breaks", "3,4")
    assert r.exit_code == 2 and "--breaks needs --best" in r.output


def test_board_file_with_a_piece_twice(unsolvable, tmp_path):
    (tmp_path / "b.txt").write_text("0 0 1 0\n3 2 1 2\n")
    r = run("score", unsolvable, tmp_path / "b.txt")
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1
    assert "piece 1 is placed twice: on (0, 0) and (3, 2)" in r.output


def test_best_run_writes_boards_and_a_rerun_adds(unsolvable, tmp_path):
    out = tmp_path / "b.parquet"
    args = ["best", unsolvable, "--breaks", "20,24,28,30,32", "--restarts", 3,
            "--restart-nodes", 20000, "-o", out, "--json"]
    r = run(*args)
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["restarts"] == 3 and d["nodes"] <= 60000 and d["filled"]["score"] >= 0
    b = read_boards(out)
    assert len(b) == 9 and list(b.stats["source"]) == ["best", "filled", "finished"] * 3
    assert list(b.stats["restart"]) == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert all(b.stats["holes"][1::3] == 0) and all(b.stats["holes"][2::3] == 0)
    assert all(b.stats["score"][2::3] >= b.stats["score"][1::3])  # never lowered
    assert max(b.stats["score"][2::3]) == d["filled"]["score"] >= d["best"]["score"]
    f = d["finish"]
    assert f["restarts"] == 3
    assert f["gain"] == int((b.stats["score"][2::3] - b.stats["score"][1::3]).sum())
    assert json.loads(run(*args).stdout)["restarts"] == 3
    b = read_boards(out)
    assert list(b.stats["restart"][9:]) == [3, 3, 3, 4, 4, 4, 5, 5, 5]
    args[args.index("--json")] = "--no-finish"  # the finish off: two rows a restart
    assert run(*args).exit_code == 0
    b = read_boards(out)
    assert list(b.stats["source"][18:]) == ["best", "filled"] * 3


def test_workers_reproduce_one_process(unsolvable, tmp_path):
    """Restart k draws from (seed, k): two workers give the boards one process gives."""
    boards = {}
    for w in (1, 2):
        out = tmp_path / f"w{w}.parquet"
        r = run("best", unsolvable, "--breaks", "20,24,28", "--restarts", 4,
                "--restart-nodes", 5000, "--seed", 9, "--workers", w, "-o", out, "--no-fill",
                "--json")
        assert r.exit_code == 0, r.output
        b = read_boards(out)
        order = np.argsort(b.stats["restart"])
        boards[w] = (b.cells[order].tolist(), b.stats["nodes"][order].tolist())
    assert boards[1] == boards[2]


@pytest.mark.skipif(not (SHARED / "e2_gallicchio.puz").exists(), reason="needs ../shared")
def test_eternity_ii_clues_are_placed(tmp_path):
    out = tmp_path / "e2.parquet"
    r = run("best", SHARED / "e2_gallicchio.puz", "--clues", "all", "--scan",
            "blackwood", "--restarts", 1, "--restart-nodes", 2000, "-o", out, "--no-fill",
            "--json")
    assert r.exit_code == 0, r.output
    cells = read_boards(out).cells[0]
    # the official orientation (the field's notes, *Orientation*): 139 on I8 = cell 135,
    # 181 on N3 = 210, 208 on C3 = 34, 249 on N14 = 221, 255 on C14 = 45 (pieces from 1)
    assert {c: (int(cells[c]) >> 2) + 1 for c in (135, 210, 34, 221, 45)} == {
        135: 139, 210: 181, 34: 208, 221: 249, 45: 255}
    assert cells[135] & 3 == 2  # as jwortmann's core.jl places it: `139<<2|2  # I8`
    assert json.loads(r.stdout)["breaks"] == list(SCHEDULES["clues-late"])  # auto, five clues


WAIT = 300  # seconds: a cold compile on a slow, busy machine still gets there


def _searched(status: Path) -> bool:
    """Whether the run's status file counts nodes: its kernel ran a slice."""
    try:
        tasks = json.loads(status.read_text())["tasks"]
    except (OSError, ValueError, KeyError):
        return False
    return any(t["task"] == "best" and t["done"] > 0 for t in tasks)


def test_ctrl_c_keeps_what_was_found(tmp_path):
    """Ctrl-C once the search ran a slice (the status file counts its nodes), whenever that
    is: seconds on a warm cache, a minute compiling on a busy machine with a cold one.
    Exit 130, the JSON report "interrupted", its one restart (stopped: it never ends by
    itself) kept with the board it reached."""
    path = tmp_path / "big.e2s"
    write_e2store(Instance("big", 12, 12, unsolvable_pieces(12, 12, 1, 4, 9)), path)
    out, status = tmp_path / "b.parquet", tmp_path / "s.json"
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "E2STORE_STATUS_SECONDS": "0.1"}
    p = subprocess.Popen([sys.executable, "-m", "e2store", "best", str(path),
                          "--breaks", "100,110,120", "--restart-nodes", str(10**12), "-o",
                          str(out), "--no-fill", "--json", "--status", str(status)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        end = time.monotonic() + WAIT
        while not _searched(status):
            assert p.poll() is None, p.communicate()[1]
            assert time.monotonic() < end, "the search never started"
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=WAIT)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 130, stderr
    d = json.loads(stdout)
    assert d["ended"] == "interrupted" and d["restarts"] == 1 and d["best"]["depth"] > 50
    assert len(read_boards(out)) == 1 and "Traceback" not in stderr


def test_store_arms_from_the_command_line(unsolvable, tmp_path):
    """--order store and --quota store read (and first build) the store's hamming-1
    cartesian partitions."""
    r = run("best", unsolvable, "--store", tmp_path / "s", "--order", "store",
            "--quota", "store", "--breaks", "20,24", "--restarts", 1, "--restart-nodes",
            3000, "-o", tmp_path / "b.parquet", "--no-fill", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["order"] == "store" and len(d["quota"]) == 3
    assert (tmp_path / "s" / "cartesian" / "hamming=1").is_dir()


def test_render_marks_the_mismatched_joins(unsolvable, tmp_path):
    out = tmp_path / "b.parquet"
    assert run("best", unsolvable, "--breaks", "10,14,18,22,26", "--restarts", 1,
               "--restart-nodes", 3000, "-o", out, "--no-fill").exit_code == 0
    svg = tmp_path / "b.svg"
    r = run("render", "board", unsolvable, "--board", out, "-o", svg)
    assert r.exit_code == 0, r.output
    score = json.loads(run("score", unsolvable, out, "--json").stdout)
    text = svg.read_text()
    assert text.count('class="mismatch"') == len(score["mismatched"]) > 0
    assert f"score {score['score']} / 60" in text
    r = run("render", "board", unsolvable, "--board", out, "--index", 5, "-o", svg)
    assert r.exit_code == 2 and "holds 1 boards" in r.output


def test_serve_shows_a_boards_file(unsolvable, tmp_path):
    """`serve --boards`: the page draws the best boards with their mismatches and plots the
    best score over the restarts; the API's rows are the file's, best first."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from e2store.web.app import create_app

    store = tmp_path / "s"
    out = tmp_path / "b.parquet"
    r = run("best", unsolvable, "--store", store, "--order", "store", "--breaks",
            "20,24,28", "--restarts", 3, "--restart-nodes", 3000, "-o", out, "--json")
    assert r.exit_code == 0, r.output
    with TestClient(create_app(store, boards=out)) as client:
        d = client.get("/api/boards").json()
        b = read_boards(out)
        assert d["boards"] == len(b) == 9 and d["best"]["finished"] == max(b.stats["score"])
        assert [x["score"] for x in d["rows"]] == sorted(b.stats["score"], reverse=True)
        page = client.get("/boards")
        assert page.status_code == 200 and page.text.count("<svg") >= 4
        assert "best so far" in page.text
    with TestClient(create_app(store)) as client:
        assert client.get("/api/boards").status_code == 404


def test_best_is_the_command_and_solve_best_its_old_spelling(unsolvable, tmp_path):
    """`e2store best` (issue 57) runs what `solve --best` ran; the old spelling still runs,
    with a note on stderr (never on stdout: its --json stays one object)."""
    args = ["--breaks", "20,24,28", "--restarts", 2, "--restart-nodes", 3000, "--no-fill",
            "--json"]
    new = run("best", unsolvable, *args, "-o", tmp_path / "new.parquet")
    old = run("solve", unsolvable, "--best", *args, "-o", tmp_path / "old.parquet")
    assert new.exit_code == old.exit_code == 0, new.output + old.output
    assert "old spelling" in old.stderr and "use `e2store best" in old.stderr
    assert not new.stderr.strip() or "old spelling" not in new.stderr
    a, b = json.loads(new.stdout), json.loads(old.stdout)
    assert a["best"] == b["best"] and a["restarts"] == b["restarts"] == 2
    assert read_boards(tmp_path / "new.parquet").cells.tolist() == read_boards(
        tmp_path / "old.parquet").cells.tolist()
    r = run("best", unsolvable, "--first")
    assert r.exit_code == 2 and "No such option '--first'" in r.output
    assert "--first" not in run("best", "--help").output
