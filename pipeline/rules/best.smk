# A best-score campaign (only with a `best:` config section; target `best`, not in `all`):
#
#   best_campaign the `best:` section, checked (`e2store.campaign.Campaign`) and resolved
#                 (its piece file, its boards dataset) -> campaign.json: what the
#                 `e2store campaign` commands below take (a person runs them by hand)
#   best_shard    one (arm, seed, shard) job: `e2store campaign run-shard campaign.json
#                 --arm A --seed S --shard K/N`, which runs `e2store best INSTANCE <arm
#                 options> --seed S --shard K/N --arm A -o <results>/best/boards/ --json`
#                 (with a restarts budget, only the shard's restarts not yet there), writing
#                 its restarts' parts of the boards dataset; its receipt
#                 -> receipts/<arm>/s<seed>-shard-<k>-of-<n>.json (atomically: the command,
#                 the shard as the dataset holds it: restarts, nodes, search and fill
#                 seconds; how the job ended, what it added), its log (the command, a line
#                 per restart, the result, the exit code)
#   best_report   `e2store campaign report campaign.json`: the dataset compacted (seeds of
#                 100 parts and more, every board recounted first), the restarts analysed
#                 once -> report.md with its plots, and the best boards (`best.saved`,
#                 default 20) as Blackwood-style saved-board files -> saved/
#   best          target: the report
#
# On SLURM (profiles/slurm) a best_shard job asks for memory by its workers and, with a
# `minutes` budget, a runtime of the budget plus a margin (`best_resources`); with a
# `restarts` budget the profile's default runtime (a job killed at its limit resumes).
#
# Outputs live under <results>/best/.  The boards dataset is not a Snakemake output: a
# killed job's parts stay, and its rerun (a restarts budget) runs only the shard's missing
# restarts.  A job's search ends with the Snakemake that started it: a `kill -9` of it
# (`campaign run-shard` watches the nearest Python process above it, and
# PR_SET_PDEATHSIG), a SIGTERM or SIGINT (`onstart`: `best_end_jobs_on_stop`).  The config
# is checked at parse time (every value: arms as the library's options on the instance,
# the budget, seeds, shards, arms named twice, aliases that expand without end): one line,
# nothing run.  Helpers: best_common.smk.


include: "best_common.smk"


if BEST:

    rule best_campaign:
        output:
            best_path("campaign.json"),
        params:
            campaign=json.dumps(BEST_CAMPAIGN.to_dict(), sort_keys=True),
        run:
            BEST_CAMPAIGN.write(output[0])

    rule best_shard:
        input:
            campaign=ancient(best_path("campaign.json")),
            instance=ancient(best_instance()),
        output:
            receipt=best_receipt("{arm}", "{seed}", "{shard}", "{shards}"),
        log:
            best_log("{arm}", "{seed}", "{shard}", "{shards}"),
        threads: BEST_CAMPAIGN.workers
        resources:
            **best_resources(),
        wildcard_constraints:
            arm="|".join(re.escape(a) for a in BEST_CAMPAIGN.arms),
            seed=r"\d+",
        shell:
            "e2store campaign run-shard {input.campaign:q} --arm {wildcards.arm}"
            " --seed {wildcards.seed} --shard {wildcards.shard}/{wildcards.shards}"
            " --receipt {output.receipt:q} --log {log:q} --workers {threads}"

    rule best_report:
        input:
            receipts=best_receipts(),
            campaign=best_path("campaign.json"),
        output:
            report=best_path("report.md"),
            saved=directory(best_path("saved")),
        log:
            best_path("logs", "report.log"),
        shell:
            "e2store campaign report {input.campaign:q} -o {output.report:q}"
            " --saved {output.saved:q} > {log:q} 2>&1"

    rule best:
        input:
            best_path("report.md"),

    localrules:
        best,
        best_campaign,

    onstart:
        best_end_jobs_on_stop()
