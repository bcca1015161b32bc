"""Crosschecks: e2store's number beside the exact models' numbers, and a verdict
(docs/exact.md).  The caller passes e2store's own figure (from its kernels, or a number
to check, `--expect`); nothing here computes it, so the two sides share no code.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from e2store.errors import ExactInputError, OutOfReachError
from e2store.exact.encode import (
    Cnf,
    check_fixed,
    check_size,
    diamond,
    encode,
    fits_frame,
    frame_sides,
)
from e2store.exact.models import DEFAULT_SAT, Limit, run_model
from e2store.exact.sql import count_region
from e2store.instance.model import GREY, Instance

COUNT_MODELS = ("sql", "count")  # DuckDB join, ganak over the region's CNF


@dataclass
class Check:
    """One crosscheck: what was checked, e2store's figure, each model's figure (None: out
    of reach) and seconds, and the verdict."""

    what: str
    expected: int | None
    models: dict[str, int | None] = field(default_factory=dict)
    source: str = "e2store"  # whose figure `expected` is: e2store's kernels, or --expect
    cell: tuple[int, int] | None = None  # a corolle count's cell
    seconds: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        """'agree' (every model that finished gives e2store's figure), 'disagree' (one does
        not), or 'out of reach' (no model finished, or e2store's figure is missing: its
        side did not finish in the time limit)."""
        got = [v for v in self.models.values() if v is not None]
        if self.expected is None:
            return "out of reach"
        if any(v != self.expected for v in got):
            return "disagree"
        return "agree" if got else "out of reach"

    def as_dict(self) -> dict:
        return {"what": self.what, "expected": self.expected, "source": self.source,
                "models": self.models,
                "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
                "status": self.status, "notes": self.notes}


def _timed(check: Check, name: str, run: Callable[[], int | None]) -> None:
    """Run one model into `check`: its figure, or None and the reason it is out of reach;
    not run at all without e2store's figure (nothing to compare it with)."""
    if check.expected is None:
        check.models[name], check.seconds[name] = None, 0.0
        return
    t0 = time.perf_counter()
    try:
        check.models[name] = run()
    except OutOfReachError as exc:
        check.models[name] = None
        check.notes.append(f"{name}: {exc}")
    check.seconds[name] = time.perf_counter() - t0


def check_count(instance: Instance, x: int, y: int, hamming: int, expected: int | None, *,
                models: Sequence[str] = COUNT_MODELS, seconds: Limit = None) -> Check:
    """The corolles of hamming `hamming` at (x, y) by each model, against `expected`
    (None: e2store's figure is out of reach; the models are not run).  `seconds`: each
    model's time limit, or a `Deadline` they share."""
    for m in models:
        if m not in COUNT_MODELS:
            raise ExactInputError(f"unknown model {m!r}: {', '.join(COUNT_MODELS)}")
    cells = diamond(instance.width, instance.height, x, y, hamming)
    check = Check(f"corolles h={hamming} at ({x},{y})", expected, cell=(x, y))
    for m in models:
        if m == "sql":
            _timed(check, m, lambda: count_region(instance, cells, centre=(x, y),
                                                  seconds=seconds).count)
        else:
            _timed(check, m, lambda: run_model("count", functools.partial(
                encode, instance, cells), seconds=seconds).count)
    return check


def lowest_corner_piece(instance: Instance) -> int:
    """The lowest-numbered piece with two adjacent grey sides (the symmetry break's piece)."""
    for p in range(instance.n_pieces):
        c = [int(v) for v in instance.pieces[p]]
        if any(c[s] == GREY and c[(s + 1) % 4] == GREY for s in range(4)):
            return p
    raise ExactInputError(f"instance {instance.name!r} has no corner piece: no symmetry "
                          f"break (count every solution instead)")


def board_cnf(instance: Instance, *, fixed: Mapping[tuple[int, int], int] | None = None,
              symmetry_break: bool = False, soft: bool = False) -> Cnf:
    """The whole board's CNF; `symmetry_break`: the lowest corner piece on the north-west
    corner (on a square board: one solution per class of board rotations), or on the
    north-west or north-east corner of an oblong board (one per half-turn pair)."""
    cnf = encode(instance, fixed=fixed, soft=soft)
    if symmetry_break:
        p = lowest_corner_piece(instance)
        w, h = instance.width, instance.height
        corners = [(0, 0)] if w == h else [(0, 0), (w - 1, 0)]
        lits = [var for c in corners for v, var in cnf.place[cnf.cells.index(c)].items()
                if v // 4 == p]
        cnf.clauses.append(lits)
        cnf.notes.append(f"symmetry break: piece {p} on "
                         + " or ".join(f"({cx},{cy})" for cx, cy in corners))
    return cnf


def check_board(instance: Instance, fixed: Mapping[tuple[int, int], int] | None) -> None:
    """Refuse, before anything runs, a whole-board model that cannot be built: fixed cells
    it cannot take (ExactInputError), or one over the size limit (OutOfReachError)."""
    check_fixed(instance, dict(fixed or {}))
    check_size(instance, [(x, y) for y in range(instance.height)
                          for x in range(instance.width)])


def check_solutions(instance: Instance, expected: int | None, *,
                    fixed: Mapping[tuple[int, int], int] | None = None,
                    symmetry_break: bool = False, seconds: Limit = None,
                    solver: str = DEFAULT_SAT, progress=None) -> Check:
    """Board solutions by SAT enumeration with blocking clauses, against `expected` (None:
    out of reach, the model is not run).  The formula is built in the model's child
    process, inside the time limit."""
    check_board(instance, fixed)
    build = functools.partial(board_cnf, instance, fixed=fixed, symmetry_break=symmetry_break)
    what = "solutions" + (" (symmetry broken)" if symmetry_break else "") + \
        (f" ({len(fixed)} fixed cells)" if fixed else "")
    check = Check(what, expected)
    _timed(check, "sat", lambda: run_model("enumerate", build, seconds=seconds, solver=solver,
                                           keep=0, progress=progress).count)
    return check


def check_best(instance: Instance, found: int | None, *,
               fixed: Mapping[tuple[int, int], int] | None = None,
               seconds: Limit = None) -> tuple[Check, dict | None]:
    """The best score (matched joins) by MaxSAT (RC2), against the score `found` (None: out
    of reach, the model is not run); also the optimal board {"x,y": packed}."""
    check_board(instance, fixed)
    build = functools.partial(board_cnf, instance, fixed=fixed, soft=True)
    check = Check("best score", found)
    box: dict = {}

    def run() -> int:
        r = run_model("optimum", build, seconds=seconds)
        box["board"] = r.solutions[0] if r.fills else None
        assert r.optimum is not None  # an "optimum" call reports one
        return int(r.optimum)

    _timed(check, "maxsat", run)
    return check, box.get("board")


def frame_ok(instance: Instance, board: Mapping[tuple[int, int], int]) -> bool:
    """Every placement of `board` shows grey on exactly its cell's frame sides."""
    return all(fits_frame(instance, v, frame_sides(instance.width, instance.height, x, y))
               for (x, y), v in board.items())


def export_cnf(instance: Instance, output: str | Path, *, region: tuple[int, int] | None = None,
               hamming: int = 1, fixed: Mapping[tuple[int, int], int] | None = None,
               symmetry_break: bool = False, soft: bool = False) -> Cnf:
    """Write the DIMACS CNF (WCNF with `soft`) of the board (its models the solutions,
    `board_cnf`) or of the corolle region of radius `hamming` around `region` (its models
    the corolles) to `output`, atomically, the variables' meanings in comment lines; the
    CNF written is returned.  A region takes no whole-board option (ExactInputError); an
    output that is not a regular file is refused before anything is built (OSError)."""
    from e2store.files import atomic_write, check_regular_target

    try:
        check_regular_target(Path(output))
    except OSError as exc:  # /dev/null, a FIFO, a directory: never renamed over
        kind = str(exc.strerror).split(":")[0]
        raise ExactInputError(f"{output}: not a regular file ({kind}; the CNF is written as "
                              f"a file, replacing it whole)").about("output") from None
    if region is not None:
        if fixed or symmetry_break or soft:
            raise ExactInputError("a corolle region takes no fixed cells, symmetry break or "
                                  "soft joins (they are whole-board options)").about("region")
        x, y = region
        cnf = encode(instance, diamond(instance.width, instance.height, x, y, hamming))
        cnf.notes.append(f"models: the corolles of hamming {hamming} at ({x},{y})")
    else:
        cnf = board_cnf(instance, fixed=fixed, symmetry_break=symmetry_break, soft=soft)
    atomic_write(Path(output), lambda fh: cnf.write(fh, soft=soft))
    return cnf
