"""Piece-file readers and the canonical writer, against every public file in ../shared."""

from __future__ import annotations

import os

import numpy as np
import pytest

from e2store.errors import InstanceFormatError
from e2store.instance.e2sfile import format_e2store, read_e2store, write_e2store
from e2store.instance.formats import (
    DEFAULT_SIDES,
    detect_format,
    read_benchmark,
    read_brendan,
    read_brendan_solution,
    read_instance,
    read_jwortmann,
)
from e2store.instance.model import Instance
from e2store.instance.parsing import normalise_sides, source_info, with_solution

BENCH = range(4, 11)
BRENDAN = [3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16]


def kinds(pieces: np.ndarray) -> tuple[int, int, int]:
    """(corners, borders, interior) by counting grey sides; corners' greys must be adjacent."""
    c = b = i = 0
    for p in pieces.tolist():
        g = [k for k in range(4) if p[k] == 0]
        if len(g) == 2:
            assert (g[1] - g[0]) in (1, 3), p
            c += 1
        elif len(g) == 1:
            b += 1
        else:
            assert not g, p
            i += 1
    return c, b, i


def expected(w: int, h: int) -> tuple[int, int, int]:
    return 4, 2 * (w - 2) + 2 * (h - 2), (w - 2) * (h - 2)


def board_ok(pieces: np.ndarray, solution: np.ndarray) -> bool:
    """Independent checker: every piece once, grey exactly on the rim, all joins match."""
    h, w = solution.shape
    if sorted(v // 4 for v in solution.ravel().tolist()) != list(range(len(pieces))):
        return False
    shown = {}
    for y in range(h):
        for x in range(w):
            p, r = divmod(int(solution[y, x]), 4)
            shown[x, y] = [int(pieces[p][(s - r) % 4]) for s in range(4)]  # W N E S
    for (x, y), c in shown.items():
        for s, (dx, dy) in enumerate(((-1, 0), (0, -1), (1, 0), (0, 1))):
            nb = (x + dx, y + dy)
            if nb not in shown:
                if c[s] != 0:
                    return False
            elif c[s] == 0 or c[s] != shown[nb][(s + 2) % 4]:
                return False
    return True


# ----------------------------------------------------------------- every shared file reads


@pytest.mark.parametrize("n", BENCH)
def test_benchmark_files(shared_instances, n):
    path = shared_instances / "benchmark" / f"pieces_{n}x{n}.txt"
    assert detect_format(path) == "benchmark"
    inst = read_instance(path)
    assert (inst.width, inst.height, inst.n_pieces) == (n, n, n * n)
    assert kinds(inst.pieces) == expected(n, n)
    assert inst.name == f"pieces_{n}x{n}"
    info = source_info(inst)
    assert (info.format, info.sides) == ("benchmark", "WNES")
    assert info.piece_lines[0] == 5  # N, 3 header lines, then pieces


@pytest.mark.parametrize("n", BRENDAN)
def test_brendan_files(shared_instances, n):
    path = shared_instances / "brendan_set1" / f"pieces_{n:02d}x{n:02d}.txt"
    assert detect_format(path) == "brendan"
    inst = read_instance(path)
    assert (inst.width, inst.height) == (n, n)
    assert kinds(inst.pieces) == expected(n, n)
    info = source_info(inst)
    assert (info.format, info.sides, int(info.piece_lines[0])) == ("brendan", "NESW", 2)


@pytest.mark.parametrize(
    "name, size",
    [("clue1_jwortmann.txt", (6, 6)), ("clue2_jwortmann.txt", (12, 6)),
     ("clue3_jwortmann.txt", (6, 6)), ("clue4_jwortmann.txt", (12, 6)),
     ("e2pieces_jwortmann.txt", (16, 16)), ("e2_gallicchio.puz", (16, 16))],
)
def test_other_public_files(shared_instances, name, size):
    path = shared_instances / name
    fmt = "puz" if name.endswith(".puz") else "jwortmann"
    assert detect_format(path) == fmt
    inst = read_instance(path)
    assert (inst.width, inst.height) == size
    assert kinds(inst.pieces) == expected(*size)
    assert source_info(inst).sides == DEFAULT_SIDES[fmt]


def test_jwortmann_sides_are_bottom_left_top_right(shared_instances):
    # clue1 line 7 is `4 0 2 8`: bottom 4, left 0 (grey), top 2, right 8
    inst = read_instance(shared_instances / "clue1_jwortmann.txt")
    # W N E S, as the file names the colours (clue 1 has no colour 5: ranks differ)
    assert [inst.colour_id(c) for c in inst.pieces[6].tolist()] == [0, 2, 8, 4]
    assert source_info(inst).piece_lines[6] == 7


def test_puz_piece_lines_skip_comment_blank_and_header(shared_instances):
    inst = read_instance(shared_instances / "e2_gallicchio.puz")
    assert source_info(inst).piece_lines[:2].tolist() == [4, 5]
    assert inst.pieces[0].tolist() == [0, 1, 17, 0]  # `1 17 0 0` is up right down left


def test_explicit_size_overrides_derived(shared_instances):
    path = shared_instances / "clue2_jwortmann.txt"
    inst = read_instance(path, size=(6, 12))
    assert (inst.width, inst.height) == (6, 12)
    with pytest.raises(InstanceFormatError, match="72 pieces"):
        read_instance(path, size=(5, 5))
    with pytest.raises(InstanceFormatError) as e:  # a declared size must agree
        read_instance(shared_instances / "benchmark" / "pieces_4x4.txt", size=(5, 5))
    assert e.value.line == 1


def test_e2_jwortmann_equals_gallicchio_up_to_relabelling(shared_instances):
    a = read_instance(shared_instances / "e2pieces_jwortmann.txt").pieces.ravel().tolist()
    b = read_instance(shared_instances / "e2_gallicchio.puz").pieces.ravel().tolist()
    assert len(a) == len(b) == 1024
    forward: dict[int, int] = {}
    backward: dict[int, int] = {}
    for x, y in zip(a, b, strict=True):
        assert forward.setdefault(x, y) == y  # a function ...
        assert backward.setdefault(y, x) == x  # ... and injective
    assert forward[0] == 0
    assert {forward[c] for c in range(1, 6)} == {1, 5, 9, 13, 17}  # frame colours, README


@pytest.mark.parametrize("n", BENCH)
def test_benchmark_is_brendan_turned_a_quarter_anticlockwise(shared_instances, n):
    bpath = shared_instances / "benchmark" / f"pieces_{n}x{n}.txt"
    opath = shared_instances / "brendan_set1" / f"pieces_{n:02d}x{n:02d}.txt"
    # the README's claim 1: after the headers the piece lines are textually identical
    blines = [ln.split() for ln in bpath.read_text().splitlines()[4:] if ln.strip()]
    olines = [ln.split() for ln in opath.read_text().splitlines()[1:] if ln.strip()]
    assert blines == olines
    bench = read_benchmark(bpath).pieces  # read as W N E S
    owen = read_brendan(opath).pieces  # read as up right down left
    # claim 2: the benchmark piece is Owen's turned a quarter anticlockwise, i.e. turning it a
    # quarter clockwise (shows c[(s - 1) % 4] on side s) gives Owen's piece back
    assert np.array_equal(np.roll(bench, 1, axis=1), owen)
    assert np.array_equal(read_benchmark(bpath, sides="NESW").pieces, owen)


@pytest.mark.parametrize("n", BRENDAN)
def test_brendan_solutions_valid_read_as_nesw(shared_instances, n):
    d = shared_instances / "brendan_set1"
    inst = read_instance(d / f"pieces_{n:02d}x{n:02d}.txt")
    sol = read_brendan_solution(d / f"solutions_{n:02d}x{n:02d}.txt", n_pieces=inst.n_pieces)
    assert sol.shape == (n, n)
    assert board_ok(inst.pieces, sol)
    assert not board_ok(inst.pieces, (sol // 4) * 4 + (sol + 1) % 4)  # rotations matter


@pytest.mark.parametrize("n", BENCH)
def test_brendan_solutions_valid_for_benchmark_pieces(shared_instances, n):
    inst = read_instance(shared_instances / "benchmark" / f"pieces_{n}x{n}.txt")
    spath = shared_instances / "brendan_set1" / f"solutions_{n:02d}x{n:02d}.txt"
    # the README's mapping, applied by hand: x_P = x, y_P = N-1-y, r_P = (r + 1) mod 4
    rows = [list(map(int, ln.split())) for ln in spath.read_text().splitlines()[1:] if ln.strip()]
    manual = np.zeros((n, n), dtype=np.int64)
    for piece, (x, y, r) in enumerate(rows):
        manual[n - 1 - y, x] = piece * 4 + (r + 1) % 4
    assert board_ok(inst.pieces, manual)
    assert np.array_equal(read_brendan_solution(spath, sides="WNES"), manual)


def test_brendan_solution_rejects_mirroring_side_order(shared_instances):
    with pytest.raises(ValueError, match="mirror"):
        read_brendan_solution(shared_instances / "brendan_set1" / "solutions_04x04.txt",
                              sides="NWSE")


def test_detect_refuses_solution_and_readme(shared_instances):
    with pytest.raises(InstanceFormatError, match="solution file") as e:
        detect_format(shared_instances / "brendan_set1" / "solutions_04x04.txt")
    assert e.value.line == 2
    with pytest.raises(InstanceFormatError, match="unknown format") as e:
        read_instance(shared_instances / "README.md")
    assert e.value.line == 1


# ----------------------------------------------------------------- canonical format


def _tiny() -> Instance:
    pieces = [(0, 0, 1, 1), (1, 0, 0, 1), (0, 1, 1, 0), (1, 1, 0, 0)]
    return Instance("tiny", 2, 2, np.array(pieces), np.array([[0, 4], [8, 12]]), "hand made")


def test_tiny_example_of_the_docstring_is_valid_and_round_trips(tmp_path):
    inst = _tiny()
    assert board_ok(inst.pieces, inst.solution)
    path = tmp_path / "tiny.e2s"
    write_e2store(inst, path)
    text = path.read_text()
    assert text.startswith("e2store-instance 1\n")
    assert "sides: W N E S\n" in text and "pieces: 4\n" in text and "solution:\n" in text
    back = read_instance(path)
    assert source_info(back).format == "e2store"
    assert back.name == "tiny" and back.source == "hand made" and back.id == inst.id
    assert np.array_equal(back.pieces, inst.pieces)
    assert np.array_equal(back.solution, inst.solution)
    assert format_e2store(back) == text


@pytest.mark.parametrize("rel", ["benchmark/pieces_5x5.txt", "clue2_jwortmann.txt",
                                 "e2_gallicchio.puz"])
def test_round_trip_public_files(shared_instances, tmp_path, rel):
    inst = read_instance(shared_instances / rel)
    out = tmp_path / "x.e2s"
    write_e2store(inst, out)
    back = read_instance(out)
    assert (back.width, back.height, back.name, back.id) == (
        inst.width, inst.height, inst.name, inst.id)
    assert np.array_equal(back.pieces, inst.pieces)
    assert back.solution is None
    # magic, 2 comments, name, size, sides, source, pieces: then the first piece
    assert source_info(back).piece_lines[0] == 9


def test_round_trip_with_brendan_solution(shared_instances, tmp_path):
    d = shared_instances / "brendan_set1"
    inst = with_solution(read_instance(d / "pieces_06x06.txt"),
                         read_brendan_solution(d / "solutions_06x06.txt"))
    assert source_info(inst).format == "brendan"
    write_e2store(inst, tmp_path / "s.e2s")
    back = read_e2store(tmp_path / "s.e2s")
    assert np.array_equal(back.solution, inst.solution)
    assert board_ok(back.pieces, back.solution)


def test_e2store_reader_other_side_order_and_comments(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("e2store-instance 1\n# a comment\n\nsize: 2 2\nsides: N E S W\n"
                    "pieces: 4\n0 1 1 0\n  # inside\n0 0 1 1\n1 1 0 0\n1 0 0 1\n")
    inst = read_instance(path)
    assert inst.name == "t"
    assert inst.pieces.tolist() == _tiny().pieces.tolist()
    assert source_info(inst).piece_lines.tolist() == [7, 9, 10, 11]
    with pytest.raises(InstanceFormatError, match="side order") as e:
        read_instance(path, sides="WNES")
    assert e.value.line == 5
    nohead = tmp_path / "n.txt"  # without a `sides:` header an explicit order applies
    nohead.write_text(path.read_text().replace("sides: N E S W\n", ""))
    assert read_instance(nohead, sides="NESW").pieces.tolist() == _tiny().pieces.tolist()
    assert read_instance(nohead).pieces.tolist() != _tiny().pieces.tolist()


def test_write_is_atomic(tmp_path, monkeypatch):
    out = tmp_path / "keep.e2s"
    out.write_text("old\n")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_e2store(_tiny(), out)
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.e2s"]  # temp file removed
    monkeypatch.undo()
    write_e2store(_tiny(), out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.e2s"]
    assert read_e2store(out).name == "tiny"


# ----------------------------------------------------------------- errors and line numbers

BENCH_4 = "2\n3\n1\n1 1 1 1\n0 0 1 1\n1 0 0 1\n0 1 1 0\n1 1 0 0\n"


@pytest.mark.parametrize(
    "text, line, match",
    [
        (BENCH_4.replace("1 0 0 1", "1 0 0"), 6, "3 numbers"),
        (BENCH_4.replace("1 0 0 1", "1 0 0 1 5"), 6, "5 numbers"),
        (BENCH_4.replace("0 1 1 0", "0 1 x 0"), 7, "not an integer"),
        (BENCH_4.replace("0 1 1 0", "0 1 1.5 0"), 7, "not an integer"),
        (BENCH_4.replace("1 1 0 0", "1 1 0 -2"), 8, "negative colour"),
        (BENCH_4 + "0 0 1 1\n", 9, "extra line"),
        (BENCH_4.replace("1 1 0 0\n", ""), 1, "3 pieces"),
        (BENCH_4.replace("2\n", "two\n", 1), 1, "unknown format"),
        ("", 1, "empty file"),
        ("\n  \n", 1, "empty file"),
        ("hello world\n", 1, "unknown format"),
        ("2 2\n0 0 1 1\n1 0 0 1\n0 1 1 0\n", 1, "3 pieces"),  # brendan, one short
        ("2 2\n0 0 1 1\n1 0 0 1\n0 1 1 0\n1 1 0\n", 5, "3 numbers"),
        ("0 0 1 1\n1 0 0 1\n0 1 1 0\n1 1 0\n", 4, "3 numbers"),  # jwortmann
        ("0 0 1 1\n1 0 0 1\n0 1 1 0\n", 3, "cannot derive"),
        ("c comment\n\n2 2\n0 0 1 1\n1 0 0 1\n0 1 1 0\n1 1 0 99999\n", 7, "too large"),
        ("2 2\n0 0 1 1\n1 0 0 1\n0 1 1 0\n1 1 0 " + "9" * 5000 + "\n", 5,
         r"number too large: 999999999999\.\.\. \(5000 digits\)"),
        ("2 2\n0 0 1 1\n1 0 0 1\n0 1 1 0\n1 1 0 " + "x" * 5000 + "\n", 5,
         r"not an integer: 'x{20}\.\.\.\(5000 characters\)'"),
    ],
)
def test_format_errors_give_line_numbers(tmp_path, text, line, match):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(InstanceFormatError, match=match) as e:
        read_instance(path)
    assert e.value.line == line
    assert e.value.path == str(path)
    assert str(e.value).startswith(f"{path}:{line}: ")


E2S = ("e2store-instance 1\nname: t\nsize: 2 2\npieces: 4\n"
       "0 0 1 1\n1 0 0 1\n0 1 1 0\n1 1 0 0\nsolution:\n0 4\n8 12\n")


@pytest.mark.parametrize(
    "text, line, match",
    [
        (E2S.replace("instance 1", "instance 2"), 1, "newer"),
        (E2S.replace("instance 1", "instance one"), 1, "version"),
        ("# first\n" + E2S, 2, "not an e2store instance"),
        (E2S.replace("name: t", "colour: t"), 2, "unknown header key"),
        (E2S.replace("name: t", "size: 2 2"), 3, "repeated"),
        (E2S.replace("pieces: 4", "pieces: 5"), 4, "pieces: 5"),
        (E2S.replace("size: 2 2", "size: 2"), 3, "1 numbers"),
        (E2S.replace("1 0 0 1", "1 0 0 1 1"), 6, "5 numbers"),
        (E2S.replace("solution:", "extra"), 9, "extra line"),
        (E2S.replace("8 12", "8 99"), 11, "out of range"),
        (E2S.replace("8 12", "8"), 11, "1 numbers"),
        (E2S + "0 4\n", 12, "extra line"),
        (E2S[: E2S.index("1 1 0 0")], 4, "ends after 3"),
        (E2S.replace("size: 2 2\n", "size: 2 2\nsides: WNEX\n"), 4, "side order"),
        # a form feed, vertical tab, NEL or U+2028 inside a line does not start a new one
        (E2S.replace("1 0 0 1", "1 0\f0 1").replace("8 12", "8 99"), 11, "out of range"),
        (E2S.replace("0 1 1 0", "0 1\v1\x850").replace("8 12", "8 99"), 11, "out of range"),
        (E2S.replace("name: t", "name: t\u2028u").replace("8 12", "8 99"), 11, "out of range"),
        (E2S.replace("\n", "\r\n").replace("8 12", "8 99"), 11, "out of range"),
    ],
)
def test_e2store_errors(tmp_path, text, line, match):
    path = tmp_path / "bad.e2s"
    path.write_text(text)
    with pytest.raises(InstanceFormatError, match=match) as e:
        read_e2store(path)
    assert e.value.line == line


def test_format_override_and_bad_sides(shared_instances):
    with pytest.raises(InstanceFormatError, match="2 numbers on the size line"):  # `W H` read as N
        read_instance(shared_instances / "brendan_set1" / "pieces_04x04.txt", format="benchmark")
    assert normalise_sides("w n e s") == "WNES" and normalise_sides("S,W,N,E") == "SWNE"
    for bad in ("WNE", "WNEE", "WNESW", "ABCD"):
        with pytest.raises(ValueError):
            normalise_sides(bad)
    with pytest.raises(ValueError):
        read_instance(shared_instances / "clue1_jwortmann.txt", format="nope")


def test_jwortmann_reader_size_derivation(tmp_path):
    # 6 pieces (not a square) with 2 border pieces: W + H = 2/2 + 4, W * H = 6 -> 3 x 2
    path = tmp_path / "r.txt"
    rows = ["0 0 1 1", "1 0 0 1", "0 1 1 0", "1 1 0 0", "1 0 1 2", "1 2 1 0"]
    path.write_text("\n".join(rows) + "\n")
    inst = read_jwortmann(path, sides="WNES")
    assert (inst.width, inst.height) == (3, 2)
    assert kinds(inst.pieces) == expected(3, 2)
    square = tmp_path / "s.txt"  # 4 corners only: a square count gives 2 x 2
    square.write_text("\n".join(rows[:4]) + "\n")
    assert (read_jwortmann(square).width, read_jwortmann(square).height) == (2, 2)


def test_names_are_safe_to_print(tmp_path):
    """Terminal escape sequences and other control characters in `name:` never reach
    output: they become spaces."""
    path = tmp_path / "esc.e2s"
    path.write_text(E2S.replace("name: t", "name: t\x1b[2J\x1b]0;pwned\x07x"))
    inst = read_e2store(path)
    assert inst.name == "t [2J ]0;pwned x"
    assert not any(ord(c) < 32 or 127 <= ord(c) < 160 for c in inst.name)


def test_devices_and_oversized_files_are_refused_pipes_read(tmp_path, monkeypatch):
    """/dev/zero would never end: refused at once; a file over the size limit too; a FIFO
    (what process substitution gives) is read like a file."""
    import threading

    import e2store.instance.parsing as parsing

    if os.path.exists("/dev/zero"):
        with pytest.raises(InstanceFormatError, match="a device or socket, not a file"):
            read_instance("/dev/zero")
    path = tmp_path / "p.txt"
    path.write_text(BENCH_4)
    monkeypatch.setattr(parsing, "MAX_INSTANCE_BYTES", len(BENCH_4) - 1)
    with pytest.raises(InstanceFormatError, match="too large for a piece file"):
        read_instance(path)
    monkeypatch.setattr(parsing, "MAX_INSTANCE_BYTES", len(BENCH_4))
    want = read_instance(path)
    if not hasattr(os, "mkfifo"):
        return
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(BENCH_4))
    writer.start()
    got = read_instance(fifo, format="benchmark")
    writer.join()
    assert got.pieces.tolist() == want.pieces.tolist()


def test_jwortmann_missing_line_is_not_read_as_another_board(tmp_path):
    """A 6x6 file with one interior line missing has the counts of a 7x5 board: refused
    (colours that cannot pair up), unless the size is given."""
    from e2store.errors import InstanceFormatError
    from e2store.instance.generate import generate_instance

    inst = generate_instance(6, 6, 3, 4, seed=2)
    swne = inst.pieces[:, [3, 0, 1, 2]]  # bottom left top right
    interior = next(i for i, q in enumerate(inst.pieces)
                    if (q != 0).all() and len(set(q.tolist())) == 4)
    full = "\n".join(" ".join(map(str, q)) for q in swne.tolist()) + "\n"
    short = "\n".join(" ".join(map(str, q)) for i, q in enumerate(swne.tolist())
                      if i != interior) + "\n"
    (tmp_path / "full.txt").write_text(full)
    (tmp_path / "short.txt").write_text(short)
    got = read_jwortmann(tmp_path / "full.txt")
    assert (got.width, got.height) == (6, 6)
    with pytest.raises(InstanceFormatError, match=r"short.txt:35: 35 pieces fit a 7x5 board "
                       r"by count, but colour \d+ appears an odd number of times"):
        read_jwortmann(tmp_path / "short.txt")
    got = read_jwortmann(tmp_path / "short.txt", size=(7, 5))
    assert (got.width, got.height) == (7, 5)
