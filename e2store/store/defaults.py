"""The store's parameters and defaults, declared once and light to import (no pyarrow: the
command line's options read them for `--help`): the storage forms, the forms `enumerate`
writes when none is asked for, and the shard limits of the pipeline stages."""

from __future__ import annotations

FORMS = ("flat", "prefix", "cartesian", "distinct")
RAW_FORMS = FORMS[:3]  # the forms that hold every corolle (all three expand to the same rows)
DEFAULT_FORMS = ("flat",)  # what `enumerate_store` writes unless told (distinct: "distinct")
MAX_SHARDS = 4096  # shards of one zone's walk at most (`enumerate_shard`, `plan_zones`)
DEFAULT_SHARD_COROLLES = 50_000_000  # corolles per shard at most (`plan_zones`)
DEFAULT_MAX_SHARDS = 64  # shards of one zone at most (`plan_zones`)
