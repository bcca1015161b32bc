# A best-score campaign (only with a `best:` config section; target `best`, not in `all`):
#
#   best_shard    one (arm, seed, shard) job: `e2store solve INSTANCE --best <arm options>
#                 --seed S --shard K/N --arm A -o <results>/best/boards/ --json`, writing its
#                 restarts' parts of the boards dataset; its receipt (the command, restarts
#                 run, how it ended) -> receipts/<arm>/s<seed>-shard-<k>-of-<n>.json
#   best_report   every arm compared -> report.md (`e2store summary --boards DIR -o`)
#   best          target: the report
#
# Outputs live under <results>/best/.  The boards dataset is not a Snakemake output: a
# killed job's parts stay, and its rerun (a restarts budget) runs only the shard's missing
# restarts.  The config is checked at parse time (arms against `solve`'s options, the
# budget, arms named twice): one line, nothing run.  Helpers: best_common.smk.


include: "best_common.smk"


if BEST:

    rule best_shard:
        input:
            instance=BEST["instance"],
        output:
            receipt=best_receipt("{arm}", "{seed}", "{shard}", "{shards}"),
        log:
            best_path("logs", "{arm}", "s{seed}-shard-{shard}-of-{shards}.log"),
        threads: int(BEST.get("workers", 1))
        wildcard_constraints:
            arm="|".join(re.escape(a) for a in BEST_ARMS),
            seed=r"\d+",
        run:
            best_run_shard(wildcards, input.instance, output.receipt, log[0], threads)

    rule best_report:
        input:
            receipts=best_receipts(),
        output:
            report=best_path("report.md"),
        log:
            best_path("logs", "report.log"),
        params:
            boards=best_boards(),
        shell:
            "e2store summary --boards {params.boards:q} -o {output.report:q} > {log:q} 2>&1"

    rule best:
        input:
            best_path("report.md"),

    localrules:
        best,
