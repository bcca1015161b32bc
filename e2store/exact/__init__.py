"""An independent exact model of edge matching: CNF encodings for SAT solvers and model
counters, and a DuckDB join, which recount what e2store's kernels report (`e2store
crosscheck`, `export-cnf`, `solve --engine sat`; docs/exact.md).

Nothing here imports e2store's kernels (the enumerators, counters or solvers): only the
instance's colours go in, so an agreement is a second opinion, not the same code twice.
"""

from e2store.exact.encode import Cnf, cell_placements, diamond, encode, frame_sides
from e2store.exact.models import ModelResult, run_model
from e2store.exact.sql import SqlCount, count_region

__all__ = ["Cnf", "ModelResult", "SqlCount", "cell_placements", "count_region", "diamond",
           "encode", "frame_sides", "run_model"]
