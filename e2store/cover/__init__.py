"""Corolles as the pieces of the search (the study's section 7.4): the board as an exact
cover with colours over its corolle regions (`model`), solved by dancing links (Knuth's
Algorithm C: `xcc`, its numba kernel private), reported as the backtracker reports
(`search`: `e2store solve --engine dlx`).  docs/solver.md, *Corolles as the pieces of the
search*."""

from typing import TYPE_CHECKING

from e2store.lazy import lazy_exports

if TYPE_CHECKING:
    from e2store.cover.model import Model as Model
    from e2store.cover.model import Region as Region
    from e2store.cover.model import build_model as build_model
    from e2store.cover.model import regions as regions
    from e2store.cover.search import model_xcc as model_xcc
    from e2store.cover.search import solve_cover as solve_cover
    from e2store.cover.xcc import Xcc as Xcc
    from e2store.cover.xcc import XccResult as XccResult
    from e2store.cover.xcc import solve_xcc as solve_xcc

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "model": ("Model", "Region", "build_model", "regions"),
    "search": ("model_xcc", "solve_cover"),
    "xcc": ("Xcc", "XccResult", "solve_xcc"),
})
