"""Corolles: enumeration (the walk), exact counts (factorised, arms), estimated counts,
and the three storage forms as arrays (docs/design.md sections 2 and 4; docs/counting.md)."""

from e2store.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "enumerate": ("Layout", "corolle_layout", "candidate_table", "count_corolles",
            "iter_corolles", "enumerate_corolles", "walk_chunks", "walk_cells",),
    "factorised": ("FactorisedCount", "count_factorised", "cartesian_rows",),
    "arms": ("count_by_arms",),
    "sampling": ("CountEstimate", "estimate_count",),
    "forms": ("CartesianRows", "frontier_of", "prefix_table", "prefix_from_table",
            "rotate_chunk", "rotate_cells",),
})
