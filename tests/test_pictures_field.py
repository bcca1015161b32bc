"""Pictures as the field reads them (issue 46): rows A.. from the north and columns 1.. from
the west (I8 is (x, y) = (7, 8)), tooltips naming cells that way and counting pieces from
1, fixed and clue cells framed; `e2store render board --best` drawing the best row of a
boards file (checked against a plain loop over the rows)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import random_instance

from e2store.boards.table import make_boards, recount, write_boards
from e2store.cli import main
from e2store.errors import RenderError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.instance.generate import generate_instance
from e2store.reports.render import (
    cell_name,
    row_name,
    svg_board,
    svg_corolle,
    svg_pieces,
    svg_zone_map,
    write_picture,
)
from e2store.solver.best import CLUES
from e2store.web.pictures import field_clues
from e2store.zones.zonemap import zone_map

NS = "{http://www.w3.org/2000/svg}"
E2_PIECES = Path(__file__).resolve().parents[2] / "shared" / "instances" / \
    "e2pieces_jwortmann.txt"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter(NS + "g") if g.get("class") == cls]


def tooltip(el: ET.Element) -> str:
    return el.find(NS + "title").text


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def board16():
    """A 16x16 instance and its solution."""
    inst = generate_instance(16, 16, 4, 9, 7, name="sixteen")
    return inst, inst.solution


def test_names_of_rows_and_cells():
    assert [row_name(y) for y in (0, 8, 15, 25, 26, 27, 51, 52, 701, 702)] == [
        "A", "I", "P", "Z", "AA", "AB", "AZ", "BA", "ZZ", "AAA"]
    assert cell_name(7, 8) == "I8" and cell_name(0, 0) == "A1" and cell_name(15, 15) == "P16"
    assert cell_name(2, 27) == "AB3"
    with pytest.raises(RenderError):
        row_name(-1)


def test_axes_and_the_i8_tooltip_of_a_16x16_picture(board16):
    inst, sol = board16
    root = parse(svg_board(inst, sol))
    (coords,) = groups(root, "coords")
    cols = [t for t in coords if t.get("class") == "col"]
    rows = [t for t in coords if t.get("class") == "row"]
    assert [t.text for t in cols] == [str(k) for k in range(1, 17)]
    assert [t.text for t in rows] == list("ABCDEFGHIJKLMNOP")
    i8 = next(g for g in groups(root, "piece") if g.get("id") == "cell-7-8")
    assert i8.get("data-cell") == "I8"
    p, r = divmod(int(sol[8, 7]), 4)
    assert tooltip(i8).startswith(f"I8 (7, 8): piece {p + 1}, rotation {r}: W ")
    # the labels sit on I8's row and column: the 9th row from the north, the 8th column
    pts = np.array([[float(v) for v in pt.split(",")]
                    for tri in i8.iter(NS + "polygon") for pt in tri.get("points").split()])
    cx, cy = pts.mean(axis=0)
    label_i = next(t for t in rows if t.text == "I")
    label_8 = next(t for t in cols if t.text == "8")
    assert abs(float(label_i.get("y")) - cy) < 1 and abs(float(label_8.get("x")) - cx) < 1
    assert float(label_i.get("x")) < pts[:, 0].min() and float(label_8.get("y")) < pts[:, 1].min()


def test_pieces_counted_from_1_in_every_tooltip(board16):
    inst, sol = board16
    root = parse(svg_board(inst, sol))
    for g in groups(root, "piece"):
        x, y = int(g.get("data-x")), int(g.get("data-y"))
        piece = int(g.get("data-piece"))  # e2store's id, from 0
        assert tooltip(g).startswith(f"{cell_name(x, y)} ({x}, {y}): piece {piece + 1}, "
                                     f"rotation {g.get('data-rotation')}")
    grid = parse(svg_pieces(inst))
    assert [tooltip(g).split(":")[0] for g in groups(grid, "piece")] == [
        f"piece {p + 1} (id {p})" for p in range(inst.n_pieces)]
    zm = parse(svg_zone_map(zone_map(16, 16, 1)))
    z = next(g for g in groups(zm, "zone-cell") if g.get("id") == "zone-7-8")
    assert tooltip(z).startswith("I8 (7, 8): zone ")
    row = np.full(5, -1)
    row[0] = int(sol[8, 7])
    cor = parse(svg_corolle(inst, 1, row, 7, 8))
    (g,) = groups(cor, "piece")
    assert tooltip(g).startswith(f"slot 0, I8 (7, 8): piece {int(sol[8, 7]) // 4 + 1}, ")


def test_fixed_cells_are_framed_said_and_listed(board16, tmp_path):
    inst, sol = board16
    grid = sol.copy()
    grid[2, 2] = -1  # an empty fixed cell is marked too
    want = {(7, 8): int(sol[8, 7]), (2, 2): int(sol[8, 7]), (15, 0): int(sol[0, 15])}
    for fixed in (want, {8 * 16 + 7, 2 * 16 + 2, 15}, [(7, 8), (2, 2), (15, 0)]):
        root = parse(svg_board(inst, grid, fixed=fixed, fixed_label="clue"))
        marks = groups(root, "fixed")
        assert sorted(g.get("data-cell") for g in marks) == ["A16", "C3", "I8"]
        for g in marks:
            assert [e.get("fill") for e in g.iter(NS + "rect")] == ["none", "none"]
            assert len(list(g.iter(NS + "polygon"))) == 1  # the dot
            assert "; clue cell" in tooltip(g)
        i8 = next(g for g in groups(root, "piece") if g.get("id") == "cell-7-8")
        assert "; clue cell" in tooltip(i8)
        (legend,) = [t for t in root.iter(NS + "text") if t.get("class") == "legend"]
        assert legend.text.endswith("clue cells A16, C3, I8")
        empty = next(e for e in root.iter(NS + "rect") if e.get("class") == "empty")
        assert empty.get("data-cell") == "C3" and "clue cell" in tooltip(empty)
    root = parse(svg_board(inst, grid, fixed=want))
    c3 = next(g for g in groups(root, "fixed") if g.get("data-cell") == "C3")
    assert tooltip(c3) == (f"C3 (2, 2): empty; fixed cell of piece {int(sol[8, 7]) // 4 + 1}, "
                           f"rotation {int(sol[8, 7]) % 4} (not placed here)")
    assert not groups(parse(svg_board(inst, grid)), "fixed")
    with pytest.raises(RenderError, match="off the 16x16 board"):
        svg_board(inst, grid, fixed=[(16, 0)])
    # the frame shows in the PNG: black just inside the cell's edge, over the piece
    out = write_picture(svg_board(inst, grid, fixed=want), tmp_path / "f.png")
    from matplotlib.image import imread

    img = imread(out)[..., :3]
    rect = next(e for e in parse(svg_board(inst, grid, fixed=want)).iter(NS + "rect")
                if e.get("stroke") == "#000000" and e.get("stroke-width") == "3.5")
    x, y = float(rect.get("x")), float(rect.get("y"))
    h = float(rect.get("height"))
    assert img[int(y + h / 2), int(x) - 1:int(x) + 2].max(axis=1).min() < 0.1  # black line


def test_eternity_ii_clues_are_the_official_table(tmp_path):
    """The clue cells drawn are `CLUES["all"]`'s, whatever orientation the table holds."""
    assert field_clues(generate_instance(16, 16, 5, 17, 1)) == {}
    assert field_clues(random_instance(5, 5, 1)) == {}
    if not E2_PIECES.is_file():
        pytest.skip(f"{E2_PIECES} is not there (../shared)")
    inst = read_instance(E2_PIECES)
    clues = field_clues(inst)
    assert clues == {c: p * 4 + r for c, (p, r) in CLUES["all"].items()}
    r = run("render", "board", E2_PIECES, "--empty", "-o", tmp_path / "e2.svg")
    assert r.exit_code == 0, r.output
    root = parse((tmp_path / "e2.svg").read_text())
    assert sorted(g.get("data-cell") for g in groups(root, "fixed")) == sorted(
        cell_name(x, y) for x, y in CLUES["all"])
    # a drawn board frames the clues it holds: I8's piece in place, C3's turned a quarter
    (p8, r8), (p3, r3) = CLUES["all"][(7, 8)], CLUES["all"][(2, 2)]
    cells = np.full(256, -1)
    cells[8 * 16 + 7], cells[2 * 16 + 2] = p8 * 4 + r8, p3 * 4 + (r3 + 1) % 4
    assert field_clues(inst, cells) == {(7, 8): p8 * 4 + r8}
    assert field_clues(inst, np.full((16, 16), -1)) == {}
    (tmp_path / "b.txt").write_text(f"7 8 {p8} {r8}\n2 2 {p3} {(r3 + 1) % 4}\n")
    r = run("render", "board", E2_PIECES, "--board", tmp_path / "b.txt", "-o",
            tmp_path / "b.svg")
    assert r.exit_code == 0, r.output
    root = parse((tmp_path / "b.svg").read_text())
    assert [g.get("data-cell") for g in groups(root, "fixed")] == ["I8"]


# ------------------------------------------------------------------ render board --best


def boards_file(inst, path: Path, rows: list[tuple[str, int]], seed: int) -> list[dict]:
    """A boards file of random boards, a row per (source, holes wanted); the rows' stats."""
    rng = np.random.default_rng(seed)
    n = inst.width * inst.height
    cells, stats = [], []
    for k, (source, holes) in enumerate(rows):
        b = np.array([p * 4 + int(rng.integers(4)) for p in rng.permutation(n)])
        b[rng.choice(n, holes, replace=False)] = -1
        rc = recount(inst, b[None])
        cells.append(b)
        stats.append({"depth": int(rng.integers(0, n - holes + 1)),
                      "score": int(rc["matched"][0]), "joins": 2 * n - inst.width
                      - inst.height, "mismatches": int(rc["mismatched"][0]),
                      "holes": holes, "seed": 1, "restart": k, "nodes": 10 * k,
                      "seconds": 0.1 * k, "source": source})
    write_boards(path, inst, make_boards(n, cells, stats))
    return [{**s, "cells": c} for s, c in zip(stats, cells, strict=True)]


def naive_best(rows: list[dict]) -> int:
    """The best row by a plain loop: the highest-scoring filled board, else the deepest
    then highest-scoring; the first of equals."""
    best = None
    for i, r in enumerate(rows):
        if any(x["source"] == "filled" for x in rows):
            key = (r["source"] == "filled", r["score"])
        else:
            key = (r["depth"], r["score"])
        if best is None or key > best[0]:
            best = (key, i)
    return best[1]


def drawn(svg_path: Path, inst) -> np.ndarray:
    root = parse(svg_path.read_text())
    cells = np.full(inst.width * inst.height, -1)
    for g in groups(root, "piece"):
        cells[int(g.get("data-y")) * inst.width + int(g.get("data-x"))] = \
            int(g.get("data-piece")) * 4 + int(g.get("data-rotation"))
    return cells


@pytest.mark.parametrize("with_filled", [True, False])
def test_render_best_draws_the_best_row(tmp_path, with_filled):
    inst = random_instance(5, 5, 2)
    piece_file = tmp_path / "g.e2s"
    write_e2store(inst, piece_file)
    spec = [("best", int(h)) for h in np.random.default_rng(3).integers(0, 6, 14)]
    if with_filled:
        spec += [("filled", 0)] * 6
    out = tmp_path / "b.parquet"
    rows = boards_file(inst, out, spec, seed=5 + with_filled)
    want = naive_best(rows)
    assert want != 0  # row 0 is what --board draws by default
    for args in (("--best", out), ("--board", out, "--best")):
        svg = tmp_path / "best.svg"
        r = run("render", "board", piece_file, *args, "-o", svg)
        assert r.exit_code == 0, r.output
        first = r.output.splitlines()[0]
        assert first.startswith(f"drew row {want} of {len(rows)}, the best: "
                                f"{rows[want]['source']}, score {rows[want]['score']} / 40")
        assert np.array_equal(drawn(svg, inst), rows[want]["cells"])
        assert f"row {want} (the best of {len(rows)})" in svg.read_text()
    r = run("render", "board", piece_file, "--board", out, "-o", tmp_path / "r0.svg")
    assert r.exit_code == 0 and np.array_equal(drawn(tmp_path / "r0.svg", inst),
                                               rows[0]["cells"])


def test_render_best_refuses_what_is_ambiguous(tmp_path):
    inst = random_instance(5, 5, 2)
    piece_file = tmp_path / "g.e2s"
    write_e2store(inst, piece_file)
    out = tmp_path / "b.parquet"
    boards_file(inst, out, [("best", 2), ("best", 1)], seed=1)
    cases = [(("--best", out, "--index", 1), "--best and --index"),
             (("--best",), "--best needs a file"),
             (("--best", out, "--board", tmp_path / "other.parquet"), "two files")]
    for args, words in cases:
        r = run("render", "board", piece_file, *args, "-o", tmp_path / "x.svg")
        assert r.exit_code == 2 and words in r.output, r.output
    assert not (tmp_path / "x.svg").exists()
