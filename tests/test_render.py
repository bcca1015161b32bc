"""Pictures: `e2store.reports.render` (SVG text, PNG via matplotlib) and `e2store render`."""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from click.testing import CliRunner

from e2store.cli import main
from e2store.corolles.enumerate import enumerate_corolles
from e2store.errors import RenderError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.instance.generate import generate_instance
from e2store.instance.model import Instance
from e2store.reports.drawings import nth_corolle
from e2store.reports.render import (
    GREY_HEX,
    PALETTE,
    colour_hex,
    svg_board,
    svg_corolle,
    svg_pieces,
    svg_to_figure,
    svg_zone_map,
    write_picture,
)
from e2store.zones.geometry import n_slots, ring_offsets
from e2store.zones.zonemap import zone_map

NS = "{http://www.w3.org/2000/svg}"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SIDES = "WNES"


@pytest.fixture(scope="module")
def inst() -> Instance:
    return generate_instance(5, 4, 3, 4, 3, name="pic")


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)  # well-formed XML or it raises
    assert root.tag == NS + "svg"
    return root


def groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter(NS + "g") if g.get("class") == cls]


def by_id(root: ET.Element, ident: str) -> ET.Element:
    found = [e for e in root.iter() if e.get("id") == ident]
    assert len(found) == 1, ident
    return found[0]


def triangles(group: ET.Element) -> dict[str, ET.Element]:
    tris = [e for e in group if e.tag == NS + "polygon" and e.get("class") == "tri"]
    assert len(tris) == 4
    return {t.get("data-side"): t for t in tris}


def points(poly: ET.Element) -> np.ndarray:
    return np.array([[float(v) for v in p.split(",")] for p in poly.get("points").split()])


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def svg_size(root: ET.Element) -> tuple[float, float]:
    return float(root.get("width")), float(root.get("height"))


def rgb(hex_colour: str) -> np.ndarray:
    return np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]) / 255


def test_palette_is_fixed_distinct_and_cycles():
    assert colour_hex(0) == GREY_HEX == "#808080"
    assert len(PALETTE) == 40 and len(set(PALETTE)) == 40
    assert GREY_HEX not in PALETTE and "#7f7f7f" not in PALETTE
    assert colour_hex(1) == "#1f77b4" and colour_hex(41) == colour_hex(1)
    assert [colour_hex(c) for c in range(1, 41)] == list(PALETTE)
    with pytest.raises(RenderError):
        colour_hex(-1)


def test_pieces_grid_has_every_piece_with_its_colours(inst):
    root = parse(svg_pieces(inst))
    pieces = groups(root, "piece")
    assert len(pieces) == inst.n_pieces
    assert len([p for p in root.iter(NS + "polygon") if p.get("class") == "tri"]) == \
        4 * inst.n_pieces
    labels = [t.text for t in root.iter(NS + "text") if t.get("class") == "label"]
    assert labels == [str(p) for p in range(inst.n_pieces)]
    for p in range(inst.n_pieces):
        g = by_id(root, f"piece-{p}")
        assert (g.get("data-piece"), g.get("data-rotation")) == (str(p), "0")
        tris = triangles(g)
        for k, side in enumerate(SIDES):
            assert tris[side].get("fill") == colour_hex(inst.pieces[p, k])
            assert tris[side].get("data-colour") == str(inst.pieces[p, k])
    # grid as wide as the board: piece 5 starts the second row, below piece 0
    p0 = points(triangles(by_id(root, "piece-0"))["W"])
    p5 = points(triangles(by_id(root, "piece-5"))["W"])
    assert p0[:, 0].min() == p5[:, 0].min() and p5[:, 1].min() > p0[:, 1].max()


def test_board_shows_rotated_colours_on_the_right_sides():
    # piece 1 (W N E S) = (1, 2, 3, 4) turned once clockwise shows W 4, N 1, E 2, S 3;
    # piece 0 = (5, 6, 7, 8) turned three times shows W 6, N 7, E 8, S 5.
    t = Instance("hand", 3, 1, [[5, 6, 7, 8], [1, 2, 3, 4], [0, 0, 0, 9]])
    root = parse(svg_board(t, [[1 * 4 + 1, 0 * 4 + 3, -1]]))
    want = {(0, 0): (1, 1, (4, 1, 2, 3)), (1, 0): (0, 3, (6, 7, 8, 5))}
    for (x, y), (p, r, colours) in want.items():
        g = by_id(root, f"cell-{x}-{y}")
        assert (g.get("data-x"), g.get("data-y")) == (str(x), str(y))
        assert (g.get("data-piece"), g.get("data-rotation")) == (str(p), str(r))
        tris = triangles(g)
        assert [tris[s].get("fill") for s in SIDES] == [colour_hex(c) for c in colours]
        # each triangle lies on its side of the square
        centre = np.vstack([points(tri) for tri in tris.values()]).mean(axis=0)
        cw, cn, ce, cs = (points(tris[s]).mean(axis=0) for s in SIDES)
        assert cw[0] < centre[0] < ce[0] and cn[1] < centre[1] < cs[1]
    assert by_id(root, "cell-1-0").find(f"{NS}polygon").get("points") != \
        by_id(root, "cell-0-0").find(f"{NS}polygon").get("points")
    empty = [r for r in root.iter(NS + "rect") if r.get("class") == "empty"]
    assert [(r.get("data-x"), r.get("data-y")) for r in empty] == [("2", "0")]


def test_board_defaults_to_the_solution(inst):
    root = parse(svg_board(inst))
    assert len(groups(root, "piece")) == inst.width * inst.height
    for y in range(inst.height):
        for x in range(inst.width):
            p, r = divmod(int(inst.solution[y, x]), 4)
            g = by_id(root, f"cell-{x}-{y}")
            assert g.get("data-piece") == str(p) and g.get("data-rotation") == str(r)
            fills = [triangles(g)[s].get("fill") for s in SIDES]
            assert fills == [colour_hex(inst.pieces[p, (k - r) % 4]) for k in range(4)]
    # the frame shows grey outwards
    assert triangles(by_id(root, "cell-0-0"))["W"].get("fill") == GREY_HEX
    assert triangles(by_id(root, "cell-4-3"))["S"].get("fill") == GREY_HEX


def test_board_rejects_what_does_not_fit(inst):
    bare = Instance("bare", inst.width, inst.height, inst.pieces)
    with pytest.raises(RenderError, match="no solution"):
        svg_board(bare)
    with pytest.raises(RenderError, match="do not fit"):
        svg_board(inst, np.zeros((inst.width, inst.height), dtype=int))
    with pytest.raises(RenderError, match="placement"):
        svg_board(inst, np.full((inst.height, inst.width), 4 * inst.n_pieces))


@pytest.mark.parametrize("w,h,ham", [(7, 7, 2), (6, 4, 1)])
def test_zone_map_labels_every_cell(w, h, ham):
    zm = zone_map(w, h, ham)
    root = parse(svg_zone_map(zm))
    cells = groups(root, "zone-cell")
    assert len(cells) == w * h
    seen = set()
    for g in cells:
        x, y = int(g.get("data-x")), int(g.get("data-y"))
        z, r = int(zm.zone_of[y, x]), int(zm.rotation_of[y, x])
        assert (g.get("data-zone"), g.get("data-rotation")) == (str(z), str(r))
        texts = [t.text for t in g.iter(NS + "text")]
        assert texts == [f"{z}{'abcd'[r] if r else ''}"]
        assert g.find(NS + "rect").get("fill") == colour_hex(z + 1)
        seen.add((x, y))
    assert len(seen) == w * h
    canonical = [r for r in root.iter(NS + "rect") if r.get("class") == "canonical"]
    assert len(canonical) == len(zm.zones)


def test_corolle_drawn_in_place(inst):
    h, x, y = 2, 1, 0
    cells, _ = enumerate_corolles(inst, x, y, h)
    row = cells[len(cells) // 2].astype(int)
    root = parse(svg_corolle(inst, h, row, x, y))
    off = ring_offsets(h)
    on = [i for i in range(n_slots(h)) if row[i] >= 0]
    assert len(groups(root, "piece")) == len(on)
    table = inst.rotated_table()
    for i in on:
        g = by_id(root, f"slot-{i}")
        assert (int(g.get("data-x")), int(g.get("data-y"))) == (x + off[i, 0], y + off[i, 1])
        assert g.get("data-piece") == str(row[i] // 4)
        assert [triangles(g)[s].get("fill") for s in SIDES] == \
            [colour_hex(c) for c in table[row[i]]]
    dashed = [r for r in root.iter(NS + "rect") if r.get("class") == "off-board"]
    assert len(dashed) == int((row < 0).sum()) > 0
    empty = [r for r in root.iter(NS + "rect") if r.get("class") == "empty"]
    assert len(empty) == inst.width * inst.height  # the board outline under the corolle
    assert len([r for r in root.iter(NS + "rect") if r.get("class") == "centre"]) == 1
    with pytest.raises(RenderError, match="slots"):
        svg_corolle(inst, h, row[:-1], x, y)
    bad = row.copy()
    bad[int(np.nonzero(row < 0)[0][0])] = row[0]
    with pytest.raises(RenderError, match="off the board"):
        svg_corolle(inst, h, bad, x, y)
    with pytest.raises(RenderError, match="off the"):
        svg_corolle(inst, h, row, 9, 0)


@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_png_size_and_colours(inst, tmp_path, scale):
    from matplotlib.image import imread

    svg = svg_board(inst)
    w, h = svg_size(parse(svg))
    out = write_picture(svg, tmp_path / "board.png", scale=scale)
    assert png_size(out) == (round(w * scale), round(h * scale))
    img = imread(out)[..., :3]
    g = by_id(parse(svg), "cell-2-1")
    for tri in triangles(g).values():
        cx, cy = points(tri).mean(axis=0) * scale
        assert np.abs(img[int(cy), int(cx)] - rgb(tri.get("fill"))).max() < 0.02
    assert [p.name for p in tmp_path.iterdir()] == ["board.png"]  # no temp files left


def test_write_picture_svg_and_errors(inst, tmp_path):
    svg = svg_pieces(inst)
    out = write_picture(svg, tmp_path / "p.SVG")
    assert out.read_text(encoding="utf-8") == svg
    with pytest.raises(RenderError, match="suffix"):
        write_picture(svg, tmp_path / "p.jpg")
    with pytest.raises(RenderError, match="circle"):
        svg_to_figure('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4">'
                      '<circle r="1"/></svg>')
    with pytest.raises(RenderError, match="well-formed"):
        svg_to_figure("<svg")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.SVG"]


def test_write_picture_takes_a_matplotlib_figure(tmp_path):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 1), dpi=50)
    fig.add_subplot().plot([0, 1], [1, 0])
    assert png_size(write_picture(fig, tmp_path / "f.png")) == (100, 50)
    parse(write_picture(fig, tmp_path / "f.svg").read_text())


# --------------------------------------------------------------------------- CLI


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def inst_file(inst, tmp_path_factory):
    path = tmp_path_factory.mktemp("render") / "pic.e2s"
    write_e2store(inst, path)
    return path


def test_cli_pieces_board_zones(inst, inst_file, tmp_path):
    r = run("render", "pieces", inst_file, "-o", tmp_path / "pieces.svg")
    assert r.exit_code == 0, r.output
    assert len(groups(parse((tmp_path / "pieces.svg").read_text()), "piece")) == inst.n_pieces
    r = run("render", "board", inst_file, "--solution", "-o", tmp_path / "board.png",
            "--scale", 0.5)
    assert r.exit_code == 0, r.output
    assert r.output.strip() == f"wrote {tmp_path / 'board.png'}"
    w, h = svg_size(parse(svg_board(read_instance(inst_file))))
    assert png_size(tmp_path / "board.png") == (round(w / 2), round(h / 2))
    r = run("render", "board", inst_file, "--empty", "-o", tmp_path / "empty.svg")
    assert r.exit_code == 0, r.output
    root = parse((tmp_path / "empty.svg").read_text())
    assert not groups(root, "piece")
    assert len([e for e in root.iter(NS + "rect") if e.get("class") == "empty"]) == 20
    r = run("render", "zones", "--size", "6x4", "--hamming", 1, "-o", tmp_path / "z.svg",
            "--title", "my zones")
    assert r.exit_code == 0, r.output
    root = parse((tmp_path / "z.svg").read_text())
    assert len(groups(root, "zone-cell")) == 24
    assert [t.text for t in root.iter(NS + "text") if t.get("class") == "title"] == ["my zones"]


def test_cli_corolle(inst, inst_file, tmp_path):
    cells, _ = enumerate_corolles(inst, 2, 1, 1)
    k = len(cells) - 1
    r = run("render", "corolle", inst_file, "--hamming", 1, "--at", "2,1", "--index", k,
            "-o", tmp_path / "c.svg")
    assert r.exit_code == 0, r.output
    root = parse((tmp_path / "c.svg").read_text())
    placed = sorted((int(g.get("data-slot")), int(g.get("data-piece")) * 4 +
                     int(g.get("data-rotation"))) for g in groups(root, "piece"))
    assert placed == [(i, int(v)) for i, v in enumerate(cells[k])]
    assert np.array_equal(nth_corolle(inst, 2, 1, 1, k), cells[k])
    r = run("render", "corolle", inst_file, "--hamming", 1, "--at", "2,1", "-o",
            tmp_path / "c.png")
    assert r.exit_code == 0, r.output
    assert png_size(tmp_path / "c.png")[0] > 0


def test_cli_bad_input_exits_2_with_one_line(inst, inst_file, tmp_path):
    bare = tmp_path / "bare.e2s"
    write_e2store(Instance("bare", inst.width, inst.height, inst.pieces), bare)
    n = len(enumerate_corolles(inst, 0, 0, 1)[0])
    cases = [
        (("render", "board", bare, "-o", tmp_path / "b.png"), "no solution"),
        (("render", "corolle", inst_file, "--hamming", 1, "--at", "0,0", "--index", n,
          "-o", tmp_path / "c.png"), f"out of range: cell (0, 0) has {n} corolles"),
        (("render", "corolle", inst_file, "--hamming", 1, "--at", "9,9",
          "-o", tmp_path / "c.png"), "off the 5x4 board"),
        (("render", "pieces", tmp_path / "missing.e2s", "-o", tmp_path / "p.svg"),
         "missing.e2s"),
    ]
    for args, msg in cases:
        r = run(*args)
        assert r.exit_code == 2, r.output
        assert r.output.startswith("e2store: error:") and msg in r.output, r.output
        assert len(r.output.strip().splitlines()) == 1
    r = run("render", "pieces", inst_file, "-o", tmp_path / "p.gif")
    assert r.exit_code == 2 and "expected .svg or .png" in r.output
    r = run("render", "corolle", inst_file, "--hamming", 1, "--at", "x", "-o", tmp_path / "c.png")
    assert r.exit_code == 2 and "X,Y" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bare.e2s"]
