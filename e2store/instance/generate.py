"""Random solvable instances with a known solution, built like Eternity II (seeded, deterministic).

A solved board is drawn first: grey on the rim, a frame colour (1..K) on every join along
the rim (between two frame cells, perpendicular to the rim) and an inner colour
(K+1..K+L) on every other join. Every colour is used at least once when there are enough
joins of its kind. Then, while some pieces are identical up to rotation (or identical to
themselves under a half turn), the colours of a join touching such a piece and of a random
join of the same kind are swapped (colour counts are kept), a bounded number of times; the
best board seen is kept. Finally the pieces are listed in a random order with random
rotations and the solution records where each went.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from e2store.instance.model import GREY, Instance


class GenerationWarning(UserWarning):
    """The generator could not make every piece distinct (too few colours for the board)."""


def _draw(rng: np.random.Generator, n: int, first: int, k: int) -> np.ndarray:
    """n colours from first..first+k-1, as evenly used as possible (counts differ by <= 1)."""
    vals = np.resize(rng.permutation(k), n)
    rng.shuffle(vals)
    return (vals + first).astype(np.int64)


def _cells(hj: np.ndarray, vj: np.ndarray, w: int, h: int) -> np.ndarray:
    """(h, w, 4) colours W N E S of each cell from the joins (grey outside the board)."""
    c = np.zeros((h, w, 4), dtype=np.int64)
    c[:, 1:, 0] = hj
    c[:, :-1, 2] = hj
    c[1:, :, 1] = vj
    c[:-1, :, 3] = vj
    return c


def _bad_cells(cells: np.ndarray, base: int) -> np.ndarray:
    """Flat indices of cells whose piece repeats an earlier one up to rotation, or is symmetric."""
    flat = cells.reshape(-1, 4)
    codes = np.stack(
        [((np.roll(flat, -r, axis=1) * base ** np.arange(3, -1, -1)).sum(axis=1)) for r in range(4)]
    )
    canon = codes.min(axis=0)
    _, first = np.unique(canon, return_index=True)
    dup = np.ones(len(flat), dtype=bool)
    dup[first] = False
    sym = (flat == np.roll(flat, 2, axis=1)).all(axis=1)
    return np.flatnonzero(dup | sym)


def generate_instance(
    width: int,
    height: int,
    frame_colours: int,
    inner_colours: int,
    seed: int,
    name: str | None = None,
    max_rounds: int = 2000,
) -> Instance:
    """A random W x H instance with solution; ValueError for impossible parameters.

    Deterministic for a given seed (numpy `default_rng(seed)`). Warns `GenerationWarning`
    with the number of remaining duplicate / symmetric pieces if it cannot remove them all.
    """
    for label, v in (("width", width), ("height", height), ("frame_colours", frame_colours),
                     ("inner_colours", inner_colours), ("seed", seed)):
        if not isinstance(v, int | np.integer) or isinstance(v, bool):
            raise ValueError(f"{label} must be an integer, not {v!r}")
    w, h = int(width), int(height)
    if w < 2 or h < 2:
        raise ValueError(f"board {w}x{h} is too small: width and height must be at least 2")
    if frame_colours < 1:
        raise ValueError("frame_colours must be at least 1 (the frame has joins)")
    if inner_colours < 0:
        raise ValueError("inner_colours must not be negative")
    if seed < 0:
        raise ValueError("seed must be non-negative")
    # joins: hj[y, x] between (x, y) and (x+1, y); vj[y, x] between (x, y) and (x, y+1)
    h_rim = np.zeros((h, w - 1), dtype=bool)
    h_rim[[0, -1], :] = True
    v_rim = np.zeros((h - 1, w), dtype=bool)
    v_rim[:, [0, -1]] = True
    n_inner = int((~h_rim).sum() + (~v_rim).sum())
    if n_inner and inner_colours < 1:
        raise ValueError(f"a {w}x{h} board has {n_inner} inner joins: inner_colours must be >= 1")
    if frame_colours + inner_colours > int(np.iinfo(np.int16).max):
        raise ValueError("too many colours (at most 32767 in all)")

    rng = np.random.default_rng(seed)
    k, lo = int(frame_colours), int(inner_colours)
    rim = np.concatenate([h_rim.ravel(), v_rim.ravel()])
    joins = np.zeros(len(rim), dtype=np.int64)
    joins[rim] = _draw(rng, int(rim.sum()), 1, k)
    joins[~rim] = _draw(rng, n_inner, k + 1, lo) if n_inner else []
    n_h = h * (w - 1)
    join_cells = [  # per join: the two flat cell indices it touches
        *(((y * w + x), (y * w + x + 1)) for y in range(h) for x in range(w - 1)),
        *(((y * w + x), ((y + 1) * w + x)) for y in range(h - 1) for x in range(w)),
    ]
    cell_joins: list[list[int]] = [[] for _ in range(w * h)]
    for j, (a, b) in enumerate(join_cells):
        cell_joins[a].append(j)
        cell_joins[b].append(j)
    same_kind = [np.flatnonzero(rim), np.flatnonzero(~rim)]

    def board(js: np.ndarray) -> np.ndarray:
        return _cells(js[:n_h].reshape(h, w - 1), js[n_h:].reshape(h - 1, w), w, h)

    base = k + lo + 1
    bad = _bad_cells(board(joins), base)
    best, best_bad = joins.copy(), len(bad)
    for step in range(max_rounds):  # simulated annealing on the number of bad cells
        if best_bad == 0:
            break
        temp = 1.5 * (0.02 ** (step / max_rounds))
        cell = int(bad[rng.integers(len(bad))])
        j = cell_joins[cell][rng.integers(len(cell_joins[cell]))]
        pool = same_kind[0] if rim[j] else same_kind[1]
        other = int(pool[rng.integers(len(pool))])
        joins[j], joins[other] = joins[other], joins[j]
        new_bad = _bad_cells(board(joins), base)
        delta = len(new_bad) - len(bad)
        if delta > 0 and rng.random() >= np.exp(-delta / temp):
            joins[j], joins[other] = joins[other], joins[j]
            continue
        bad = new_bad
        if len(bad) < best_bad:
            best, best_bad = joins.copy(), len(bad)
    if best_bad:
        warnings.warn(
            f"{w}x{h} with {k} frame / {lo} inner colours: {best_bad} pieces remain identical "
            "to another (up to rotation) or to themselves under a half turn",
            GenerationWarning,
            stacklevel=2,
        )

    cells = board(best).reshape(-1, 4)
    assert (cells[:, :] != GREY).sum() == 4 * w * h - 2 * (w + h)
    n = w * h
    order = rng.permutation(n)  # order[cell] = piece id of the piece put on that cell
    rots = rng.integers(0, 4, n)
    pieces = np.empty((n, 4), dtype=np.int64)
    for cell in range(n):
        # piece turned r clockwise shows piece[(s - r) % 4] on side s == cell colour s
        pieces[order[cell]] = np.roll(cells[cell], -int(rots[cell]))
    solution = (order * 4 + rots).reshape(h, w).astype(np.int32)
    source = (f"generate_instance(width={w}, height={h}, frame_colours={k}, "
              f"inner_colours={lo}, seed={int(seed)})")
    return Instance(
        name=name or f"gen{w}x{h}_k{k}_l{lo}_s{int(seed)}",
        width=w,
        height=h,
        pieces=pieces,
        solution=solution,
        source=source,
    )


def write_generated_instance(output: str | Path, width: int, height: int,
                             frame_colours: int, inner_colours: int, seed: int,
                             name: str | None = None) -> tuple[Instance, dict, list[str]]:
    """Generate an instance (`generate_instance`, named after the output file's stem by
    default), validate it and write it as an e2store file, atomically: (the instance, its
    `instance_stats`, the generator's notes: the pieces it could not make unique).
    ValueError for impossible parameters, InstanceError for an invalid result."""
    from e2store.instance.e2sfile import write_e2store
    from e2store.instance.stats import instance_stats
    from e2store.instance.validate import validate_or_raise

    output = Path(output)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", GenerationWarning)
        inst = generate_instance(width, height, frame_colours, inner_colours, seed,
                                 name=name or output.stem)
    validate_or_raise(inst)
    write_e2store(inst, output)
    notes = [str(w.message) for w in caught if issubclass(w.category, GenerationWarning)]
    return inst, instance_stats(inst), notes
