"""The query layer: `connect(store)` for SQL and Arrow over a store (DuckDB), the finals
(closure) index a solver consults, and the openings that split a search (consistent
combinations of corolles at chosen cells: `openings`) (docs/queries.md, docs/solver.md)."""

from typing import TYPE_CHECKING

from e2store.lazy import lazy_exports

if TYPE_CHECKING:  # the real names for type checkers; at run time each is imported on first use
    from e2store.query.finals import FinalsIndex as FinalsIndex
    from e2store.query.finals import corner_cells as corner_cells
    from e2store.query.finals import load_finals as load_finals
    from e2store.query.finals import parse_regions as parse_regions
    from e2store.query.handle import CorolleStore as CorolleStore
    from e2store.query.handle import connect as connect
    from e2store.query.handle import frontier_sql as frontier_sql
    from e2store.query.openings import Openings as Openings
    from e2store.query.openings import check_openings as check_openings
    from e2store.query.openings import openings as openings
    from e2store.query.openings import read_openings as read_openings
    from e2store.query.openings import write_openings as write_openings
    from e2store.query.regions import export_closures as export_closures
    from e2store.query.regions import export_store_closures as export_store_closures
    from e2store.query.sql import QUERY_SECONDS as QUERY_SECONDS
    from e2store.query.sql import ctrl_c_interrupts as ctrl_c_interrupts
    from e2store.query.sql import process_cap as process_cap
    from e2store.query.sql import sql_rows as sql_rows

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "handle": ("CorolleStore", "connect", "frontier_sql",),
    "finals": ("FinalsIndex", "load_finals", "parse_regions", "corner_cells",),
    "sql": ("QUERY_SECONDS", "sql_rows", "ctrl_c_interrupts", "process_cap",),
    "regions": ("export_closures", "export_store_closures",),
    "openings": ("Openings", "openings", "read_openings", "write_openings", "check_openings",),
})
