# Exact count tables of the piece files of a `counts:` config section (e2store/counts.py):
#
#   count_plan (checkpoint)  the board's zones at hamming h and the shards of each (0 for a
#                            zone over `max_stems`: left out, uncounted in the tables)
#                            -> plans/<name>_h<h>.json (`e2store stage count-plan`)
#   count_shard              shard K of S of one zone, counted; its record is written to
#                            RECORDS/<instance id>/h<h>/<x>-<y>/shard-K-of-S.json and its
#                            --json line is the job's receipt (`e2store stage count-shard`)
#   count_estimate           with `estimate_samples: N`: the zones the plan left out,
#                            estimated by sampling (N random paths each)
#                            -> estimates/<name>_h<h>.json (`e2store count-estimate --plan`)
#   count_tables             every instance's records at hamming h (and the estimates)
#                            -> tables/{corolles,seconds}_h<h>.{csv,md} (`e2store stage count-gather`)
#   counts_tables            target: the tables of every configured hamming
#
# Everything lives under <results>/counts/ (plans/, receipts/, records/, tables/, logs/).
# The records directory is not a Snakemake output: a job that finds its record there (an
# earlier or killed run, a deleted receipt) skips the work, so counts resume across runs.
# The piece files are read where they are (config paths, any auto-detected format). Helpers:
# counts_common.smk.
#
#   snakemake counts_tables --cores 2 --configfile config/counts.yaml --replace-workflow-config
#   snakemake counts_tables --cores 2 --configfile my.yaml    # a `counts:` section added


include: "counts_common.smk"


checkpoint count_plan:
    input:
        instance=count_instance,
    output:
        plan=counts_path("plans", "{name}_h{h}.json"),
    log:
        counts_path("logs", "plan", "{name}_h{h}.log"),
    params:
        shard_stems=COUNTS.get("shard_stems", 50_000_000),
        max_shards=COUNTS.get("max_shards", 64),
        max_stems=count_max_stems_option,
    wildcard_constraints:
        **COUNT_WILDCARDS,
    shell:
        "e2store stage count-plan {input.instance:q} --hamming {wildcards.h}"
        " --shard-stems {params.shard_stems} --max-shards {params.max_shards}"
        "{params.max_stems} -o {output.plan:q} > {log:q} 2>&1"


rule count_shard:
    input:
        instance=count_instance,
    output:
        receipt=count_receipt("{name}", "{h}", "{x}", "{y}", "{shard}", "{shards}"),
    log:
        counts_path("logs", "shard", "{name}_h{h}_{x}-{y}_{shard}-of-{shards}.log"),
    params:
        records=count_records_dir(),
    threads: COUNTS.get("threads", 1)
    wildcard_constraints:
        **COUNT_WILDCARDS,
    shell:
        "e2store stage count-shard {input.instance:q} --hamming {wildcards.h}"
        " --at {wildcards.x},{wildcards.y} --shard {wildcards.shard}/{wildcards.shards}"
        " --records {params.records:q} --threads {threads} --json"
        " > {output.receipt:q} 2> {log:q}"


rule count_estimate:
    input:
        instance=count_instance,
        plan=counts_path("plans", "{name}_h{h}.json"),
    output:
        estimates=count_estimate_file("{name}", "{h}"),
    log:
        counts_path("logs", "estimate", "{name}_h{h}.log"),
    params:
        samples=COUNTS.get("estimate_samples", 1),
    threads: COUNTS.get("threads", 1)
    wildcard_constraints:
        **COUNT_WILDCARDS,
    shell:
        "e2store count-estimate {input.instance:q} --hamming {wildcards.h} --plan {input.plan:q}"
        " --samples {params.samples} --threads {threads} -o {output.estimates:q}"
        " > {log:q} 2>&1"


rule count_tables:
    input:
        instances=[COUNT_INSTANCES[n] for n in COUNT_NAMES],
        plans=expand(counts_path("plans", "{name}_h{{h}}.json"), name=COUNT_NAMES),
        receipts=count_receipts,
        estimates=count_estimate_files,
    output:
        count_table_files("{h}"),
    log:
        counts_path("logs", "tables_h{h}.log"),
    params:
        records=count_records_dir(),
        outdir=lambda wc, output: os.path.dirname(output[0]),
        plans=lambda wc, input: " ".join(f"--plan {shlex.quote(p)}" for p in input.plans),
        estimates=lambda wc, input: " ".join(f"--estimates {shlex.quote(p)}"
                                             for p in input.estimates),
    shell:
        "e2store stage count-gather {input.instances:q} --hamming {wildcards.h}"
        " --records {params.records:q} {params.plans} {params.estimates} --require"
        " -o {params.outdir:q}"
        " > {log:q} 2>&1"


rule counts_tables:
    input:
        tables=counts_targets(),
        # the receipts too: Snakemake makes a lost intermediate file again only when a target
        # asks for it, so a deleted receipt reruns its shard (from its record when that is
        # still there) and the tables it feeds
        receipts=all_count_receipts if COUNT_NAMES else [],
