"""Statistics tables and plots (`e2store tables`, `e2store plot`) against the manifest and an
independent recount with `e2store count`."""

from __future__ import annotations

import csv
import io
import json

import naive
import pytest
from click.testing import CliRunner

from e2store import store
from e2store.cli import main
from e2store.errors import StoreError
from e2store.instance.formats import read_instance
from e2store.instance.model import Instance
from e2store.reports.plots import PLOT_METRICS, plot_metric, whole_board, write_plots
from e2store.reports.tables import (
    METRICS,
    MISSING,
    Board,
    Table,
    Uncounted,
    build_tables,
    column_labels,
    load_tables,
    table_csv,
    table_markdown,
    write_tables,
)
from e2store.zones.zonemap import zone_map

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _instance(w, h, seed, n_frame=3, n_inner=5, name=None) -> Instance:
    return Instance(name or f"rnd{seed}", w, h,
                    naive.random_board_pieces(w, h, n_frame, n_inner, seed))


@pytest.fixture(scope="module")
def stats_store(tmp_path_factory):
    """Two board sizes (5x4 and 4x4) at hamming 1 and 2, flat and cartesian."""
    root = tmp_path_factory.mktemp("tables")
    a = _instance(5, 4, seed=21)
    b = _instance(4, 4, seed=5, n_frame=2, n_inner=3, name="sq")
    for inst in (a, b):
        for h in (1, 2):
            store.enumerate_store(root, inst, h, None, forms=("flat", "cartesian"))
    return root, a, b


def _count(inst_file, h: int, method: str) -> dict[tuple[int, int], dict]:
    r = CliRunner().invoke(main, ["count", str(inst_file), "--hamming", str(h),
                                  "--method", method, "--json"])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    return {(d["x"], d["y"]): d for d in rows}


def test_tables_agree_with_the_manifest_and_an_independent_count(stats_store):
    root, a, b = stats_store
    tables = load_tables(root)
    assert [(t.hamming, t.metric) for t in tables] == [(h, m) for h in (1, 2) for m in METRICS]
    man = store.read_manifest(root)
    for t in tables:
        # columns by board area; rows are the canonical cells of every board, by (y, x)
        assert [c.instance for c in t.columns] == [b.id, a.id]
        assert t.labels == ("4x4", "5x4")
        assert list(t.cells) == sorted(t.cells, key=lambda c: (c[1], c[0]))
        for j, board in enumerate(t.columns):
            zm = zone_map(board.width, board.height, t.hamming)
            canon = {(z.x, z.y): z for z in zm.zones}
            assert set(canon) <= set(t.cells)
            inst_file = store.instance_path(root, board.instance)
            if t.metric == "corolles":
                want = _count(inst_file, t.hamming, "factorised")
            elif t.metric == "nodes":
                want = _count(inst_file, t.hamming, "enumerate")
            for cell, row in zip(t.cells, t.values, strict=True):
                v = row[j]
                if cell not in canon:
                    assert v is None  # not a zone's canonical cell on this board
                    continue
                part = next(p for p in man["partitions"]
                            if p["instance"] == board.instance and p["hamming"] == t.hamming
                            and p["zone"] == canon[cell].id and p["rotation"] == 0
                            and p["form"] == "flat")
                if t.metric in ("corolles", "nodes"):
                    assert v == want[cell][t.metric] == part[t.metric], (t.stem, cell)
                    assert want[cell]["zone"] == canon[cell].id
                elif t.metric == "seconds":
                    assert v == part["seconds"]
                else:
                    n_bytes = sum(f["bytes"] for f in part["files"])
                    assert v == pytest.approx(n_bytes / part["corolles"], abs=1e-6)


def test_rows_are_keyed_by_cell_not_zone_id():
    """Zone ids differ between board sizes: a cell's row joins the right zone of each board."""
    man = {"partitions": []}
    boards = {"s": Board("s", "s", 4, 4), "r": Board("r", "r", 7, 5)}
    for b in boards.values():
        for z in zone_map(b.width, b.height, 1).zones:
            man["partitions"].append({
                "instance": b.instance, "hamming": 1, "zone": z.id, "rotation": 0,
                "form": "flat", "corolles": 1000 * z.x + z.y, "nodes": 1, "seconds": 0.5,
                "files": [{"bytes": 10}]})
    (t,) = build_tables(man, boards, metrics=["corolles"])
    for cell, row in zip(t.cells, t.values, strict=True):
        for b, v in zip(t.columns, row, strict=True):
            zm = zone_map(b.width, b.height, 1)
            if any((z.x, z.y) == cell for z in zm.zones):
                assert v == 1000 * cell[0] + cell[1]
            else:
                assert v is None
    # a zone not in the store is MISSING, written NA (CSV) and ? (Markdown)
    man["partitions"] = [p for p in man["partitions"] if not (p["instance"] == "r"
                                                             and p["zone"] == 1)]
    (t,) = build_tables(man, boards, metrics=["corolles"])
    cell = next((z.x, z.y) for z in zone_map(7, 5, 1).zones if z.id == 1)
    i, j = t.cells.index(cell), [c.instance for c in t.columns].index("r")
    assert t.values[i][j] is MISSING
    assert f"{cell[0]},{cell[1]}," in table_csv(t) and ",NA" in table_csv(t)
    assert f"| {cell[0]} {cell[1]} |" in table_markdown(t) and " ? |" in table_markdown(t)


def test_column_labels_stay_unique():
    b = [Board("p-1", "p", 4, 4), Board("q-1", "q", 5, 5), Board("r-1", "r", 5, 5),
         Board("r-2", "r", 5, 5)]
    assert column_labels(b) == ("4x4", "5x5 q", "r-1", "r-2")


def test_csv_and_markdown_writers_round_trip(stats_store, tmp_path):
    root, _, _ = stats_store
    tables = load_tables(root, hammings=[2])
    written = write_tables(tables, tmp_path / "t")
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == sorted(
        f"{m}_h2.{ext}" for m in METRICS for ext in ("csv", "md"))  # no temp files left
    assert len(written) == 2 * len(METRICS)
    for t in tables:
        rows = list(csv.reader(io.StringIO((tmp_path / "t" / f"{t.stem}.csv").read_text())))
        assert rows[0] == ["x", "y", *t.labels]
        assert [(int(r[0]), int(r[1])) for r in rows[1:]] == list(t.cells)
        for r, want in zip(rows[1:], t.values, strict=True):
            got = [None if s == "" else float(s) for s in r[2:]]
            assert got == [None if v is None else pytest.approx(v, abs=1e-4) for v in want]
        md = (tmp_path / "t" / f"{t.stem}.md").read_text()
        lines = md.splitlines()
        assert lines[0].startswith("# ") and "hamming 2" in lines[0]
        table_lines = [ln for ln in lines if ln.startswith("| ")]
        assert len(table_lines) == 1 + len(t.cells)
        assert table_lines[0] == "| x y | " + " | ".join(t.labels) + " |"
        if t.metric == "corolles":
            v = t.values[0][0]
            assert f"| {t.cells[0][0]} {t.cells[0][1]} | {v:,} |" in md


def test_another_form_and_selection_errors(stats_store):
    root, a, _ = stats_store
    flat = {t.stem: t for t in load_tables(root, [a.id], [1])}
    cart = {t.stem: t for t in load_tables(root, [a.id], [1], form="cartesian")}
    assert cart["corolles_h1"].values == flat["corolles_h1"].values
    assert cart["bytes_h1"].values != flat["bytes_h1"].values
    with pytest.raises(StoreError, match=f"no flat partitions for instance={a.id} hamming=3"):
        load_tables(root, [a.id], [3])
    with pytest.raises(StoreError, match="no prefix partitions"):
        load_tables(root, form="prefix")
    with pytest.raises(StoreError, match="unknown form"):
        build_tables({"partitions": []}, {}, form="zip")


def test_tables_and_plot_commands(stats_store, tmp_path):
    root, a, _ = stats_store
    inst_file = store.instance_path(root, a.id)
    out = tmp_path / "tables"
    r = CliRunner().invoke(main, ["tables", "--store", str(root), "-o", str(out),
                                  "--instance", str(inst_file), "--hamming", "2"])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.iterdir()) == sorted(
        f"{m}_h2.{ext}" for m in METRICS for ext in ("csv", "md"))
    assert (out / "corolles_h2.csv").read_text().splitlines()[0] == "x,y,5x4"
    for name in ("p1", "p2"):
        r = CliRunner().invoke(main, ["plot", "--store", str(root), "-o", str(tmp_path / name)])
        assert r.exit_code == 0, r.output
        assert sorted(p.name for p in (tmp_path / name).iterdir()) == sorted(
            f"{m}.png" for m in PLOT_METRICS)
    for m in PLOT_METRICS:
        png = (tmp_path / "p1" / f"{m}.png").read_bytes()
        assert png.startswith(PNG_MAGIC) and len(png) > 10_000
        assert png == (tmp_path / "p2" / f"{m}.png").read_bytes()  # deterministic
    r = CliRunner().invoke(main, ["tables", "--store", str(root), "-o", str(out), "--hamming",
                                  "5"])
    assert r.exit_code == 2 and "no flat partitions" in r.output
    assert "Traceback" not in r.output


def test_whole_board_values(stats_store):
    root, a, b = stats_store
    tables = {t.stem: t for t in load_tables(root)}
    man = store.read_manifest(root)
    for h in (1, 2):
        parts = [p for p in man["partitions"]
                 if p["hamming"] == h and p["rotation"] == 0 and p["form"] == "flat"]
        for inst in (a, b):
            mine = [p for p in parts if p["instance"] == inst.id]
            n = sum(p["corolles"] for p in mine)
            assert whole_board(tables[f"corolles_h{h}"])[inst.id] == n
            assert whole_board(tables[f"nodes_h{h}"])[inst.id] == sum(p["nodes"] for p in mine)
            n_bytes = sum(f["bytes"] for p in mine for f in p["files"])
            got = whole_board(tables[f"bytes_h{h}"], tables[f"corolles_h{h}"])[inst.id]
            assert got == pytest.approx(n_bytes / n, rel=1e-6)


def test_plots_with_one_board_and_one_hamming(stats_store, tmp_path):
    root, a, _ = stats_store
    paths = write_plots(load_tables(root, [a.id], [1]), tmp_path)
    assert [p.name for p in paths] == [f"{m}.png" for m in PLOT_METRICS]
    assert all(p.read_bytes().startswith(PNG_MAGIC) for p in paths)


def test_a_count_table_with_an_uncounted_zone_plots():
    """A zone a count run left out (`Uncounted`) leaves the whole board unknown and is not
    drawn (it once made the sum fail: the explorer's count tables with pictures)."""
    board = Board("i1", "b", 4, 4)
    t = Table("corolles", 1, "count", (board,), ("4x4",), ((0, 0), (1, 0)),
              ((5,), (Uncounted(10),)))
    assert whole_board(t) == {"i1": None}
    plot_metric([t], "corolles")


def test_design_worked_example_as_a_table(tmp_path, shared_instances):
    inst = read_instance(shared_instances / "benchmark" / "pieces_4x4.txt")
    for h in (1, 2):
        store.enumerate_store(tmp_path, inst, h, None)
    want = {1: {(0, 0): 56, (1, 0): 294, (0, 1): 294, (1, 1): 797},
            2: {(0, 0): 708, (1, 0): 1268, (0, 1): 1301, (1, 1): 320}}
    for t in load_tables(tmp_path):
        if t.metric == "corolles":
            assert t.labels == ("4x4",)
            assert dict(zip(t.cells, (row[0] for row in t.values), strict=True)) == want[
                t.hamming]
