"""The web explorer (`e2store serve`): a local, read-only web application over a store,
its pages and their JSON API (docs/explorer.md)."""

from e2store.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "app": ("create_app",),
    "data": ("QueryRefused", "overview", "instance_page", "cell_page", "run_sql"),
})
