"""Count tables: exact corolle counts per zone, sharded, checkpointed and resumable
(docs/counting.md)."""

from e2store.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "shards": ("method_of", "count_shard", "run_shard", "count_zone", "plan_count_zones",
            "zone_records", "count_tables",),
})
