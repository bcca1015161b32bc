"""The query layer: `connect(store)` for SQL and Arrow over a store (DuckDB), and the
finals (closure) index a solver consults (docs/queries.md, docs/solver.md)."""

from e2store.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "handle": ("CorolleStore", "connect", "frontier_sql",),
    "finals": ("FinalsIndex", "load_finals", "parse_regions", "corner_cells",),
})
