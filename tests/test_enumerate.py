"""The enumerator against its naive twin, DESIGN.md's worked example and zone invariants."""

from __future__ import annotations

import itertools

import naive
import numpy as np
import pytest
from helpers import random_instance

from e2store.corolles import _kernels
from e2store.corolles.enumerate import (
    bit_tables,
    candidate_table,
    corolle_layout,
    count_corolles,
    count_prefix_bits,
    enumerate_corolles,
    kernel_args,
    level_prefixes,
    walk_cells,
    walk_chunks,
)
from e2store.errors import ZoneError
from e2store.zones.geometry import (
    frontier_layout,
    n_frontier,
    n_slots,
    ring_offsets,
    rotation_permutation,
)
from e2store.zones.zonemap import zone_map

_instance = random_instance


def _as_sets(inst, x, y, h, cells):
    off = ring_offsets(h)
    out = set()
    for row in cells:
        out.add(frozenset(((x + int(off[i, 0]), y + int(off[i, 1])), int(v) >> 2, int(v) & 3)
                          for i, v in enumerate(row) if v >= 0))
    return out


def test_ring_order_matches_design():
    assert ring_offsets(1).tolist() == [[0, 0], [1, 0], [0, 1], [-1, 0], [0, -1]]
    assert ring_offsets(2)[5:].tolist() == [[2, 0], [1, 1], [0, 2], [-1, 1], [-2, 0], [-1, -1],
                                            [0, -2], [1, -1]]
    for h in range(5):
        off = ring_offsets(h)
        assert len(off) == n_slots(h) == 2 * h * (h + 1) + 1
        assert len({tuple(o) for o in off.tolist()}) == len(off)
        assert len(frontier_layout(h)[0]) == n_frontier(h) == 8 * h + 4
        # a clockwise quarter turn shifts ring d by d slots
        perm = rotation_permutation(h, 1)
        start = 1
        for d in range(1, h + 1):
            for i in range(4 * d):
                assert perm[start + i] == start + (i + d) % (4 * d)
            start += 4 * d


@pytest.mark.parametrize("w,h_board,seed", [(3, 3, 1), (4, 3, 2), (3, 5, 3), (4, 4, 4), (5, 4, 5)])
def test_kernel_agrees_with_naive_twin_everywhere(w, h_board, seed):
    inst = _instance(w, h_board, seed)
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    for h in range(4):
        for y, x in itertools.product(range(h_board), range(w)):
            want = naive.naive_corolles(pieces, w, h_board, x, y, h)
            cells, front = enumerate_corolles(inst, x, y, h)
            got = _as_sets(inst, x, y, h, cells)
            assert len(got) == len(cells), "duplicate corolles emitted"
            assert got == want, (x, y, h)
            assert count_corolles(inst, x, y, h).corolles == len(want)
            off = ring_offsets(h)
            for row, frow in zip(cells[:50], front[:50], strict=True):
                cor = {(x + int(off[i, 0]), y + int(off[i, 1])): (int(v) >> 2, int(v) & 3)
                       for i, v in enumerate(row) if v >= 0}
                assert frow.tolist() == naive.naive_frontier(pieces, w, h_board, x, y, h, cor)


def test_count_prefixes_twin():
    inst = _instance(4, 4, 11)
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    for (x, y), h in [((1, 1), 2), ((0, 1), 2), ((2, 0), 1)]:
        layout = corolle_layout(4, 4, x, y, h)
        table = candidate_table(inst, layout)
        level_cells = [(x + int(ring_offsets(h)[s, 0]), y + int(ring_offsets(h)[s, 1]))
                       for s in layout.slot_of]
        for k in (1, 2):
            pref = level_prefixes(layout, table, k)
            counts, nodes = _kernels.count_prefixes(pref, layout.n_levels,
                                                    *kernel_args(layout, table), inst.n_pieces)
            want = naive.naive_count_prefixes(pieces, 4, 4, x, y, h, level_cells, pref.tolist())
            assert counts.tolist() == want
            assert (nodes >= counts).all()


@pytest.mark.parametrize("w, seed, n_inner, cells, twin", [
    (4, 11, 5, [((1, 1), 2), ((0, 1), 2), ((2, 0), 1), ((0, 0), 2)], True),
    (9, 3, 9, [((4, 4), 1), ((0, 0), 2), ((8, 3), 1)], False),  # 81 pieces: two bit words
])
def test_count_prefix_bits_twin(w, seed, n_inner, cells, twin):
    """The bitset counter (issue 27) gives the list walk's counts and nodes (and, on the
    4x4, the naive twin's counts) from every prefix depth, the unkeyed centre level (every
    rotation of a piece in one bucket: the list path) included."""
    inst = _instance(w, w, seed, n_inner=n_inner)
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    for (x, y), h in cells:
        layout = corolle_layout(w, w, x, y, h)
        table = candidate_table(inst, layout)
        tables = bit_tables(layout, table)
        level_cells = [(x + int(ring_offsets(h)[s, 0]), y + int(ring_offsets(h)[s, 1]))
                       for s in layout.slot_of]
        for k in range(3):
            pref = level_prefixes(layout, table, k)
            counts, nodes = count_prefix_bits(pref, layout, tables)
            want, want_nodes = _kernels.count_prefixes(pref, layout.n_levels,
                                                       *kernel_args(layout, table),
                                                       inst.n_pieces)
            assert counts.tolist() == want.tolist() and nodes.tolist() == want_nodes.tolist()
            if twin:
                assert counts.tolist() == naive.naive_count_prefixes(
                    pieces, w, w, x, y, h, level_cells, pref.tolist()), (x, y, h, k)


@pytest.mark.parametrize("w, seed, n_inner, cells, chunk", [
    (4, 11, 5, [((1, 1), 2), ((0, 1), 2), ((0, 0), 2)], 7),
    (9, 3, 9, [((4, 4), 1), ((0, 0), 2)], 5000),  # 81 pieces: two bit words
])
def test_walk_cells_marks_what_it_emits(w, seed, n_inner, cells, chunk):
    """The store's walk (issue 27): `walk_cells` gives `walk_chunks`' cells (the frontier
    left out) from every prefix, in chunks small enough to resume mid-walk, and the
    placements it marks in the kernel are exactly those of its rows (set by a plain numpy
    pass over them)."""
    inst = _instance(w, w, seed, n_inner=n_inner)
    for (x, y), h in cells:
        layout = corolle_layout(w, w, x, y, h)
        table = candidate_table(inst, layout)
        for k in (0, 1, 2):
            for prefix in level_prefixes(layout, table, k)[:3] if k else [None]:
                seen = np.zeros((n_slots(h), 4 * inst.n_pieces + 1), dtype=bool)
                got = list(walk_cells(layout, table, chunk, prefix, seen=seen))
                want = [c for c, _ in walk_chunks(layout, table, chunk, prefix)]
                assert len(got) == len(want)
                assert all((a == b).all() for a, b in zip(got, want, strict=True))
                rows = np.concatenate(want, axis=1) if want else np.zeros((n_slots(h), 0))
                marks = np.zeros_like(seen)
                for i, col in enumerate(rows):
                    marks[i, col[col >= 0].astype(int)] = True
                assert (seen == marks).all(), ((x, y), h, k)
    with pytest.raises(ValueError, match="placements_seen"):
        next(walk_cells(layout, table, seen=np.zeros((1, 1), dtype=bool)))


def test_rotate_rows_twin():
    inst = _instance(5, 5, 7, n_frame=4, n_inner=8)
    h = 2
    cells, front = enumerate_corolles(inst, 2, 2, h)
    off = ring_offsets(h)
    for q in range(4):
        rc, rf = _kernels.rotate_rows(np.ascontiguousarray(cells.T), np.ascontiguousarray(front.T),
                                      rotation_permutation(h, q), q, (2 * h + 1) * q)
        idx = {(int(a), int(b)): i for i, (a, b) in enumerate(off)}
        for j in range(0, len(cells), max(1, len(cells) // 40)):
            cor = {(int(off[i, 0]), int(off[i, 1])): (int(v) >> 2, int(v) & 3)
                   for i, v in enumerate(cells[j]) if v >= 0}
            want = np.full(len(off), -1)
            for (dx, dy), (p, r) in naive.naive_rotate(cor, q).items():
                want[idx[(dx, dy)]] = p * 4 + r
            assert rc[:, j].tolist() == want.tolist()
            F = front.shape[1]
            assert [rf[(i + (2 * h + 1) * q) % F, j] for i in range(F)] == front[j].tolist()


def test_rotated_corolles_are_the_corolles_of_the_rotated_cell():
    inst = _instance(5, 4, 21)
    for h in (1, 2):
        zm = zone_map(5, 4, h)
        for z in zm.zones:
            base, bfront = enumerate_corolles(inst, z.x, z.y, h)
            for m in z.members:
                rc, rf = _kernels.rotate_rows(np.ascontiguousarray(base.T),
                                              np.ascontiguousarray(bfront.T),
                                              rotation_permutation(h, m.rotation), m.rotation,
                                              (2 * h + 1) * m.rotation)
                direct, dfront = enumerate_corolles(inst, m.x, m.y, h)
                got = set(map(tuple, np.vstack([rc, rf]).T.tolist()))
                want = set(map(tuple, np.hstack([direct, dfront]).tolist()))
                assert got == want, (h, z.id, m)


def test_count_is_constant_over_each_zone():
    inst = _instance(6, 5, 8, n_frame=4, n_inner=8)
    for h in (1, 2):
        zm = zone_map(6, 5, h)
        for z in zm.zones:
            counts = {count_corolles(inst, m.x, m.y, h).corolles for m in z.members}
            assert len(counts) == 1, (h, z.id, counts)


def test_threads_give_the_same_count_and_nodes():
    inst = _instance(5, 5, 9, n_frame=3, n_inner=6)
    a = count_corolles(inst, 2, 1, 2, threads=1)
    b = count_corolles(inst, 2, 1, 2, threads=2)
    assert (a.corolles, a.nodes) == (b.corolles, b.nodes)


def test_emitted_corolles_pass_an_independent_checker():
    """Every emitted row (hundreds of thousands) is checked, vectorised over rows."""
    inst = _instance(6, 6, 13, n_frame=4, n_inner=8)
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    shown = np.array([[naive.shown(pieces[v >> 2], v & 3, s) for s in range(4)]
                      for v in range(4 * len(pieces))])
    fits = {(cx, cy): np.array([naive.fits_cell(pieces[v >> 2], v & 3, 6, 6, cx, cy)
                                for v in range(4 * len(pieces))])
            for cx in range(6) for cy in range(6)}
    off = ring_offsets(2).tolist()
    total = 0
    for x, y in [(0, 0), (2, 1), (3, 3), (5, 2)]:
        cells, _ = enumerate_corolles(inst, x, y, 2)
        total += len(cells)
        pos = {(x + dx, y + dy): i for i, (dx, dy) in enumerate(off)}
        on = {c: i for c, i in pos.items() if 0 <= c[0] < 6 and 0 <= c[1] < 6}
        assert set(on) == set(naive.diamond(6, 6, x, y, 2))
        assert (cells[:, [i for c, i in pos.items() if c not in on]] == -1).all()
        for c, i in on.items():
            assert fits[c][cells[:, i]].all(), c
            for s, (dx, dy) in naive.NEIGHBOUR.items():
                j = on.get((c[0] + dx, c[1] + dy))
                if j is not None:
                    assert (shown[cells[:, i], s] == shown[cells[:, j], (s + 2) % 4]).all()
        ids = np.sort(cells[:, list(on.values())] >> 2, axis=1)
        assert (np.diff(ids, axis=1) != 0).all(), "a piece used twice in one corolle"
    assert total > 1000


def test_nodes_agree_between_count_and_emit():
    from e2store.corolles.enumerate import walk_chunks

    inst = _instance(5, 5, 17, n_frame=3, n_inner=6)
    layout = corolle_layout(5, 5, 1, 2, 2)
    box: list[int] = []
    n = sum(c.shape[1] for c, _ in walk_chunks(layout, candidate_table(inst, layout), 7,
                                                nodes_out=box))
    for threads in (1, 2, 3):
        r = count_corolles(inst, 1, 2, 2, threads=threads)
        assert (n, box[0]) == (r.corolles, r.nodes)


def test_bad_cell_and_hamming_are_clear_errors():
    inst = _instance(4, 4, 1)
    with pytest.raises(ZoneError, match=r"off the 4x4 board"):
        count_corolles(inst, 4, 0, 1)
    with pytest.raises(ZoneError, match="negative"):
        count_corolles(inst, 0, 0, -1)
