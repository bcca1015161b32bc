"""Instance checks: errors, unsolvability warnings, and legal duplicates reported as info."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from e2store.errors import InstanceError
from e2store.instance.formats import read_instance
from e2store.instance.generate import generate_instance
from e2store.instance.model import Instance
from e2store.instance.validate import check_instance, frame_balance, validate_or_raise

PUBLIC = [
    *(f"benchmark/pieces_{n}x{n}.txt" for n in range(4, 11)),
    *(f"brendan_set1/pieces_{n:02d}x{n:02d}.txt" for n in (3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16)),
    *(f"clue{k}_jwortmann.txt" for k in (1, 2, 3, 4)),
    "e2pieces_jwortmann.txt",
    "e2_gallicchio.puz",
]


def levels(findings, level):
    return [f for f in findings if f.level == level]


def bench4(shared) -> Instance:
    return read_instance(shared / "benchmark" / "pieces_4x4.txt")


def with_pieces(inst: Instance, pieces) -> Instance:
    return Instance(inst.name, inst.width, inst.height, np.asarray(pieces))


@pytest.mark.parametrize("rel", PUBLIC)
def test_public_files_have_no_errors_or_warnings(shared_instances, rel):
    found = check_instance(read_instance(shared_instances / rel))
    assert not levels(found, "error") and not levels(found, "warning")


@pytest.mark.parametrize(
    "k, dups, groups, sym",
    [(1, 8, [3, 2, 2, 2, 2, 2, 2], 2), (2, 26, None, 3), (3, 7, None, 2), (4, 21, None, 3)],
)
def test_clue_duplicates_reported_as_info(shared_instances, k, dups, groups, sym):
    """The README's figures: identical pieces are legal, listed, never rejected."""
    inst = read_instance(shared_instances / f"clue{k}_jwortmann.txt")
    found = validate_or_raise(inst)  # no exception
    info = levels(found, "info")
    group_ids = [list(map(int, f.message.split(": ")[1].split(", ")))
                 for f in info if "identical pieces" in f.message]
    assert sum(len(g) - 1 for g in group_ids) == dups
    if groups is not None:
        assert sorted((len(g) for g in group_ids), reverse=True) == groups
    for g in group_ids:  # really identical up to rotation
        first = inst.pieces[g[0]].tolist()
        rots = [first[r:] + first[:r] for r in range(4)]
        assert all(inst.pieces[i].tolist() in rots for i in g)
    assert len([f for f in info if "identical to itself" in f.message]) == sym
    assert all(f.line == f.piece + 1 for f in info)  # jwortmann: line k = piece k - 1


def test_wrong_kind_counts_are_errors(shared_instances):
    inst = bench4(shared_instances)
    p = inst.pieces.copy()
    p[5] = [0, 0, 3, 1]  # a border becomes a corner: 5 corners, 7 borders
    found = levels(check_instance(with_pieces(inst, p)), "error")
    msgs = " | ".join(f.message for f in found)
    assert "5 corner pieces" in msgs and "7 border pieces" in msgs
    corner_err = next(f for f in found if "corner" in f.message)
    assert corner_err.piece == 5  # the 5th corner (0-based id 5) is one too many


@pytest.mark.parametrize("bad, what", [([0, 1, 0, 2], "opposite"), ([0, 0, 0, 1], "3 grey"),
                                       ([0, 0, 0, 0], "4 grey")])
def test_bad_grey_pieces_are_errors_with_file_line(shared_instances, tmp_path, bad, what):
    src = (shared_instances / "benchmark" / "pieces_4x4.txt").read_text().splitlines()
    src[10] = " ".join(map(str, bad))  # line 11 = piece 6
    path = tmp_path / "p.txt"
    path.write_text("\n".join(src) + "\n")
    inst = read_instance(path)
    err = levels(check_instance(inst), "error")[0]
    assert what in err.message and (err.piece, err.line) == (6, 11)
    with pytest.raises(InstanceError, match=rf"^{re.escape(str(path))}:11: piece 6 .*{what}") as e:
        validate_or_raise(inst)
    assert "more error" in str(e.value)  # the border count is wrong too


def test_board_too_small_and_count_mismatch():
    one = Instance("x", 1, 2, np.array([[0, 0, 0, 1], [0, 1, 0, 0]]))
    assert any("too small" in f.message for f in levels(check_instance(one), "error"))
    short = Instance("x", 2, 2, np.array([[0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 1, 0]]))
    errs = levels(check_instance(short), "error")
    assert any("3 pieces for a 2x2 board" in f.message for f in errs)
    with pytest.raises(InstanceError, match="^instance 'x': 3 pieces"):
        validate_or_raise(short)


def test_odd_colour_count_is_a_warning(shared_instances):
    inst = bench4(shared_instances)
    p = inst.pieces.copy()
    p[12] = [3, 3, 5, 4]  # interior (3, 3, 5, 5) -> one 5 fewer, one 4 more
    found = check_instance(with_pieces(inst, p))
    assert not levels(found, "error")
    warns = [f.message for f in levels(found, "warning")]
    assert len(warns) == 2 and all("odd number" in w for w in warns)
    validate_or_raise(with_pieces(inst, p))  # warnings do not raise


def test_unbalanced_frame_is_a_warning(shared_instances):
    inst = bench4(shared_instances)
    p = inst.pieces.copy()
    assert p[5].tolist() == [0, 1, 3, 2]
    p[5] = [0, 2, 3, 1]  # same colours, but 1 and 2 swap between clockwise/anticlockwise of grey
    found = check_instance(with_pieces(inst, p))
    warns = [f.message for f in levels(found, "warning")]
    assert len(warns) == 2 and all("unbalanced" in w for w in warns)
    assert frame_balance(p)[1] == (5, 7) and frame_balance(inst.pieces)[1] == (6, 6)


def test_frame_colour_used_inside_is_not_a_warning():
    inst = generate_instance(5, 5, 2, 3, seed=4)
    p = inst.pieces.copy()
    p[p == 3] = 1  # inner colour 3 merged into frame colour 1: still solved by the solution
    merged = Instance("m", 5, 5, p, inst.solution)
    found = check_instance(merged)
    assert not levels(found, "error") and not levels(found, "warning")


def test_wrong_solution_is_an_error():
    inst = generate_instance(4, 4, 2, 3, seed=0)
    sol = inst.solution.copy()
    sol[1, 1], sol[1, 2] = sol[1, 2], sol[1, 1]
    bad = Instance("s", 4, 4, inst.pieces, sol)
    errs = levels(check_instance(bad), "error")
    assert len(errs) == 1 and "solution" in errs[0].message
    sol2 = inst.solution.copy()
    sol2[0, 0] = sol2[0, 1]
    assert "exactly once" in levels(check_instance(Instance("s", 4, 4, inst.pieces, sol2)),
                                    "error")[0].message


def e2s_text(inst: Instance, colour_of) -> str:
    """`inst` as an e2store instance file, each colour c written as `colour_of(c)`."""
    lines = ["e2store-instance 1", f"name: {inst.name}", f"size: {inst.width} {inst.height}",
             f"pieces: {inst.n_pieces}"]
    lines += [" ".join(str(colour_of(int(c))) for c in row) for row in inst.pieces]
    return "\n".join(lines) + "\n"


def test_colour_ids_are_ranked_on_load(tmp_path):
    """A file may name its colours with any ids up to 32767: they are ranked on load (grey
    stays 0, order kept), so colour-indexed tables stay small, the instance is the same as
    with dense ids, and messages still name the file's ids."""
    from click.testing import CliRunner

    from e2store.cli import main

    dense = generate_instance(3, 3, 2, 3, seed=5)
    big = {0: 0, **{c: 32767 - 9 * (dense.n_colours - c) for c in range(1, dense.n_colours)}}
    (tmp_path / "dense.e2s").write_text(e2s_text(dense, int))
    (tmp_path / "sparse.e2s").write_text(e2s_text(dense, big.__getitem__))
    got = read_instance(tmp_path / "sparse.e2s")
    assert np.array_equal(got.pieces, dense.pieces) and got.n_colours == dense.n_colours
    assert got.colour_ids == tuple(big[c] for c in range(dense.n_colours))
    assert got.id.split("-")[-1] == read_instance(tmp_path / "dense.e2s").content_hash
    assert read_instance(tmp_path / "dense.e2s").colour_ids == ()
    # written back with the file's ids, read back to the same instance
    from e2store.instance.e2sfile import write_e2store

    write_e2store(got, tmp_path / "again.e2s")
    again = read_instance(tmp_path / "again.e2s")
    assert again.colour_ids == got.colour_ids and again.id == got.id
    outs = [CliRunner().invoke(main, ["count", str(tmp_path / f), "--hamming", "1", "--at",
                                      "all", "--json"]) for f in ("dense.e2s", "sparse.e2s")]
    assert outs[0].exit_code == outs[1].exit_code == 0, outs[1].output
    assert [json.loads(x)["corolles"] for x in outs[0].stdout.splitlines()] == \
        [json.loads(x)["corolles"] for x in outs[1].stdout.splitlines()]
    # an odd colour is named by its id in the file
    odd = dense.pieces.copy()
    odd[4, 0] = 1 if odd[4, 0] != 1 else 2
    bad = Instance("odd", 3, 3, np.where(odd > 0, 30000 + odd, 0))
    msgs = [f.message for f in check_instance(bad) if "appears on" in f.message]
    assert msgs and all(re.search(r"colour 300\d\d appears", m) for m in msgs), msgs
