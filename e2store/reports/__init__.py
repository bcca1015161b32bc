"""Reports: the store summary, study tables, growth plots, pictures (SVG/PNG) and the
statistics of best-score campaigns."""

from typing import TYPE_CHECKING

from e2store.lazy import lazy_exports

if TYPE_CHECKING:  # the real names for type checkers; at run time each is imported on first use
    from e2store.reports.campaign import ArmStats as ArmStats
    from e2store.reports.campaign import Comparison as Comparison
    from e2store.reports.campaign import Estimate as Estimate
    from e2store.reports.campaign import arm_stats as arm_stats
    from e2store.reports.campaign import board_depths as board_depths
    from e2store.reports.campaign import board_targets as board_targets
    from e2store.reports.campaign import bootstrap as bootstrap
    from e2store.reports.campaign import compare_arms as compare_arms
    from e2store.reports.campaign import report_thresholds as report_thresholds
    from e2store.reports.campaign import restarts_needed as restarts_needed
    from e2store.reports.campaign import wilson as wilson
    from e2store.reports.campaign_text import TAIL_RULE as TAIL_RULE
    from e2store.reports.campaign_text import campaign_markdown as campaign_markdown
    from e2store.reports.campaign_text import campaign_report as campaign_report
    from e2store.reports.campaign_text import restart_seconds as restart_seconds
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
    from e2store.reports.tail import ENOUGH as ENOUGH
    from e2store.reports.tail import LADDERS as LADDERS
    from e2store.reports.tail import REACH as REACH
    from e2store.reports.tail import WALL as WALL
    from e2store.reports.tail import Claim as Claim
    from e2store.reports.tail import Tail as Tail
    from e2store.reports.tail import TailModel as TailModel
    from e2store.reports.tail import TailTarget as TailTarget
    from e2store.reports.tail import TailVerdict as TailVerdict
    from e2store.reports.tail import calibrate as calibrate
    from e2store.reports.tail import fit_tail as fit_tail
    from e2store.reports.tail import poisson_p as poisson_p
    from e2store.reports.tail import tail_hours as tail_hours
    from e2store.reports.tail import tail_verdict as tail_verdict

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "summary": ("summarize", "format_markdown", "write_summary",),
    "checks": ("verify_and_repair", "repair_commands",),
    "drawings": ("DEFAULT_SCALE", "MAX_SCALE", "nth_corolle", "corolle_picture", "board_grid",),
    "tables": ("Board", "Table", "load_tables", "write_tables",),
    "plots": ("write_plots",),
    "render": ("svg_pieces", "svg_board", "svg_zone_map", "svg_corolle", "write_picture",),
    "campaign": ("Estimate", "ArmStats", "Comparison", "wilson", "bootstrap", "arm_stats",
                 "compare_arms", "restarts_needed", "board_depths", "board_targets",
                 "report_thresholds",),
    "tail": ("ENOUGH", "REACH", "WALL", "Tail", "TailModel", "TailTarget", "TailVerdict",
             "fit_tail", "tail_hours", "tail_verdict", "poisson_p", "calibrate", "Claim",
             "LADDERS",),
    "campaign_text": ("campaign_report", "campaign_markdown", "restart_seconds", "TAIL_RULE",),
})
