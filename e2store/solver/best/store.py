"""What the corolle store tells the best-score search (`e2store best --store`): how well
each piece tiles, from the hamming-1 corolles of the store, in place of what the field
sets by hand.

Verhaard's eii valued pieces by how many ways they fill small blocks and kept the good
ones for the end; Blackwood picked three colours by hand to use up early.  Here both come
from one table: the number of hamming-1 corolles (a piece and its four neighbours) with
each piece at the centre, at the canonical cell of the zone of its kind that covers most
cells (the generic inner cell, border cell, corner; of two alike, the higher zone id).
The store's cartesian form holds it per centre placement (`corolles` of each stem); on
Eternity II it is built in about a second: `tileability` builds it when the store lacks
it.

* `piece_order`: per piece, a rank bucket (0 = the quarter of its kind with the fewest
  corolles) the candidate lists try first, the tie-break random within a bucket: bad
  pieces spent early, good ones kept for the end;
* `quota_from_store`: the colours whose pieces tile worst (the lowest mean log-count over
  the sides showing them), in place of Blackwood's 13, 16, 10.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from e2store.instance.model import GREY, Instance

BUCKETS = 4


def tileability(store: str | Path, instance: Instance) -> np.ndarray:
    """Per piece, the hamming-1 corolles with it at the centre (all rotations), at the
    generic cell of its kind (module docstring); the store's cartesian hamming-1
    partitions are enumerated first when missing."""
    from e2store.query import connect
    from e2store.store.build import enumerate_store

    root = Path(store)
    try:
        with connect(root) as st:
            have = st.get_partition(instance.id, 1, 0, 0, "cartesian") is not None
    except OSError:  # no store yet
        have = False
    if not have:
        enumerate_store(root, instance, 1, None, forms=("cartesian",))
    with connect(root) as st:
        zones = st.sql("SELECT zone, cells FROM zone_stats WHERE instance = ? AND hamming = 1",
                       [instance.id]).to_pydict()
        rows = st.sql("SELECT zone, s0 // 4 AS piece, sum(corolles)::BIGINT AS n FROM stems "
                      "WHERE instance = ? AND hamming = 1 AND rotation = 0 GROUP BY ALL",
                      [instance.id]).to_pydict()
    cells = {int(z): int(c) for z, c in zip(zones["zone"], zones["cells"], strict=True)}
    best: dict[int, tuple[int, int]] = {}  # piece -> (cells, zone) of the zone kept
    out = np.zeros(instance.n_pieces, np.int64)
    for z, p, n in zip(rows["zone"], rows["piece"], rows["n"], strict=True):
        z, p = int(z), int(p)
        if (cells[z], z) > best.get(p, (-1, -1)):  # most cells; a tie: the later zone
            best[p], out[p] = (cells[z], z), n
    return out


def piece_kind(instance: Instance) -> np.ndarray:
    """Per piece: its grey sides (0 inner, 1 border, 2 corner)."""
    return (instance.pieces == GREY).sum(axis=1)


def piece_order(instance: Instance, tiles: np.ndarray, buckets: int = BUCKETS) -> np.ndarray:
    """Per piece, its bucket among the pieces of its kind by corolles (0: the fewest)."""
    kind = piece_kind(instance)
    out = np.zeros(instance.n_pieces, np.int64)
    for k in np.unique(kind):
        idx = np.flatnonzero(kind == k)
        rank = np.argsort(np.argsort(tiles[idx], kind="stable"), kind="stable")
        out[idx] = rank * buckets // len(idx)
    return out


def quota_from_store(instance: Instance, tiles: np.ndarray, n: int = 3) -> tuple[int, ...]:
    """The `n` colour ids whose pieces tile worst: the lowest mean log(1 + corolles) of the
    pieces, over every side showing the colour, each kind's log-counts centred first."""
    kind = piece_kind(instance)
    score = np.log1p(tiles.astype(float))
    for k in np.unique(kind):
        score[kind == k] -= score[kind == k].mean()
    means = {}
    for c in range(1, instance.n_colours):
        sides = instance.pieces == c
        if sides.any():
            means[c] = float((sides.sum(axis=1) * score).sum() / sides.sum())
    worst = sorted(means, key=lambda c: (means[c], c))[:n]
    return tuple(instance.colour_id(c) for c in worst)
