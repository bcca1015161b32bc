"""The instance generator: deterministic, solved, Eternity II colour rules, distinct pieces."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from e2store.instance.generate import GenerationWarning, generate_instance
from e2store.instance.stats import instance_stats
from e2store.instance.validate import check_instance


def shown_board(inst) -> dict[tuple[int, int], list[int]]:
    """(x, y) -> colours shown on W N E S, computed from the solution independently."""
    out = {}
    for y in range(inst.height):
        for x in range(inst.width):
            p, r = divmod(int(inst.solution[y, x]), 4)
            out[x, y] = [int(inst.pieces[p][(s - r) % 4]) for s in range(4)]
    return out


def check_solved(inst, k: int, lo: int) -> set[int]:
    """Each piece once, grey exactly outside, joins match; rim joins 1..k, others k+1..k+lo."""
    w, h = inst.width, inst.height
    assert sorted((inst.solution.ravel() // 4).tolist()) == list(range(w * h))
    cells = shown_board(inst)
    used = set()
    for (x, y), c in cells.items():
        for s, (dx, dy) in enumerate(((-1, 0), (0, -1), (1, 0), (0, 1))):
            nb = (x + dx, y + dy)
            if nb not in cells:
                assert c[s] == 0
                continue
            assert c[s] == cells[nb][(s + 2) % 4] != 0
            along_rim = (dy == 0 and y in (0, h - 1)) or (dx == 0 and x in (0, w - 1))
            if along_rim:
                assert 1 <= c[s] <= k
            else:
                assert k < c[s] <= k + lo
            used.add(c[s])
    return used


@pytest.mark.parametrize("w, h, k, lo", [(7, 7, 3, 5), (12, 6, 4, 4), (6, 12, 4, 4),
                                         (4, 4, 2, 3), (2, 2, 1, 0), (3, 2, 2, 2), (2, 5, 3, 2)])
def test_solution_valid_and_colour_rules(w, h, k, lo):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GenerationWarning)
        inst = generate_instance(w, h, k, lo, seed=11)
    assert (inst.width, inst.height, inst.n_pieces) == (w, h, w * h)
    used = check_solved(inst, k, lo)
    assert used == set(range(1, k + lo + 1)) or w * h < 8  # every colour used when room
    found = check_instance(inst)
    assert not [f for f in found if f.level in ("error", "warning")]


def test_deterministic_for_a_seed():
    a = generate_instance(12, 6, 4, 4, seed=5, name="a")
    b = generate_instance(12, 6, 4, 4, seed=5, name="a")
    c = generate_instance(12, 6, 4, 4, seed=6, name="a")
    assert np.array_equal(a.pieces, b.pieces) and np.array_equal(a.solution, b.solution)
    assert a.id == b.id != c.id
    assert not np.array_equal(a.pieces, c.pieces)
    assert a.source == ("generate_instance(width=12, height=6, frame_colours=4, "
                        "inner_colours=4, seed=5)")


def test_pieces_shuffled_and_rotated():
    inst = generate_instance(8, 8, 4, 6, seed=2)
    flat = inst.solution.ravel()
    assert not np.array_equal(flat // 4, np.arange(64))  # not in board order
    assert len(set((flat % 4).tolist())) == 4  # all rotations occur
    corner_r = {int(inst.solution[y, x] % 4) for x, y in ((0, 0), (7, 0), (0, 7), (7, 7))}
    assert len(corner_r) >= 2  # corners too are stored in random rotations


@pytest.mark.parametrize("w, h, k, lo", [(7, 7, 3, 5), (12, 6, 4, 4), (16, 16, 5, 17)])
def test_no_duplicates_when_colours_allow(w, h, k, lo):
    with warnings.catch_warnings():
        warnings.simplefilter("error", GenerationWarning)
        st = instance_stats(generate_instance(w, h, k, lo, seed=0))
    assert st["duplicates"] == 0 and st["self_similar"] == 0
    assert (st["border_colours"], st["centre_colours"]) == (k, lo)


def test_reports_duplicates_when_colours_do_not_allow():
    with pytest.warns(GenerationWarning, match=r"(\d+) pieces remain"):
        inst = generate_instance(5, 5, 1, 1, seed=0)
    assert instance_stats(inst)["duplicates"] > 0
    check_solved(inst, 1, 1)


@pytest.mark.parametrize(
    "args, match",
    [((1, 5, 2, 2, 0), "too small"), ((5, 1, 2, 2, 0), "too small"),
     ((4, 4, 0, 2, 0), "frame_colours"), ((3, 3, 2, 0, 0), "inner_colours must be >= 1"),
     ((4, 4, 2, -1, 0), "negative"), ((4, 4, 2, 2, -3), "seed"),
     ((4.0, 4, 2, 2, 0), "integer")],
)
def test_impossible_parameters(args, match):
    with pytest.raises(ValueError, match=match):
        generate_instance(*args)
