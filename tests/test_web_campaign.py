"""`e2store serve --boards DIR` on a running best-score campaign (issue 48, item 4): per
shard its progress (restarts, placements per second, best score and depth, last board,
done by its receipt, running by its writer's lock), per arm its best board with its
viewer link, the best score over time, the arms compared as the campaign report compares
them; new parts show on the next load, and the page reloads itself while a writer runs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed (pip install '.[web]')")
pytest.importorskip("fastapi.testclient", reason="httpx (FastAPI's test client) is missing")

from fastapi.testclient import TestClient  # noqa: E402
from naive_best import unsolvable_pieces  # noqa: E402

from e2store.boards.dataset import dataset_parts  # noqa: E402
from e2store.boards.table import read_boards  # noqa: E402
from e2store.campaign.stats import compare_arms  # noqa: E402
from e2store.instance.e2sfile import write_e2store  # noqa: E402
from e2store.instance.model import Instance  # noqa: E402
from e2store.instance.url import board_url  # noqa: E402
from e2store.solver.best import solve_best  # noqa: E402
from e2store.web.app import create_app  # noqa: E402

FAST = {"kernel": "generic", "breaks": "20,24,28,30,32", "restart_nodes": 200}


def _run(inst, boards, arm: str, seed: int, restarts: int, shard=None, **kw):
    solve_best(inst, str(boards) + "/", arm=arm, seed=seed, shard=shard, restarts=restarts,
               **FAST, **kw)


@pytest.fixture
def campaign(tmp_path):
    """A campaign's `best/` directory: arm a of seed 3 in two shards (shard 0 with its
    receipt), arm b of seed 5 run whole; the instance and its piece file."""
    inst = Instance("u", 6, 6, unsolvable_pieces(6, 6, 3))
    piece_file = tmp_path / "u.e2s"
    write_e2store(inst, piece_file)
    best = tmp_path / "res" / "best"
    boards = best / "boards"
    _run(inst, boards, "a", 3, 3, (0, 2))
    _run(inst, boards, "a", 3, 2, (1, 2))
    _run(inst, boards, "b", 5, 3, quota="none")
    (best / "receipts" / "a").mkdir(parents=True)
    (best / "receipts" / "a" / "s3-shard-0-of-2.json").write_text(json.dumps({
        "command": "e2store solve ...", "arm": "a", "seed": 3, "shard": [0, 2],
        "restarts": 3, "ended": "restarts", "nodes": 600, "seconds": 0.1,
        "finished": 1.7e9}))
    return inst, piece_file, boards


def _naive(inst, boards) -> list[tuple[str, dict, np.ndarray]]:
    """Every row of every part, read one file at a time: (arm, row, cells)."""
    out = []
    for p in dataset_parts(boards):
        b = read_boards(p.path, inst)
        out += [(p.arm, b.row(i), b.cells[i].astype(np.int64)) for i in range(len(b))]
    return out


def _fill(mine: list[dict]) -> float:
    """The seconds after the search of one arm's rows (fill and finish): per restart, its
    final board's `found` (the finished board's, else the filled one's) less that of its
    deepest board."""
    start = {(r["seed"], r["restart"]): r["found"] for r in mine if r["source"] == "best"}
    end = {}
    for src in ("filled", "finished"):  # a finished board's time replaces the filled one's
        end.update({(r["seed"], r["restart"]): r["found"] for r in mine if r["source"] == src})
    return sum(f - start[k] for k, f in end.items())


def _shard(rows, arm, seed, k=None, n=None) -> dict:
    mine = [r for a, r, _ in rows if a == arm and r["seed"] == seed
            and (k is None or r["restart"] % n == k)]
    best = [r for r in mine if r["source"] == "best"]
    search, fill = sum(r["seconds"] for r in best), _fill(mine)
    return {"restarts": len(best), "nodes": sum(r["nodes"] for r in best),
            "search_seconds": search, "fill_seconds": fill, "seconds": search + fill,
            "rate": sum(r["nodes"] for r in best) / (search + fill),
            "score": max(r["score"] for r in mine), "depth": max(r["depth"] for r in mine),
            "last": max(r["found"] for r in mine)}


def test_the_page_of_a_campaign(campaign):
    inst, piece_file, boards = campaign
    rows = _naive(inst, boards)
    with TestClient(create_app(None, boards=boards, boards_instance=piece_file)) as client:
        c = client.get("/api/campaign").json()
        shards = {(s["arm"], s["seed"], tuple(s["shard"] or ())): s for s in c["shards"]}
        assert set(shards) == {("a", 3, (0, 2)), ("a", 3, (1, 2)), ("b", 5, ())}
        for (arm, seed, shard), s in shards.items():
            want = _shard(rows, arm, seed, *shard)
            keys = ("restarts", "nodes", "score", "depth", "last")
            assert {k: s[k] for k in keys} == {k: want[k] for k in keys}
            for k in ("rate", "seconds", "search_seconds", "fill_seconds"):
                assert s[k] == pytest.approx(want[k])
            assert s["search_seconds"] + s["fill_seconds"] == pytest.approx(s["seconds"])
        assert [shards[k]["state"] for k in sorted(shards)] == ["done", "", ""]
        assert shards[("a", 3, (0, 2))]["ended"] == "restarts"
        assert c["receipts"] == str(boards.parent / "receipts")
        assert c["live"] and c["refresh"] > 0  # parts just written, shards not all done
        arms = {a["arm"]: a for a in c["arms"]}
        assert list(arms) == ["a", "b"]
        for name, a in arms.items():
            mine = [(r, cells) for arm, r, cells in rows if arm == name]
            best = [r for r, _ in mine if r["source"] == "best"]
            filled = [(r, cells) for r, cells in mine  # completed: filled, finished
                      if r["source"] in ("filled", "finished")]
            top = max(r["score"] for r, _ in filled)
            assert a["restarts"] == len(best) and a["boards"] == len(mine)
            seconds = sum(r["seconds"] for r in best) + _fill([r for r, _ in mine])
            assert a["rate"] == pytest.approx(sum(r["nodes"] for r in best) / seconds)
            assert a["seconds_per_restart"] == pytest.approx(seconds / len(best))
            assert a["search_seconds"] + a["fill_seconds"] == pytest.approx(
                a["seconds_per_restart"])
            assert a["best"]["score"] == top == a["filled"]["max"]
            first_row, first = next((r, cells) for r, cells in filled if r["score"] == top)
            assert a["best"]["source"] == first_row["source"]
            assert a["best"]["url"] == board_url(inst, first)
            for reach in a["reach"]:  # 28..30 on 6x6: 248..250 on 16x16
                seen = sum(r["depth"] >= reach["depth"] for r in best)
                assert (reach["seen"], reach["value"]) == (seen, seen / len(best))
                assert reach["low"] <= reach["value"] <= reach["high"]
        assert c["depths"] == [28, 29, 30] and c["targets"] == [46, 47, 48]
        depth = {n: [r["depth"] for a, r, _ in sorted(
            rows, key=lambda t: (t[1]["seed"], t[1]["restart"])) if a == n
            and r["source"] == "best"] for n in "ab"}
        got = next(p for p in c["comparisons"] if p["value"] == "depth")
        want = compare_arms(depth["a"], depth["b"])
        assert (got["a"], got["b"], got["u"], got["significant"]) == (
            "a", "b", want.u, want.significant)
        assert got["p"] == pytest.approx(want.p)

        page = client.get("/boards")
        assert page.status_code == 200
        text = page.text
        assert re.search(r'id="time-plot">\s*<\?xml[^>]*>\s*(<!DOCTYPE[^>]*>\s*)?<svg', text)
        assert "hours since the first board" in text
        assert 'id="shard-table"' in text and 'id="arm-table"' in text
        for name, a in arms.items():  # each arm's best board drawn, one click from the viewer
            assert f'id="arm-{name}"' in text and f"arm {name}: score {a['best']['score']}" in text
            assert a["best"]["url"].replace("&", "&amp;") in text
        assert "<td>0/2</td>" in text and "<td>1/2</td>" in text and "<td>all</td>" in text
        whole = client.get("/api/boards").json()  # the boards page's data, rows with arms
        assert whole["boards"] == len(rows) and whole["campaign"]["restarts"] == 8
        assert {r["arm"] for r in whole["rows"]} == {"a", "b"}


def test_new_parts_and_writers_show_on_the_next_load(campaign):
    inst, piece_file, boards = campaign
    with TestClient(create_app(None, boards=boards, boards_instance=piece_file)) as client:
        first = client.get("/api/campaign").json()
        assert client.get("/boards").status_code == 200
        b = next(s for s in first["shards"] if s["arm"] == "b")
        _run(inst, boards, "b", 5, 2, quota="none")  # two restarts more (5 and 6)
        again = client.get("/api/campaign").json()
        assert again["restarts"] == first["restarts"] + 2
        assert next(s for s in again["shards"] if s["arm"] == "b")["restarts"] == \
            b["restarts"] + 2
        assert next(a for a in again["arms"] if a["arm"] == "b")["restarts"] == 5
        # a writer of shard 1/2 holds its lock: running, and the page reloads itself
        lock = boards / "arm=a" / ".seed=3.shard=1of2.lock"
        lock.write_text(f"pid {os.getpid()} on {os.uname().nodename}")
        c = client.get("/api/campaign").json()
        s = next(s for s in c["shards"] if s["shard"] == [1, 2])
        assert s["state"] == "running" and c["live"] and c["refresh"] > 0
        page = client.get("/boards").text
        assert f'http-equiv="refresh" content="{c["refresh"]}"' in page
        gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)
        lock.write_text(f"pid {gone.stdout.strip()} on {os.uname().nodename}")
        c = client.get("/api/campaign").json()
        assert next(s for s in c["shards"] if s["shard"] == [1, 2])["state"] == "stopped"
        lock.unlink()
        # a shard seen running stays a shard once its writer is gone; a job's log tells
        # its shard before it writes any part
        held = boards / "arm=b" / ".seed=7.shard=1of3.lock"
        held.write_text(f"pid {os.getpid()} on {os.uname().nodename}")
        assert [s["state"] for s in client.get("/api/campaign").json()["shards"]
                if s["seed"] == 7] == ["running"]
        _run(inst, boards, "b", 7, 1, (1, 3))  # takes the lock, removes it as it ends
        log = boards.parent / "logs" / "a" / "s9-shard-0-of-4.log"
        log.parent.mkdir(parents=True)
        log.write_text("e2store solve ...\n")
        c = client.get("/api/campaign").json()
        assert [(s["shard"], s["restarts"], s["state"]) for s in c["shards"]
                if s["seed"] == 7] == [([1, 3], 1, "")]
        assert [(s["arm"], s["shard"], s["restarts"]) for s in c["shards"]
                if s["seed"] == 9] == [("a", [0, 4], 0)]
        log.unlink()
        # every writer gone, every shard's receipt there: the page stops reloading
        receipts = boards.parent / "receipts"
        (receipts / "a" / "s3-shard-1-of-2.json").write_text("{}")
        (receipts / "b").mkdir()
        (receipts / "b" / "s5-shard-0-of-1.json").write_text("{}")
        (receipts / "b" / "s7-shard-1-of-3.json").write_text("{}")
        c = client.get("/api/campaign").json()
        assert {(s["arm"], s["seed"], tuple(s["shard"]), s["state"]) for s in c["shards"]} == {
            ("a", 3, (0, 2), "done"), ("a", 3, (1, 2), "done"), ("b", 5, (0, 1), "done"),
            ("b", 7, (1, 3), "done")}
        assert not c["live"] and c["refresh"] is None
        assert "http-equiv" not in client.get("/boards").text


def test_a_boards_file_keeps_its_page(campaign, tmp_path):
    inst, piece_file, _ = campaign
    out = tmp_path / "one.parquet"
    solve_best(inst, out, seed=1, restarts=2, **FAST)
    with TestClient(create_app(None, boards=out, boards_instance=piece_file)) as client:
        r = client.get("/api/campaign")
        assert r.status_code == 404 and "not a boards dataset" in r.json()["error"]
        d = client.get("/api/boards").json()
        assert "campaign" not in d and d["boards"] == 6  # 2 restarts: best, filled, finished
        page = client.get("/boards").text
        assert "Boards of a best-score run" in page and "shard-table" not in page
        assert 'id="score-plot"' in page


def test_the_web_draws_without_pyplot():
    """The pages' plots are drawn on figures of their own (`new_figure`), never through
    pyplot's global state, which the server's worker threads would share (issue 57)."""
    web = Path(__file__).resolve().parents[1] / "e2store" / "web"
    assert not [p.name for p in web.glob("*.py") if "pyplot" in p.read_text()]
