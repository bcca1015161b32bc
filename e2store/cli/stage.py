"""`e2store stage ...`: the pipeline's steps, one job each (hidden from `e2store --help`).

The Snakemake rules (pipeline/rules/*.smk) run these; each writes its record (a receipt)
with `-o FILE` and prints it with `--json`.
"""

from __future__ import annotations

import click

from e2store.cli.command import LazyGroup

STAGES = {
    "plan": "e2store.cli.stages:plan",
    "shard": "e2store.cli.stages:shard_cmd",
    "gather": "e2store.cli.stages:gather",
    "rotate": "e2store.cli.stages:rotate",
    "encode": "e2store.cli.stages:encode",
    "count-plan": "e2store.cli.counts:count_plan",
    "count-shard": "e2store.cli.counts:count_shard_cmd",
    "count-gather": "e2store.cli.counts:count_gather",
    "solve-gather": "e2store.cli.openings:solve_gather",
}


@click.group("stage", cls=LazyGroup, lazy=STAGES, hidden=True, examples=[
    "e2store stage plan demo7.e2s --hamming 2 -o plan.json",
    "e2store stage shard demo7.e2s --store store/ --hamming 2 --zone 5 --shard 0/4 "
    "-o receipt.json",
])
def stage() -> None:
    """Pipeline steps, one job each: the store (plan, shard, gather, rotate, encode), the
    count tables (count-plan, count-shard, count-gather) and sharded solves (solve-gather).

    A store's zone: `plan` counts the zones and cuts the big ones into shards; `shard`
    walks one shard; `gather` publishes a zone's shards as its rotation-0 flat partition;
    `rotate` derives rotations 1-3; `encode` writes the prefix and cartesian forms.
    """
