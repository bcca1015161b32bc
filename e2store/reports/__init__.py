"""Reports: the store summary, study tables, growth plots and pictures (SVG/PNG); a
best-score campaign's statistics and report are `e2store.campaign`."""

from typing import TYPE_CHECKING

from e2store.lazy import lazy_exports

if TYPE_CHECKING:  # the real names for type checkers; at run time each is imported on first use
    from e2store.reports.checks import repair_commands as repair_commands
    from e2store.reports.checks import verify_and_repair as verify_and_repair
    from e2store.reports.drawings import DEFAULT_SCALE as DEFAULT_SCALE
    from e2store.reports.drawings import MAX_SCALE as MAX_SCALE
    from e2store.reports.drawings import board_grid as board_grid
    from e2store.reports.drawings import corolle_picture as corolle_picture
    from e2store.reports.drawings import nth_corolle as nth_corolle
    from e2store.reports.plots import write_plots as write_plots
    from e2store.reports.render import svg_board as svg_board
    from e2store.reports.render import svg_corolle as svg_corolle
    from e2store.reports.render import svg_pieces as svg_pieces
    from e2store.reports.render import svg_zone_map as svg_zone_map
    from e2store.reports.render import write_picture as write_picture
    from e2store.reports.summary import format_markdown as format_markdown
    from e2store.reports.summary import summarize as summarize
    from e2store.reports.summary import write_summary as write_summary
    from e2store.reports.tables import Board as Board
    from e2store.reports.tables import Table as Table
    from e2store.reports.tables import load_tables as load_tables
    from e2store.reports.tables import write_tables as write_tables

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "summary": ("summarize", "format_markdown", "write_summary",),
    "checks": ("verify_and_repair", "repair_commands",),
    "drawings": ("DEFAULT_SCALE", "MAX_SCALE", "nth_corolle", "corolle_picture", "board_grid",),
    "tables": ("Board", "Table", "load_tables", "write_tables",),
    "plots": ("write_plots",),
    "render": ("svg_pieces", "svg_board", "svg_zone_map", "svg_corolle", "write_picture",),
})
