"""The formats of the field, both ways: piece files written in every format read back as
the same instance (on every instance in ../shared/instances), and e2.bucas.name board URLs
(board -> URL -> board -> URL identical; `solve --fixed URL`; `solve --json` url)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from e2store.boards.solutions import write_solutions
from e2store.cli import main
from e2store.instance.e2sfile import write_e2store
from e2store.instance.export import format_pieces, write_pieces
from e2store.instance.formats import FORMATS, read_brendan_solution, read_instance
from e2store.instance.generate import generate_instance
from e2store.instance.url import UrlError, board_from_url, board_url, parse_url

SHARED = Path(__file__).resolve().parents[2] / "shared" / "instances"
PIECE_FILES = sorted(p for p in SHARED.rglob("*") if p.is_file() and p.suffix in (".txt", ".puz")
                     and not p.name.startswith("solutions_")) if SHARED.is_dir() else []
needs_shared = pytest.mark.skipif(not PIECE_FILES, reason=f"{SHARED} is absent")


def _solution(path: Path, inst) -> np.ndarray | None:
    """The known solution of a shared piece file (Owen's solutions, read as the file is)."""
    sol = path.parent.parent / "brendan_set1" / f"solutions_{inst.width:02d}x{inst.height:02d}.txt"
    if "brendan_set1" in path.parts:
        sol = path.with_name(path.name.replace("pieces_", "solutions_"))
    if not sol.exists():
        return None
    sides = "WNES" if "benchmark" in path.parts else "NESW"
    return read_brendan_solution(sol, sides, inst.n_pieces).reshape(-1)


@needs_shared
@pytest.mark.parametrize("path", PIECE_FILES, ids=lambda p: p.name)
def test_every_format_reads_back_as_the_same_instance(path, tmp_path):
    inst = read_instance(path)
    for fmt in FORMATS:
        if fmt == "benchmark" and inst.width != inst.height:
            with pytest.raises(ValueError, match="N x N boards only"):
                format_pieces(inst, fmt)
            continue
        out = tmp_path / f"x.{fmt}"
        write_pieces(inst, out, fmt)
        back = read_instance(out, format=fmt, name=inst.name,
                             size=(inst.width, inst.height) if fmt == "jwortmann" else None)
        assert back.id == inst.id, fmt
        assert np.array_equal(back.pieces, inst.pieces)
    own = {"benchmark": "benchmark", "brendan_set1": "brendan"}.get(path.parent.name)
    if own:  # the project's and Owen's files come out byte for byte (line ends aside)
        assert format_pieces(inst, own).split() == path.read_text().split()


@needs_shared
@pytest.mark.parametrize("path", [p for p in PIECE_FILES if p.parent.name != "brendan_set1"],
                         ids=lambda p: p.name)
def test_board_urls_round_trip(path):
    inst = read_instance(path)
    n = inst.width * inst.height
    boards = [np.full(n, -1)]
    sol = _solution(path, inst)
    if sol is not None:
        partial = sol.copy()
        partial[n // 3:] = -1
        boards += [sol, partial]
    for board in boards:
        url = board_url(inst, board)
        back = board_from_url(inst, url)
        assert np.array_equal(back, board)
        assert board_url(inst, back, name=parse_url(url).name) == url
        # without piece numbers each cell takes a piece that shows its edges
        edges_only = url.split("&board_pieces=")[0]
        again = board_url(inst, board_from_url(inst, edges_only))
        assert again.split("&board_pieces=")[0] == edges_only


def test_url_letters_and_numbers_follow_the_field():
    """Letter `a` + colour id per side, top right bottom left; piece numbers from 1."""
    inst = generate_instance(3, 3, 2, 2, seed=4)
    board = inst.solution.reshape(-1)
    url = board_url(inst, board)
    u = parse_url(url)
    assert url.startswith("https://e2.bucas.name/#puzzle=") and (u.width, u.height) == (3, 3)
    v = int(board[4])  # the centre cell: its top, right, bottom, left colours as letters
    p, r = divmod(v, 4)
    want = "".join("abcdefghijklmnopqrstuvwxyz"[inst.colour(v, s)] for s in (1, 2, 3, 0))
    assert u.edges[4] == want and u.pieces[4] == p + 1
    assert u.edges[0][0] == "a" and u.edges[0][3] == "a"  # the north-west corner's grey sides


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_bad_urls_say_what_is_wrong():
    inst = generate_instance(3, 3, 2, 2, seed=4)
    good = board_url(inst, inst.solution)
    u = parse_url(good)
    cases = [
        (good.replace("board_w=3", "board_w=4"), "board_edges has 36 characters, expected 48"),
        (good.replace("board_edges=", "edges="), "without `board_edges=`"),
        (good.replace("board_edges=a", "board_edges=A"), "letters a-z"),
        (good.replace("&board_pieces=" + "".join(f"{p:03d}" for p in u.pieces),
                      "&board_pieces=" + "".join(f"{p:03d}" for p in (u.pieces[1],) * 9)),
         "cell .0, 0.: piece"),
        (good.replace("board_pieces=0", "board_pieces=9"), "the instance has pieces 1-9"),
    ]
    for url, msg in cases:
        with pytest.raises(UrlError, match=msg):
            board_from_url(inst, url)
    other = generate_instance(4, 4, 2, 2, seed=4)
    with pytest.raises(UrlError, match="shows a 3x3 board"):
        board_from_url(other, good)
    twice = parse_url(good)
    pieces = list(twice.pieces)
    edges = list(twice.edges)
    pieces[1], edges[1] = pieces[0], edges[0]
    from dataclasses import replace
    with pytest.raises(UrlError, match="already on cell .0, 0."):
        board_from_url(inst, replace(twice, pieces=tuple(pieces), edges=tuple(edges)))


def test_cli_url_export_pieces_and_solve_with_a_url(tmp_path):
    inst = generate_instance(4, 4, 2, 3, seed=3)
    src = tmp_path / "g.e2s"
    write_e2store(inst, src)
    run = CliRunner().invoke
    r = run(main, ["url", str(src)])
    assert r.exit_code == 0 and r.output.strip() == board_url(inst, inst.solution)
    r = run(main, ["solve", str(src), "--no-symmetry-break", "--json", "-o",
                   str(tmp_path / "s.parquet")])
    res = json.loads(r.stdout)
    assert res["url"] == board_url(inst, np.array(res["first_solution"]))
    sols = np.array([inst.solution.reshape(-1), res["first_solution"]])
    write_solutions(tmp_path / "two.csv", sols, inst)
    r = run(main, ["url", str(src), "--solutions", str(tmp_path / "two.csv"), "--index", "1"])
    assert r.exit_code == 0 and r.output.strip() == res["url"]
    r = run(main, ["url", str(src), "--solutions", str(tmp_path / "two.csv"), "--index", "2"])
    assert r.exit_code == 2 and "holds 2 solutions" in r.output
    partial = inst.solution.reshape(-1).copy()
    partial[6:] = -1
    r = run(main, ["solve", str(src), "--fixed", board_url(inst, partial), "--json"])
    fixed = json.loads(r.stdout)
    assert fixed["seeded_cells"] == 6 and fixed["solutions"] >= 1
    assert fixed["first_solution"][:6] == partial[:6].tolist()
    r = run(main, ["solve", str(src), "--seed", board_url(inst, partial), "--json"])
    assert r.exit_code == 2 and "the old `--seed FILE` was removed" in r.output  # --fixed
    r = run(main, ["solve", str(src), "--fixed", "https://e2.bucas.name/#board_w=4"])
    assert r.exit_code == 2 and "board_h" in r.output
    out = tmp_path / "g.puz"
    r = run(main, ["export-pieces", str(src), "--to", "puz", "-o", str(out)])
    assert r.exit_code == 0 and read_instance(out, name=inst.name).id == inst.id
