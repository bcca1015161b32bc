"""A run's anytime trace (issue 57): `e2store best --trace FILE` appends a CSV line every
few seconds and one at the end (time, elapsed, nodes, restarts, deepest depth, best
scores), its last line the run's report; a resumed run appends; a line cut short by a kill
is skipped when read; a campaign's page draws each job's trace."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from naive_best import unsolvable_pieces

from e2store.cli import main
from e2store.instance.e2sfile import write_e2store
from e2store.instance.model import Instance
from e2store.solver.best import Trace, read_trace


def test_the_trace_file_and_its_reader(tmp_path):
    t = Trace(tmp_path / "t.csv", every=0.0)
    t.tick(100)
    t.restart(1, 30, 50, None)
    t.tick(50)
    t.restart(2, 32, 51, 55)
    t.close()
    with open(tmp_path / "t.csv", "a") as fh:
        fh.write("1700000000.0,3.0,12")  # a line cut short by a kill
    rows = read_trace(tmp_path / "t.csv")
    assert [r["nodes"] for r in rows] == [100, 100, 150, 150, 150]
    assert rows[0]["restarts"] is None and rows[0]["score"] is None
    assert (rows[-1]["restarts"], rows[-1]["depth"], rows[-1]["score"], rows[-1]["filled"]) \
        == (2, 32, 51, 55)
    assert all(b["elapsed"] >= a["elapsed"] for a, b in zip(rows, rows[1:], strict=False))
    assert read_trace(tmp_path / "none.csv") == []


def test_best_writes_its_trace(tmp_path):
    path = tmp_path / "u.e2s"
    write_e2store(Instance("u", 6, 6, unsolvable_pieces(6, 6, 3)), path)
    args = ["best", str(path), "--breaks", "20,24,28,30,32", "--restart-nodes", "20000",
            "--no-finish", "--trace", str(tmp_path / "run.trace.csv"), "-o",
            str(tmp_path / "b.parquet"), "--json"]
    for restarts in (2, 3):  # a resumed run appends to the same trace
        r = CliRunner().invoke(main, [*args, "--restarts", str(restarts)])
        assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    rows = read_trace(tmp_path / "run.trace.csv")
    text = (tmp_path / "run.trace.csv").read_text()
    assert text.count("time,elapsed,nodes") == 1 and len(rows) >= 2
    last = rows[-1]
    assert last["restarts"] == report["restarts"] == 3 and last["nodes"] == report["nodes"]
    assert last["score"] == report["best"]["score"] and last["depth"] == report["best"]["depth"]


def test_the_campaign_page_draws_the_traces(tmp_path):
    from e2store.web.campaign import trace_plot

    paths = {}
    for k, (arm, scores) in enumerate((("a", [40, 44, 47]), ("b", [41, 42, 42]))):
        p = Path(tmp_path / f"{arm}.trace.csv")
        t = Trace(p, every=0.0)
        for i, sc in enumerate(scores):
            t.restart(i + 1, 30, sc, sc + 1)
        t.close()
        paths[(arm, 0, k, 2)] = p
    svg = trace_plot(paths)
    assert svg is not None and "<svg" in svg and "</svg>" in svg
    assert trace_plot({}) is None
