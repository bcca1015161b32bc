# Helpers of the count-table rules (pipeline/rules/counts.smk): the `counts:` config section.

COUNTS = config.get("counts") or {}
COUNT_INSTANCES = COUNTS.get("instances", {})
COUNT_NAMES = sorted(COUNT_INSTANCES)
COUNT_HAMMING = sorted(COUNTS.get("hamming", [1, 2]))
COUNT_METRICS = ("corolles", "seconds")
COUNT_WILDCARDS = {
    "name": "|".join(re.escape(n) for n in COUNT_NAMES) or "(?!)",
    "x": r"\d+",
    "y": r"\d+",
}


def counts_path(*parts):
    """A path under <results>/counts/."""
    return result_path("counts", *parts)


def count_records_dir():
    """Where `e2store stage count-shard` keeps its shard records (not a Snakemake output)."""
    return counts_path("records")


def count_max_stems_option(wc):
    """` --max-stems N` for count-plan when the config sets `max_stems` (one number, or one
    per board: a board not listed has no limit), else nothing."""
    n = COUNTS.get("max_stems")
    if isinstance(n, dict):
        n = n.get(wc.name)
    return "" if n is None else f" --max-stems {int(n)}"


def count_instance(wc):
    """The configured piece file of the job's instance."""
    return COUNT_INSTANCES[wc.name]


def count_receipt(name, h, x, y, shard, shards):
    """A count_shard job's receipt (its `--json` line)."""
    return counts_path("receipts", name, f"h{h}", f"{x}-{y}", f"shard-{shard}-of-{shards}.json")


def count_plan_of(name, h):
    """The count plan of an instance and hamming (a checkpoint: known once it has run)."""
    with open(checkpoints.count_plan.get(name=name, h=h).output.plan) as fh:
        return json.load(fh)


def count_receipts_at(h):
    """Every shard receipt of every configured instance at hamming h."""
    return [count_receipt(name, h, z["x"], z["y"], k, z["shards"])
            for name in COUNT_NAMES
            for z in count_plan_of(name, h)["zones"]
            for k in range(z["shards"])]


def count_receipts(wc):
    """The shard receipts of the job's hamming."""
    return count_receipts_at(wc.h)


def all_count_receipts(wc):
    """Every shard receipt of every configured hamming."""
    return [r for h in COUNT_HAMMING for r in count_receipts_at(h)]


def count_estimate_file(name, h):
    """A count_estimate job's output: the estimates of the zones a plan left out."""
    return counts_path("estimates", f"{name}_h{h}.json")


def count_estimate_files(wc):
    """The estimates the tables of the job's hamming show (none without
    `estimate_samples`)."""
    if not COUNTS.get("estimate_samples"):
        return []
    return [count_estimate_file(name, wc.h) for name in COUNT_NAMES]


def count_table_files(h):
    """The tables of one hamming (h may be the "{h}" wildcard)."""
    return [counts_path("tables", f"{metric}_h{h}.{ext}")
            for metric in COUNT_METRICS for ext in ("csv", "md")]


def counts_targets():
    """The tables of every configured hamming (none without a `counts:` section)."""
    return [f for h in COUNT_HAMMING for f in count_table_files(h)] if COUNT_NAMES else []
