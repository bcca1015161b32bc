"""e2store main job: generate/import instances, validate them, enumerate the corolle store
at every configured hamming, summarise it, and write statistics tables, plots, zone maps and
instance statistics.

    snakemake --cores 2                      # the built-in demo instances (config.yaml)
    snakemake --cores 2 --config results=out # another output root
    snakemake --report report.html           # HTML report (tables and plots) after a run
    snakemake --cores 2 --configfile config/benchmark.yaml --replace-workflow-config
    snakemake --profile profiles/slurm       # on a SLURM cluster (edit the profile first)
    snakemake --cores 2 --configfile my.yaml # with a `solve:` section: openings, shards, merge
    snakemake counts_tables --cores 2 --configfile config/counts.yaml --replace-workflow-config
                                             # exact count tables (a `counts:` section)
    snakemake best --cores 2 --configfile config/best-e2.yaml --replace-workflow-config
                                             # a best-score campaign (a `best:` section)

Rules live in pipeline/rules/; the config schema in schemas/config.schema.yaml.
"""

from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


include: "pipeline/rules/config.smk"


report: "pipeline/report/workflow.rst"


include: "pipeline/rules/common.smk"
include: "pipeline/rules/instances.smk"
include: "pipeline/rules/enumerate.smk"
include: "pipeline/rules/summary.smk"
include: "pipeline/rules/tables.smk"
include: "pipeline/rules/solve.smk"
include: "pipeline/rules/counts.smk"
include: "pipeline/rules/best.smk"


localrules:
    all,
    generate_instance,
    import_instance,
    validate_instance,
    receipt,
    summary,
    tables,
    plots,
    zone_map,
    instance_stats,
    counts_tables,


rule all:
    input:
        summary_md=result_path("summary.md"),
        summary_json=result_path("summary.json"),
        tables=rules.tables.output,
        plots=rules.plots.output,
        zones=expand(result_path("zones", "{name}_h{h}.json"), name=NAMES, h=HAMMING),
        stats=expand(result_path("stats", "{name}.json"), name=NAMES),
        solve=solve_targets(),
