"""Count tables: exact corolle counts per zone, sharded, checkpointed and resumable
(docs/counting.md)."""

from typing import TYPE_CHECKING

from e2store.lazy import lazy_exports

if TYPE_CHECKING:  # the real names for type checkers; at run time each is imported on first use
    from e2store.counts.cell import AUTO as AUTO
    from e2store.counts.cell import COUNT_METHODS as COUNT_METHODS
    from e2store.counts.cell import WORK as WORK
    from e2store.counts.cell import CellCount as CellCount
    from e2store.counts.cell import best_method as best_method
    from e2store.counts.cell import check_count_request as check_count_request
    from e2store.counts.cell import count_cell as count_cell
    from e2store.counts.cell import count_cells as count_cells
    from e2store.counts.cell import resolve_method as resolve_method
    from e2store.counts.runs import DEFAULT_MAX_SHARDS as DEFAULT_MAX_SHARDS
    from e2store.counts.runs import DEFAULT_SHARD_STEMS as DEFAULT_SHARD_STEMS
    from e2store.counts.runs import TabulatedZone as TabulatedZone
    from e2store.counts.runs import check_count_plan as check_count_plan
    from e2store.counts.runs import check_estimates as check_estimates
    from e2store.counts.runs import count_board as count_board
    from e2store.counts.runs import count_plan as count_plan
    from e2store.counts.runs import estimate_cells as estimate_cells
    from e2store.counts.runs import gathered_tables as gathered_tables
    from e2store.counts.runs import plan_cells as plan_cells
    from e2store.counts.runs import require_zone_records as require_zone_records
    from e2store.counts.runs import shard_receipt as shard_receipt
    from e2store.counts.runs import tabulate_zones as tabulate_zones
    from e2store.counts.runs import tabulated_tables as tabulated_tables
    from e2store.counts.shards import count_shard as count_shard
    from e2store.counts.shards import count_tables as count_tables
    from e2store.counts.shards import count_zone as count_zone
    from e2store.counts.shards import method_of as method_of
    from e2store.counts.shards import plan_count_zones as plan_count_zones
    from e2store.counts.shards import run_shard as run_shard
    from e2store.counts.shards import zone_records as zone_records

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "shards": ("method_of", "count_shard", "run_shard", "count_zone", "plan_count_zones",
            "zone_records", "count_tables",),
    "cell": ("AUTO", "COUNT_METHODS", "WORK", "CellCount", "best_method", "check_count_request",
             "count_cell", "count_cells", "resolve_method",),
    "runs": ("DEFAULT_SHARD_STEMS", "DEFAULT_MAX_SHARDS", "TabulatedZone", "check_count_plan",
             "check_estimates", "count_board", "count_plan", "estimate_cells",
             "gathered_tables", "plan_cells", "require_zone_records", "shard_receipt",
             "tabulate_zones", "tabulated_tables",),
})
