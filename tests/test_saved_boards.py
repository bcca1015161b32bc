"""Blackwood-style saved-board files (issue 48, item 5): the text against a naive writer,
the name, a round trip, bad files, the export's choice of boards, and the command line."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pytest
from click.testing import CliRunner
from naive_best import unsolvable_pieces

from e2store.boards import (
    SavedBoardError,
    read_boards_dataset,
    read_saved_board,
    saved_board_text,
    write_part,
    write_saved_boards,
)
from e2store.boards.table import Boards, make_boards, recount
from e2store.cli import main
from e2store.instance.e2sfile import write_e2store
from e2store.instance.model import Instance
from e2store.instance.url import board_url

W = H = 6


@pytest.fixture(scope="module")
def inst() -> Instance:
    return Instance("sb", W, H, unsolvable_pieces(W, H, 3))


def random_board(inst: Instance, rng: np.random.Generator, holes: int = 0) -> np.ndarray:
    """Every piece on a random cell in a random rotation, `holes` cells then emptied."""
    n = inst.n_pieces
    b = rng.permutation(n) * 4 + rng.integers(0, 4, n)
    b[rng.choice(n, holes, replace=False)] = -1
    return b.astype(np.int64)


def boards_of(inst: Instance, cells: list[np.ndarray], seed: int, restart: int,
              sources: list[str]) -> Boards:
    """`Boards` of `cells`, their stats recounted (as a run stores them)."""
    rc = recount(inst, np.stack(cells))
    rows = [{"depth": W * H - int(rc["holes"][i]), "score": int(rc["matched"][i]),
             "joins": 2 * W * H - W - H, "mismatches": int(rc["mismatched"][i]),
             "holes": int(rc["holes"][i]), "seed": seed, "restart": restart, "nodes": 100,
             "seconds": 1.0, "source": s} for i, s in enumerate(sources)]
    return make_boards(W * H, cells, rows)


def naive_text(inst: Instance, cells) -> str:
    """Blackwood's layout written cell by cell: the north row (y = 0) first."""
    lines = []
    for y in range(inst.height):
        line = ""
        for x in range(inst.width):
            v = int(cells[y * inst.width + x])
            line += "---/- " if v < 0 else f"{v // 4 + 1:>3}/{v % 4} "
        lines.append(line)
    return "\n".join(lines) + "\n\n" + board_url(inst, cells) + "\n"


def test_text_layout_name_and_round_trip(inst, tmp_path):
    rng = np.random.default_rng(1)
    full, holed = random_board(inst, rng), random_board(inst, rng, holes=5)
    for cells in (full, holed):
        text = saved_board_text(inst, cells)
        assert text == naive_text(inst, cells)
        lines = text.split("\n")
        assert len(lines) == H + 3 and lines[H] == "" and lines[-1] == ""
        assert lines[H + 1] == board_url(inst, cells)
        assert all(len(line.split()) == W for line in lines[:H])
    assert "---/-" in saved_board_text(inst, holed)
    assert "---/-" not in saved_board_text(inst, full)
    b = boards_of(inst, [full, holed], 7, 3, ["filled", "best"])
    paths = write_saved_boards(inst, b, tmp_path / "out")
    assert len(paths) == 2
    for p, cells, depth in zip(paths, (full, holed), (36, 31), strict=True):
        md5 = hashlib.md5(p.read_bytes()).hexdigest()
        assert p.name == f"{depth}_{md5}_s7-r3.txt"
        assert p.read_text() == naive_text(inst, cells)
        assert np.array_equal(read_saved_board(p, inst), cells)
    assert write_saved_boards(inst, b, tmp_path / "out") == paths  # the same names again
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(p.name for p in paths)


def test_reader_takes_what_the_field_writes(inst, tmp_path):
    """No final newline (Blackwood's), CRLF line ends, no URL, a mismatched piece."""
    cells = random_board(inst, np.random.default_rng(2), holes=2)
    text = saved_board_text(inst, cells)
    variants = {"blackwood.txt": text.rstrip("\n"), "crlf.txt": text.replace("\n", "\r\n"),
                "nourl.txt": text.split("\n\n")[0] + "\n"}
    for name, t in variants.items():
        (tmp_path / name).write_bytes(t.encode())
        assert np.array_equal(read_saved_board(tmp_path / name, inst), cells), name
    turned = cells.copy()
    i = int(np.flatnonzero(turned >= 0)[0])
    turned[i] = (turned[i] & ~3) | ((turned[i] + 1) & 3)  # a quarter turn: still readable
    (tmp_path / "t.txt").write_text(saved_board_text(inst, turned))
    assert np.array_equal(read_saved_board(tmp_path / "t.txt", inst), turned)


def _rows(text: str) -> list[str]:
    return text.split("\n")


def _edit_cell(text: str, y: int, x: int, token: str) -> str:
    lines = _rows(text)
    cells = lines[y].split()
    cells[x] = token
    lines[y] = " ".join(cells) + " "
    return "\n".join(lines)


BAD = {  # name -> (edit of the text, line, words of the message)
    "five rows": (lambda t, o: "\n".join(_rows(t)[1:]), 6, "an empty line after 5 rows"),
    "seven rows": (lambda t, o: "\n".join(_rows(t)[:H] + ["---/- " * W] + _rows(t)[H:]), 7,
                   "a row of cells more than 6"),
    "no rows": (lambda t, o: "", 1, "the end of the file after 0 rows"),
    "short row": (lambda t, o: "\n".join([_rows(t)[0]] + [" ".join(_rows(t)[1].split()[:5])]
                                         + _rows(t)[2:]), 2, "5 cells in row 1"),
    "rotation 4": (lambda t, o: _edit_cell(t, 2, 3, "12/4"), 3, "cell (3, 2): bad cell"),
    "letters": (lambda t, o: _edit_cell(t, 0, 0, "ab/1"), 1, "cell (0, 0): bad cell"),
    "piece 0": (lambda t, o: _edit_cell(t, 4, 1, "0/1"), 5, "piece 0 out of range"),
    "piece 37": (lambda t, o: _edit_cell(t, 5, 5, "37/0"), 6, "piece 37 out of range"),
    "twice": (lambda t, o: _edit_cell(t, 3, 0, t.split()[0]), 4, "is placed twice"),
    "other url": (lambda t, o: "\n".join(_rows(t)[:H + 1] + [board_url(*o)] + [""]), H + 2,
                  "the URL shows another board"),
    "bad url": (lambda t, o: t.replace("board_edges=", "board_edges=zz"), H + 2,
                "the board's URL cannot be read"),
    "after url": (lambda t, o: t + "\nhello\n", H + 4, "unexpected line 'hello'"),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_files_name_the_file_and_line(inst, tmp_path, name):
    rng = np.random.default_rng(3)
    cells = random_board(inst, rng, holes=1)
    other = (inst, random_board(inst, rng))
    edit, line, words = BAD[name]
    p = tmp_path / "bad.txt"
    p.write_text(edit(saved_board_text(inst, cells), other))
    with pytest.raises(SavedBoardError) as e:
        read_saved_board(p, inst)
    msg = str(e.value)
    assert msg.startswith(f"{p}:{line}: ") and words in msg and "\n" not in msg, msg
    assert (e.value.path, e.value.line) == (str(p), line)


def test_not_utf8_is_a_saved_board_error(inst, tmp_path):
    p = tmp_path / "b.txt"
    p.write_bytes(b"  1/0 \xff\n")
    with pytest.raises(SavedBoardError, match=r"b\.txt:1: not a UTF-8 text file"):
        read_saved_board(p, inst)


@pytest.fixture(scope="module")
def dataset(inst, tmp_path_factory):
    """Two arms of a few restarts each: a best board with holes and its filled board (on
    restart 0 of arm a, the best board without holes: the filled board is the same)."""
    root = tmp_path_factory.mktemp("ds") / "boards"
    rng = np.random.default_rng(4)
    for arm in ("a", "b"):
        for restart in range(5):
            full = random_board(inst, rng)
            best = full.copy()
            if not (arm == "a" and restart == 0):
                best[rng.choice(W * H, 3, replace=False)] = -1
            write_part(root, inst, boards_of(inst, [best, full], 0, restart,
                                             ["best", "filled"]),
                       arm=arm, seed=0, restart=restart)
    return root


def naive_choice(inst, d, min_depth=None, min_score=None, top=None) -> list[str]:
    """The names the export should write: rows by score then depth (highest first), then
    row order, filtered, a text met again skipped, the first `top`."""
    st = d.boards.stats
    order = sorted(range(len(d.boards)), key=lambda i: (-st["score"][i], -st["depth"][i], i))
    names, texts = [], set()
    for i in order:
        if (min_depth is not None and st["depth"][i] < min_depth) or (
                min_score is not None and st["score"][i] < min_score):
            continue
        text = naive_text(inst, d.boards.cells[i].astype(np.int64))
        if text in texts:
            continue
        texts.add(text)
        names.append(f"{st['depth'][i]}_{hashlib.md5(text.encode()).hexdigest()}_"
                     f"s{st['seed'][i]}-r{st['restart'][i]}.txt")
    return names if top is None else names[:top]


@pytest.mark.parametrize("options", [{}, {"top": 3}, {"min_score": 9},
                                     {"min_depth": 34, "top": 4},
                                     {"min_depth": 36, "min_score": 8, "top": 2}])
def test_export_picks_the_best_boards(inst, dataset, tmp_path, options):
    d = read_boards_dataset(dataset, inst)
    want = naive_choice(inst, d, **options)
    got = write_saved_boards(inst, dataset, tmp_path, **options)
    assert [p.name for p in got] == want
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(want)
    assert [p.name for p in write_saved_boards(inst, d, tmp_path / "x", **options)] == want
    if not options:
        assert len(want) == 19  # 20 restarts' boards, one best board equal to its filled
        depths = sorted(int(re.sub(r"_.*", "", p.name)) for p in got)
        assert depths == [33] * 9 + [36] * 10


def test_bad_options_are_refused(inst, dataset, tmp_path):
    with pytest.raises(ValueError, match="top -1"):
        write_saved_boards(inst, dataset, tmp_path, top=-1)


def test_command_writes_what_the_library_writes_and_score_reads_it(inst, dataset, tmp_path):
    pieces = tmp_path / "sb.e2s"
    write_e2store(inst, pieces)
    args = ["save-boards", str(pieces), str(dataset), "-o", str(tmp_path / "cli"), "--top",
            "4", "--min-score", "8"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    lib = write_saved_boards(inst, dataset, tmp_path / "lib", top=4, min_score=8)
    assert r.output.split() == [str(tmp_path / "cli" / p.name) for p in lib]
    for p in lib:
        assert (tmp_path / "cli" / p.name).read_bytes() == p.read_bytes()
    best = lib[0]
    r = CliRunner().invoke(main, ["score", str(pieces), str(best), "--json"])
    assert r.exit_code == 0, r.output
    assert f'"score": {_score(inst, best)},' in r.output
    bad = tmp_path / "bad.txt"
    bad.write_text(_edit_cell(best.read_text(), 0, 0, "99/0"))
    r = CliRunner().invoke(main, ["score", str(pieces), str(bad)])
    assert r.exit_code == 2 and f"{bad}:" in r.output and "out of range" in r.output


def _score(inst, path) -> int:
    from e2store.boards import score

    return score(inst, read_saved_board(path, inst)).matched


def test_render_draws_a_saved_board(inst, dataset, tmp_path):
    from e2store.boards.sources import chosen_any_board

    p = write_saved_boards(inst, dataset, tmp_path, top=1)[0]
    cells, _, _ = chosen_any_board(inst, p)
    assert np.array_equal(cells, read_saved_board(p, inst))
