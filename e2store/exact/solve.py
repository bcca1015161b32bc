"""Solving a board by SAT enumeration (`e2store solve --engine sat`): the solutions of the
exact model, reported as e2store's backtracker reports its own, for a side-by-side check
(docs/exact.md)."""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from e2store.exact.check import board_cnf, check_board
from e2store.exact.models import DEFAULT_SAT, Limit, as_deadline, require, run_model
from e2store.instance.model import Instance

if TYPE_CHECKING:
    from e2store.solver.search import SolveResult


def solve_sat(inst: Instance, *, first: bool, symmetry_break: bool,
              fixed: Mapping[tuple[int, int], int] | None, keep: int,
              seconds: Limit = None) -> SolveResult:
    """The solutions by SAT enumeration, as the backtracker's report (a `SolveResult`;
    nodes are not counted).  `seconds` (a number, or a shared `Deadline`) bounds the whole
    run, building the formula included (it is built in the solver's child process):
    OutOfReachError past it.  `first`: stop at the first solution; `keep`: the boards
    kept (all are counted)."""
    from e2store.solver.search import SolveResult

    deadline = as_deadline(seconds)
    t0 = time.perf_counter()
    require("enumerate")
    check_board(inst, fixed)
    build = functools.partial(board_cnf, inst, fixed=fixed, symmetry_break=symmetry_break)
    r = run_model("enumerate", build, seconds=deadline, limit=1 if first else None, keep=keep)
    w, h = inst.width, inst.height
    dtype = np.int16 if inst.n_pieces * 4 <= np.iinfo(np.int16).max else np.int32
    boards = np.array(r.fills[:keep], dtype=dtype).reshape(-1, w * h)
    return SolveResult(inst.id, w, h, f"sat ({DEFAULT_SAT})", symmetry_break,
                       len(fixed or {}), first, solutions=r.count or 0,
                       seconds=time.perf_counter() - t0, first_seconds=r.first_seconds,
                       complete=True, boards=boards)
