# Solving one instance with openings, sharded into jobs (only with a `solve:` config section):
#
#   openings       every consistent combination of corolles at the configured cells, read
#                  from the store (the pipeline's own, or `solve.store`) -> openings.parquet
#   solve_shard    openings i with i % shards == shard, solved over `workers` processes
#                  -> shards/shard-<k>.json (`e2store solve --openings --shard k/S --json`)
#   solve_merge    the shards summed -> solve.json (`e2store stage solve-gather`)
#
# Outputs live under <results>/solve/.  Each shard is an ordinary job, so the same search
# runs on a cluster through Snakemake's executors (e.g. --profile profiles/slurm).


include: "solve_common.smk"


if SOLVE:
    check_solve_config()
    _name, _h = SOLVE["instance"], int(SOLVE["hamming"])
    SOLVE_SHARDS = int(SOLVE.get("shards", 4))

    rule openings:
        input:
            instance=instance_file(_name),
            store=solve_store_ready,
        output:
            openings=solve_path("openings.parquet"),
        log:
            solve_path("logs", "openings.log"),
        params:
            store=solve_store(),
            cells=" ".join(f"--at {int(x)},{int(y)}" for x, y in SOLVE["cells"]),
            hamming=_h,
            symmetry="--symmetry-break" if SOLVE.get("symmetry_break", True) else "",
        shell:
            "e2store openings {input.instance:q} --store {params.store:q} {params.cells}"
            " --hamming {params.hamming} {params.symmetry} -o {output.openings:q}"
            " > {log:q} 2>&1"

    rule solve_shard:
        input:
            instance=instance_file(_name),
            openings=solve_path("openings.parquet"),
        output:
            report=solve_path("shards", "shard-{shard}.json"),
        log:
            solve_path("logs", "shard-{shard}.log"),
        params:
            shards=SOLVE_SHARDS,
            scan=SOLVE.get("scan", "rowscan"),
        threads: int(SOLVE.get("workers", 1))
        shell:
            "e2store solve {input.instance:q} --openings {input.openings:q}"
            " --shard {wildcards.shard}/{params.shards} --scan {params.scan:q}"
            " --workers {threads} --json > {output.report:q} 2> {log:q}"

    rule solve_merge:
        input:
            reports=expand(solve_path("shards", "shard-{shard}.json"),
                           shard=range(SOLVE_SHARDS)),
        output:
            merged=solve_path("solve.json"),
        log:
            solve_path("logs", "merge.log"),
        shell:
            "e2store stage solve-gather {input.reports:q} -o {output.merged:q} > {log:q} 2>&1"

    localrules:
        solve_merge,
