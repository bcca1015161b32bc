"""The solvers and what feeds them (docs/solver.md): scan orders, plans and the frame
test, the exact search's runners, the parallel solve of openings (the query layer's,
`e2store.query.openings`), size estimates, and
`solve_search`, the `e2store solve` command as one call (`session`); one protocol for every
solver (`protocol`); and the best-score search, a package of its own with its own public
API (`e2store.solver.best`: `solve_best`, `run_best`, `best_plan`, `fill_holes`, ...).
What they write and read (boards, datasets, solutions files) is `e2store.boards`."""

from typing import TYPE_CHECKING

from e2store.lazy import lazy_exports

if TYPE_CHECKING:  # the real names for type checkers; at run time each is imported on first use
    from e2store.solver.defaults import AUTO_MIN_DEPTHS as AUTO_MIN_DEPTHS
    from e2store.solver.defaults import DEFAULT_MAX_STORED as DEFAULT_MAX_STORED
    from e2store.solver.defaults import DEFAULT_SCAN as DEFAULT_SCAN
    from e2store.solver.defaults import KERNELS as KERNELS
    from e2store.solver.estimate import Estimate as Estimate
    from e2store.solver.estimate import estimate as estimate
    from e2store.solver.parallel import OpeningsResult as OpeningsResult
    from e2store.solver.parallel import merge_reports as merge_reports
    from e2store.solver.parallel import solve_openings as solve_openings
    from e2store.solver.parallel import solve_with_openings as solve_with_openings
    from e2store.solver.plan import Plan as Plan
    from e2store.solver.plan import build_plan as build_plan
    from e2store.solver.plan import frame_mask as frame_mask
    from e2store.solver.plan import grey_masks as grey_masks
    from e2store.solver.plan import lowest_corner as lowest_corner
    from e2store.solver.plan import symmetry_roots as symmetry_roots
    from e2store.solver.protocol import BestScoreSolver as BestScoreSolver
    from e2store.solver.protocol import BoardSolver as BoardSolver
    from e2store.solver.protocol import ExactSolver as ExactSolver
    from e2store.solver.protocol import GreedySolver as GreedySolver
    from e2store.solver.protocol import Insertion as Insertion
    from e2store.solver.protocol import check_insertions as check_insertions
    from e2store.solver.scan import SCAN_ORDERS as SCAN_ORDERS
    from e2store.solver.scan import fixed_cells as fixed_cells
    from e2store.solver.scan import read_scan_file as read_scan_file
    from e2store.solver.scan import read_seed_file as read_seed_file
    from e2store.solver.scan import scan_order as scan_order
    from e2store.solver.search import SolveResult as SolveResult
    from e2store.solver.search import solve as solve
    from e2store.solver.session import DEFAULT_METHOD as DEFAULT_METHOD
    from e2store.solver.session import METHODS as METHODS
    from e2store.solver.session import search_method as search_method
    from e2store.solver.session import solve_search as solve_search

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "scan": ("SCAN_ORDERS", "scan_order", "read_scan_file", "read_seed_file",
             "fixed_cells",),
    "plan": ("Plan", "build_plan", "lowest_corner", "symmetry_roots", "frame_mask",
             "grey_masks",),
    "search": ("SolveResult", "solve"),
    "defaults": ("DEFAULT_SCAN", "DEFAULT_MAX_STORED", "KERNELS", "AUTO_MIN_DEPTHS"),
    "parallel": ("OpeningsResult", "solve_openings", "solve_with_openings",
                 "merge_reports",),
    "estimate": ("Estimate", "estimate",),
    "session": ("solve_search", "search_method", "METHODS", "DEFAULT_METHOD"),
    "protocol": ("BoardSolver", "Insertion", "ExactSolver", "BestScoreSolver", "GreedySolver",
                 "check_insertions"),
})
