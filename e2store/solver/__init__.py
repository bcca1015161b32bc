"""The backtracking solver and what feeds it: scan orders, plans, the search runners,
solution files, openings and their parallel solve, size estimates (docs/solver.md)."""

from e2store.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "scan": ("SCAN_ORDERS", "scan_order", "read_scan_file", "read_seed_file",),
    "plan": ("Plan", "build_plan", "lowest_corner", "symmetry_roots",),
    "search": ("SolveResult", "solve", "DEFAULT_MAX_STORED", "KERNELS", "AUTO_MIN_DEPTHS"),
    "solutions": ("check_solution", "check_solutions", "read_solutions", "write_solutions",),
    "openings": ("Openings", "openings", "read_openings", "write_openings", "check_openings",),
    "parallel": ("OpeningsResult", "solve_openings", "merge_reports",),
    "estimate": ("Estimate", "estimate",),
})
