"""Instance statistics: benchmark 4x4 by hand, the README's figures for the public sets."""

from __future__ import annotations

import itertools
import json

import pytest

from e2store.instance.formats import read_instance
from e2store.instance.stats import format_stats, instance_stats, stats_json


def test_benchmark_4x4_by_hand(shared_instances):
    """pieces_4x4.txt: corners (0,0,1,1) (0,0,1,2) (0,0,2,1) (0,0,2,2); borders, grey on W,
    (0,1,3,1) (0,1,3,2) (0,1,4,1) (0,1,5,2) (0,2,4,1) (0,2,4,2) (0,2,5,1) (0,2,5,2);
    interior (3,3,5,5) (3,4,3,5) (3,4,4,4) (3,5,5,4)."""
    inst = read_instance(shared_instances / "benchmark" / "pieces_4x4.txt")
    st = instance_stats(inst)
    assert (st["width"], st["height"], st["pieces"]) == (4, 4, 16)
    assert (st["corners"], st["borders"], st["interior"]) == (4, 8, 4)
    assert st["colours"] == 5
    # borders have grey on W: N and S touch the grey side (frame joins), E faces the centre
    assert st["colour_sets"] == {"corner": [1, 2], "border": [1, 2],
                                 "border_to_centre": [3, 4, 5], "centre": [3, 4, 5]}
    assert (st["corner_colours"], st["border_colours"],
            st["border_to_centre_colours"], st["centre_colours"]) == (2, 2, 3, 3)
    assert st["self_similar"] == 0 and st["self_similar_pieces"] == []
    assert st["similar_groups"] == 0 and st["duplicates"] == 0
    assert st["inner_edges"] == 3 * 4 + 4 * 3 == 24
    assert st["frame_joins"] == 12
    # pieces showing each colour: 1 -> 3 corners + 6 borders = 9; 2 -> 3 + 6 = 9;
    # 3 -> 2 borders + 4 interior = 6; 4 -> 3 + 3 = 6; 5 -> 3 + 3 = 6
    assert st["link_pairs_by_colour"] == {1: 36, 2: 36, 3: 15, 4: 15, 5: 15}
    # inclusion-exclusion over shared colour sets: 117 - 29 (pairs sharing two given
    # colours: {1,2} 15, {1,3} {1,4} {1,5} {2,4} 1 each, {2,5} 3, {3,4} 3, {3,5} 3, {4,5} 1)
    # + 2 (three colours: {1,2,5} 1, {3,4,5} 1) = 90
    assert st["links"] == 90
    sets = [set(p) - {0} for p in inst.pieces.tolist()]
    assert sum(bool(a & b) for a, b in itertools.combinations(sets, 2)) == 90


@pytest.mark.parametrize(
    "name, frame, inner, sym, dups",
    [("clue1_jwortmann.txt", 4, 3, 2, 8), ("clue2_jwortmann.txt", 4, 4, 3, 26),
     ("clue3_jwortmann.txt", 5, 4, 2, 7), ("clue4_jwortmann.txt", 5, 4, 3, 21),
     ("e2pieces_jwortmann.txt", 5, 17, 0, 0), ("e2_gallicchio.puz", 5, 17, 0, 0)],
)
def test_readme_figures(shared_instances, name, frame, inner, sym, dups):
    st = instance_stats(read_instance(shared_instances / name))
    assert st["border_colours"] == frame and st["centre_colours"] == inner
    assert st["colours"] == frame + inner
    assert st["self_similar"] == sym and st["duplicates"] == dups
    assert sum(st["similar_group_sizes"]) - st["similar_groups"] == dups


def test_clue1_groups_and_rectangular_edges(shared_instances):
    st = instance_stats(read_instance(shared_instances / "clue1_jwortmann.txt"))
    assert sorted(st["similar_group_sizes"], reverse=True) == [3, 2, 2, 2, 2, 2, 2]
    # classes: by hand from the file, pieces alike up to rotation grouped
    assert st["classes"] == 36 - 8
    assert st["classes_by_multiplicity"] == {"1": 21, "2": 6, "3": 1}
    assert st["half_turn_pieces"] == st["self_similar_pieces"] == [1, 18]
    assert st["quarter_turn_pieces"] == []
    assert "28 (pieces alike up to rotation): 21 of 1 piece, 6 of 2 pieces, 1 of 3 pieces" in (
        format_stats(st))
    st2 = instance_stats(read_instance(shared_instances / "clue2_jwortmann.txt"))
    assert (st2["width"], st2["height"]) == (12, 6)
    assert st2["inner_edges"] == 11 * 6 + 12 * 5
    assert (st2["corners"], st2["borders"], st2["interior"]) == (4, 28, 40)


def test_json_and_text(shared_instances):
    st = instance_stats(read_instance(shared_instances / "benchmark" / "pieces_5x5.txt"))
    back = json.loads(stats_json(st))
    assert back["links"] == st["links"] and back["colour_sets"] == st["colour_sets"]
    text = format_stats(st)
    assert "5x5, 25 pieces: 4 corners, 12 borders, 9 interior" in text
    assert f"links         {st['links']}" in text
