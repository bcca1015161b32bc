"""An independent exact model of edge matching: CNF encodings for SAT solvers and model
counters, and a DuckDB join, which recount what e2store's kernels report (`e2store
crosscheck`, `export-cnf`, `solve --engine sat`; docs/exact.md).

The models (`encode`, `models`, `sql`, `check`) import none of e2store's kernels (the
enumerators, counters or solvers): only the instance's colours go in, so an agreement is a
second opinion, not the same code twice.  `e2store.exact.crosscheck.crosscheck` runs both
sides of a check (e2store's side in a child process; not exported here, where `crosscheck`
stays the module's name) and `solve_sat` reports SAT's solutions as the backtracker reports
its own: they reach the solver only when called.
"""

from e2store.exact.check import COUNT_MODELS, Check
from e2store.exact.crosscheck import (
    CROSSCHECK_BREAKS,
    CROSSCHECK_MINUTES,
    CROSSCHECK_SECONDS,
    KINDS,
    check_request,
)
from e2store.exact.encode import Cnf, cell_placements, diamond, encode, frame_sides
from e2store.exact.models import Deadline, ModelResult, run_child, run_model
from e2store.exact.solve import solve_sat
from e2store.exact.sql import SqlCount, count_region

__all__ = ["COUNT_MODELS", "CROSSCHECK_BREAKS", "CROSSCHECK_MINUTES", "CROSSCHECK_SECONDS",
           "KINDS", "Check", "Cnf", "Deadline", "ModelResult", "SqlCount", "cell_placements",
           "check_request", "count_region", "diamond", "encode", "frame_sides",
           "run_child", "run_model", "solve_sat"]
