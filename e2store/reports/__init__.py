"""Reports: the store summary, study tables, growth plots and pictures (SVG/PNG)."""

from e2store.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "summary": ("summarize", "format_markdown",),
    "tables": ("Board", "Table", "load_tables", "write_tables",),
    "plots": ("write_plots",),
    "render": ("svg_pieces", "svg_board", "svg_zone_map", "svg_corolle", "write_picture",),
})
