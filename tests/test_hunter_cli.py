"""What a record hunter tripped on (issue 58, item 5), each working the way the rest of
the command line does: (a) `url --solutions` of a boards file gives its best board's URL
(a boards file read as a solutions file says so in one line); (b) `score --top N` and
`--best`, each board labelled with its file, arm, seed, restart and source; (c) `render
board INSTANCE BOARD` takes the board as `score` does; (d) joins named as the pictures
name cells (B6-C6), in text and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from naive_best import unsolvable_pieces

from e2store.boards.dataset import read_boards_dataset
from e2store.boards.solutions import read_solutions
from e2store.boards.sources import ORIGIN_KEYS, best_row
from e2store.boards.table import read_boards, score
from e2store.cli import main
from e2store.errors import SolverError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.instance.model import Instance
from e2store.instance.url import board_url
from e2store.solver.best import solve_best

RUN = {"breaks": "20,24,28,30,32", "restart_nodes": 20000}  # a second or so a restart


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_line_error(r, *words: str) -> None:
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    for w in words:
        assert w in r.output, r.output


@pytest.fixture(scope="module")
def hunt(tmp_path_factory) -> tuple[Path, Instance, Path, Path]:
    """A 6x6 instance with no perfect board, a boards file of 2 restarts and a dataset of
    two arms (best and filled boards, as `solve --best` writes them)."""
    root = tmp_path_factory.mktemp("hunt")
    write_e2store(Instance("u", 6, 6, unsolvable_pieces(6, 6, 3)), root / "u.e2s")
    inst = read_instance(root / "u.e2s")
    solve_best(inst, root / "best.parquet", restarts=2, **RUN)
    solve_best(inst, root / "ds", restarts=2, **RUN)
    solve_best(inst, root / "ds", restarts=1, arm="b", seed=3, **RUN)
    return root / "u.e2s", inst, root / "best.parquet", root / "ds"


def test_a_url_of_a_boards_file_is_its_best_boards(hunt):
    piece_file, inst, path, ds = hunt
    b = read_boards(path, inst)
    i = best_row(b)
    assert i != 0  # a filled board: not the first row
    r = run("url", piece_file, "--solutions", path)
    assert r.exit_code == 0, r.output
    assert r.stdout.strip() == board_url(inst, b.cells[i].astype(np.int64))
    assert f"row {i} of {len(b)}, the best: {b.stats['source'][i]}" in r.stderr
    r = run("url", piece_file, "--solutions", path, "--index", 0)  # the K-th row
    assert r.exit_code == 0 and r.stdout.strip() == board_url(inst, b.cells[0]), r.output
    d = read_boards_dataset(ds, inst)
    r = run("url", piece_file, "--solutions", ds)
    assert r.exit_code == 0, r.output
    assert r.stdout.strip() == board_url(inst, d.boards.cells[best_row(d.boards)])
    one_line_error(run("url", piece_file, "--solutions", path, "--index", len(b)),
                   f"holds {len(b)} boards")
    with pytest.raises(SolverError) as e:  # read as a solutions file: said plainly
        read_solutions(path)
    assert "a boards file (of `e2store best -o`), not a solutions file" in str(e.value)
    assert "\n" not in str(e.value) and "nodes" not in str(e.value)


def test_score_keeps_the_best_and_says_where_each_board_comes_from(hunt, tmp_path):
    piece_file, inst, path, ds = hunt
    d = read_boards_dataset(ds, inst)
    st = d.boards.stats
    r = run("score", piece_file, ds, "--json")
    assert r.exit_code == 0, r.output
    got = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(got) == len(d.boards) and all(list(g)[:len(ORIGIN_KEYS)] == list(ORIGIN_KEYS)
                                             for g in got)
    files = np.repeat([str(p.path) for p in d.parts], d.counts).tolist()
    for k, g in enumerate(got):
        assert (g["board"], g["row"], g["rows"], g["file"]) == (str(ds), k, len(got), files[k])
        assert (g["arm"], g["seed"], g["restart"], g["source"], g["depth"], g["score"]) == (
            d.arms[k], st["seed"][k], st["restart"][k], st["source"][k], st["depth"][k],
            st["score"][k])
    # the best first: by score, then depth, then order; a board met twice listed once
    order = np.lexsort((np.arange(len(got)), -st["depth"], -st["score"]))
    want, seen = [], set()
    for k in order.tolist():
        if d.boards.cells[k].tobytes() not in seen:
            seen.add(d.boards.cells[k].tobytes())
            want.append(k)
    r = run("score", piece_file, ds, "--top", 3, "--json")
    assert r.exit_code == 0, r.output
    top = [json.loads(line) for line in r.stdout.splitlines()]
    assert [t["row"] for t in top] == want[:3]
    assert [t["score"] for t in top] == [st["score"][k] for k in want[:3]]
    n = len(read_boards(path, inst))
    r = run("score", piece_file, path, path, "--top", 2 * n, "--json")  # each board once
    twice = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(twice) == len({tuple(c) for c in read_boards(path, inst).cells.tolist()})
    assert {t["board"] for t in twice} == {str(path)}
    assert len({t["row"] for t in twice}) == len(twice)
    r = run("score", piece_file, ds, "--best", "--json")
    best = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(best) == 1 and best[0]["row"] == want[0], r.output
    r = run("score", piece_file, ds, "--best")
    k = want[0]
    assert r.stdout.splitlines()[0] == (
        f"board      {ds} row {k} of {len(got)}: arm {d.arms[k]}, seed {st['seed'][k]}, "
        f"restart {st['restart'][k]}, source {st['source'][k]}, depth {st['depth'][k]} "
        f"(in {files[k]})")
    r = run("score", piece_file, path, "--json")  # a boards file holds no arm
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert {g["arm"] for g in rows} == {None} and {g["file"] for g in rows} == {str(path)}
    assert "(in " not in run("score", piece_file, path).stdout
    url = board_url(inst, read_boards(path, inst).cells[0])  # a URL alone: the same keys
    alone, known = (json.loads(run("score", *a, url, "--json").stdout)
                    for a in ((), (piece_file,)))
    assert list(alone) == list(known) and alone["score"] == known["score"]
    assert (alone["board"], alone["row"], alone["rows"], alone["file"]) == (url, 0, 1, None)
    one_line_error(run("score", piece_file, ds, "--best", "--top", 2), "--best and --top")
    loose = tmp_path / "loose"  # boards files put in a directory by hand: no dataset
    loose.mkdir()
    (loose / "a.parquet").write_bytes(path.read_bytes())
    one_line_error(run("score", piece_file, loose), "no boards dataset", "loose/*.parquet")


def test_render_board_takes_the_board_as_score_does(hunt, tmp_path):
    piece_file, inst, path, _ = hunt
    b = read_boards(path, inst)
    url = board_url(inst, b.cells[1])
    text = tmp_path / "b.txt"
    text.write_text("".join(f"{i % 6} {i // 6} {v // 4} {v % 4}\n"
                            for i, v in enumerate(b.cells[0].tolist()) if v >= 0))
    for board, more in ((url, ()), (text, ()), (path, ("--index", 1)), (path, ("--best",))):
        r = run("render", "board", piece_file, board, *more, "-o", tmp_path / "arg.svg")
        assert r.exit_code == 0, r.output
        old = ("--best", board) if more == ("--best",) else ("--board", board, *more)
        r = run("render", "board", piece_file, *old, "-o", tmp_path / "opt.svg")
        assert r.exit_code == 0, r.output
        assert (tmp_path / "arg.svg").read_text() == (tmp_path / "opt.svg").read_text()
    assert "score " in (tmp_path / "arg.svg").read_text()
    one_line_error(run("render", "board", piece_file, url, "--board", text, "-o",
                       tmp_path / "x.svg"), "name two boards")
    r = run("render", "board", url, "-o", tmp_path / "alone.svg")  # a URL alone: its colours
    assert r.exit_code == 0 and "from the URL's colours" in (tmp_path / "alone.svg").read_text()
    one_line_error(run("render", "board", url, url, "-o", tmp_path / "x.svg"), "drawn alone")


def _name(x: int, y: int) -> str:
    return f"{chr(ord('A') + y)}{x + 1}"  # rows A.. from the north, columns 1.. (6x6)


def test_joins_are_named_as_the_pictures_name_cells(hunt, tmp_path):
    piece_file, inst, _, _ = hunt
    board = np.full(36, -1, dtype=np.int64)
    corners = [p for p in range(36) if (inst.pieces[p] == 0).sum() == 2]
    inner = [p for p in range(36) if (inst.pieces[p] == 0).sum() == 0]
    board[7], board[13], board[8] = inner[0] * 4, inner[1] * 4, inner[2] * 4  # B2, C2, B3
    board[0] = corners[0] * 4 + 1  # turned: colour on the frame at A1
    sc = score(inst, board)
    assert sc.mismatched and sc.frame_faults
    text = tmp_path / "b.txt"
    text.write_text("".join(f"{i % 6} {i // 6} {v // 4} {v % 4}\n"
                            for i, v in enumerate(board.tolist()) if v >= 0))
    r = run("score", piece_file, text, "--json")
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    want = [{"cell": [x, y], "side": s,
             "name": f"{_name(x, y)}-{_name(x + (s == 'E'), y + (s == 'S'))}"}
            for (x, y), s in sc.mismatched]
    assert got["mismatched"] == want
    assert {m["name"] for m in want} <= {"B2-C2", "B2-B3"}
    assert got["frame_faults"] == [{"cell": [0, 0], "side": s, "name": f"A1 {s}"}
                                   for _, s in sc.frame_faults]
    out = run("score", piece_file, text).stdout
    assert "mismatched " + " ".join(m["name"] for m in want) in out
    assert "colour on the frame at " + " ".join(f"A1 {s}" for _, s in sc.frame_faults) in out
    assert "(1,1)" not in out
    from e2store.cli.score import join_name  # Eternity II's names: (7, 8) is I8

    assert (join_name(7, 8, "E"), join_name(5, 1, "S")) == ("I8-I9", "B6-C6")
