"""Corolles: enumeration (the walk), exact counts (factorised, arms), estimated counts,
and the three storage forms as arrays (docs/design.md sections 2 and 4; docs/counting.md)."""

from typing import TYPE_CHECKING

from e2store.lazy import lazy_exports

if TYPE_CHECKING:  # the real names for type checkers; at run time each is imported on first use
    from e2store.corolles.arms import count_by_arms as count_by_arms
    from e2store.corolles.enumerate import Layout as Layout
    from e2store.corolles.enumerate import candidate_table as candidate_table
    from e2store.corolles.enumerate import corolle_layout as corolle_layout
    from e2store.corolles.enumerate import count_corolles as count_corolles
    from e2store.corolles.enumerate import enumerate_corolles as enumerate_corolles
    from e2store.corolles.enumerate import iter_corolles as iter_corolles
    from e2store.corolles.enumerate import walk_cells as walk_cells
    from e2store.corolles.enumerate import walk_chunks as walk_chunks
    from e2store.corolles.factorised import FactorisedCount as FactorisedCount
    from e2store.corolles.factorised import cartesian_rows as cartesian_rows
    from e2store.corolles.factorised import count_factorised as count_factorised
    from e2store.corolles.forms import CartesianRows as CartesianRows
    from e2store.corolles.forms import frontier_of as frontier_of
    from e2store.corolles.forms import prefix_from_table as prefix_from_table
    from e2store.corolles.forms import prefix_table as prefix_table
    from e2store.corolles.forms import rotate_cells as rotate_cells
    from e2store.corolles.forms import rotate_chunk as rotate_chunk
    from e2store.corolles.sampling import CountEstimate as CountEstimate
    from e2store.corolles.sampling import estimate_count as estimate_count

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "enumerate": ("Layout", "corolle_layout", "candidate_table", "count_corolles",
            "iter_corolles", "enumerate_corolles", "walk_chunks", "walk_cells",),
    "factorised": ("FactorisedCount", "count_factorised", "cartesian_rows",),
    "arms": ("count_by_arms",),
    "sampling": ("CountEstimate", "estimate_count",),
    "forms": ("CartesianRows", "frontier_of", "prefix_table", "prefix_from_table",
            "rotate_chunk", "rotate_cells",),
})
