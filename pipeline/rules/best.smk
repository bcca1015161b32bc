# A best-score campaign (only with a `best:` config section; target `best`, not in `all`):
#
#   best_shard    one (arm, seed, shard) job: `e2store solve INSTANCE --best <arm options>
#                 --seed S --shard K/N --arm A -o <results>/best/boards/ --json`, writing its
#                 restarts' parts of the boards dataset; its receipt
#                 -> receipts/<arm>/s<seed>-shard-<k>-of-<n>.json (the command, the shard as
#                 the dataset holds it: restarts, nodes, search and fill seconds; how the
#                 job ended, what it added), its log (the command, a line per restart, the
#                 result, the exit code)
#   best_report   the dataset compacted (`e2store compact-boards`: seeds of 100 parts and
#                 more, every board recounted first), every arm compared -> report.md
#                 (`e2store summary --boards DIR -o`), and
#                 the best boards (`best.saved`, default 20) as Blackwood-style saved-board
#                 files -> saved/ (`e2store save-boards`)
#   best          target: the report
#
# On SLURM (profiles/slurm) a best_shard job asks for memory by its workers and, with a
# `minutes` budget, a runtime of the budget plus a margin (`best_resources`); with a
# `restarts` budget the profile's default runtime (a job killed at its limit resumes).
#
# Outputs live under <results>/best/.  The boards dataset is not a Snakemake output: a
# killed job's parts stay, and its rerun (a restarts budget) runs only the shard's missing
# restarts.  A job's search ends with the Snakemake that started it: a `kill -9` of it
# (`best_watch`, and PR_SET_PDEATHSIG), a SIGTERM or SIGINT (`onstart`:
# `best_end_jobs_on_stop`).  The config is checked at parse time (arms against `solve`'s
# options, the budget, arms named twice): one line, nothing run.  Helpers: best_common.smk.


include: "best_common.smk"


if BEST:

    rule best_shard:
        input:
            instance=best_instance(),
        output:
            receipt=best_receipt("{arm}", "{seed}", "{shard}", "{shards}"),
        log:
            best_path("logs", "{arm}", "s{seed}-shard-{shard}-of-{shards}.log"),
        threads: int(BEST.get("workers", 1))
        resources:
            **best_resources(),
        wildcard_constraints:
            arm="|".join(re.escape(a) for a in BEST_ARMS),
            seed=r"\d+",
        run:
            best_run_shard(wildcards, input.instance, output.receipt, log[0], threads)

    rule best_report:
        input:
            receipts=best_receipts(),
            instance=best_instance(),
        output:
            report=best_path("report.md"),
            saved=directory(best_path("saved")),
        log:
            best_path("logs", "report.log"),
        params:
            boards=best_boards(),
            top=best_saved_top(),
            thresholds=best_thresholds(),
        shell:
            "(e2store compact-boards {params.boards:q} --instance {input.instance:q}"
            " && e2store summary --boards {params.boards:q} -o {output.report:q}"
            " {params.thresholds}"
            " && mkdir -p {output.saved:q}"
            " && if [ {params.top} -gt 0 ]; then e2store save-boards {input.instance:q}"
            " {params.boards:q} -o {output.saved:q} --top {params.top}; fi) > {log:q} 2>&1"

    rule best:
        input:
            best_path("report.md"),

    localrules:
        best,

    onstart:
        best_end_jobs_on_stop()
