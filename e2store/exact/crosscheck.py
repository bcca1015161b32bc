"""Crosschecks run whole (`e2store crosscheck`; docs/exact.md): e2store's figure from its
own kernels, in a child process under the time limit, then the exact models' figures
(`e2store.exact.check`), for one kind of check: corolle counts, board solutions or the
best score.

The one module of `e2store.exact` that calls e2store's kernels, and only in those child
processes: the models never do, so an agreement stays a second opinion.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from e2store.errors import ExactInputError, OutOfReachError
from e2store.exact.check import (
    COUNT_MODELS,
    Check,
    check_best,
    check_board,
    check_count,
    check_solutions,
)
from e2store.exact.models import Deadline, Limit, as_deadline, require, run_child
from e2store.instance.model import Instance

CROSSCHECK_SECONDS = 600.0  # the time limit of a whole crosscheck, by default
CROSSCHECK_MINUTES = 0.25  # the wall time of e2store's best-score search, by default
CROSSCHECK_BREAKS = "blackwood"  # the break schedule of that search, by default
KINDS = ("corolles", "solutions", "best")
_MODEL_CALL = {"solutions": "enumerate", "best": "optimum"}

Fixed = Mapping[tuple[int, int], int]


def check_request(kind: str, *, hamming: int | None = None,
                  models: Sequence[str] = COUNT_MODELS, expect: int | None = None,
                  records: str | Path | None = None, minutes: float = CROSSCHECK_MINUTES,
                  seconds: Limit = CROSSCHECK_SECONDS) -> None:
    """Refuse (ExactInputError), before anything runs, a crosscheck that cannot run: an
    unknown kind or model, corolle counts without a hamming, records of another kind of
    check or of an expected figure, a best-score search that leaves the model no time, or
    a model whose solver is not installed (said now, not after e2store's side ran)."""
    if kind not in KINDS:
        raise ExactInputError(f"unknown check {kind!r}: one of {', '.join(KINDS)}")
    if kind == "corolles" and hamming is None:
        raise ExactInputError("corolle counts need a hamming (the corolles' radius)")
    if kind != "corolles" and hamming is not None:
        raise ExactInputError(f"a hamming is for corolle counts, not {kind}")
    for m in models:
        if m not in COUNT_MODELS:
            raise ExactInputError(f"unknown model {m!r}: {', '.join(COUNT_MODELS)}")
    if not models:
        raise ExactInputError(f"no model to count with: one or more of "
                              f"{', '.join(COUNT_MODELS)}")
    if records is not None:
        if kind != "corolles":
            raise ExactInputError(f"records are kept of corolle counts, not of {kind}")
        if expect is not None:
            raise ExactInputError("records keep e2store's counts the models confirm, not an "
                                  "expected figure")
        if Path(records).exists() and not Path(records).is_dir():
            raise ExactInputError(f"records {records}: not a directory")
    limit = seconds.seconds if isinstance(seconds, Deadline) else seconds
    if kind == "best" and expect is None and limit is not None and minutes * 60 >= limit:
        raise ExactInputError(f"the best-score search's {minutes:g} minutes "
                              f"({minutes * 60:g} s) leave no time of the {limit:g} s time "
                              f"limit for the MaxSAT model")
    if kind != "corolles" or "count" in models:
        require(_MODEL_CALL.get(kind, "count"))


def crosscheck(instance: Instance, kind: str, *, hamming: int | None = None,
               at: Iterable = (), models: Sequence[str] = COUNT_MODELS,
               fixed: Fixed | None = None, symmetry_break: bool = True,
               minutes: float = CROSSCHECK_MINUTES, breaks: str = CROSSCHECK_BREAKS,
               expect: int | None = None, seconds: Limit = CROSSCHECK_SECONDS,
               records: str | Path | None = None) -> list[Check]:
    """Check `kind` ("corolles", "solutions" or "best") of `instance` with the exact
    models against e2store's own figure (or `expect`, a figure to check: a published one),
    all within `seconds` (a number, or a `Deadline` started earlier): past it, the checks
    not finished are out of reach, not errors.

    corolles: the counts of hamming `hamming` at the cells of `at` (groups of (x, y), or
    `e2store.zones.ALL`; default every zone's canonical cell) by `models` (the DuckDB join
    "sql", ganak model counting "count"); `records`: a count-records directory where each
    agreeing count is recorded (`e2store.counts.shards.write_crosscheck`).
    solutions: the number of board solutions (with the symmetry break of `solve` unless
    `symmetry_break` is False or cells are `fixed`).  best: the best score of e2store's
    best-score search run `minutes` with `breaks`, against MaxSAT's optimum."""
    deadline = as_deadline(seconds)
    check_request(kind, hamming=hamming, models=models, expect=expect, records=records,
                  minutes=minutes, seconds=deadline)
    at = tuple(at)
    if at and kind != "corolles":
        raise ExactInputError(f"cells to check are for corolle counts, not {kind}")
    if fixed is not None and kind == "corolles":
        raise ExactInputError("fixed cells are for solutions or the best score, not corolle "
                              "counts")
    if hamming is not None:  # corolles (check_request)
        checks = _counts(instance, hamming, at, models, expect, deadline)
        if records is not None:
            _record(Path(records), instance, hamming, checks)
    elif kind == "solutions":
        checks = [_solutions(instance, fixed, symmetry_break, expect, deadline)]
    else:
        checks = [_best(instance, fixed, minutes, breaks, expect, deadline)]
    if expect is not None:
        for c in checks:
            c.source = "expected"
    return checks


def _record(records: Path, inst: Instance, hamming: int, checks: list[Check]) -> None:
    """Record each corolle count the models agree with in the count-records directory
    `records`: the count tables and `serve` then mark it crosschecked."""
    from e2store.counts.shards import write_crosscheck

    for c in checks:
        if c.status == "agree" and c.cell is not None and c.expected is not None:
            x, y = c.cell
            write_crosscheck(records, inst, x, y, hamming, c.expected, c.models, c.seconds)


def _counts(inst: Instance, hamming: int, at: tuple, models: Sequence[str],
            expect: int | None, deadline: Deadline) -> list[Check]:
    """The corolle checks of the cells asked: e2store's counts in a child process under
    the deadline (those it reaches), then the models of each cell."""
    from e2store.zones import board_cells

    # past w+h-2 every cell's region is the whole board, so the zones are those of w+h-2
    # (the zone map of a larger radius takes seconds to find the same: 20 s at 255)
    cells = board_cells(inst.width, inst.height,
                        min(hamming, inst.width + inst.height - 2), at)
    figures: dict[tuple[int, int], int] = {}
    late = None
    if expect is None:
        try:
            run_child(_e2store_counts, (inst, cells, hamming), seconds=deadline,
                      what="e2store's count", progress=lambda v: figures.update({v[:2]: v[2]}),
                      done=lambda: f"{len(figures)} of {len(cells)} cells counted")
        except OutOfReachError as exc:
            late = str(exc)
    else:
        figures = {c: expect for c in cells}
    out = []
    for x, y in cells:
        c = check_count(inst, x, y, hamming, figures.get((x, y)), models=models,
                        seconds=deadline)
        if (x, y) not in figures:
            c.notes.append(late or "e2store's count: no figure")
        out.append(c)
    return out


def _killable() -> None:
    """Set up a child process that the time limit may kill: tqdm's lock (taken by every
    bar, even a disabled one) a thread lock rather than a named semaphore, which a killed
    process never frees (the resource tracker then warns on stderr)."""
    import threading

    from tqdm import tqdm

    tqdm.set_lock(threading.RLock())


def _e2store_counts(inst: Instance, cells: list, hamming: int, emit) -> None:
    """e2store's side of corolle counts (in a child process): each cell's count by the
    count tables' method, emitted as (x, y, count) when it is done."""
    from e2store.counts import best_method, count_cell

    _killable()
    for x, y in cells:
        emit((x, y, count_cell(inst, x, y, hamming, best_method(hamming), 1, False)[0]))


def _solutions(inst: Instance, fixed: Fixed | None, symmetry_break: bool,
               expect: int | None, deadline: Deadline) -> Check:
    """The solutions check: e2store's complete search in a child process under the
    deadline, then the SAT model."""
    sym = symmetry_break and not fixed
    check_board(inst, fixed)
    late = None
    if expect is None:
        try:
            expected = run_child(_e2store_solutions, (inst, fixed, sym), seconds=deadline,
                                 what="e2store's solve --all")
        except OutOfReachError as exc:
            expected, late = None, str(exc)
    else:
        expected = expect
    check = check_solutions(inst, expected, fixed=fixed, symmetry_break=sym, seconds=deadline)
    if late:
        check.notes.append(late)
    return check


def _e2store_solutions(inst: Instance, fixed: Fixed | None, sym: bool, emit) -> int:
    """e2store's side of solutions (in a child process): `solve --all`'s count."""
    from e2store.solver.search import solve

    _killable()
    return solve(inst, "rowscan", symmetry_break=sym,
                 seed=None if fixed is None else dict(fixed), max_stored=1).solutions


def _best(inst: Instance, fixed: Fixed | None, minutes: float, breaks: str,
          expect: int | None, deadline: Deadline) -> Check:
    """The best-score check: e2store's best-score search for `minutes` in a child process
    under the deadline, then MaxSAT with what is left."""
    check_board(inst, fixed)
    late = None
    if expect is None:
        try:
            found = run_child(_e2store_best, (inst, fixed, breaks, minutes * 60),
                              seconds=deadline, what="e2store's e2store best")
        except OutOfReachError as exc:
            found, late = None, str(exc)
    else:
        found = expect
    check, _board = check_best(inst, found, fixed=fixed, seconds=deadline)
    if late:
        check.notes.append(late)
    return check


def _e2store_best(inst: Instance, fixed: Fixed | None, breaks: str, seconds: float,
                  emit) -> int:
    """e2store's side of the best score (in a child process): the best score of the
    best-score search's restarts, each board's holes filled; with every cell fixed, that
    board's score."""
    import numpy as np

    from e2store.boards.table import score

    _killable()
    fixed = dict(fixed or {})
    w = inst.width
    if len(fixed) == inst.n_pieces:  # nothing to search: the board is given
        board = np.full(inst.n_pieces, -1, dtype=np.int64)
        for (x, y), v in fixed.items():
            board[y * w + x] = v
        return int(score(inst, board).matched)
    from e2store.solver.best import fill_holes, run_best

    run = run_best(inst, fixed=fixed or None, breaks=breaks, seconds=seconds)
    keep = [y * w + x for x, y in fixed]
    return max((fill_holes(inst, r.board, keep=keep).score for r in run.results), default=0)
