"""The web explorer (`e2store serve`): a local, read-only web application over a store,
its pages and their JSON API (docs/explorer.md)."""

from typing import TYPE_CHECKING

from e2store.lazy import lazy_exports

if TYPE_CHECKING:  # the real names for type checkers; at run time each is imported on first use
    from e2store.web.app import create_app as create_app
    from e2store.web.data import QueryRefused as QueryRefused
    from e2store.web.data import cell_page as cell_page
    from e2store.web.data import instance_page as instance_page
    from e2store.web.data import overview as overview
    from e2store.web.data import run_sql as run_sql

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "app": ("create_app",),
    "data": ("QueryRefused", "overview", "instance_page", "cell_page", "run_sql"),
})
