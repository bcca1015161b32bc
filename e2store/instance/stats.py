"""Instance statistics (docs/design.md section 7), as a JSON-ready dict and as text for humans.

Definitions (colour 0, grey, is never counted as a colour):

* corner / border / interior: pieces with 2 adjacent / 1 / 0 grey sides.
* colours: distinct non-grey colours on any piece.
* corner colours: colours on the non-grey sides of corner pieces.
* border colours: colours on frame-to-frame joins, i.e. on the sides of corner and border
  pieces that are adjacent (a quarter turn away) to a grey side.
* border-to-centre colours: colours on the side of border pieces opposite their grey side.
* centre colours: colours on interior pieces.
* self-similar pieces: equal to themselves turned by a non-trivial rotation; of them the
  quarter-turn ones (all four sides alike) and the half-turn ones (only a half turn).
* classes: sets of pieces identical up to rotation (singletons included), counted per
  multiplicity (`e2store.instance.classes`: what `solve --distinct` merges).
* similar groups: groups (size >= 2) of pieces identical up to rotation; `duplicates` is
  the number of pieces beyond the first of each group (sum of size - 1).
* inner_edges: joins between two board cells, (W-1)*H + W*(H-1); `frame_joins` are the
  2(W-1) + 2(H-1) of them along the rim (both cells on the frame, the join perpendicular
  to the rim).
* links: unordered pairs {p, q} of distinct pieces that share at least one non-grey
  colour (on any sides), i.e. pairs that could touch somewhere, ignoring cell kinds.
  `link_pairs_by_colour[c]` = C(k_c, 2), k_c = number of pieces showing colour c; a pair
  sharing two colours counts once in `links` and once per colour there.
"""

from __future__ import annotations

import json

import numpy as np

from e2store.instance.classes import class_summary
from e2store.instance.model import GREY, Instance
from e2store.instance.validate import piece_kinds, self_similar, similar_groups


def _colours(values: np.ndarray) -> list[int]:
    v = np.asarray(values).ravel()
    return [int(c) for c in np.unique(v[v != GREY])]


def instance_stats(inst: Instance) -> dict:
    """Statistics of `inst` (module docstring for the exact definitions); JSON-serialisable."""
    p = inst.pieces
    w, h = inst.width, inst.height
    kinds = piece_kinds(p)
    grey = p == GREY
    frame = kinds == "corner"
    border = kinds == "border"
    interior = kinds == "interior"

    next_to_grey = ~grey & (np.roll(grey, 1, axis=1) | np.roll(grey, -1, axis=1))
    frame_rows = frame | border
    border_sides = p[frame_rows][next_to_grey[frame_rows]]
    opposite_grey = ~grey & np.roll(grey, 2, axis=1)
    to_centre = p[border][opposite_grey[border]]

    colour_sets = {  # as the file names them (the pieces hold ranks)
        name: [inst.colour_id(c) for c in _colours(values)]
        for name, values in (("corner", p[frame]), ("border", border_sides),
                             ("border_to_centre", to_centre), ("centre", p[interior]))
    }
    all_colours = _colours(p)
    groups = similar_groups(p)
    sym = self_similar(p)
    classes = class_summary(p)

    # links: piece x colour incidence, then co-occurrence counts between pieces
    index = {c: i for i, c in enumerate(all_colours)}
    m = np.zeros((inst.n_pieces, len(all_colours)), dtype=np.float32)
    for i, row in enumerate(p):
        for c in row:
            if c != GREY:
                m[i, index[int(c)]] = 1.0
    shared = m @ m.T
    links = int((np.triu(shared, k=1) > 0).sum())
    k_c = m.sum(axis=0).astype(np.int64)
    by_colour = {inst.colour_id(c): int(k * (k - 1) // 2)
                 for c, k in zip(all_colours, k_c, strict=True)}

    return {
        "name": inst.name,
        "id": inst.id,
        "width": w,
        "height": h,
        "pieces": inst.n_pieces,
        "corners": int(frame.sum()),
        "borders": int(border.sum()),
        "interior": int(interior.sum()),
        "colours": len(all_colours),
        "corner_colours": len(colour_sets["corner"]),
        "border_colours": len(colour_sets["border"]),
        "border_to_centre_colours": len(colour_sets["border_to_centre"]),
        "centre_colours": len(colour_sets["centre"]),
        "colour_sets": colour_sets,
        "self_similar": len(sym),
        "self_similar_pieces": sym,
        "half_turn_pieces": classes["half_turn_pieces"],
        "quarter_turn_pieces": classes["quarter_turn_pieces"],
        "classes": classes["classes"],
        "classes_by_multiplicity": {str(m): k for m, k in
                                    classes["classes_by_multiplicity"].items()},
        "similar_groups": len(groups),
        "similar_group_sizes": [len(g) for g in groups],
        "duplicates": sum(len(g) - 1 for g in groups),
        "similar_group_list": groups,
        "inner_edges": (w - 1) * h + w * (h - 1),
        "frame_joins": 2 * (w - 1) + 2 * (h - 1),
        "links": links,
        "link_pairs_by_colour": by_colour,
    }


def format_stats(stats: dict) -> str:
    """A short human-readable report of `instance_stats` output."""
    s = stats
    cs = s["colour_sets"]

    def lst(v: list[int]) -> str:
        return " ".join(map(str, v)) if v else "-"

    lines = [
        f"instance      {s['name']} ({s['id']})",
        f"size          {s['width']}x{s['height']}, {s['pieces']} pieces: {s['corners']} corners,"
        f" {s['borders']} borders, {s['interior']} interior",
        f"colours       {s['colours']} (grey not counted)",
        f"  corner            {s['corner_colours']:4d}: {lst(cs['corner'])}",
        f"  border            {s['border_colours']:4d}: {lst(cs['border'])}",
        f"  border-to-centre  {s['border_to_centre_colours']:4d}: {lst(cs['border_to_centre'])}",
        f"  centre            {s['centre_colours']:4d}: {lst(cs['centre'])}",
        f"self-similar  {s['self_similar']} pieces: {lst(s['self_similar_pieces'])}"
        f" (half turn: {lst(s['half_turn_pieces'])}; quarter turn: "
        f"{lst(s['quarter_turn_pieces'])})",
        f"classes       {s['classes']} (pieces alike up to rotation): "
        + ", ".join(f"{k} of {m} piece{'s' if m != '1' else ''}"
                    for m, k in s["classes_by_multiplicity"].items()),
        f"similar       {s['similar_groups']} groups, {s['duplicates']} duplicates"
        + (": " + "; ".join(",".join(map(str, g)) for g in s["similar_group_list"])
           if s["similar_group_list"] else ""),
        f"inner edges   {s['inner_edges']} ({s['frame_joins']} along the frame)",
        f"links         {s['links']} piece pairs sharing a colour",
    ]
    return "\n".join(lines)


def stats_json(stats: dict) -> str:
    """`instance_stats` output as indented JSON."""
    return json.dumps(stats, indent=2)
